"""The bundled example, reproduced by the real runner and judged by the auditor."""

from __future__ import annotations

import shutil
from pathlib import Path

from reprobridge_sdk.audit import audit
from reprobridge_sdk.run import run


def test_bundled_example_reproduces(repo_root: Path, tmp_path: Path) -> None:
    artifact = tmp_path / "digits-logreg"
    shutil.copytree(repo_root / "examples" / "digits-logreg", artifact)
    summary = run(artifact, env_mode="current", jobs=2)
    assert all(r.record.status == "succeeded" for r in summary.results)
    result = audit(artifact)
    assert [(t.id, t.attempts[0].verdict) for t in result.tasks] == [
        ("logreg-accuracy", "compatible"),
        ("logreg-macro-f1", "compatible"),
        ("knn-accuracy", "compatible"),
    ]
    assert all(len(t.attempts[0].seeds) == t.seeds for t in result.tasks)
    assert result.badges.available and result.badges.functional and result.badges.reproduced
    assert result.passed
    assert not [f for r in result.attempts[0].runs for f in r.findings]
