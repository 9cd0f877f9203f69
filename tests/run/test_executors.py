"""Executors on a real Dask ``distributed`` cluster (LocalCluster with worker processes).

Each test checks what a distributed run must share with a local one: the same records (status,
argv, landmarks, measurements, digests that match the files), whatever the file system is
shared or not; and the distributed failure modes: a run no worker can hold (refused before
anything is submitted), a worker killed in the middle of a run (one final record, the retry's,
naming the lost attempt), and a client interrupted (remote processes killed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import yaml
from catalog_check import check_as_catalogued

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

from reprobridge_sdk.digest import file_sha256  # noqa: E402
from reprobridge_sdk.errors import UsageError  # noqa: E402
from reprobridge_sdk.run import RunResult, iter_runs, load_record, run  # noqa: E402
from reprobridge_sdk.run.executors import (  # noqa: E402
    Capacity,
    ExecutorOptions,
    make_executor,
    placement_problem,
)
from reprobridge_sdk.run.ledger import read_ledger  # noqa: E402
from reprobridge_sdk.validation import validate  # noqa: E402

CLI = [sys.executable, "-m", "reprobridge_sdk"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.LocalCluster]:
    """Two worker processes, one thread each, as a scheduler another machine would offer."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        host="127.0.0.1",
    ) as local:
        yield local


def _comparable(result: RunResult) -> tuple[object, ...]:
    record = result.record
    return (
        record.launcher,
        record.seed,
        record.status,
        [lm.id for lm in record.landmarks],
        [(m.task, m.value, m.source) for m in record.measurements],
        [o.id for o in record.outputs],
    )


def _files_match_record(result: RunResult) -> None:
    record = load_record(result.run_dir)
    assert record.log is not None
    assert file_sha256(result.run_dir / record.log.path) == record.log.sha256
    for output in record.outputs:
        assert file_sha256(result.run_dir / output.path) == output.sha256


def test_dask_local_gives_the_records_of_a_local_run(toy: Path, tmp_path: Path) -> None:
    local = run(toy, ["ok"], env_mode="current", runs_dir=tmp_path / "local")
    remote = run(toy, ["ok"], env_mode="current", executor="dask-local", jobs=2)
    assert remote.exit_code == 0
    assert sorted(map(_comparable, local.results)) == sorted(map(_comparable, remote.results))
    schema = json.loads((REPO / "schemas" / "evidence-1.1.schema.json").read_text("utf-8"))
    for result in remote.results:
        assert result.run_dir.parent == toy / "runs"
        assert result.record.executor == "dask"
        assert result.record.lost_attempts == []
        _files_match_record(result)
        written = json.loads((result.run_dir / "record.json").read_text("utf-8"))
        assert written["record_version"] == "1.1"  # it names its executor, a 1.1 field
        jsonschema.validate(written, schema)
    assert local.results[0].record.executor is None
    written = json.loads((local.results[0].run_dir / "record.json").read_text("utf-8"))
    # a local run names its snapshot by digest (1.1); a remote one embeds it (it travels alone)
    assert written["record_version"] == "1.1"
    assert written["environment"] is None
    assert len(written["environment_sha256"]) == 64
    assert all(r.record.environment is not None for r in remote.results)
    assert all(r.record.environment_sha256 is None for r in remote.results)
    assert "executor" not in written
    assert "lost_attempts" not in written
    # as an editor reads them: SchemaStore's mapping, check-jsonschema
    records = [r.run_dir / "record.json" for r in remote.results]
    assert check_as_catalogued(records) == {str(p): [] for p in records}


def test_without_a_shared_file_system_runs_travel_back(
    toy: Path, cluster: distributed.LocalCluster
) -> None:
    options = ExecutorOptions(scheduler=cluster.scheduler_address, shared_fs=False)
    events: list[str] = []
    summary = run(
        toy,
        ["ok", "shell"],
        env_mode="current",
        executor="dask",
        executor_options=options,
        on_event=lambda e: events.append(e.event),
    )
    assert summary.exit_code == 0
    assert len(summary.results) == 4
    on_disk = {path.name: record for path, record in iter_runs(toy / "runs")}
    assert sorted(on_disk) == sorted(r.run_id for r in summary.results)
    for result in summary.results:
        assert result.run_dir.parent == toy / "runs"
        _files_match_record(result)
    records = [r.run_dir / "record.json" for r in summary.results]
    assert check_as_catalogued(records) == {str(p): [] for p in records}
    # the workers wrote in their own scratch space, never in the artifact: no staging left
    assert not [p for p in (toy / "runs").iterdir() if p.is_dir() and p.name.startswith(".")]
    # the client alone wrote the run ledger: one chain, one entry per run
    ledger = read_ledger(toy / "runs")
    assert ledger.findings == ()
    assert sorted(e.run_id for e in ledger.entries) == sorted(on_disk)
    assert events.count("run-started") == 4
    assert events.count("run-finished") == 4
    assert events.count("landmark") == 3 * 3 + 2
    assert events[-1] == "summary"


def test_an_executor_given_by_the_caller_is_left_open(
    toy: Path, cluster: distributed.LocalCluster
) -> None:
    options = ExecutorOptions(scheduler=cluster.scheduler_address, shared_fs=True)
    with make_executor("dask", options=options) as executor:
        first = run(toy, ["shell"], env_mode="current", executor=executor)
        second = run(toy, ["shell"], env_mode="current", executor=executor)
        assert executor.slots == 4
    assert first.exit_code == second.exit_code == 0


def _with_resources(toy: Path, resources: dict[str, object]) -> None:
    manifest = toy / "rra.yaml"
    data = yaml.safe_load(manifest.read_text("utf-8"))
    data["rra_version"] = "1.1"
    for launcher in data["launchers"]:
        if launcher["id"] == "ok":
            launcher["resources"] = resources
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")


def test_a_run_no_worker_can_hold_is_refused_before_submission(toy: Path) -> None:
    _with_resources(toy, {"cpus": 4096, "memory": "1TiB"})
    # a subprocess, so that a hang fails the test at its timeout instead of hanging the suite;
    # the timeout is a hang guard only (importing distributed and starting a local cluster
    # take tens of seconds on a loaded machine; the refusal itself comes before any worker)
    done = subprocess.run(
        [
            *CLI,
            "run",
            str(toy),
            "ok",
            "--env",
            "current",
            "--no-validate",
            "--executor",
            "dask-local",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "N022 error" in done.stdout
    assert not (toy / "runs").exists() or not any((toy / "runs").iterdir())


def test_the_refusal_is_a_usage_error_in_the_python_api_too(toy: Path) -> None:
    _with_resources(toy, {"gpus": 2})
    with pytest.raises(UsageError) as caught:
        run(toy, ["ok"], env_mode="current", executor="dask-local", jobs=1)
    [problem] = caught.value.findings
    assert problem.code == "N022"
    assert "'ok'" in problem.message
    assert not (toy / "runs").exists() or not any((toy / "runs").iterdir())


def test_placement_follows_cpus_memory_and_gpus(toy: Path) -> None:
    _with_resources(toy, {"cpus": 2, "memory": "3GiB", "gpus": 1})
    from reprobridge_sdk.api import load

    launchers = load(toy).manifest.launchers
    small = Capacity(cpus=2, memory=2 * 2**30, gpus=1)
    large = Capacity(cpus=4, memory=8 * 2**30, gpus=1)
    no_gpu = Capacity(cpus=64, memory=None, gpus=0)
    assert placement_problem(launchers, [large]) is None
    assert placement_problem(launchers, [small, large]) is None
    problem = placement_problem(launchers, [small, no_gpu])
    assert problem is not None
    assert "'ok'" in problem


def test_resources_are_placed_on_workers_that_declare_them(toy: Path) -> None:
    _with_resources(toy, {"cpus": 1, "memory": "64MiB"})
    summary = run(toy, ["ok"], env_mode="current", executor="dask-local", jobs=1)
    assert summary.exit_code == 0
    assert {r.record.status for r in summary.results} == {"succeeded"}


def test_unknown_executor_and_missing_scheduler_are_usage_errors(toy: Path) -> None:
    with pytest.raises(UsageError) as unknown:
        run(toy, ["ok"], env_mode="current", executor="kubernetes")
    assert [f.code for f in unknown.value.findings] == ["N020"]
    with pytest.raises(UsageError) as missing:
        make_executor("dask")
    assert [f.code for f in missing.value.findings] == ["N004"]


def test_an_unreachable_scheduler_is_n021_not_a_hang() -> None:
    options = ExecutorOptions(scheduler="tcp://127.0.0.1:9", start_timeout=3)
    executor = make_executor("dask", options=options)
    started = time.monotonic()
    with pytest.raises(UsageError) as caught:
        executor.slots  # noqa: B018 - connecting is what is tested
    assert [f.code for f in caught.value.findings] == ["N021"]
    # A guard, not a measure: without the 3 s option the client would wait the default 120 s;
    # a loaded machine adds seconds to the 3, not a minute.
    assert time.monotonic() - started < 60


def _slow_launcher(toy: Path, seconds: float, release: Path | None = None) -> None:
    """A launcher ``long`` that prints ``started PID``, then waits ``seconds`` (or, given
    ``release``, until that file exists, for ``seconds`` at most) and prints ``acc=0.5``."""
    manifest = toy / "rra.yaml"
    data = yaml.safe_load(manifest.read_text("utf-8"))
    if release is None:
        wait = f"time.sleep({seconds})"
    else:
        wait = (
            f"end = time.monotonic() + {seconds}\n"
            f"while not os.path.exists({str(release)!r}) and time.monotonic() < end:\n"
            "    time.sleep(0.05)"
        )
    data["launchers"].append(
        {
            "id": "long",
            "argv": [
                "python",
                "-c",
                "import os, sys, time\nprint('started', os.getpid(), flush=True)\n"
                f"{wait}\nprint('acc=0.5')",
            ],
            "scope": "smoke",
            "landmarks": [{"id": "started", "pattern": "^started"}],
            "measurements": [{"task": "acc", "extract": {"kind": "regex", "pattern": "acc=(.*)"}}],
        }
    )
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")


def _started_pid(run: Path) -> int | None:
    """The PID the ``long`` launcher of the run in ``run`` printed, once its log holds it (the
    run's record can say ``running`` before the program's first line reaches its log)."""
    try:
        words = (run / "log.txt").read_text().split()
    except FileNotFoundError:
        return None
    return int(words[1]) if len(words) > 1 and words[0] == "started" else None


def _wait_for(predicate: object, timeout: float = 120.0) -> None:
    """Poll ``predicate`` until true; the timeout is a hang guard (a dask run starts in
    seconds, a loaded machine's in tens of seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    pytest.fail("timed out waiting")


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, killed but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _running_record(runs: Path) -> Path | None:
    """The run directory whose record is running and whose log holds the whole ``started
    PID`` line (the runner may copy a line to the log in more than one write)."""
    if not runs.is_dir():
        return None
    for path in runs.iterdir():
        record = path / "record.json"
        if record.is_file() and json.loads(record.read_text())["status"] == "running":
            log = path / "log.txt"
            if log.is_file() and re.search(rb"^started \d+\r?\n", log.read_bytes(), re.M):
                return path
    return None


def test_a_worker_lost_mid_run_gives_one_final_record_the_retrys(toy: Path) -> None:
    # The first attempt waits for a release that comes only once its worker is killed (a fixed
    # 3 s run could end before a loaded machine's killer got to it: no lost attempt); the
    # retry finds the release and ends. 300 s: a hang guard.
    release = toy.parent / "release-long"
    _slow_launcher(toy, 300, release=release)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        options = ExecutorOptions(scheduler=cluster.scheduler_address, shared_fs=True)
        with make_executor("dask", options=options) as executor:
            client = executor.client  # type: ignore[attr-defined]
            pids = list(client.run(os.getpid).values())
            import threading

            failed: list[BaseException] = []

            def _kill_when_running() -> None:
                try:
                    _wait_for(lambda: _running_record(toy / "runs") is not None)
                    lost = _running_record(toy / "runs")
                    assert lost is not None
                    launched = int((lost / "log.txt").read_text().split()[1])
                    os.kill(pids[0], signal.SIGKILL)
                    # the worker's watchdog kills the lost attempt's process: only then is
                    # the release given, so that only the retry ever sees it
                    _wait_for(lambda: not _alive(launched))
                except BaseException as exc:  # reported by the test, not lost in the thread
                    failed.append(exc)
                finally:
                    release.write_text("")  # the retry ends (and so does a run not killed)

            killer = threading.Thread(target=_kill_when_running)
            killer.start()
            summary = run(toy, ["long"], env_mode="current", executor=executor)
            killer.join()
    assert not failed, failed
    assert summary.exit_code == 0
    [result] = summary.results
    assert result.record.status == "succeeded"
    assert [a.reason for a in result.record.lost_attempts] == ["worker-lost"]
    # exactly one run directory, whose record is final: the lost attempt's was removed
    assert [p.name for p in (toy / "runs").iterdir() if p.is_dir()] == [result.run_id]
    assert [e.run_id for e in read_ledger(toy / "runs").entries] == [result.run_id]
    assert load_record(result.run_dir).lost_attempts == result.record.lost_attempts


def test_interrupting_the_client_kills_the_remote_runs(toy: Path) -> None:
    _slow_launcher(toy, 300)
    process = subprocess.Popen(
        [
            *CLI,
            "run",
            str(toy),
            "long",
            "--env",
            "current",
            "--no-validate",
            "--executor",
            "dask-local",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: _running_record(toy / "runs") is not None)
        run_dir = _running_record(toy / "runs")
        assert run_dir is not None
        child = int((run_dir / "log.txt").read_text().split()[1])
        process.send_signal(signal.SIGINT)
        # a hang guard: stopping the remote run and closing the local cluster take seconds,
        # tens on a loaded machine
        _, stderr = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    record = load_record(run_dir)
    assert record.status == "interrupted"
    _wait_for(lambda: not _alive(child))


def test_batches_give_the_same_table_whatever_the_executor(
    tmp_path: Path, cluster: distributed.LocalCluster
) -> None:
    """In process on the module's cluster (a scheduler's address), and through the command
    line on a local cluster of its own (``--executor dask-local``)."""
    example = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
    batch = tmp_path / "batch"
    for name in ("a", "b", "c"):
        shutil.copytree(example, batch / name, ignore=shutil.ignore_patterns("runs"))
    local = validate(batch, jobs=1)
    options = ExecutorOptions(scheduler=cluster.scheduler_address, shared_fs=True)
    with make_executor("dask", options=options) as executor:
        spread = validate(batch, mapper=executor.map)
    assert [(a.label, [f.code for f in a.findings]) for a in local.artifacts] == [
        (a.label, [f.code for f in a.findings]) for a in spread.artifacts
    ]
    done = [
        subprocess.run(
            [
                *CLI,
                "audit",
                "--table",
                *sorted(map(str, batch.iterdir())),
                "--format",
                "json",
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        for extra in ([], ["--executor", "dask-local", "-j", "2"])
    ]
    assert done[0].returncode == done[1].returncode
    assert json.loads(done[0].stdout) == json.loads(done[1].stdout)


def test_a_batch_on_a_remote_executor_needs_a_shared_file_system(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "validate", str(tmp_path), "--executor", "dask", "--scheduler", "tcp://x:1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "N004" in done.stdout


@pytest.mark.parametrize("name", ["a/../../escaped.txt", "../escaped.txt", "/abs.txt"])
def test_a_worker_without_the_data_filter_refuses_a_member_that_leaves_staging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Hostile: Python 3.11.0-3.11.3 lack tarfile's ``data`` filter, and the check that
    stands in for it refuses a member whose normalized name leaves the staging folder, not
    only one that starts with ``/`` or ``..``. (The filter is taken away here to reach that
    path on a newer interpreter.)"""
    import io
    import tarfile

    from reprobridge_sdk.run.executors._remote import _extract

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    monkeypatch.delattr(tarfile, "data_filter")
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(ValueError, match="refusing archive member"):
        _extract(buffer.getvalue(), staging)
    assert not (tmp_path / "escaped.txt").exists()
    assert list(staging.iterdir()) == []
