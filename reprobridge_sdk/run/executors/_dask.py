"""Runs on Dask ``distributed``: a LocalCluster, an existing scheduler, or Slurm batch jobs.

Each run is one Dask task (:func:`~._remote.run_remote`); ``dask-jobqueue`` serves Slurm and
the other batch systems with ordinary workers, and the scheduler resubmits a task whose
worker was lost. Futures feed the runner's scheduler unchanged.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future
from pathlib import Path
from typing import Any, TypeVar

import distributed

from reprobridge_sdk.errors import require_extra
from reprobridge_sdk.io.atomic import atomic_directory
from reprobridge_sdk.model import Launcher
from reprobridge_sdk.model.launcher import memory_bytes
from reprobridge_sdk.run._execute import Job, Shared, seal_run, skipped
from reprobridge_sdk.run.evidence import load_record
from reprobridge_sdk.run.results import RunEvent, RunResult
from reprobridge_sdk.run.select import usage_error

from . import JOBQUEUE_CLUSTERS, Capacity, Executor, ExecutorOptions, placement_problem
from ._remote import RemoteOutcome, RemoteRun, pack_artifact, run_remote

__all__ = ["DaskExecutor", "slurm_capacities"]

T = TypeVar("T")
R = TypeVar("R")


def _worker_capacity(info: dict[str, Any]) -> Capacity:
    resources = info.get("resources") or {}
    memory = resources.get("memory", info.get("memory_limit") or None)
    return Capacity(
        cpus=float(resources.get("cpus", info.get("nthreads", 1))),
        memory=float(memory) if memory else None,
        gpus=float(resources.get("gpus", resources.get("GPU", 0))),
    )


def slurm_capacities() -> list[Capacity]:
    """The nodes Slurm offers (``sinfo``): cores, memory and GPUs of each."""
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%c %m %G"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise usage_error(
            "N021",
            f"cannot ask Slurm for its nodes: {exc}",
            hint="is this a Slurm login node (sinfo on PATH, a controller running)?",
        ) from None
    capacities = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[0].isdigit():
            continue
        gpus = 0.0
        for gres in parts[2].split(",") if len(parts) > 2 else []:
            fields = gres.split("(")[0].split(":")
            if fields[0] == "gpu" and fields[-1].isdigit():
                gpus += float(fields[-1])
        memory = float(parts[1].rstrip("+")) * 2**20 if parts[1].rstrip("+").isdigit() else None
        capacities.append(Capacity(cpus=float(parts[0]), memory=memory, gpus=gpus))
    return capacities


class DaskExecutor(Executor):
    """``dask-local``, ``dask`` (an existing scheduler) and ``slurm`` (dask-jobqueue)."""

    def __init__(self, kind: str, *, jobs: int, options: ExecutorOptions) -> None:
        self.kind = kind
        self.record_name = "slurm" if kind == "slurm" else "dask"
        self._jobs = jobs
        self._options = options
        if kind == "dask-local":
            self._shared_fs = True  # the same machine by construction
        else:
            self._shared_fs = bool(options.shared_fs)
        if kind == "dask" and not options.scheduler:
            raise usage_error(
                "N004",
                "the 'dask' executor needs the address of a scheduler",
                hint="--scheduler tcp://HOST:8786, or --executor dask-local",
            )
        self._client: distributed.Client | None = None
        self._cluster: Any = None
        self._archive: Any = None
        self._archive_digest: str | None = None
        self._cancel_name = f"reprobridge-cancel-{uuid.uuid4().hex}"
        self._cancel_event: distributed.Event | None = None
        self._finished = threading.Event()
        self._declared: set[str] = set()
        self._futures: set[distributed.Future] = set()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ connection

    @property
    def client(self) -> distributed.Client:
        if self._client is None:
            self._connect([])
        assert self._client is not None
        return self._client

    @property
    def slots(self) -> int:
        """Twice the workers' threads: the next run waits on its worker while one runs, so
        a worker never idles for a round trip to the client (each still runs one at a time).
        """
        if self.kind == "dask":
            workers = self.client.scheduler_info().get("workers", {})
            return 2 * max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        return 2 * self._jobs

    def _connect(self, launchers: Sequence[Launcher]) -> None:
        timeout = self._options.start_timeout
        try:
            if self.kind == "dask-local":
                self._cluster = self._local_cluster()
                self._client = distributed.Client(self._cluster, timeout=timeout)
            elif self.kind == "dask":
                self._client = distributed.Client(self._options.scheduler, timeout=timeout)
            else:
                self._cluster = self._slurm_cluster(launchers)
                self._cluster.scale(jobs=self._jobs)
                self._client = distributed.Client(self._cluster, timeout=timeout)
            self._client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            self.close()
            where = self._options.scheduler or self.kind
            raise usage_error(
                "N021",
                f"the {self.kind!r} executor did not start: no worker at {where} within "
                f"{timeout:g} s ({type(exc).__name__}: {exc})",
                hint="check the scheduler address or the batch queue (squeue)",
            ) from None
        workers = self._client.scheduler_info().get("workers", {})
        self._declared = {k for w in workers.values() for k in (w.get("resources") or {})}

    def _local_cluster(self) -> distributed.LocalCluster:
        cores = os.cpu_count() or 1
        per_worker = max(1, cores // self._jobs)
        total = _total_memory()
        memory = int(total / self._jobs) if total else None
        resources: dict[str, float] = {"cpus": per_worker, "gpus": 0}
        if memory:
            resources["memory"] = memory
        return distributed.LocalCluster(
            n_workers=self._jobs,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory or "auto",
            resources=resources,
            dashboard_address=":0",
            host="127.0.0.1",
        )

    def _slurm_cluster(self, launchers: Sequence[Launcher]) -> Any:
        dask_jobqueue = require_extra("dask_jobqueue", "slurm", feature="the 'slurm' executor")
        capacities = slurm_capacities()
        problem = placement_problem(launchers, capacities)
        if problem is not None:
            raise usage_error("N022", problem, hint="lower the launcher's resources")
        cpus, memory, gpus, walltime = _job_size(launchers, self._options)
        extra = list(self._options.job_extra)
        if gpus:
            extra.append(f"--gres=gpu:{gpus}")
        cluster_class = getattr(dask_jobqueue, JOBQUEUE_CLUSTERS["slurm"])
        worker_resources = f"cpus={cpus},memory={memory},gpus={gpus}"  # no blank: unquoted
        return cluster_class(
            cores=cpus,
            processes=1,
            memory=f"{memory}B",
            walltime=walltime,
            queue=self._options.queue,
            account=self._options.account,
            python=sys.executable,
            job_extra_directives=extra,
            job_script_prologue=list(self._options.job_prologue),
            log_directory=self._options.log_directory or str(_log_directory()),
            worker_extra_args=["--resources", worker_resources],
        )

    # ------------------------------------------------------------------ runs

    def start(self, shared: Shared, launchers: Sequence[Launcher]) -> None:
        if self._client is None:
            self._connect(launchers)
        workers = self.client.scheduler_info().get("workers", {})
        problem = placement_problem(launchers, [_worker_capacity(w) for w in workers.values()])
        if problem is not None:
            raise usage_error(
                "N022", problem, hint="lower the launcher's resources or use larger workers"
            )
        if not self._shared_fs:
            data = pack_artifact(shared.root, shared.manifest, shared.runs_dir)
            self._archive_digest = hashlib.sha256(data).hexdigest()
            self._archive = self.client.scatter(data, broadcast=True, hash=False)
        # One cancel event per invocation: an executor the caller keeps open serves several.
        self._cancel_name = f"reprobridge-cancel-{uuid.uuid4().hex}"
        self._cancel_event = distributed.Event(self._cancel_name, client=self.client)
        self._finished = threading.Event()
        watcher = threading.Thread(target=self._watch_cancel, args=(shared,), daemon=True)
        watcher.start()

    def _watch_cancel(self, shared: Shared) -> None:
        while not self._finished.is_set():
            if shared.cancel.wait(0.5):
                self.cancel()
                return

    def _resources(self, launcher: Launcher) -> dict[str, float] | None:
        need = launcher.resources
        if need is None or not self._declared:
            return None
        wanted: dict[str, float] = {"cpus": need.cpus, "gpus": need.gpus}
        if need.memory is not None:
            wanted["memory"] = memory_bytes(need.memory)
        return {k: v for k, v in wanted.items() if k in self._declared and v}

    def submit(self, job: Job, shared: Shared) -> Future[RunResult]:
        spec = RemoteRun(
            manifest=shared.manifest,
            launcher_id=job.launcher.id,
            seed=job.seed,
            root=str(shared.root),
            runs_dir=str(shared.runs_dir),
            shared_fs=self._shared_fs,
            archive_digest=self._archive_digest,
            env_mode=shared.env_mode,
            timeout=shared.timeout,
            grace=shared.grace,
            code_digest=shared.code_digest,
            lock_digest=shared.lock_digest,
            cancel_event=self._cancel_name,
            executor=self.record_name or "dask",
            sandbox=shared.sandbox,
        )
        remote = self.client.submit(
            run_remote,
            spec,
            self._archive,
            pure=False,
            key=f"reprobridge-run-{job.launcher.id}-{uuid.uuid4().hex[:12]}",
            resources=self._resources(job.launcher),
        )
        with self._lock:
            self._futures.add(remote)
        result: Future[RunResult] = Future()
        result.set_running_or_notify_cancel()
        remote.add_done_callback(lambda f: self._done(f, result, job, shared))
        return result

    def _done(
        self, remote: distributed.Future, result: Future[RunResult], job: Job, shared: Shared
    ) -> None:
        with self._lock:
            self._futures.discard(remote)
        try:
            if remote.cancelled():
                result.set_exception(CancelledError())
                return
            try:
                outcome: RemoteOutcome = remote.result()
            except distributed.client.FutureCancelledError:
                result.set_exception(CancelledError())
                return
            except Exception as exc:  # KilledWorker and the like: the run is lost for good
                detail = f"the run's worker was lost too often ({type(exc).__name__}: {exc})"
                result.set_result(skipped(job, shared, detail, reason="internal-error"))
                return
            landed = self._land(outcome, shared)
            if load_record(landed.run_dir).status != "running":  # its final record is there
                seal_run(shared, landed.run_dir, landed.record)
            for event in outcome.events:
                if event.event == "run-finished":
                    continue
                data = dict(event.data)
                if "run_dir" in data:
                    data["run_dir"] = str(landed.run_dir)
                shared.emit(RunEvent(event.event, data))
            shared.emit(RunEvent("run-finished", landed.to_dict()))
            result.set_result(landed)
        except BaseException as exc:  # never leave the scheduler waiting
            if not result.done():
                result.set_exception(exc)

    def _land(self, outcome: RemoteOutcome, shared: Shared) -> RunResult:
        run = outcome.result
        if outcome.files is None:
            return run
        target = shared.runs_dir / run.run_id
        with atomic_directory(target) as staging:
            for relative, data in outcome.files.items():
                path = staging / relative
                if not path.resolve().is_relative_to(staging.resolve()):
                    msg = f"a worker sent a file outside its run directory: {relative!r}"
                    raise ValueError(msg)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        return RunResult(run_id=run.run_id, run_dir=target, record=run.record)

    def cancel(self) -> None:
        if self._cancel_event is not None:
            try:
                self._cancel_event.set()
            except Exception:  # the scheduler is gone: nothing runs there any more
                return
        with self._lock:
            waiting = [f for f in self._futures if f.status == "pending"]
        if waiting and self._client is not None:
            self._client.cancel(waiting)

    def finish(self) -> None:
        self._finished.set()

    def close(self) -> None:
        self._finished.set()
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    # ------------------------------------------------------------------ batches

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        futures = self.client.map(function, list(items), pure=False)
        return list(self.client.gather(futures))


def _job_size(launchers: Sequence[Launcher], options: ExecutorOptions) -> tuple[int, int, int, str]:
    """Cores, memory (bytes), GPUs and wall time of the batch jobs: the largest run's needs,
    and at least what ``options`` asks for."""
    cpus, memory, gpus = 1, max(2**30, options.memory or 0), 0
    seconds = options.walltime or 0.0
    for launcher in launchers:
        need = launcher.resources
        if need is not None:
            cpus = max(cpus, need.cpus)
            gpus = max(gpus, need.gpus)
            if need.memory is not None:
                memory = max(memory, memory_bytes(need.memory))
            if need.walltime is not None:
                seconds = max(seconds, need.walltime)
        if launcher.timeout is not None and (need is None or need.walltime is None):
            seconds = max(seconds, launcher.timeout)
    # the worker starts before the run and hands back after it: a margin of ten minutes
    total = int(seconds) + 600 if seconds else 3600
    return cpus, memory, gpus, f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"


def _log_directory() -> Path:
    """Where batch jobs write their logs by default: the SDK's cache, never the artifact."""
    from reprobridge_sdk.env.venv import cache_root  # noqa: PLC0415 - heavy

    path = cache_root() / "slurm-logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _total_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None
