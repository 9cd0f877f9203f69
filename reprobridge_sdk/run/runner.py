"""The runner: launchers x seeds -> processes -> evidence records (spec §9).

:func:`run` selects launchers (by id and scope), expands them over seeds, orders them by
``needs``, runs independent ones in parallel (``jobs`` worker threads, one subprocess each),
and writes one run directory with an evidence record per run (see
:mod:`reprobridge_sdk.run.evidence` for the layout).

Selection. With no ids every launcher is selected; ``scope`` keeps only launchers of that
scope (an id named explicitly but outside the scope is a usage error, N002). ``seeds``
replaces the seeds of launchers that declare seeds; a launcher without seeds runs once.

Dependencies. A launcher runs after every launcher it ``needs`` has finished with all its
runs succeeded; if one failed, its runs are recorded as ``dependency-failed`` without being
started. A needed launcher that is not selected is satisfied by an earlier succeeded run in
the runs directory, and is added to this invocation otherwise.

Environment. ``env_mode="cached"`` runs inside the virtual environment built from the lock
(its ``bin`` first on ``PATH``, ``VIRTUAL_ENV`` set, so ``python`` in argv is that
interpreter); ``"current"`` runs with the current interpreter's directory first on ``PATH``
and records as ``drift`` what differs from the lock in a way that matters to reproduction:
lock entries missing or at another version, and another Python ``major.minor`` (extra
distributions are not drift). The snapshot and the drift are taken once per invocation, in
process. Then the launcher's ``env`` is applied (templated), and ``PYTHONUNBUFFERED=1``
unless set, so landmarks arrive as printed.

Failure reasons, by priority: ``interrupted``, ``environment-error``, ``template-error``,
``command-not-found`` (also exit status 127 from a shell launcher), ``timeout``,
``exit-status``, ``missing-output``, ``extraction-failed``, ``dependency-failed`` (the run
was not started), ``internal-error`` (e.g. the log could not be written).

Outputs. Each declared output is looked up (relative to the working directory, templated)
before the run and after it. An output that existed before and whose inode, size and
modification time are unchanged afterwards is ``preexisting``: it is recorded but never used
as a measurement source, and a required one fails the run with ``missing-output``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.extraction import ExtractionError, render_template
from reprobridge_sdk.model import Launcher, Manifest
from reprobridge_sdk.model.evidence import (
    EnvironmentSnapshot,
    EvidenceRecord,
    Failure,
    FileDigest,
    LandmarkHit,
    OutputRecord,
)

from .evidence import (
    LOG_NAME,
    OUTPUTS_DIR,
    minimal_snapshot,
    new_run_dir,
    utc_now,
    write_record,
)
from .measure import measure, template_context
from .process import LandmarkPattern, run_process
from .results import RunEvent, RunResult, RunSummary, TaskValue, task_values
from .select import load_artifact, select_launchers, usage_error, with_needs

__all__ = ["RunEvent", "RunResult", "RunSummary", "TaskValue", "load_artifact", "run"]

EnvMode = Literal["cached", "current"]


@dataclass(frozen=True)
class _Job:
    launcher: Launcher
    seed: int | None


@dataclass
class _Shared:
    root: Path
    manifest: Manifest
    runs_dir: Path
    env_mode: EnvMode
    base_env: dict[str, str]
    env_error: str | None
    snapshot: EnvironmentSnapshot
    drift: list[str]
    code_digest: str | None
    lock_digest: str | None
    timeout: float | None
    grace: float
    cancel: threading.Event
    echo: BinaryIO | None
    emit: Callable[[RunEvent], None]


# --------------------------------------------------------------------------- environment


def _prepare_environment(
    root: Path, manifest: Manifest, env_mode: EnvMode
) -> tuple[dict[str, str], str | None, EnvironmentSnapshot, list[str]]:
    """The base environment of every run, the snapshot and the drift, once per invocation."""
    env = dict(os.environ)
    error: str | None = None
    python: Path | None = None
    if env_mode == "cached":
        try:
            from reprobridge_sdk.env import ensure_environment  # noqa: PLC0415 - heavy

            python = Path(ensure_environment(root, environment=manifest.environment))
        except Exception as exc:  # any failure to build is the run's environment-error
            codes = ", ".join(f.code for f in getattr(exc, "findings", ()))
            error = f"cannot build the environment from the lock: {exc}" + (
                f" ({codes})" if codes else ""
            )
        if python is not None:
            bin_dir = python.parent
            env["VIRTUAL_ENV"] = str(bin_dir.parent)
            env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
            env.pop("PYTHONHOME", None)
    else:
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        from reprobridge_sdk.env import capture_snapshot  # noqa: PLC0415 - heavy

        snapshot = capture_snapshot(python)
    except Exception:  # a snapshot must never stop a run: fall back to the basics
        snapshot = minimal_snapshot()
    drift = _drift(root, manifest, snapshot) if env_mode == "current" else []
    return env, error, snapshot, drift


def _drift(root: Path, manifest: Manifest, snapshot: EnvironmentSnapshot) -> list[str]:
    """How the current interpreter differs from the lock, as far as reproduction goes.

    Read off the snapshot (one in-process scan of the installed distributions, taken once
    per invocation): lock entries missing or at another version, and another Python
    ``major.minor``. Distributions the lock does not name are not drift.
    """
    if not snapshot.distributions:
        return []  # the snapshot fell back to the basics: nothing reliable to compare
    try:
        from reprobridge_sdk.env.check import lock_drift  # noqa: PLC0415 - heavy

        findings = lock_drift(
            root,
            manifest.environment,
            python_full=snapshot.python,
            installed={d.name: d.version for d in snapshot.distributions},
        )
    except Exception:  # the check failed: nothing reliable to record
        return []
    return [f"{f.code}: {f.message}" for f in findings]


def _digests(root: Path, manifest: Manifest) -> tuple[str | None, str | None]:
    code = None
    refined = manifest.codebase.refined
    if refined.kind == "directory" and refined.path is not None:
        directory = root / refined.path
        if directory.is_dir():
            code = tree_digest(directory)
    lock = None
    if manifest.environment.lock is not None:
        lock_path = root / manifest.environment.lock.path
        if lock_path.is_file():
            lock = file_sha256(lock_path)
    return code, lock


# --------------------------------------------------------------------------- one run


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _copy_output(source: Path, run_dir: Path, output_id: str) -> FileDigest:
    target_dir = run_dir / OUTPUTS_DIR / output_id
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / source.name
    fd, tmp = tempfile.mkstemp(prefix=f".{source.name}.", suffix=".tmp", dir=target_dir)
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    relative = target.relative_to(run_dir).as_posix()
    return FileDigest(path=relative, sha256=file_sha256(target), size=target.stat().st_size)


def _failure_reason(current: Failure | None, reason: str, detail: str, last: str | None) -> Failure:
    if current is not None:
        return current
    return Failure(reason=reason, detail=detail, last_landmark=last)


def _new_run_dir(shared: _Shared, launcher_id: str, seed: int | None) -> tuple[str, Path]:
    try:
        return new_run_dir(shared.runs_dir, launcher_id, seed)
    except OSError as exc:
        msg = f"cannot create a run directory in {shared.runs_dir}: {exc.strerror}"
        raise ArtifactError(msg) from None


def _first_write(run_dir: Path, record: EvidenceRecord) -> None:
    """The first record of a run; if it cannot be written the run is not started."""
    try:
        write_record(run_dir, record)
    except OSError as exc:
        msg = f"cannot write the record in {run_dir}: {exc.strerror}"
        raise ArtifactError(msg) from None


def _execute(job: _Job, shared: _Shared) -> RunResult:
    launcher = job.launcher
    run_id, run_dir = _new_run_dir(shared, launcher.id, job.seed)
    run_dir = run_dir.resolve()
    started_wall = time.monotonic()
    context = template_context(launcher.params, job.seed, run_dir)
    record = EvidenceRecord(
        run_id=run_id,
        artifact=shared.manifest.artifact.id,
        launcher=launcher.id,
        argv=list(launcher.argv),
        shell=launcher.shell,
        workdir=launcher.workdir,
        seed=job.seed,
        scope=launcher.scope,
        params=dict(launcher.params),
        status="running",
        started_at=utc_now(),
        env_mode=shared.env_mode,
        code_tree_digest=shared.code_digest,
        lock_digest=shared.lock_digest,
        environment=shared.snapshot,
        drift=list(shared.drift),
    )
    failure: Failure | None = None
    argv: list[str] = list(launcher.argv)
    env = dict(shared.base_env)
    try:
        argv = [render_template(arg, context) for arg in launcher.argv]
        for name, value in launcher.env.items():
            env[name] = render_template(value, context)
        record.argv = argv
    except ExtractionError as exc:
        failure = Failure(reason="template-error", detail=exc.message)
    _first_write(run_dir, record)
    shared.emit(
        RunEvent(
            "run-started",
            {
                "run_id": run_id,
                "launcher": launcher.id,
                "seed": job.seed,
                "run_dir": str(run_dir),
                "argv": argv,
            },
        )
    )
    try:
        record = _complete(
            job,
            shared,
            record=record,
            run_dir=run_dir,
            argv=argv,
            env=env,
            context=context,
            failure=failure,
        )
    except Exception as exc:  # never a traceback: an unexpected fault is a recorded failure
        record.status = "failed"
        record.failure = Failure(reason="internal-error", detail=f"{type(exc).__name__}: {exc}")
    record.ended_at = utc_now()
    record.duration = round(time.monotonic() - started_wall, 6)
    try:
        write_record(run_dir, record)
    except OSError as exc:  # e.g. a full disk: the 'running' record stays intact
        record.status = "failed"
        record.failure = Failure(
            reason="internal-error", detail=f"cannot write the record: {exc.strerror}"
        )
    result = RunResult(run_id=run_id, run_dir=run_dir, record=record)
    shared.emit(RunEvent("run-finished", result.to_dict()))
    return result


def _complete(
    job: _Job,
    shared: _Shared,
    *,
    record: EvidenceRecord,
    run_dir: Path,
    argv: list[str],
    env: dict[str, str],
    context: Mapping[str, object],
    failure: Failure | None,
) -> EvidenceRecord:
    launcher = job.launcher
    log_path = run_dir / LOG_NAME
    log_path.touch()
    workdir = shared.root / launcher.workdir
    if shared.env_error is not None:
        failure = Failure(reason="environment-error", detail=shared.env_error)
    elif failure is None and not workdir.is_dir():
        failure = Failure(
            reason="environment-error", detail=f"working directory {launcher.workdir!r} is missing"
        )
    if failure is not None:
        record.status = "failed"
        record.failure = failure
        record.log = FileDigest(path=LOG_NAME, sha256=file_sha256(log_path), size=0)
        return record

    output_paths: dict[str, Path] = {}
    before: dict[str, tuple[int, int, int] | None] = {}
    for output in launcher.outputs:
        try:
            path = workdir / render_template(output.path, context)
        except ExtractionError as exc:
            failure = _failure_reason(failure, "template-error", exc.message, None)
            continue
        output_paths[output.id] = path
        before[output.id] = _signature(path)
    if failure is not None:
        record.status = "failed"
        record.failure = failure
        return record

    command = ["/bin/sh", "-c", argv[0]] if launcher.shell else argv
    patterns = [LandmarkPattern.compile(lm.id, lm.pattern) for lm in launcher.landmarks]

    def _on_landmark(landmark_id: str, line: int, elapsed: float) -> None:
        shared.emit(
            RunEvent(
                "landmark",
                {
                    "run_id": record.run_id,
                    "landmark": landmark_id,
                    "line": line,
                    "elapsed": elapsed,
                },
            )
        )

    outcome = run_process(
        command,
        cwd=workdir,
        env=env,
        log_path=log_path,
        timeout=shared.timeout if shared.timeout is not None else launcher.timeout,
        cancel=shared.cancel,
        landmarks=patterns,
        on_landmark=_on_landmark,
        echo=shared.echo,
        grace=shared.grace,
    )
    record.exit_code = outcome.exit_code
    record.landmarks = [LandmarkHit(id=i, line=n, elapsed=e) for i, n, e in outcome.landmarks]
    last = outcome.landmarks[-1][0] if outcome.landmarks else None
    record.log = FileDigest(
        path=LOG_NAME, sha256=file_sha256(log_path), size=log_path.stat().st_size
    )
    if outcome.cancelled:
        failure = Failure(reason="interrupted", detail="stopped by the user", last_landmark=last)
    elif outcome.not_found is not None:
        failure = Failure(reason="command-not-found", detail=outcome.not_found)
    elif launcher.shell and outcome.exit_code == 127:
        failure = Failure(
            reason="command-not-found",
            detail="the shell could not find the command (exit 127)",
            last_landmark=last,
        )
    elif outcome.timed_out:
        timeout = shared.timeout if shared.timeout is not None else launcher.timeout
        failure = Failure(reason="timeout", detail=f"stopped after {timeout} s", last_landmark=last)
    elif outcome.exit_code != 0:
        failure = Failure(
            reason="exit-status", detail=f"exit status {outcome.exit_code}", last_landmark=last
        )

    produced: dict[str, Path] = {}
    records: list[OutputRecord] = []
    for output in launcher.outputs:
        path = output_paths[output.id]
        after = _signature(path)
        if after is None or not path.is_file():
            if output.required:
                failure = _failure_reason(
                    failure, "missing-output", f"output {output.id!r} was not produced", last
                )
            continue
        preexisting = before[output.id] is not None and before[output.id] == after
        digest = _copy_output(path, run_dir, output.id)
        records.append(OutputRecord(id=output.id, preexisting=preexisting, **digest.model_dump()))
        if preexisting:
            if output.required:
                detail = f"output {output.id!r} existed before the run and was not rewritten"
                failure = _failure_reason(failure, "missing-output", detail, last)
        else:
            produced[output.id] = run_dir / digest.path
    record.outputs = records

    if not outcome.cancelled:
        record.measurements = measure(
            launcher, log=log_path, files_base=workdir, outputs=produced, context=context
        )
        errors = [m for m in record.measurements if m.value is None]
        if errors:
            detail = "; ".join(f"{m.task}: {m.error}" for m in errors)
            failure = _failure_reason(failure, "extraction-failed", detail, last)
    if outcome.log_error is not None:
        if failure is not None:
            failure.detail = f"{failure.detail} ({outcome.log_error})"
        failure = _failure_reason(failure, "internal-error", outcome.log_error, last)
    record.failure = failure
    if failure is None:
        record.status = "succeeded"
    elif failure.reason == "interrupted":
        record.status = "interrupted"
    else:
        record.status = "failed"
    return record


def _skipped(job: _Job, shared: _Shared, detail: str) -> RunResult:
    """Record a run that was not started because a needed launcher failed."""
    run_id, run_dir = _new_run_dir(shared, job.launcher.id, job.seed)
    now = utc_now()
    record = EvidenceRecord(
        run_id=run_id,
        artifact=shared.manifest.artifact.id,
        launcher=job.launcher.id,
        argv=list(job.launcher.argv),
        shell=job.launcher.shell,
        workdir=job.launcher.workdir,
        seed=job.seed,
        scope=job.launcher.scope,
        params=dict(job.launcher.params),
        status="failed",
        started_at=now,
        ended_at=now,
        duration=0.0,
        env_mode=shared.env_mode,
        failure=Failure(reason="dependency-failed", detail=detail),
    )
    _first_write(run_dir, record)
    result = RunResult(run_id=run_id, run_dir=run_dir.resolve(), record=record)
    shared.emit(RunEvent("run-finished", result.to_dict()))
    return result


# --------------------------------------------------------------------------- scheduling


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """In the main thread, treat SIGTERM like Ctrl-C for the duration of the run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _schedule(jobs: list[_Job], shared: _Shared, workers: int) -> tuple[list[RunResult], bool]:
    pending = list(jobs)
    remaining = dict.fromkeys({j.launcher.id for j in jobs}, 0)
    for job in jobs:
        remaining[job.launcher.id] += 1
    failed_launchers: set[str] = set()
    results: list[RunResult] = []
    running: dict[Future[RunResult], _Job] = {}
    interrupted = False
    error: ArtifactError | None = None

    def _finished(job: _Job, result: RunResult) -> None:
        results.append(result)
        remaining[job.launcher.id] -= 1
        if result.status != "succeeded":
            failed_launchers.add(job.launcher.id)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rb-run") as pool:
        while pending or running:
            if not interrupted:
                for job in list(pending):
                    needs = [n for n in job.launcher.needs if n in remaining]
                    broken = [n for n in needs if n in failed_launchers]
                    if broken:
                        pending.remove(job)
                        detail = f"needed launcher {broken[0]!r} did not succeed"
                        _finished(job, _skipped(job, shared, detail))
                        continue
                    if any(remaining[n] for n in needs) or len(running) >= workers:
                        continue
                    pending.remove(job)
                    running[pool.submit(_execute, job, shared)] = job
                if pending and not running:
                    # Nothing runs and nothing can start: the needs form a cycle.
                    for job in pending:
                        _finished(job, _skipped(job, shared, "the launchers' needs form a cycle"))
                    pending.clear()
            if not running:
                break
            try:
                done, _ = wait(list(running), timeout=0.25, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                interrupted = True
                shared.cancel.set()
                pending.clear()
                continue
            for future in done:
                job = running.pop(future)
                try:
                    _finished(job, future.result())
                except ArtifactError as exc:  # no record could be written: stop everything
                    error = error or exc
                    shared.cancel.set()
                    pending.clear()
    if error is not None:
        raise error
    return results, interrupted


def run(
    artifact_dir: str | os.PathLike[str] = ".",
    launchers: Sequence[str] | None = None,
    *,
    scope: str | None = None,
    seeds: Sequence[int] | None = None,
    env_mode: str = "cached",
    timeout: float | None = None,
    jobs: int = 1,
    runs_dir: str | os.PathLike[str] | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    echo: BinaryIO | None = None,
    kill_grace: float = 5.0,
) -> RunSummary:
    """Run the selected launchers over their seeds and record evidence for each run.

    ``echo`` receives the processes' raw output as it arrives (use it with ``jobs=1``).
    Raises :class:`UsageError` (N codes) for a bad request, and :class:`ArtifactError` when
    a run directory or its first record cannot be written (then no further run starts);
    every run's outcome, good or bad, is in the returned summary and in its record.
    """
    if jobs < 1:
        raise usage_error("N004", f"jobs must be at least 1, not {jobs}")
    if timeout is not None and not timeout > 0:
        raise usage_error("N004", f"timeout must be positive, not {timeout}")
    if env_mode not in ("cached", "current"):
        raise usage_error(
            "N004", f"unknown environment mode {env_mode!r}", hint="cached or current"
        )
    started = time.monotonic()
    root, manifest = load_artifact(artifact_dir)
    root = root.resolve()
    chosen = select_launchers(manifest, launchers, scope)
    runs = Path(runs_dir).resolve() if runs_dir is not None else root / "runs"
    selected = with_needs(manifest, chosen, runs)
    mode: EnvMode = "cached" if env_mode == "cached" else "current"
    base_env, env_error, snapshot, drift = _prepare_environment(root, manifest, mode)
    code_digest, lock_digest = _digests(root, manifest)
    lock = threading.Lock()

    def _emit(event: RunEvent) -> None:
        if on_event is not None:
            with lock:
                on_event(event)

    shared = _Shared(
        root=root,
        manifest=manifest,
        runs_dir=runs,
        env_mode=mode,
        base_env=base_env,
        env_error=env_error,
        snapshot=snapshot,
        drift=drift,
        code_digest=code_digest,
        lock_digest=lock_digest,
        timeout=timeout,
        grace=kill_grace,
        cancel=threading.Event(),
        echo=echo,
        emit=_emit,
    )
    plan: list[_Job] = []
    for launcher in selected:
        launcher_seeds: list[int | None] = list(launcher.seeds)
        if launcher.seeds and seeds is not None:
            launcher_seeds = list(seeds)
        plan.extend(_Job(launcher, seed) for seed in launcher_seeds or [None])
    with _sigterm_as_interrupt():
        results, interrupted = _schedule(plan, shared, jobs)
    results.sort(key=lambda r: (r.record.started_at, r.run_id))
    summary = RunSummary(results=results, interrupted=interrupted)
    summary.tasks = task_values(selected, results)
    summary.elapsed = time.monotonic() - started
    _emit(RunEvent("summary", {k: v for k, v in summary.to_dict().items() if k != "results"}))
    return summary
