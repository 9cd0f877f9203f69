"""One run of one launcher: from its run directory to its final evidence record.

:func:`execute` carries out a run the runner scheduled and :func:`skipped` records one that
did not start; :mod:`._outputs` checks and copies the outputs, :mod:`._records` writes and
seals the record. Rules: ``spec/runner.md#runner`` (failure reasons, their priority, outputs).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.extract.extraction import ExtractionError, render_template
from reprobridge_sdk.extract.template import render_shell_template
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import Launcher, Manifest
from reprobridge_sdk.model.evidence import (
    RECORD_NAME,
    EnvironmentSnapshot,
    EvidenceRecord,
    Failure,
    FileDigest,
    LandmarkHit,
    LostAttempt,
)

from ._failure import failure_reason, process_failure, run_status
from ._outputs import collect_outputs, declared_paths
from ._records import RESERVE, final_write, first_write, seal_run
from .evidence import (
    ENV_DIR,
    LOG_NAME,
    PLANTED,
    evidence_digest,
    new_run_dir,
    refused_code,
    scan_run_folder,
    scan_summary,
    utc_now,
    write_snapshot,
)
from .measure import measure, template_context, unread_here
from .process import LandmarkPattern, ProcessOutcome, ResourceLimits, run_process
from .results import RunEvent, RunResult

if TYPE_CHECKING:
    from reprobridge_sdk.signing import SigningKey

__all__ = ["EnvMode", "Job", "Shared", "execute", "seal_run", "skipped"]

EnvMode = Literal["cached", "current"]


@dataclass(frozen=True)
class Job:
    """One run to make: a launcher and its seed (``None`` for a launcher without seeds)."""

    launcher: Launcher
    seed: int | None


@dataclass
class Shared:
    """What every run of one invocation shares: the artifact, environment and controls."""

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
    #: The executor that runs the jobs, named in each record (``None`` for local runs).
    executor: str | None = None
    #: Earlier attempts of the run lost with their worker (set by a distributed executor).
    lost_attempts: list[LostAttempt] = field(default_factory=list)
    #: Signs each final record (``record.dsse.json``) when set.
    signer: SigningKey | None = None
    #: Whether :func:`execute` ledgers and signs the run itself (false on a remote worker,
    #: whose client does it once the run directory is in place).
    seal_here: bool = True
    #: Runs each launcher inside the sandbox (:mod:`reprobridge_sdk.run.sandbox`).
    sandbox: bool = False
    #: Bounds each launcher's processes (memory, cores): a committee's budget.
    limits: ResourceLimits | None = None
    #: Whether records name ``snapshot`` by digest, kept once in the runs directory (format
    #: 1.1), instead of embedding it (remote workers, whose run directories travel alone).
    keep_snapshot: bool = False
    #: Gives the launcher its measurements from a finished run's log before the run is
    #: measured (the build's probe: the extractor is made from the run's own log).
    measure_with: Callable[[Launcher, Path], Launcher] | None = None
    _kept: list[str | None] = field(default_factory=list)
    _keeping: threading.Lock = field(default_factory=threading.Lock)
    #: The warnings already reported in this invocation (each is reported once, not per run).
    _warned: set[tuple[str, ...]] = field(default_factory=set)

    def first_warning(self, key: tuple[str, ...]) -> bool:
        """Whether the warning ``key`` is new to this invocation (and is now remembered)."""
        with self._keeping:
            new = key not in self._warned
            self._warned.add(key)
            return new

    def snapshot_sha256(self) -> str | None:
        """The digest the records name, the snapshot written on the first call; ``None``
        when records embed it (not kept, or it could not be written)."""
        if not self.keep_snapshot:
            return None
        with self._keeping:
            if not self._kept:
                self._kept.append(_keep_snapshot(self.runs_dir, self.snapshot))
            return self._kept[0]


def _keep_snapshot(runs_dir: Path, snapshot: EnvironmentSnapshot) -> str | None:
    """Write the snapshot into the runs directory; its digest, or ``None`` when it cannot be
    written (a full disk: the records then embed it, and no empty ``.env`` is left)."""
    try:
        return write_snapshot(runs_dir, snapshot)
    except (OSError, safefs.UnsafeFileError):
        with contextlib.suppress(OSError):
            (runs_dir / ENV_DIR).rmdir()
        return None


def render_argv(launcher: Launcher, context: Mapping[str, object]) -> list[str]:
    """The launcher's argv with its templates filled in; a shell launcher's command line gets each
    value quoted for its place (:func:`render_shell_template`), so a value is never a command."""
    if not launcher.shell:
        return [render_template(arg, context) for arg in launcher.argv]
    return [render_shell_template(launcher.argv[0], context)] + [
        render_template(arg, context) for arg in launcher.argv[1:]
    ]


@dataclass
class _Run:
    """One run under way: what :func:`execute` prepared, handed to each of its phases."""

    job: Job
    shared: Shared
    record: EvidenceRecord
    run_dir: Path
    context: dict[str, object]
    argv: list[str]
    #: The run's environment: the invocation's base with ``declared`` on top.
    env: dict[str, str]
    #: The launcher's ``env``, templated.
    declared: dict[str, str]


def _sandboxed(
    stack: contextlib.ExitStack,
    run: _Run,
    command: list[str],
    private: tuple[Path, Path] | None,
) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
    """The sandboxed command, its environment and inherited descriptors (the seccomp filter's,
    open until ``stack`` closes). The runner, not ``PATH``, chooses the environment shown; the
    ``PATH`` entries left out are one N023 per invocation and source."""
    from . import sandbox  # noqa: PLC0415 - only with --sandbox

    shared, declared = run.shared, run.declared
    caller = dict(shared.base_env)
    if shared.env_mode == "cached" and "VIRTUAL_ENV" in caller:
        environment = sandbox.interpreter_paths(Path(caller["VIRTUAL_ENV"]))
    else:
        caller.pop("VIRTUAL_ENV", None)  # the caller's, not the runner's
        environment = sandbox.current_interpreter_paths()
    readable = [shared.root, *environment]
    roots = sandbox.visible_roots(readable, [run.run_dir])
    env, dropped = sandbox.sandbox_env(caller, declared, run_dir=run.run_dir, roots=roots)
    pointer = f"/launchers/{run.record.launcher}/env/PATH" if "PATH" in declared else ""
    if dropped and shared.first_warning(("N023", pointer, *dropped)):
        item = finding(
            "N023",
            "PATH entries outside what the sandbox shows were left out of PATH and are not "
            f"visible to the launcher: {', '.join(map(repr, dropped))}",
            path=pointer,
            hint="put the programs in the artifact or the environment's lock",
        )
        shared.emit(RunEvent("finding", {"run_id": run.record.run_id, **item.to_dict()}))
    fd = stack.enter_context(sandbox.seccomp_fd())
    argv = sandbox.sandbox_command(
        command,
        workdir=(shared.root / run.job.launcher.workdir).resolve(),
        run_dir=run.run_dir,
        seccomp=fd,
        readable=readable,
        private=dict([private]) if private is not None else None,
        # the private /tmp is memory no process limit counts: bounded as bench bounds it
        tmp_size=(shared.limits or ResourceLimits()).tmp_size,
    )
    return argv, env, (fd,)


def _new_run_dir(shared: Shared, launcher_id: str, seed: int | None) -> tuple[str, Path]:
    try:
        return new_run_dir(shared.runs_dir, launcher_id, seed)
    except OSError as exc:
        msg = f"cannot create a run directory in {shared.runs_dir}: {exc.strerror}"
        raise ArtifactError(msg) from None


def execute(job: Job, shared: Shared) -> RunResult:
    launcher = job.launcher
    run_id, run_dir = _new_run_dir(shared, launcher.id, job.seed)
    run_dir = run_dir.resolve()
    started_wall = time.monotonic()
    context = template_context(launcher.params, job.seed, run_dir)
    kept = shared.snapshot_sha256()
    record = _new_record(
        job,
        shared,
        run_id,
        status="running",
        started_at=utc_now(),
        code_tree_digest=shared.code_digest,
        lock_digest=shared.lock_digest,
        environment=shared.snapshot if kept is None else None,
        environment_sha256=kept,
        drift=list(shared.drift),
        lost_attempts=list(shared.lost_attempts),
    )
    run = _Run(
        job, shared, record, run_dir, context, list(launcher.argv), dict(shared.base_env), {}
    )
    failure: Failure | None = None
    try:
        run.argv = render_argv(launcher, context)
        for name, value in launcher.env.items():
            run.declared[name] = render_template(value, context)
        run.env.update(run.declared)
    except ExtractionError as exc:
        failure = Failure(reason="template-error", detail=exc.message)
    record.argv = [redact_text(arg) for arg in run.argv]
    first_write(run_dir, record)
    shared.emit(
        RunEvent(
            "run-started",
            {
                "run_id": run_id,
                "launcher": launcher.id,
                "seed": job.seed,
                "run_dir": str(run_dir),
                "argv": record.argv,
            },
        )
    )
    try:
        _complete(run, failure)
    except Exception as exc:  # never a traceback: an unexpected fault is a recorded failure
        record.status = "failed"
        record.failure = Failure(reason="internal-error", detail=f"{type(exc).__name__}: {exc}")
    _scan_folder(shared, run_dir, record)
    record.ended_at = utc_now()
    record.duration = round(time.monotonic() - started_wall, 6)
    if final_write(run_dir, record) and shared.seal_here:
        seal_run(shared, run_dir, record)
    result = RunResult(run_id=run_id, run_dir=run_dir, record=record)
    shared.emit(RunEvent("run-finished", result.to_dict()))
    return result


def _complete(run: _Run, failure: Failure | None) -> None:
    """Run the launcher unless the run already failed (a template error) or cannot start."""
    launcher, shared, record = run.job.launcher, run.shared, run.record
    log_path = run.run_dir / LOG_NAME
    log_path.touch()
    workdir = shared.root / launcher.workdir
    if shared.env_error is not None:
        failure = Failure(reason="environment-error", detail=shared.env_error)
    elif failure is None and not workdir.is_dir():
        failure = Failure(
            reason="environment-error", detail=f"working directory {launcher.workdir!r} is missing"
        )
    if failure is not None:
        if failure.reason == "environment-error":
            # the log holds why the run could not start (e.g. the installer's own message)
            with log_path.open("ab") as handle:
                handle.write(f"reprobridge: {failure.detail}\n".encode())
        record.status = "failed"
        record.log, refused = _log_digest(run.run_dir)
        record.failure = refused or failure
        return
    with contextlib.ExitStack() as private:
        _run_and_collect(run, _private_tree(private, shared, workdir))


def _private_tree(
    stack: contextlib.ExitStack, shared: Shared, workdir: Path
) -> tuple[Path, Path] | None:
    """With the sandbox, the refined codebase that holds ``workdir`` and the run's own
    writable copy of it (removed when ``stack`` closes); else None (see
    :func:`.sandbox.private_tree`)."""
    refined = shared.manifest.codebase.refined
    if not shared.sandbox or refined.kind != "directory" or refined.path is None:
        return None
    tree = (shared.root / refined.path).resolve()
    if not tree.is_dir() or not workdir.resolve().is_relative_to(tree):
        return None
    from . import sandbox  # noqa: PLC0415 - only with --sandbox

    return tree, stack.enter_context(sandbox.private_tree(tree))


def _run_and_collect(run: _Run, private: tuple[Path, Path] | None) -> None:
    """Run the launcher and collect its outputs and values. With a private tree ``(tree,
    copy)`` the launcher writes into ``copy`` where it names ``tree``, so its outputs and
    measurement files are read from there."""
    launcher, shared, record, run_dir = run.job.launcher, run.shared, run.record, run.run_dir
    workdir = shared.root / launcher.workdir
    roots: tuple[Path, ...] = (shared.root, run_dir)
    if private is not None:
        tree, copy = private
        workdir = copy / workdir.resolve().relative_to(tree)
        roots = (shared.root, run_dir, copy)
    paths, before, failure = declared_paths(launcher, workdir, run.context)
    if failure is not None:
        record.status = "failed"
        record.failure = failure
        return
    command = ["/bin/sh", "-c", run.argv[0]] if launcher.shell else run.argv
    outcome = _launch(run, command, workdir, private)
    record.exit_code = outcome.exit_code
    record.landmarks = [LandmarkHit(id=i, line=n, elapsed=e) for i, n, e in outcome.landmarks]
    last = outcome.landmarks[-1][0] if outcome.landmarks else None
    record.log, failure = _log_digest(run_dir, last)
    if failure is None:  # a refused log (a link or special file planted there) is all that counts
        timeout = shared.timeout if shared.timeout is not None else launcher.timeout
        failure = process_failure(outcome, shell=launcher.shell, timeout=timeout, last=last)
    record.outputs, produced, failure = collect_outputs(
        launcher, paths, before, run_dir=run_dir, roots=roots, failure=failure, last=last
    )
    if not outcome.cancelled:
        if shared.measure_with is not None and record.log is not None and failure is None:
            launcher = shared.measure_with(launcher, run_dir / LOG_NAME)
        record.measurements = measure(
            launcher,
            log=run_dir / LOG_NAME if record.log is not None else None,
            files_base=workdir,
            outputs=produced,
            context=run.context,
            roots=roots,
        )
        # A kind no installed plugin provides (X005) leaves the value unread, not the run
        # failed: the experiment ran; the audit says inconclusive for that task (A061).
        errors = [m for m in record.measurements if m.value is None and not unread_here(m)]
        if errors:
            detail = "; ".join(f"{m.task}: {m.error}" for m in errors)
            failure = failure_reason(failure, "extraction-failed", detail, last)
    if outcome.log_error is not None:
        if failure is not None:
            failure.detail = f"{failure.detail} ({outcome.log_error})"
        failure = failure_reason(failure, "internal-error", outcome.log_error, last)
    record.failure = failure
    record.status = run_status(failure)


def _launch(
    run: _Run, command: list[str], workdir: Path, private: tuple[Path, Path] | None
) -> ProcessOutcome:
    """Run the launcher's process (in the sandbox when asked), reporting each landmark."""
    launcher, shared = run.job.launcher, run.shared
    patterns = [LandmarkPattern.compile(lm.id, lm.pattern) for lm in launcher.landmarks]

    def _on_landmark(landmark_id: str, line: int, elapsed: float) -> None:
        shared.emit(
            RunEvent(
                "landmark",
                {
                    "run_id": run.record.run_id,
                    "landmark": landmark_id,
                    "line": line,
                    "elapsed": elapsed,
                },
            )
        )

    with contextlib.ExitStack() as stack:
        inherited: tuple[int, ...] = ()
        env = run.env
        if shared.sandbox:
            command, env, inherited = _sandboxed(stack, run, command, private)
        return run_process(
            command,
            cwd=workdir,
            env=env,
            log_path=run.run_dir / LOG_NAME,
            timeout=shared.timeout if shared.timeout is not None else launcher.timeout,
            cancel=shared.cancel,
            landmarks=patterns,
            on_landmark=_on_landmark,
            echo=shared.echo,
            grace=shared.grace,
            pass_fds=inherited,
            limits=shared.limits,
        )


def _log_digest(run_dir: Path, last: str | None = None) -> tuple[FileDigest | None, Failure | None]:
    """The run's log as the record names it, or ``None`` and the failure when the log is
    refused: a link or special file planted in its place (A067), past the hashing cap (F010)
    or deadline (F012). Read from the run folder without following links
    (:func:`~.evidence.evidence_digest`), so nothing of the refused file reaches the record."""
    try:
        return evidence_digest(run_dir, LOG_NAME), None
    except (safefs.UnsafeFileError, FileNotFoundError) as exc:
        if isinstance(exc, FileNotFoundError):
            code, message = PLANTED, f"{LOG_NAME} was removed from the run folder"
        else:
            code, message = refused_code(exc), exc.message
        detail = f"{code}: the log was refused and not hashed: {message}"
        return None, Failure(reason="internal-error", detail=detail, last_landmark=last)


def _scan_folder(shared: Shared, run_dir: Path, record: EvidenceRecord) -> None:
    """Scan the whole run folder once the launcher is done (bounded, following no link:
    :func:`~.evidence.scan_run_folder`); what it found goes into the record's ``run_folder``
    and is reported as N024 (a warning: the run's own evidence files are checked apart)."""
    record.run_folder = scan_run_folder(run_dir)
    if record.run_folder is None:
        return
    item = finding(
        "N024",
        f"the run folder of {record.run_id}: {scan_summary(record.run_folder)}",
        file=str(run_dir / RECORD_NAME),
        path="/run_folder",
        hint="a run writes regular files and directories; the auditor reports these too (A069)",
    )
    shared.emit(RunEvent("finding", {"run_id": record.run_id, **item.to_dict()}))


def skipped(
    job: Job, shared: Shared, detail: str, *, reason: str = "dependency-failed"
) -> RunResult:
    """Record a run that did not run to its end on a worker: a needed launcher failed
    (``dependency-failed``), or its worker was lost more often than the engine retries
    (``internal-error``)."""
    run_id, run_dir = _new_run_dir(shared, job.launcher.id, job.seed)
    now = utc_now()
    record = _new_record(
        job,
        shared,
        run_id,
        status="failed",
        started_at=now,
        ended_at=now,
        duration=0.0,
        failure=Failure(reason=reason, detail=detail),
    )
    first_write(run_dir, record, durable=True)
    (run_dir / RESERVE).unlink(missing_ok=True)
    seal_run(shared, run_dir, record)
    result = RunResult(run_id=run_id, run_dir=run_dir.resolve(), record=record)
    shared.emit(RunEvent("run-finished", result.to_dict()))
    return result


def _new_record(job: Job, shared: Shared, run_id: str, **fields: Any) -> EvidenceRecord:
    """The record of ``job``'s run: what the launcher and the invocation say, and ``fields``."""
    launcher = job.launcher
    return EvidenceRecord(
        run_id=run_id,
        artifact=shared.manifest.artifact.id,
        launcher=launcher.id,
        argv=list(launcher.argv),
        shell=launcher.shell,
        workdir=launcher.workdir,
        seed=job.seed,
        scope=launcher.scope,
        params=dict(launcher.params),
        env_mode=shared.env_mode,
        executor=shared.executor,
        **fields,
    )
