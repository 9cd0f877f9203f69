"""Helpers of the auditor's tests: a tiny real artifact (``toy_study``, shared with the plugin
tests) and honest runs of it.

The artifact's launchers run a real Python script in a real subprocess, started by the real
runner (``reprobridge_sdk.run.run`` in the current environment), which writes the evidence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toy_study import make_artifact

from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.run import run

__all__ = ["edit_record", "make_artifact", "run_honestly", "sha256_text"]


def run_honestly(artifact: Path, launcher_id: str, seeds: list[int]) -> None:
    """Run a launcher with the real runner (current environment) and name its run dirs."""
    summary = run(artifact, [launcher_id], env_mode="current", seeds=seeds)
    for result in summary.results:
        assert result.record.status == "succeeded", result.record.failure
        assert result.record.seed is not None
        result.run_dir.rename(artifact / "runs" / f"{launcher_id}-s{result.record.seed}")


def edit_record(run_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit a run's record.json in place, as a dishonest producer would."""
    path = run_dir / RECORD_NAME
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
