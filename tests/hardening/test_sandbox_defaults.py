"""The sandbox is the default of every command that runs a stranger's code.

``check``, ``build``, ``review`` and ``audit --rerun`` refuse with N011 before anything runs
where the sandbox cannot work (a real host without bubblewrap: a ``PATH`` that has none, no
mock of the check), and never fall back to running unconfined; ``--no-sandbox`` runs
unconfined and says so with N031 (on stderr beside a machine format). What the sandbox holds
against a hostile repository is in ``test_hostile_repository.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from toy_study import make_artifact

from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.run import run

CLI = [sys.executable, "-m", "reprobridge_sdk"]


def _no_bwrap(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH holds python and git but no bubblewrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir(exist_ok=True)
    for name in ("python", "git"):
        found = shutil.which(name) if name == "git" else sys.executable
        if found and not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(found)
    return {**os.environ, "PATH": str(bin_dir)}


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, check=False, cwd=cwd, env=env, timeout=600
    )


def _codes(text: str) -> list[str]:
    """The finding codes in ``text``, in order (stdout, or stderr beside a machine format)."""
    return re.findall(r"\b[A-Z][0-9]{3}\b", text)


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    root = make_artifact(tmp_path / "toy")
    summary = run(root, ["scored"], env_mode="current", seeds=[0])
    assert [r.record.status for r in summary.results] == ["succeeded"]
    return root


def _claims(tmp_path: Path) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "claims_version": "1.0",
                "paper": {"title": "T", "year": 2024},
                "claims": [
                    {"id": "a", "measured": "accuracy", "value": 0.9, "direction": "higher"}
                ],
            }
        )
    )
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["check", "{toy}"],
        ["review", "{toy}", "--rerun-env", "current"],
        ["audit", "{toy}", "--rerun", "all", "--rerun-env", "current"],
        ["audit", "--table", "{toy}", "--rerun", "1", "--rerun-env", "current"],
        ["build", "{toy}/code", "--claims", "{claims}", "-o", "{out}"],
    ],
    ids=["check", "review", "audit-rerun", "audit-table-rerun", "build"],
)
def test_without_bubblewrap_each_command_refuses_with_n011(
    toy: Path, tmp_path: Path, command: list[str]
) -> None:
    before = sorted(p.name for p in (toy / "runs").iterdir())
    values = {"toy": str(toy), "claims": str(_claims(tmp_path)), "out": str(tmp_path / "out")}
    args = [word.format(**values) for word in command]
    done = _cli(*args, cwd=tmp_path, env=_no_bwrap(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "N011" in _codes(done.stdout)
    assert sorted(p.name for p in (toy / "runs").iterdir()) == before  # nothing ran
    assert not (tmp_path / "out").exists()


def test_the_check_api_refuses_before_copying(
    toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _no_bwrap(tmp_path)["PATH"])
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(UsageError) as caught:
        check(toy, work_dir=work)
    assert [f.code for f in caught.value.findings] == ["N011"]
    assert list(work.iterdir()) == []


def test_no_sandbox_runs_unconfined_and_warns_with_n031(toy: Path, tmp_path: Path) -> None:
    """Opting out works where bubblewrap is missing, and says so."""
    done = _cli(
        "review",
        str(toy),
        "--rerun-env",
        "current",
        "--no-sandbox",
        "--format",
        "json",
        cwd=tmp_path,
        env=_no_bwrap(tmp_path),
    )
    assert done.returncode in {0, 1}, done.stderr
    assert _codes(done.stderr)[:1] == ["N031"]
    assert json.loads(done.stdout)["attempts"][0]["reran"] == 1
    # the old spelling of audit's switch still works
    again = _cli(
        "audit",
        str(toy),
        "--rerun",
        "all",
        "--rerun-env",
        "current",
        "--no-rerun-sandbox",
        "--format",
        "json",
        cwd=tmp_path,
        env=_no_bwrap(tmp_path),
    )
    assert _codes(again.stderr)[:1] == ["N031"]
    assert json.loads(again.stdout)["attempts"][0]["reran"] == 1


def test_an_audit_without_rerun_needs_no_sandbox(toy: Path, tmp_path: Path) -> None:
    done = _cli("audit", str(toy), "--format", "json", cwd=tmp_path, env=_no_bwrap(tmp_path))
    assert done.returncode in {0, 1}, done.stderr
    assert _codes(done.stderr) == []
