"""``reprobridge run`` and ``reprobridge extract`` as a user calls them (real subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.cli._run import split_target
from reprobridge_sdk.run import load_record

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # The toy artifact has validation errors on purpose (a template error, seeds that do not
    # match a statistic) to exercise the runner: `run` would refuse it without --no-validate.
    extra = ["--no-validate"] if args and args[0] == "run" else []
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args, *extra],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_run_json_events_and_exit_0(toy: Path) -> None:
    done = _cli(
        "run", str(toy), "ok", "--env", "current", "--format", "json", "--seeds", "3,4", "-j", "2"
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds.count("run-started") == 2
    assert kinds.count("run-finished") == 2
    assert kinds[-1] == "summary"
    summary = events[-1]
    assert (summary["runs"], summary["succeeded"], summary["exit_code"]) == (2, 2, 0)
    acc = next(t for t in summary["tasks"] if t["task"] == "acc")
    assert acc["values"] == [93.0, 94.0]
    assert acc["value"] == pytest.approx(93.5)


def test_run_from_inside_the_artifact_with_a_failed_run(toy: Path) -> None:
    done = _cli("run", ".", "fail", "--env", "current", cwd=toy)
    assert done.returncode == 1
    assert "deprecated" not in done.stderr
    assert "[toy] loaded" in done.stderr  # streamed to the console
    (run_dir,) = (p for p in (toy / "runs").iterdir() if (p / "record.json").is_file())
    assert load_record(run_dir).failure is not None


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["nope"], "N001"),
        (["ok", "--scope", "smoke"], "N002"),
        (["ok", "--seeds", "a,b"], "N003"),
        (["ok", "-j", "0"], "N004"),
    ],
)
def test_run_usage_errors_exit_2(toy: Path, args: list[str], code: str) -> None:
    done = _cli("run", "-C", str(toy), *args, "--env", "current")
    assert done.returncode == 2
    assert f": {code} error " in done.stdout
    assert "Traceback" not in done.stderr
    assert code not in done.stderr


def test_run_on_a_directory_without_manifest_exits_2(tmp_path: Path) -> None:
    done = _cli("run", str(tmp_path), "--env", "current")
    assert done.returncode == 2
    assert " N007 error " in done.stdout


def test_the_old_run_spelling_without_path_still_works_with_a_warning(toy: Path) -> None:
    old = _cli("run", "ok", "--env", "current", "--dry-run", cwd=toy)
    new = _cli("run", ".", "ok", "--env", "current", "--dry-run", cwd=toy)
    assert old.returncode == new.returncode == 0, old.stderr
    assert old.stdout == new.stdout  # the plan, a listing on stdout
    assert "run LAUNCHER... without PATH is deprecated" in old.stderr
    assert "use run . ok" in old.stderr
    assert "deprecated" not in new.stderr


def test_extract_replays_a_run(toy: Path) -> None:
    assert _cli("run", str(toy), "ok", "--env", "current", "--seeds", "2").returncode == 0
    (run_dir,) = (p for p in (toy / "runs").iterdir() if (p / "record.json").is_file())
    done = _cli("extract", "--run", str(run_dir), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "deprecated" not in done.stderr
    for old in (["extract", str(run_dir)], ["extract", str(run_dir), "-C", str(toy)]):
        again = _cli(*old, "--format", "json")
        assert again.returncode == 0, again.stderr
        assert again.stdout == done.stdout
        assert "extract RUN_DIR is deprecated" in again.stderr
    with_path = _cli("extract", str(toy), "--run", str(run_dir), "--format", "json")
    assert with_path.stdout == done.stdout
    twice = _cli("extract", str(toy), "-C", str(toy), "--run", str(run_dir))
    assert twice.returncode == 2
    assert "named twice" in twice.stderr
    measured = json.loads(done.stdout)["measurements"]
    assert [(m["task"], m["source"]) for m in measured] == [
        ("acc", "log"),
        ("acc-json", "output:metrics"),
    ]
    assert measured[0]["value"] == 92.0
    assert measured[1]["value"] == pytest.approx(92.0)
    assert measured == load_record(run_dir).model_dump(mode="json")["measurements"]


def test_extract_on_a_sample_log(toy: Path, tmp_path: Path) -> None:
    log = tmp_path / "sample.log"
    log.write_text("acc=0.5\nacc=0.25\n")
    metrics = tmp_path / "m.json"
    metrics.write_text('{"acc": 0.5}')
    done = _cli(
        "extract", str(toy), "--launcher", "ok", "--log", str(log),
        "--file", f"metrics={metrics}", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    values = [m["value"] for m in json.loads(done.stdout)["measurements"]]
    assert values == [25.0, 50.0]
    missing = _cli("extract", str(toy), "--launcher", "ok", "--log", str(log), "--format", "json")
    assert missing.returncode == 1
    measured = json.loads(missing.stdout)["measurements"]
    assert measured[1]["value"] is None
    assert measured[1]["error"].startswith("missing-file")


def test_extract_samples_of_the_example() -> None:
    done = _cli("extract", str(EXAMPLE), "--samples", "--format", "json")
    assert done.returncode == 0, done.stderr
    checks = json.loads(done.stdout)["samples"]
    assert checks
    assert all(c["ok"] for c in checks)


def test_extract_usage_errors(toy: Path, tmp_path: Path) -> None:
    bad_run = _cli("extract", str(tmp_path))
    assert bad_run.returncode == 2
    assert " N006 error " in bad_run.stdout
    unknown = _cli("extract", str(toy), "--launcher", "nope", "--log", str(toy / "rra.yaml"))
    assert unknown.returncode == 2
    assert " N001 error " in unknown.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), (".", [])),
        ((".",), (".", [])),
        (("ok", "fail"), ("ok", ["fail"])),  # no rra.yaml here: the first is PATH
        (("../toy", "ok"), ("../toy", ["ok"])),
        (("x/rra.yaml",), ("x/rra.yaml", [])),
    ],
)
def test_split_target(
    args: tuple[str, ...],
    expected: tuple[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert split_target(args, None) == expected


def test_split_target_existing_artifact_dir_and_artifact_option(toy: Path) -> None:
    assert split_target(("ok",), str(toy)) == (str(toy), ["ok"])
    assert split_target((str(toy), "ok"), None) == (str(toy), ["ok"])


def test_unwritable_runs_directory_exits_2(toy: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the runs directory should be\n")
    done = _cli("run", str(toy), "ok", "--env", "current", "--runs-dir", str(blocker))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert blocker.read_text() == "a file where the runs directory should be\n"


@pytest.mark.parametrize("seeds", ["a,b", "", " , ", "1.5"])
def test_seeds_that_are_not_integers_in_process(toy: Path, seeds: str) -> None:
    """The same CLI in this process (click's runner), so the finding's fields can be checked."""
    from click.testing import CliRunner

    from reprobridge_sdk.cli import cli

    done = CliRunner().invoke(cli, ["run", str(toy), "ok", "--env", "current", "--seeds", seeds])
    assert done.exit_code == 2
    assert " N003 error " in done.stdout
    assert "hint: e.g. --seeds 0,1,2" in done.stdout
    assert not (toy / "runs").exists()


@pytest.mark.parametrize(
    "size",
    ["12X", "GiB", "0B", "512KiB", "-1GiB", "1e9", "2TiB", "1 GiB", "\x1b[31m1GiB", "9" * 40],
)
def test_a_bad_sandbox_tmp_size_is_n004_with_a_hint(toy: Path, size: str) -> None:
    """A size that is none, too small (0 would leave /tmp unbounded) or too large is refused
    before anything runs: N004 naming the option, a hint, exit 2, no run directory."""
    done = _cli("run", str(toy), "ok", "--env", "current", "--sandbox", "--sandbox-tmp", size)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "\x1b" not in done.stdout
    line, hint = done.stdout.splitlines()[:2]
    assert " N004 error --sandbox-tmp " in line
    assert hint.strip().startswith("hint: give a size with its unit")
    assert not (toy / "runs").exists() or not any((toy / "runs").iterdir())


def test_sandbox_tmp_without_the_sandbox_is_n004(toy: Path) -> None:
    done = _cli("run", str(toy), "ok", "--env", "current", "--sandbox-tmp", "64MiB")
    assert done.returncode == 2, done.stdout + done.stderr
    assert " N004 error --sandbox-tmp " in done.stdout and "hint: add --sandbox" in done.stdout
