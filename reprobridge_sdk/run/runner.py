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
and records the differences from the lock as ``drift``. Then the launcher's ``env`` is
applied (templated), and ``PYTHONUNBUFFERED=1`` unless set, so landmarks arrive as printed.

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
import difflib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import ValidationError

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.extraction import ExtractionError, aggregate, render_template
from reprobridge_sdk.findings import finding
from reprobridge_sdk.model import Launcher, Manifest
from reprobridge_sdk.model.evidence import (
    EnvironmentSnapshot,
    EvidenceRecord,
    Failure,
    FileDigest,
    LandmarkHit,
    MeasuredValue,
    OutputRecord,
)

from .evidence import (
    LOG_NAME,
    OUTPUTS_DIR,
    iter_runs,
    minimal_snapshot,
    new_run_dir,
    utc_now,
    write_record,
)
from .measure import measure, template_context
from .process import LandmarkPattern, run_process

__all__ = ["RunEvent", "RunResult", "RunSummary", "TaskValue", "load_artifact", "run"]

EnvMode = Literal["cached", "current"]


@dataclass(frozen=True)
class RunEvent:
    """A progress event: ``run-started``, ``landmark``, ``run-finished`` or ``summary``."""

    event: str
    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, **self.data}


@dataclass(frozen=True)
class RunResult:
    """One finished (or skipped) run."""

    run_id: str
    run_dir: Path
    record: EvidenceRecord

    @property
    def status(self) -> str:
        return self.record.status

    def to_dict(self) -> dict[str, Any]:
        failure = self.record.failure
        return {
            "run_id": self.run_id,
            "run_dir": str(self.run_dir),
            "launcher": self.record.launcher,
            "seed": self.record.seed,
            "status": self.record.status,
            "failure": None if failure is None else failure.model_dump(mode="json"),
            "duration": self.record.duration,
            "measurements": [m.model_dump(mode="json") for m in self.record.measurements],
        }


@dataclass(frozen=True)
class TaskValue:
    """A task's statistic over the seeds of one launcher in this invocation."""

    task: str
    launcher: str
    aggregate: str
    values: tuple[float, ...]
    value: float | None
    complete: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "launcher": self.launcher,
            "aggregate": self.aggregate,
            "values": list(self.values),
            "value": self.value,
            "complete": self.complete,
        }


@dataclass
class RunSummary:
    """Everything :func:`run` did."""

    results: list[RunResult] = field(default_factory=list)
    tasks: list[TaskValue] = field(default_factory=list)
    interrupted: bool = False
    elapsed: float = 0.0

    @property
    def succeeded(self) -> int:
        return sum(r.status == "succeeded" for r in self.results)

    @property
    def failed(self) -> int:
        return sum(r.status == "failed" for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 all succeeded, 130 interrupted, 1 otherwise."""
        if self.interrupted:
            return 130
        return 0 if all(r.status == "succeeded" for r in self.results) else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": len(self.results),
            "succeeded": self.succeeded,
            "failed": self.failed,
            "interrupted": self.interrupted,
            "elapsed": round(self.elapsed, 3),
            "exit_code": self.exit_code,
            "results": [r.to_dict() for r in self.results],
            "tasks": [t.to_dict() for t in self.tasks],
        }


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


# --------------------------------------------------------------------------- loading


def load_artifact(artifact_dir: str | os.PathLike[str]) -> tuple[Path, Manifest]:
    """Load an artifact for running; :class:`UsageError` (N007) when it cannot be read."""
    from reprobridge_sdk.api import load  # noqa: PLC0415 - YAML only when needed

    try:
        loaded = load(artifact_dir)
    except ValidationError as exc:
        msg = f"{artifact_dir}: the manifest is not valid ({exc.error_count()} errors)"
        hint = "run 'reprobridge validate' for the details"
        raise UsageError(msg, [finding("N007", msg, hint=hint)]) from None
    except Exception as exc:  # ArtifactError, YAML errors: all mean "cannot load"
        msg = f"{artifact_dir}: cannot load the artifact: {exc}"
        raise UsageError(msg, [finding("N007", msg)]) from None
    return loaded.root, loaded.manifest


def _usage(code: str, message: str, *, path: str = "", hint: str | None = None) -> UsageError:
    return UsageError(message, [finding(code, message, path=path, hint=hint)])


def _select(manifest: Manifest, ids: Sequence[str] | None, scope: str | None) -> list[Launcher]:
    known = [launcher.id for launcher in manifest.launchers]
    if scope not in (None, "smoke", "scored"):
        raise _usage("N004", f"unknown scope {scope!r}", hint="use smoke or scored")
    if ids:
        chosen: list[Launcher] = []
        for launcher_id in ids:
            if launcher_id not in known:
                close = difflib.get_close_matches(launcher_id, known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"
                raise _usage("N001", f"no launcher {launcher_id!r}", path="/launchers", hint=hint)
            launcher = manifest.launcher(launcher_id)
            if scope is not None and launcher.scope != scope:
                msg = f"launcher {launcher_id!r} has scope {launcher.scope!r}, not {scope!r}"
                raise _usage("N002", msg)
            if launcher not in chosen:
                chosen.append(launcher)
    else:
        chosen = [lch for lch in manifest.launchers if scope is None or lch.scope == scope]
    if not chosen:
        raise _usage("N005", "no launcher selected", hint="check the ids and --scope")
    return chosen


def _with_needs(manifest: Manifest, chosen: list[Launcher], runs_dir: Path) -> list[Launcher]:
    """Add needed launchers that have no earlier succeeded run."""
    selected = {launcher.id for launcher in chosen}
    if all(need in selected for launcher in chosen for need in launcher.needs):
        return [launcher for launcher in manifest.launchers if launcher.id in selected]
    succeeded = {rec.launcher for _, rec in iter_runs(runs_dir) if rec.status == "succeeded"}
    queue = list(chosen)
    while queue:
        for need in queue.pop().needs:
            if need in selected or need in succeeded:
                continue
            try:
                extra = manifest.launcher(need)
            except KeyError:
                continue  # an undeclared need: the validator reports it (R003)
            selected.add(need)
            queue.append(extra)
    return [launcher for launcher in manifest.launchers if launcher.id in selected]


# --------------------------------------------------------------------------- environment


def _prepare_environment(
    root: Path, manifest: Manifest, env_mode: EnvMode
) -> tuple[dict[str, str], str | None, EnvironmentSnapshot, list[str]]:
    env = dict(os.environ)
    error: str | None = None
    python: Path | None = None
    drift: list[str] = []
    if env_mode == "cached":
        try:
            from reprobridge_sdk.env import ensure_environment  # noqa: PLC0415 - heavy

            python = Path(ensure_environment(root))
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
        drift = _drift(root, manifest)
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        from reprobridge_sdk.env import capture_snapshot  # noqa: PLC0415 - heavy

        snapshot = capture_snapshot(python)
    except Exception:  # a snapshot must never stop a run: fall back to the basics
        snapshot = minimal_snapshot()
    return env, error, snapshot, drift


def _drift(root: Path, manifest: Manifest) -> list[str]:
    """Differences between the current interpreter and the lock (empty without a lock)."""
    if manifest.environment.lock is None:
        return []
    try:
        from reprobridge_sdk.env import check_environment  # noqa: PLC0415 - heavy

        findings = check_environment(root, python=sys.executable)
    except Exception:  # no checker, or it failed: nothing reliable to record
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


def _execute(job: _Job, shared: _Shared) -> RunResult:
    launcher = job.launcher
    run_id, run_dir = new_run_dir(shared.runs_dir, launcher.id, job.seed)
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
    write_record(run_dir, record)
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
    run_id, run_dir = new_run_dir(shared.runs_dir, job.launcher.id, job.seed)
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
    write_record(run_dir, record)
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
                _finished(job, future.result())
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
    Raises :class:`UsageError` (N codes) for a bad request; every run's outcome, good or
    bad, is in the returned summary and in its record.
    """
    if jobs < 1:
        raise _usage("N004", f"jobs must be at least 1, not {jobs}")
    if timeout is not None and not timeout > 0:
        raise _usage("N004", f"timeout must be positive, not {timeout}")
    if env_mode not in ("cached", "current"):
        raise _usage("N004", f"unknown environment mode {env_mode!r}", hint="cached or current")
    started = time.monotonic()
    root, manifest = load_artifact(artifact_dir)
    root = root.resolve()
    chosen = _select(manifest, launchers, scope)
    runs = Path(runs_dir).resolve() if runs_dir is not None else root / "runs"
    selected = _with_needs(manifest, chosen, runs)
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
    summary.tasks = _task_values(selected, results)
    summary.elapsed = time.monotonic() - started
    _emit(RunEvent("summary", {k: v for k, v in summary.to_dict().items() if k != "results"}))
    return summary


def _task_values(selected: Sequence[Launcher], results: Sequence[RunResult]) -> list[TaskValue]:
    values: list[TaskValue] = []
    for launcher in selected:
        runs = sorted(
            (r for r in results if r.record.launcher == launcher.id),
            key=lambda r: (r.record.seed is None, r.record.seed or 0),
        )
        if not runs:
            continue
        for measurement in launcher.measurements:
            got: list[float] = []
            for result in runs:
                found = _value_of(result.record.measurements, measurement.task)
                if result.status == "succeeded" and found is not None:
                    got.append(found)
            complete = len(got) == len(runs)
            value = None
            if got and complete:
                try:
                    value = aggregate(got, measurement.aggregate)
                except ExtractionError:
                    value = None
            values.append(
                TaskValue(
                    task=measurement.task,
                    launcher=launcher.id,
                    aggregate=measurement.aggregate,
                    values=tuple(got),
                    value=value,
                    complete=complete,
                )
            )
    return values


def _value_of(measured: Sequence[MeasuredValue], task: str) -> float | None:
    for item in measured:
        if item.task == task:
            return item.value
    return None
