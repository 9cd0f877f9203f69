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
    env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(env_cache)}
    # The kill must land in the Builder, after the Planner's record and before the Builder's:
    # a loaded machine may let the Builder end between two looks, so a build whose kill came
    # too late is started again in a fresh directory until the kill lands (at most 5 times).
    for attempt in range(5):
        out = tmp_path / f"out{attempt}"
        argv = _cli(str(repo), "--claims", str(claims), "-o", str(out), cache=env_cache)
        errors = tmp_path / f"first{attempt}.stderr"
        with errors.open("wb") as sink:
            process = subprocess.Popen(
                argv, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=sink
            )
        state = out / ".rra-build"
        deadline = time.monotonic() + 120  # a hang guard: the Planner ends in seconds
        try:
            while not (state / "planner.json").exists():
                assert process.poll() is None, errors.read_text("utf-8")
                assert time.monotonic() < deadline
                time.sleep(0.02)
            os.killpg(process.pid, signal.SIGKILL)  # in the Builder: it has no record yet
        finally:
            process.wait()
        if not (state / "builder.json").exists():
            break
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

    # The Reviewer's time is one independent attempt of the scored plan, the Distiller's
    # estimate: a Distiller that took longer than the time left (the scored plan of its
    # probe and five references) no longer keeps the Reviewer out of a build in time.
    (state / "reviewer.json").unlink()
    distilled = json.loads((state / "distiller.json").read_text("utf-8"))
    assert 0 < distilled["review_seconds"] < 600
    distilled["seconds"] = 1e6
    (state / "distiller.json").write_text(json.dumps(distilled), "utf-8")
    in_time = subprocess.run(
        [*argv, "--resume", "--json", "--max-minutes", "10"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(in_time.stdout)
    assert report["passed"] and report["reviewed"], in_time.stderr

    # A Reviewer whose scored runs would end past --max-minutes, while its setup fits,
    # checks without them (B063, with the estimate) and the claims are still judged. The
    # estimate is made large here in the stored record.
    (state / "reviewer.json").unlink()
    distilled["review_seconds"] = 1e6
    (state / "distiller.json").write_text(json.dumps(distilled), "utf-8")
    unscored = subprocess.run(
        [*argv, "--resume", "--json", "--max-minutes", "10"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(unscored.stdout)
    assert report["passed"] and report["reviewed"], unscored.stderr
    [left_out] = [f for f in report["findings"] if f["code"] == "B063"]
    assert "needs about 1000000 s" in left_out["message"]
    assert [c["status"] for c in report["claims"]] == ["compatible"]

    # Hostile to the time limit: a resume whose Reviewer would end past --max-minutes even
    # without its scored runs stops before it (B016, with the estimate), instead of being
    # killed inside its clean-room check; the packaged artifact stays valid.
    (state / "reviewer.json").unlink()
    late = subprocess.run(
        [*argv, "--resume", "--json", "--max-minutes", "0.5"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(late.stdout)
    assert report["stopped_at"] == "reviewer", late.stderr
    assert report["reused"] == [
        "intake",
        "planner",
        "builder",
        "reproducer",
        "distiller",
        "packager",
    ]
    [late_finding] = [f for f in report["findings"] if f["code"] == "B016"]
    assert "needs about 1000000 s" in late_finding["message"]
    valid = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", "--strict", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert valid.returncode == 0, valid.stdout

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
    assert "B001" in done.stdout
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
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["stopped_at"] == "intake"
    assert [f["code"] for f in report["findings"]] == ["B003"]


def test_the_smoke_budget_option_makes_a_long_smoke_run_short_end_to_end(
    tmp_path: Path, env_cache: Path
) -> None:
    """``--smoke-budget`` reaches the Reproducer: a 6-second script (24 epochs of 0.25 s, the
    count a module constant) is stopped at a 3-second budget and its smoke launcher made
    short (REPRO_EPOCHS=1, a recorded convenience change); the default budget of 600 s never
    would. Resumed with another budget, the phases before the Reproducer are reused and the
    Reproducer runs again (B013).

    Both sides of the budget have a margin: the full run sleeps 6 s whatever the machine, and
    the short one (a quarter second, and the start of Python, which a loaded machine makes
    seconds long) must end within it, which a 1.5-second budget left little room for."""
    from build_fixtures import _SLOW, _SLOW_CLAIMS, Fixture

    from reprobridge_sdk.api import load
    from reprobridge_sdk.model.build import ReproducerRecord

    fixture = Fixture(
        "short-smoke",
        {"train.py": _SLOW.format(knob="EPOCHS = 24", epochs="EPOCHS")},
        _SLOW_CLAIMS,
        ("a smoke run past a budget given on the command line",),
    )
    repo, claims = write_repo(tmp_path / "raw", fixture)
    out = tmp_path / "out"
    env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(env_cache)}
    argv = _cli(str(repo), "--claims", str(claims), "-o", str(out), cache=env_cache)
    done = subprocess.run(
        [*argv, "--smoke-budget", "3", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["stopped_at"] not in {"intake", "planner", "builder", "reproducer"}, done.stderr
    repro = ReproducerRecord.model_validate_json((out / ".rra-build/reproducer.json").read_text())
    assert [a.exit_status for a in repro.attempts] == [None, 0]  # stopped at 3 s, then short
    [fix] = repro.fixes
    assert (fix.rule, fix.kind, fix.launcher) == ("smoke-scope", "convenience", "train-smoke")
    launchers = {item.id: item for item in load(out).manifest.launchers}
    assert launchers["train-smoke"].env.get("REPRO_EPOCHS") == "1"
    assert "REPRO_EPOCHS" not in launchers["train-scored"].env  # the full scope, unchanged

    again = subprocess.run(
        [*argv, "--resume", "--json", "--smoke-budget", "600", "--max-minutes", "0.0001"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(again.stdout)
    assert again.returncode == 1
    assert report["reused"] == ["intake", "planner", "builder"]
    assert report["stopped_at"] == "reproducer"
    codes = [(f["code"], f["message"].split(":")[0]) for f in report["findings"]]
    assert ("B013", "reproducer") in codes
    assert "B016" in {code for code, _ in codes}
