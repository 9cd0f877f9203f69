"""The runner: launchers x seeds -> processes -> evidence records.

:func:`run` selects the launchers, expands them over seeds, orders them by ``needs`` and
schedules the runs on an executor; :mod:`._execute` carries out each one. The rules (selection,
environments, failure reasons and their priority, outputs) are ``spec/runner.md#runner``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from reprobridge_sdk.errors import ArtifactError

from ._environment import artifact_digests, prepare_environment
from ._execute import EnvMode, Job, Shared, skipped
from .executors import Executor, ExecutorOptions, make_executor
from .ledger import ledger_head
from .process import ResourceLimits
from .results import RunEvent, RunResult, RunSummary, TaskValue, task_values
from .select import load_artifact, select_launchers, usage_error, with_needs

if TYPE_CHECKING:
    from reprobridge_sdk.model import Launcher
    from reprobridge_sdk.signing import SigningKey

__all__ = [
    "RunEvent",
    "RunResult",
    "RunSummary",
    "TaskValue",
    "load_artifact",
    "require_sandbox",
    "run",
]


def require_sandbox() -> None:
    """Raise N011 (a :class:`UsageError`) where the sandbox cannot work here.

    Every command that runs an artifact's or a repository's code in the sandbox asks this
    before it starts anything: it refuses, and never falls back to running unsandboxed.
    """
    from .sandbox import check_sandbox  # noqa: PLC0415 - only where the sandbox is asked for

    problem = check_sandbox()
    if problem is not None:
        raise usage_error(
            "N011",
            f"the sandbox cannot be used here: {problem}",
            hint="install bubblewrap, or run a trusted artifact with the sandbox off "
            "(--no-sandbox; run without --sandbox)",
        )


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


class _StopRequest:
    """Ctrl-C (SIGINT) and SIGTERM while the scheduler runs, recorded rather than raised.

    A raising handler could fire between two waits, outside the code that stops the runs in
    flight; instead each signal sets :attr:`requested`, which the loop checks at least every
    quarter second. The previous handlers are restored when the loop ends."""

    def __init__(self) -> None:
        self.requested = False

    def _handle(self, signum: int, frame: object) -> None:
        self.requested = True

    @contextlib.contextmanager
    def installed(self) -> Iterator[_StopRequest]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {
            signum: signal.signal(signum, self._handle)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


class _Plan:
    """The runs not yet started, released in plan order as their launchers' needs are met.

    Linear in the runs and the ``needs`` edges: each launcher's state is looked at when the
    plan starts and again only when a launcher it needs finishes all its runs or fails, never
    by rescanning what is pending.
    """

    def __init__(self, jobs: list[Job]) -> None:
        self.queues: dict[str, deque[Job]] = {}
        for job in jobs:
            self.queues.setdefault(job.launcher.id, deque()).append(job)
        self.remaining = {lid: len(queue) for lid, queue in self.queues.items()}
        self.needs = {
            lid: [n for n in queue[0].launcher.needs if n in self.remaining]
            for lid, queue in self.queues.items()
        }
        self.dependents: dict[str, list[str]] = {}
        for lid, needs in self.needs.items():
            for need in needs:
                self.dependents.setdefault(need, []).append(lid)
        self.failed: set[str] = set()
        self.order = {lid: i for i, lid in enumerate(self.queues)}
        self.ready: list[str] = []  # a heap of plan positions would do; launchers are few
        self.broken: deque[tuple[str, str]] = deque()
        self.waiting = len(jobs)
        for lid in self.queues:
            self._look(lid)

    def _look(self, lid: str) -> None:
        if not self.queues[lid] or lid in self.ready:
            return
        broken = [n for n in self.needs[lid] if n in self.failed]
        if broken:
            self.broken.append((lid, broken[0]))
        elif not any(self.remaining[n] for n in self.needs[lid]):
            self.ready.append(lid)
            self.ready.sort(key=self.order.__getitem__)

    def next_ready(self) -> Job | None:
        while self.ready:
            queue = self.queues[self.ready[0]]
            if queue:
                self.waiting -= 1
                return queue.popleft()
            self.ready.pop(0)
        return None

    def next_broken(self) -> tuple[Job, str] | None:
        while self.broken:
            lid, need = self.broken[0]
            queue = self.queues[lid]
            if queue:
                self.waiting -= 1
                return queue.popleft(), need
            self.broken.popleft()
        return None

    def finished(self, job: Job, succeeded: bool) -> None:
        lid = job.launcher.id
        self.remaining[lid] -= 1
        newly_failed = not succeeded and lid not in self.failed
        if newly_failed:
            self.failed.add(lid)
        if newly_failed or not self.remaining[lid]:
            for dependent in self.dependents.get(lid, ()):
                self._look(dependent)

    def drain(self) -> list[Job]:
        """Every run not yet started (the needs form a cycle, or the batch stops)."""
        left = [job for queue in self.queues.values() for job in queue]
        for queue in self.queues.values():
            queue.clear()
        self.ready.clear()
        self.broken.clear()
        self.waiting = 0
        return left


class _Scheduler:
    """The runs of one invocation: released from the plan onto the executor, collected."""

    def __init__(self, jobs: list[Job], shared: Shared, executor: Executor) -> None:
        self.plan = _Plan(jobs)
        self.shared = shared
        self.executor = executor
        self.workers = executor.slots  # asked once: a remote scheduler answers it
        self.results: list[RunResult] = []
        self.running: dict[Future[RunResult], Job] = {}
        #: The first error of a run whose record could not be written: it stops everything.
        self.error: ArtifactError | None = None

    def finished(self, job: Job, result: RunResult) -> None:
        self.results.append(result)
        self.plan.finished(job, result.status == "succeeded")

    def release(self) -> None:
        """Record the runs whose needs failed; submit ready runs while a worker is free."""
        plan, shared = self.plan, self.shared
        while (broken := plan.next_broken()) is not None:
            detail = f"needed launcher {broken[1]!r} did not succeed"
            self.finished(broken[0], skipped(broken[0], shared, detail))
        while len(self.running) < self.workers and (ready := plan.next_ready()) is not None:
            self.running[self.executor.submit(ready, shared)] = ready
        if plan.waiting and not self.running and not plan.broken:
            # Nothing runs and nothing can start: the needs form a cycle.
            for job in plan.drain():
                self.finished(job, skipped(job, shared, "the launchers' needs form a cycle"))

    def collect(self, done: set[Future[RunResult]]) -> None:
        """Record the finished runs."""
        for future in done:
            job = self.running.pop(future)
            try:
                self.finished(job, future.result())
            except CancelledError:  # cancelled before it started: like a pending run
                continue
            except ArtifactError as exc:  # no record could be written: stop everything
                self.error = self.error or exc
                self.shared.cancel.set()
                self.plan.drain()


def _schedule(jobs: list[Job], shared: Shared, executor: Executor) -> tuple[list[RunResult], bool]:
    runs = _Scheduler(jobs, shared, executor)
    plan, running = runs.plan, runs.running
    interrupted = False
    with _StopRequest().installed() as stop:
        while plan.waiting or running:
            if stop.requested and not interrupted:
                interrupted = True
                shared.cancel.set()
                executor.cancel()
                plan.drain()
            if not interrupted:
                runs.release()
            if not running:
                if plan.waiting and not interrupted:
                    continue  # runs skipped just now may have released others
                break
            try:
                done, _ = wait(list(running), timeout=0.25, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:  # outside the main thread no handler of ours is in place
                stop.requested = True
                continue
            runs.collect(done)
    if runs.error is not None:
        raise runs.error
    return runs.results, interrupted


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


def _refuse_unshowable(root: Path, runs: Path) -> None:
    """N011 when the sandbox could show the artifact or the runs directory only by showing
    what it never shows (``/``, a home, ``/tmp`` itself...): nothing runs unconfined."""
    from .sandbox import may_bind  # noqa: PLC0415 - only with --sandbox

    for what, path in (("the artifact", root), ("the runs directory", runs)):
        if not may_bind(path):
            raise usage_error(
                "N011",
                f"--sandbox cannot show {what} ({path}) without showing what holds it "
                "(the root, a home, /tmp or a system directory)",
                hint="move the artifact (or --runs-dir) into a directory of its own",
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
    executor: str | Executor | None = None,
    executor_options: ExecutorOptions | None = None,
    sign_key: SigningKey | None = None,
    sandbox: bool = False,
    limits: ResourceLimits | None = None,
    measure_with: Callable[[Launcher, Path], Launcher] | None = None,
) -> RunSummary:
    """Run the selected launchers over their seeds and record evidence for each run.

    ``echo`` receives the processes' raw output (use it with ``jobs=1``); ``executor`` is a name
    (``local``, ``dask-local``, ``dask``, ``slurm``) or an
    :class:`~reprobridge_sdk.run.executors.Executor`; ``sign_key`` signs each record;
    ``sandbox`` runs each launcher under bubblewrap (N011 where it cannot hold); ``limits``
    bound each launcher's memory and cores (a committee's budget); ``measure_with`` (local
    runs) gives a launcher its measurements from a run's log once its process succeeded,
    before the run is measured (the build's probe run). Records are
    appended to the ledger (``summary.ledger_head``). Raises :class:`UsageError` (N codes) for a
    bad request and :class:`ArtifactError` when a run directory cannot be written; every run's
    outcome is in the summary and its record. Spec: ``spec/runner.md#runner``."""
    if jobs < 1:
        raise usage_error("N004", f"jobs must be at least 1, not {jobs}")
    if timeout is not None and not timeout > 0:
        raise usage_error("N004", f"timeout must be positive, not {timeout}")
    if env_mode not in ("cached", "current"):
        raise usage_error(
            "N004", f"unknown environment mode {env_mode!r}", hint="cached or current"
        )
    if sandbox:
        require_sandbox()
    started = time.monotonic()
    root, manifest = load_artifact(artifact_dir)
    root = root.resolve()
    chosen = select_launchers(manifest, launchers, scope)
    runs = Path(runs_dir).resolve() if runs_dir is not None else root / "runs"
    if sandbox:
        _refuse_unshowable(root, runs)
    selected = with_needs(manifest, chosen, runs)
    code_digest, lock_digest = artifact_digests(root, manifest)
    mode: EnvMode = "cached" if env_mode == "cached" else "current"
    base_env, env_error, snapshot, drift = prepare_environment(root, manifest, mode)
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
        limits=limits,
        measure_with=measure_with,
    )
    owned = not isinstance(executor, Executor)
    engine = (
        make_executor(executor, jobs=jobs, options=executor_options)
        if not isinstance(executor, Executor)
        else executor
    )
    shared.executor = engine.record_name
    shared.keep_snapshot = engine.record_name is None  # local runs name it by digest
    plan: list[Job] = []
    for launcher in selected:
        own = list(seeds) if seeds is not None and launcher.seeds else list(launcher.seeds)
        plan.extend(Job(launcher, seed) for seed in own or (None,))
    if (jobs > 1 or engine.record_name is not None) and len(plan) > 1:
        _refuse_shared_outputs(plan)  # runs in parallel, here or on workers
    try:
        with _sigterm_as_interrupt():
            engine.start(shared, selected)
            results, interrupted = _schedule(plan, shared, engine)
    finally:
        engine.finish()
        if owned:
            engine.close()
    results.sort(key=lambda r: (r.record.started_at, r.run_id))
    summary = RunSummary(results=results, interrupted=interrupted, ledger_head=ledger_head(runs))
    summary.tasks = task_values(selected, results)
    summary.elapsed = time.monotonic() - started
    _emit(RunEvent("summary", {k: v for k, v in summary.to_dict().items() if k != "results"}))
    return summary
