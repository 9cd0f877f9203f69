"""run --dry-run: every run prepared as the runner would, none started, nothing written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"


def _dry_run(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "run", str(path), "--dry-run", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_example_is_prepared_and_nothing_is_written(tmp_path: Path) -> None:
    artifact = tmp_path / "a"
    shutil.copytree(EXAMPLE, artifact, ignore=shutil.ignore_patterns("runs", ".venv*"))
    proc = _dry_run(artifact, "--json", "--env", "current", "--seeds", "7")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert {item["launcher"] for item in plan} == {"smoke", "scored"}
    assert all(item["ok"] and item["problems"] == [] for item in plan)
    scored = next(item for item in plan if item["launcher"] == "scored")
    assert scored["seed"] == 7
    assert scored["argv"][:4] == ["python", "train.py", "--seed", "7"]
    assert scored["run_dir"] in scored["argv"][-1]
    assert not (artifact / "runs").exists()


def test_a_run_that_cannot_start_exits_1(tmp_path: Path) -> None:
    artifact = tmp_path / "a"
    shutil.copytree(EXAMPLE, artifact, ignore=shutil.ignore_patterns("runs", ".venv*"))
    manifest = artifact / "rra.yaml"
    text = manifest.read_text("utf-8").replace("workdir: code", "workdir: gone", 1)
    manifest.write_text(text, "utf-8")
    proc = _dry_run(artifact, "--json", "--env", "current", "--no-validate")
    assert proc.returncode == 1
    plan = json.loads(proc.stdout)
    failing = [item for item in plan if not item["ok"]]
    assert failing
    assert all(p.startswith("environment-error:") for i in failing for p in i["problems"])
