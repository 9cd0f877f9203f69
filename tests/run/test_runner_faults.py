"""Faults around the runner process itself: floods, kill -9, Ctrl-C, a failing log write.

These run the runner in a subprocess (the CLI, or a short Python driver) so it can be
killed, interrupted or resource-limited like a real user's runner.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.run import iter_runs, load_record, run

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _schema(record: dict[str, object]) -> dict[str, object]:
    """The evidence schema of the record's own version (a local run's is 1.1: it names its
    environment snapshot by digest)."""
    path = SCHEMAS / f"evidence-{record['record_version']}.schema.json"
    schema: dict[str, object] = json.loads(path.read_text("utf-8"))
    return schema


# The driver's peak is what Python allocated (tracemalloc), not the process's resident size:
# how much of freed memory the C allocator keeps, and where its threads' arenas fall, varies
# from run to run and with the machine's load, while every buffer of the runner that held the
# output (bytes, lists, strings) is a Python allocation that tracemalloc counts.
DRIVER = """
import json, resource, sys, tracemalloc
from reprobridge_sdk.run import run
limit = int(sys.argv[4])
if limit:
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
tracemalloc.start()
summary = run(sys.argv[1], [sys.argv[2]], env_mode="current", kill_grace=0.5,
              jobs=1, **json.loads(sys.argv[3]))
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"exit": summary.exit_code, "peak": peak,
                  "runs": [str(r.run_dir) for r in summary.results]}))
"""


def _driver(toy: Path, launcher: str, limit: int = 0, **kwargs: object) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(toy), launcher, json.dumps(kwargs), str(limit)],
        capture_output=True,
        check=True,
        timeout=300,
    )
    result: dict[str, object] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def _peak_with_flood(toy: Path, megabytes: int) -> int:
    manifest = toy / "rra.yaml"
    text = manifest.read_text()
    text = text.replace("params: {mb: 4}", f"params: {{mb: {megabytes}}}")
    manifest.write_text(text)
    result = _driver(toy, "flood")
    assert result["exit"] == 0
    peak = result["peak"]
    assert isinstance(peak, int)
    manifest.write_text(text.replace(f"params: {{mb: {megabytes}}}", "params: {mb: 4}"))
    return peak


def test_flood_keeps_runner_memory_flat(toy: Path) -> None:
    small = _peak_with_flood(toy, 4)
    large = _peak_with_flood(toy, 256)
    # 252 MiB more output through the runner must not show up in its peak memory: the bound
    # is under 2% of the extra output.
    assert abs(large - small) < 4 * 1024 * 1024, (small, large)
    newest = list(iter_runs(toy / "runs"))[-1][1]
    assert newest.log is not None
    assert newest.log.size == 256 * 1024 * 1024 + len(b"acc=0.75\n")
    assert [m.value for m in newest.measurements] == [0.75]


def test_log_write_failure_is_recorded_and_the_process_drained(toy: Path) -> None:
    # RLIMIT_FSIZE makes writes past 1 MiB fail (EFBIG), as a full disk would.
    result = _driver(toy, "flood-plain", limit=1 << 20)
    assert result["exit"] == 1
    runs = result["runs"]
    assert isinstance(runs, list)
    (run_dir,) = runs
    record = load_record(run_dir)
    assert record.failure is not None
    assert record.failure.reason == "internal-error"
    assert record.exit_code == 0  # the process was drained to its end, not blocked
    assert (Path(run_dir) / "log.txt").stat().st_size <= 1 << 20


def _wait_running(runs: Path, launcher: str, timeout: float = 120.0) -> Path:
    """The run directory of ``launcher`` once its process wrote its pid and printed; the
    timeout is a hang guard (a runner starts in a second, a loaded machine's in tens)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in runs.glob(f"{launcher}-*"):
            log = child / "log.txt"
            if (child / "pid.txt").exists() and log.exists() and log.stat().st_size > 0:
                return child
        time.sleep(0.05)
    pytest.fail("the run did not start")


def _kill_group(pid_file: Path) -> None:
    """Stop the toy process the killed runner left behind (it runs in its own group)."""
    pid = int(pid_file.read_text().split()[0])
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def test_kill_9_leaves_an_interrupted_record_and_earlier_runs_intact(toy: Path) -> None:
    earlier = run(toy, ["shell"], env_mode="current").results[0]
    earlier_bytes = (earlier.run_dir / "record.json").read_bytes()
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            "--no-validate",
            str(toy),
            "sleeper",
            "--env",
            "current",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        run_dir = _wait_running(toy / "runs", "sleeper")
        running = json.loads((run_dir / "record.json").read_text())
        assert running["status"] == "running"
        assert running["runner"]["pid"] == runner.pid
        assert running["record_version"] == "1.1"
        jsonschema.validate(running, _schema(running))
        assert load_record(run_dir).status == "running"
        runner.kill()
        runner.wait(timeout=30)
        record = load_record(run_dir)
        assert record.status == "interrupted"
        assert record.failure is not None
        assert record.failure.reason == "interrupted"
        assert (earlier.run_dir / "record.json").read_bytes() == earlier_bytes
        assert load_record(earlier.run_dir).status == "succeeded"
        assert earlier.record.log is not None
        assert file_sha256(earlier.run_dir / "log.txt") == earlier.record.log.sha256
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        for pid_file in (toy / "runs").glob("sleeper-*/pid.txt"):
            _kill_group(pid_file)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_finalise_an_interrupted_record(toy: Path, signum: int) -> None:
    command = [sys.executable, "-m", "reprobridge_sdk", "run", "--no-validate", str(toy), "sleeper"]
    runner = subprocess.Popen(
        [*command, "--env", "current", "--format", "json", "--kill-grace", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    seen: list[bytes] = []
    try:
        # The signal goes once the runner has reported the landmark: a log that is not empty
        # is not enough (the runner writes the log before it matches the landmarks, and a
        # signal between the two left no landmark on a loaded machine).
        assert runner.stdout is not None
        while not seen or json.loads(seen[-1])["event"] != "landmark":
            line = runner.stdout.readline()
            assert line, b"".join(seen)  # the runner ended before the landmark
            seen.append(line)
        run_dir = _wait_running(toy / "runs", "sleeper")
        runner.send_signal(signum)
        rest, _ = runner.communicate(timeout=60)
        out = b"".join(seen) + rest
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()  # reaped here, not by a later test's garbage collection
        if runner.stdout is not None:
            runner.stdout.close()
    assert runner.returncode == 130
    record = load_record(run_dir)
    assert record.status == "interrupted"
    assert record.failure is not None
    assert (record.failure.reason, record.failure.last_landmark) == ("interrupted", "loaded")
    assert "runner" not in json.loads((run_dir / "record.json").read_text())
    events = [json.loads(line) for line in out.decode().splitlines()]
    assert [e["event"] for e in events] == ["run-started", "landmark", "run-finished", "summary"]
    assert events[-1]["interrupted"] is True
    pid = int((run_dir / "pid.txt").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


RECORD_DRIVER = """
import json, resource, signal, sys
from reprobridge_sdk.run import run
limit = int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

def limit_once_started(event):  # the snapshot and the first record are written by then
    if limit and event.event == "run-started":
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

summary = run(sys.argv[1], ["ok"], env_mode="current", jobs=1, seeds=[1],
              on_event=limit_once_started)
(result,) = summary.results
failure = result.record.failure
print(json.dumps({"exit": summary.exit_code, "run_dir": str(result.run_dir),
                  "status": result.record.status,
                  "failure": failure.model_dump() if failure else None}))
"""


def _record_driver(toy: Path, limit: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", RECORD_DRIVER, str(toy), str(limit)],
        capture_output=True,
        check=True,
        timeout=300,
    )
    result: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def test_a_final_record_that_cannot_be_written(toy: Path) -> None:
    """The final record is larger than the first ('running') one: a file-size limit set
    once the run has started makes the last write fail (EFBIG), as a full disk would.
    """
    honest = _record_driver(toy, 0)
    assert (honest["exit"], honest["status"]) == (0, "succeeded")
    final_size = (Path(honest["run_dir"]) / "record.json").stat().st_size
    # The final record adds the end, the exit code, the log, landmarks, outputs and values
    # (hundreds of bytes); its size varies between runs by a few digits of the duration.
    result = _record_driver(toy, final_size - 64)
    assert result["exit"] == 1
    assert result["status"] == "failed"
    assert result["failure"]["reason"] == "internal-error"
    assert result["failure"]["detail"].startswith("cannot write the record:")
    # On disk, a whole failed record says why (it used to stay 'running' and read as
    # interrupted: the hardening issue's "full disk" case); it is valid against the schema.
    on_disk = json.loads((Path(result["run_dir"]) / "record.json").read_text())
    assert on_disk["status"] == "failed"
    assert on_disk["failure"]["detail"].startswith("cannot write the record:")
    jsonschema.validate(on_disk, _schema(on_disk))
    assert load_record(result["run_dir"]).status == "failed"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a killed process not yet reaped is a zombie: gone
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def test_a_background_process_holding_the_pipe_is_killed_after_the_leader_exits(
    toy: Path,
) -> None:
    """The shell exits at once; the process it left in the background keeps the output pipe
    open and would run for a minute: after DRAIN_WAIT the runner kills the group."""
    manifest = toy / "rra.yaml"
    launcher = (
        "  - id: leaves-child\n"
        "    shell: true\n"
        "    argv: [\"sh -c 'echo $$ > {run_dir}/child.pid; sleep 60; echo late' & "
        'until [ -s {run_dir}/child.pid ]; do sleep 0.05; done; echo acc=0.5"]\n'
        "    scope: smoke\n"
        "    measurements: [{task: acc, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]\n"
    )
    text = manifest.read_text()
    manifest.write_text(text.replace("launchers:\n", "launchers:\n" + launcher, 1))
    summary = run(toy, ["leaves-child"], env_mode="current")
    (result,) = summary.results
    assert (summary.exit_code, result.record.status, result.record.exit_code) == (0, "succeeded", 0)
    assert [m.value for m in result.record.measurements] == [0.5]
    child = int((result.run_dir / "child.pid").read_text())
    # SIGKILL was sent to the group before run() returned; its delivery may lag a moment.
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
    assert "late" not in (result.run_dir / "log.txt").read_text()


def test_a_signal_between_two_waits_of_the_scheduler_still_stops_the_runs(
    toy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C can arrive at any instant of the scheduling loop, not only while it waits.

    The signal is raised here, in process and in the main thread, at one precise instant: when
    the loop looks for runs to release, outside its wait, once the sleeper runs. Wrapping that
    method is the only way to choose the instant (a signal sent from outside lands wherever the
    loop happens to be); the runs, processes and records are real. A handler that raised
    KeyboardInterrupt there left the sleeper running for its whole 60 s while the runner
    waited for it.
    """
    from reprobridge_sdk.run import runner

    real = runner._Plan.next_broken
    raised: list[float] = []

    def next_broken(plan: Any) -> Any:
        if not raised and any((toy / "runs").glob("sleeper-*/pid.txt")):
            raised.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)
        return real(plan)

    monkeypatch.setattr(runner._Plan, "next_broken", next_broken)
    try:
        summary = run(toy, ["sleeper"], env_mode="current", kill_grace=1)
    finally:
        for pid_file in (toy / "runs").glob("sleeper-*/pid.txt"):
            _kill_group(pid_file)
    assert raised, "the sleeper never ran"
    assert (summary.interrupted, summary.exit_code) == (True, 130)
    [result] = summary.results
    assert result.record.status == "interrupted"
    assert result.record.failure is not None
    assert result.record.failure.reason == "interrupted"
    pid = int((result.run_dir / "pid.txt").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
