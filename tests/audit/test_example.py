"""The bundled example, reproduced by the real runner and judged by the auditor.

The runs are the session's ``example_runs`` (``conftest.py``): every launcher of the example
at its manifest's seeds, run once for every file that audits them.
"""

from __future__ import annotations

import platform
import shutil
from importlib import metadata
from pathlib import Path

from reprobridge_sdk.api import load
from reprobridge_sdk.audit import audit
from reprobridge_sdk.env.check import lock_drift
from reprobridge_sdk.signing import SigningKey


def test_bundled_example_reproduces(example_runs: tuple[Path, SigningKey], tmp_path: Path) -> None:
    artifact = tmp_path / "digits-logreg"
    shutil.copytree(example_runs[0], artifact)  # every run succeeded (example_runs says so)
    result = audit(artifact)
    assert [(t.id, t.attempts[0].verdict) for t in result.tasks] == [
        ("logreg-accuracy", "compatible"),
        ("logreg-macro-f1", "compatible"),
        ("knn-accuracy", "compatible"),
    ]
    assert all(len(t.attempts[0].seeds) == t.seeds for t in result.tasks)
    # no DOI (the example is not published) and no re-execution: functional, and the results
    # consistent on the authors' evidence
    assert result.badges.functional and result.badges.results == "consistent"
    assert {r.code for r in result.badges.reasons["available"]} == {"A085"}
    assert result.passed
    # The runs used this interpreter ('current'): they drift from the example's lock (A036,
    # a warning) exactly when this interpreter differs from it (another Python, other pins).
    drift = lock_drift(
        artifact,
        load(artifact).manifest.environment,
        python_full=platform.python_version(),
        installed={d.metadata["Name"]: d.version for d in metadata.distributions()},
    )
    codes = {f.code for r in result.attempts[0].runs for f in r.findings}
    assert codes == ({"A036"} if drift else set()), [f.code for f in drift]
