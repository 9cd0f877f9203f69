"""Executors: where the runs of one invocation, and the artifacts of a committee batch, execute.

An executor (``local``, ``dask-local``, ``dask``, ``slurm``) takes the runs the scheduler
releases and hands back a future of each result. Every executor calls the same
:func:`~reprobridge_sdk.run._execute.execute`, so what a run records does not depend on where
it ran. Failures are findings, never a hang. Spec: ``spec/runner.md#executors``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from reprobridge_sdk.errors import require_extra
from reprobridge_sdk.model import Launcher
from reprobridge_sdk.run._execute import Job, Shared, execute
from reprobridge_sdk.run.results import RunResult
from reprobridge_sdk.run.select import usage_error

__all__ = [
    "EXECUTORS",
    "JOBQUEUE_CLUSTERS",
    "Capacity",
    "Executor",
    "ExecutorOptions",
    "LocalExecutor",
    "make_executor",
    "placement_problem",
]

#: The executors ``--executor`` accepts.
EXECUTORS = ("local", "dask-local", "dask", "slurm")
#: Batch systems reached through dask-jobqueue, by name (``slurm`` is the one tested here).
JOBQUEUE_CLUSTERS = {
    "slurm": "SLURMCluster",
    "pbs": "PBSCluster",
    "sge": "SGECluster",
    "lsf": "LSFCluster",
}

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class ExecutorOptions:
    """How to reach and size a distributed executor (flags, then environment, then config)."""

    #: Address of an existing scheduler, for ``dask``.
    scheduler: str | None = None
    #: Whether workers see the client's file system at the same paths (see the module doc).
    shared_fs: bool | None = None
    #: Extra ``#SBATCH`` directives (``slurm``), e.g. ``--partition=gpu``.
    job_extra: tuple[str, ...] = ()
    #: Shell lines run before each batch job's worker starts (``slurm``), e.g. ``module load``.
    job_prologue: tuple[str, ...] = ()
    #: Queue or partition of the batch jobs (``slurm``).
    queue: str | None = None
    #: Account to charge (``slurm``).
    account: str | None = None
    #: Where batch jobs write their logs (``slurm``); none by default.
    log_directory: str | None = None
    #: Seconds to wait for the first worker before giving up with N021.
    start_timeout: float = 120.0
    #: Wall-time seconds each batch job asks for at least (``slurm``); the launchers' needs
    #: may ask for more. ``bench`` sets it from the budgets of its runs.
    walltime: float | None = None
    #: Memory in bytes each batch job asks for at least (``slurm``).
    memory: int | None = None


@dataclass(frozen=True)
class Capacity:
    """What one worker (or batch node) can hold: cores, memory in bytes, GPUs."""

    cpus: float
    memory: float | None
    gpus: float

    def holds(self, launcher: Launcher) -> bool:
        need = launcher.resources
        if need is None:
            return True
        from reprobridge_sdk.model.launcher import memory_bytes  # noqa: PLC0415 - cheap

        if need.cpus > self.cpus or need.gpus > self.gpus:
            return False
        return not (
            need.memory is not None
            and self.memory is not None
            and memory_bytes(need.memory) > self.memory
        )


def placement_problem(launchers: Iterable[Launcher], capacities: Sequence[Capacity]) -> str | None:
    """Why some launcher's runs cannot be placed on any of ``capacities``, or ``None``."""
    for launcher in launchers:
        if launcher.resources is None:
            continue
        if not any(c.holds(launcher) for c in capacities):
            r = launcher.resources
            wanted = f"{r.cpus} cpus" + (f", {r.memory}" if r.memory else "")
            wanted += f", {r.gpus} gpus" if r.gpus else ""
            best = ", ".join(
                f"{c.cpus:g} cpus/{_size(c.memory)}/{c.gpus:g} gpus" for c in capacities[:4]
            )
            return (
                f"launcher {launcher.id!r} needs {wanted} per run, but no worker has that "
                f"(workers: {best or 'none'})"
            )
    return None


def _size(memory: float | None) -> str:
    if memory is None:
        return "unknown memory"
    return f"{memory / 2**30:.1f}GiB"


class Executor(abc.ABC):
    """Runs the jobs the scheduler releases; see the module documentation."""

    #: The name recorded in each run's record (``None`` for local runs).
    record_name: str | None = None

    @property
    @abc.abstractmethod
    def slots(self) -> int:
        """How many runs may be in flight at once."""

    def start(self, shared: Shared, launchers: Sequence[Launcher]) -> None:  # noqa: B027
        """Prepare for the runs of ``launchers`` (placement checks, shipping the artifact)."""

    @abc.abstractmethod
    def submit(self, job: Job, shared: Shared) -> Future[RunResult]:
        """Start one run; the future gives its result once its final record is written."""

    def finish(self) -> None:  # noqa: B027
        """The invocation that :meth:`start` prepared is over (the executor may serve another)."""

    def cancel(self) -> None:  # noqa: B027
        """Stop the runs in flight (their processes are killed and recorded as interrupted)."""

    def close(self) -> None:  # noqa: B027
        """Release the workers and connections."""

    @abc.abstractmethod
    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[function(item) for item in items]``, spread over the workers (committee batches)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalExecutor(Executor):
    """Threads of this process, one subprocess per run (the runner's ``-j``)."""

    def __init__(self, jobs: int = 1) -> None:
        self._jobs = jobs
        self._pool: ThreadPoolExecutor | None = None

    @property
    def slots(self) -> int:
        return self._jobs

    def submit(self, job: Job, shared: Shared) -> Future[RunResult]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._jobs, thread_name_prefix="rb-run")
        return self._pool.submit(execute, job, shared)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if self._jobs <= 1 or len(items) <= 1:
            return [function(item) for item in items]
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - only for batches

        with ProcessPoolExecutor(max_workers=min(self._jobs, len(items))) as pool:
            return list(pool.map(function, items))


def make_executor(
    name: str | None = None,
    *,
    jobs: int = 1,
    options: ExecutorOptions | None = None,
) -> Executor:
    """The executor called ``name`` (``None`` or ``local``: :class:`LocalExecutor`).

    ``jobs`` is the number of runs in flight: local threads, ``dask-local`` workers, or Slurm
    batch jobs (one worker each). With ``dask`` the scheduler's workers decide.
    """
    options = options or ExecutorOptions()
    name = name or "local"
    if name not in EXECUTORS:
        raise usage_error(
            "N020",
            f"unknown executor {name!r}",
            hint=f"choose one of: {', '.join(EXECUTORS)}",
        )
    if jobs < 1:
        raise usage_error("N004", f"jobs must be at least 1, not {jobs}")
    if name == "local":
        return LocalExecutor(jobs)
    extra = "slurm" if name == "slurm" else "dask"
    require_extra("distributed", extra, feature=f"the {name!r} executor")
    if name == "slurm":
        require_extra("dask_jobqueue", extra, feature="the 'slurm' executor")
    from ._dask import DaskExecutor  # noqa: PLC0415 - optional dependency

    return DaskExecutor(name, jobs=jobs, options=options)
