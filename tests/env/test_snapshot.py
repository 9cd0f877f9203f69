"""Environment snapshots: contents, other interpreters, secret redaction."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from reprobridge_sdk.env import capture_snapshot
from reprobridge_sdk.env.snapshot import (
    REDACTED,
    installed_distributions,
    is_secret,
    select_variables,
)

VECTORS = Path(__file__).parent / "vectors"
REDACTION = json.loads((VECTORS / "redaction.json").read_text("utf-8"))


@pytest.mark.parametrize("case", REDACTION, ids=[c["name"] for c in REDACTION])
def test_redaction_vectors(case: dict[str, object]) -> None:
    name, value = str(case["name"]), str(case["value"])
    assert is_secret(name, value) is case["redacted"]
    selected = select_variables({name: value}, extra=[name])
    assert selected[name] == (REDACTED if case["redacted"] else value)


def test_only_allow_listed_variables_are_selected() -> None:
    environ = {"PATH": "/bin", "HOME": "/root", "CUDA_VISIBLE_DEVICES": "0", "SOMETHING": "x"}
    assert select_variables(environ) == {"CUDA_VISIBLE_DEVICES": "0", "PATH": "/bin"}
    assert select_variables(environ, extra=["SOME*"]) == {
        "CUDA_VISIBLE_DEVICES": "0",
        "PATH": "/bin",
        "SOMETHING": "x",
    }


def test_capture_current_interpreter() -> None:
    environ = {"PATH": "/usr/bin", "HF_TOKEN": "hf_abc", "OMP_NUM_THREADS": "2"}
    snap = capture_snapshot(environ=environ)
    assert snap.python == ".".join(map(str, sys.version_info[:3]))
    assert snap.executable == sys.executable
    assert snap.platform.startswith(sys.platform[:5])
    assert snap.cpu_count is not None
    assert snap.cpu_count >= 1
    assert snap.memory_bytes is not None
    assert snap.memory_bytes > 0
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", snap.captured_at)
    names = {d.name.lower() for d in snap.distributions}
    assert {"pydantic", "click", "packaging"} <= names
    assert snap.variables == {"OMP_NUM_THREADS": "2", "PATH": "/usr/bin"}
    # The model round-trips through JSON as evidence records embed it.
    assert type(snap).model_validate_json(snap.model_dump_json()) == snap


def test_capture_other_interpreter(tmp_path: Path) -> None:
    """A real venv without pip: its distributions are read by running its interpreter."""
    venv.create(tmp_path / "v", with_pip=False)
    python = tmp_path / "v" / "bin" / "python"
    snap = capture_snapshot(python)
    assert snap.distributions == []
    assert snap.executable.startswith(str(tmp_path))
    assert installed_distributions(python) == []


def test_no_gpu_here_gives_empty_list() -> None:
    # nvidia-smi is absent on the CI machines: the snapshot must say "no GPUs", not fail.
    from shutil import which

    if which("nvidia-smi") is not None:
        pytest.skip("this machine has nvidia-smi; the empty case cannot be observed")
    assert capture_snapshot().gpus == []


def test_cli_snapshot_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "env", "snapshot", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": "ghp_x", "CUDA_VISIBLE_DEVICES": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["variables"] == {"CUDA_VISIBLE_DEVICES": "1", "PATH": "/usr/bin:/bin"}
    assert data["python"] == ".".join(map(str, sys.version_info[:3]))


def test_cli_snapshot_bad_python(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "env",
            "snapshot",
            "--python",
            str(tmp_path / "no"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert f"cannot run {tmp_path / 'no'}" in proc.stderr
