"""The bundled example's smoke launcher inside the environment built from its lock (slow).

This builds a real virtual environment with pip from the example's hashed lock (it needs
the package index), then runs the launcher in it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reprobridge_sdk.run import load_record, read_snapshot, run

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


def test_smoke_launcher_in_cached_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))
    artifact = tmp_path / "digits"
    shutil.copytree(EXAMPLE, artifact, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    summary = run(artifact, ["smoke"], env_mode="cached")
    (result,) = summary.results
    record = load_record(result.run_dir)
    assert record.status == "succeeded", record.failure
    assert record.env_mode == "cached"
    snapshot = read_snapshot(result.run_dir, record)
    assert snapshot is not None
    assert snapshot.executable.startswith(str(tmp_path / "cache"))
    assert record.lock_digest is not None
    assert [m.task for m in record.measurements if m.value is not None] == [
        "logreg-accuracy",
        "logreg-macro-f1",
        "knn-accuracy",
    ]
