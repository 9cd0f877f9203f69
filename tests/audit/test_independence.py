"""The auditor runs in its own process over a directory it has never seen.

Nothing is shared with the runner that wrote the evidence: the artifact and its runs are
copied to a new place, and a fresh interpreter with an empty home and cache directory audits
them. Its JSON report equals the in-process audit of the original, but for the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.report import render_json


def _without_path(report: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in report.items() if key != "path"}


def test_separate_process_over_an_unseen_copy_gives_the_same_report(
    toy: Path, tmp_path: Path
) -> None:
    unseen = tmp_path / "never-seen" / "artifact"
    shutil.copytree(toy, unseen)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "REPROBRIDGE_CACHE_DIR": str(home / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "audit", str(unseen), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    separate = json.loads(done.stdout)
    in_process = json.loads(render_json(audit(toy)))
    assert _without_path(separate) == _without_path(in_process)
    assert separate["passed"] is True
    assert {a["verdict"] for t in separate["tasks"] for a in t["attempts"]} == {"compatible"}
