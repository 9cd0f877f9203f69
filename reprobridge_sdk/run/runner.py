"""The runner: launchers x seeds -> processes -> evidence records (spec §10).

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
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.model import Manifest
from reprobridge_sdk.model.evidence import EnvironmentSnapshot

from ._execute import EnvMode, Job, Shared, execute, skipped
from .evidence import minimal_snapshot
from .ledger import ledger_head
from .results import RunEvent, RunResult, RunSummary, TaskValue, task_values
from .select import load_artifact, select_launchers, usage_error, with_needs

if TYPE_CHECKING:
    from reprobridge_sdk.signing import SigningKey

__all__ = ["RunEvent", "RunResult", "RunSummary", "TaskValue", "load_artifact", "run"]

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
            # the installer's own message, with its code (E013, E020-E023), goes in the
            # record's failure detail and in the run's log
            details = "; ".join(f"{f.code}: {f.message}" for f in getattr(exc, "findings", ()))
            error = f"cannot build the environment from the lock: {exc}" + (
                f" ({details})" if details else ""
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


def _materialize(root: Path, manifest: Manifest) -> str | None:
    """The tree digest of a patch series' working checkout, built (and fetched) if needed.

    Raises :class:`~reprobridge_sdk.checkout.CodebaseError` (C codes) when the upstream
    cannot be fetched, a patch does not apply, or the checkout has unrecorded changes.
    """
    from reprobridge_sdk.checkout.materialize import (  # noqa: PLC0415 - only for a series
        SeriesPatch,
        materialize_series,
    )

    codebase = manifest.codebase
    checkout = materialize_series(
        root,
        repository=codebase.upstream.repository,
        commit=codebase.upstream.commit,
        patches=[SeriesPatch(p.path, p.sha256) for p in codebase.refined.patches],
        tree_digest_=codebase.tree_digest,
    )
    return checkout.tree_digest


def _digests(root: Path, manifest: Manifest) -> tuple[str | None, str | None]:
    code = None
    refined = manifest.codebase.refined
    if refined.kind == "patches":
        code = _materialize(root, manifest)
    elif refined.kind == "directory" and refined.path is not None:
        directory = root / refined.path
        if directory.is_dir():
            code = tree_digest(directory)
    lock = None
    if manifest.environment.lock is not None:
        lock_path = root / manifest.environment.lock.path
        if lock_path.is_file():
            lock = file_sha256(lock_path)
    return code, lock


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


def _schedule(jobs: list[Job], shared: Shared, workers: int) -> tuple[list[RunResult], bool]:
    pending = list(jobs)
    remaining = dict.fromkeys({j.launcher.id for j in jobs}, 0)
    for job in jobs:
        remaining[job.launcher.id] += 1
    failed_launchers: set[str] = set()
    results: list[RunResult] = []
    running: dict[Future[RunResult], Job] = {}
    interrupted = False
    error: ArtifactError | None = None

    def _finished(job: Job, result: RunResult) -> None:
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
                        _finished(job, skipped(job, shared, detail))
                        continue
                    if any(remaining[n] for n in needs) or len(running) >= workers:
                        continue
                    pending.remove(job)
                    running[pool.submit(execute, job, shared)] = job
                if pending and not running:
                    # Nothing runs and nothing can start: the needs form a cycle.
                    for job in pending:
                        _finished(job, skipped(job, shared, "the launchers' needs form a cycle"))
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


def _refuse_shared_outputs(plan: list[Job]) -> None:
    """N010 when runs in parallel could write the same output path.

    An output path without ``{run_dir}`` or ``{seed}`` is the same file for every run of its
    launcher (and may be another launcher's too): two runs at once would record each other's
    output. Such a plan runs with ``jobs=1`` only.
    """
    for job in plan:
        for index, output in enumerate(job.launcher.outputs):
            if "{run_dir}" not in output.path and "{seed}" not in output.path:
                raise usage_error(
                    "N010",
                    f"launcher {job.launcher.id!r}: output {output.id!r} ({output.path}) is "
                    "the same file for every run, so runs in parallel would overwrite it",
                    path=f"/launchers/{job.launcher.id}/outputs/{index}/path",
                    hint="put {run_dir} or {seed} in the output path, or run with -j 1",
                )


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
    sign_key: SigningKey | None = None,
    sandbox: bool = False,
) -> RunSummary:
    """Run the selected launchers over their seeds and record evidence for each run.

    ``echo`` receives the processes' raw output as it arrives (use it with ``jobs=1``).
    Every final record is appended to the runs directory's ledger (its head is
    ``summary.ledger_head``) and, with ``sign_key``, signed into ``record.dsse.json``.
    With ``sandbox`` each launcher runs under bubblewrap (no network, a read-only file system
    but its run directory, a private ``/tmp``; :mod:`reprobridge_sdk.run.sandbox`), and N011
    is raised before anything runs where the sandbox cannot work.
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
    if sandbox:
        from .sandbox import check_sandbox  # noqa: PLC0415 - only with --sandbox

        problem = check_sandbox()
        if problem is not None:
            raise usage_error(
                "N011",
                f"--sandbox cannot be used here: {problem}",
                hint="install bubblewrap, or run a trusted artifact without --sandbox",
            )
    started = time.monotonic()
    root, manifest = load_artifact(artifact_dir)
    root = root.resolve()
    chosen = select_launchers(manifest, launchers, scope)
    runs = Path(runs_dir).resolve() if runs_dir is not None else root / "runs"
    selected = with_needs(manifest, chosen, runs)
    code_digest, lock_digest = _digests(root, manifest)
    mode: EnvMode = "cached" if env_mode == "cached" else "current"
    base_env, env_error, snapshot, drift = _prepare_environment(root, manifest, mode)
    lock = threading.Lock()

    def _emit(event: RunEvent) -> None:
        if on_event is not None:
            with lock:
                on_event(event)

    shared = Shared(
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
        signer=sign_key,
        sandbox=sandbox,
    )
    plan: list[Job] = []
    for launcher in selected:
        launcher_seeds: list[int | None] = list(launcher.seeds)
        if launcher.seeds and seeds is not None:
            launcher_seeds = list(seeds)
        plan.extend(Job(launcher, seed) for seed in launcher_seeds or [None])
    if jobs > 1 and len(plan) > 1:
        _refuse_shared_outputs(plan)
    with _sigterm_as_interrupt():
        results, interrupted = _schedule(plan, shared, jobs)
    results.sort(key=lambda r: (r.record.started_at, r.run_id))
    summary = RunSummary(results=results, interrupted=interrupted, ledger_head=ledger_head(runs))
    summary.tasks = task_values(selected, results)
    summary.elapsed = time.monotonic() - started
    _emit(RunEvent("summary", {k: v for k, v in summary.to_dict().items() if k != "results"}))
    return summary
