"""Resuming: a build killed in the Builder phase continues with Intake and Planner reused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from build_fixtures import write_repo

pytestmark = pytest.mark.slow


def _cli(*args: str, cache: Path) -> list[str]:
    return [sys.executable, "-m", "reprobridge_sdk", "build", *args]


def test_kill_during_the_builder_then_resume_reuses_intake_and_planner(
    tmp_path: Path, env_cache: Path
) -> None:
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    out = tmp_path / "out"
    env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(env_cache)}
    argv = _cli(str(repo), "--claims", str(claims), "-o", str(out), cache=env_cache)
    errors = tmp_path / "first.stderr"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            argv, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=sink
        )
    state = out / ".rra-build"
    deadline = time.monotonic() + 120
    try:
        while not (state / "planner.json").exists():
            assert process.poll() is None, errors.read_text("utf-8")
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)  # in the Builder: it has no record yet
    finally:
        process.wait()
    assert not (state / "builder.json").exists()
    intake = (state / "intake.json").read_bytes()
    planner = (state / "planner.json").read_bytes()

    done = subprocess.run(
        [*argv, "--resume", "--json"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["reused"] == ["intake", "planner"]
    assert report["phase_seconds"]["intake"] == 0.0
    assert (state / "intake.json").read_bytes() == intake
    assert (state / "planner.json").read_bytes() == planner
    assert (state / "builder.json").exists()

    # a changed claim invalidates the Intake and everything after it (B013)
    data = yaml.safe_load(claims.read_text("utf-8"))
    data["claims"][0]["value"] = 0.955
    claims.write_text(yaml.safe_dump(data), "utf-8")
    again = subprocess.run(
        [*argv, "--resume", "--json", "--max-minutes", "0.0001"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(again.stdout)
    assert again.returncode == 1
    assert report["reused"] == []
    codes = [f["code"] for f in report["findings"]]
    assert "B013" in codes and "B016" in codes


def test_a_bad_claims_file_exits_2_with_b001(tmp_path: Path) -> None:
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    claims.write_text("claims_version: '1.0'\nclaims: []\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "build", str(repo), "--claims", str(claims)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "B001" in done.stderr
    assert not any(tmp_path.glob("*-rra"))


def test_an_unknown_commit_stops_at_intake_with_b003(tmp_path: Path) -> None:
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "build",
            str(repo),
            "--claims",
            str(claims),
            "--commit",
            "f" * 40,
            "-o",
            str(tmp_path / "out"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["stopped_at"] == "intake"
    assert [f["code"] for f in report["findings"]] == ["B003"]
