"""run --dry-run: every run prepared as the runner would, none started, nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk import validate
from reprobridge_sdk.authoring.codebase import import_code
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold

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
    proc = _dry_run(artifact, "--format", "json", "--env", "current", "--seeds", "7")
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
    proc = _dry_run(artifact, "--format", "json", "--env", "current", "--no-validate")
    assert proc.returncode == 1
    plan = json.loads(proc.stdout)
    failing = [item for item in plan if not item["ok"]]
    assert failing
    assert all(p.startswith("environment-error:") for i in failing for p in i["problems"])


def test_a_series_checkout_with_unrecorded_changes_is_refused_as_validate_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run predicts the runner's C008 for a dirty ``code/`` (a real git checkout),
    at the pointer and with the severity ``validate`` reports, and touches nothing."""
    for key, value in {
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)
    upstream = tmp_path / "paper"
    upstream.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "paper"]):
        if args[0] == "add":
            (upstream / "train.py").write_text("print('accuracy: 0.9')\n", "utf-8")
        subprocess.run(["git", *args], cwd=upstream, check=True, capture_output=True)
    artifact = tmp_path / "artifact"
    scaffold(artifact, InitOptions(id="tiny", title="Tiny"))
    import_code(artifact, str(upstream), as_="patches", force=True)
    proc = _dry_run(artifact, "--format", "json", "--env", "current", "--no-validate")
    assert proc.returncode == 0, proc.stderr
    assert all(item["findings"] == [] for item in json.loads(proc.stdout))
    train = artifact / "code" / "train.py"
    train.write_text("print('accuracy: 0.99')  # unrecorded\n", "utf-8")
    proc = _dry_run(artifact, "--format", "json", "--env", "current", "--no-validate")
    assert proc.returncode == 1, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan
    said = {(f["code"], f["path"], f["severity"]) for item in plan for f in item["findings"]}
    assert said == {("C008", "/codebase/refined", "error")}
    assert not any(item["ok"] for item in plan)
    validated = {(f.code, f.path, f.severity.value) for f in validate(artifact).findings}
    assert said <= validated
    assert train.read_text("utf-8") == "print('accuracy: 0.99')  # unrecorded\n"
    assert not (artifact / "runs").exists()
