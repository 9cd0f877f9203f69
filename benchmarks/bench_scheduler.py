"""Benchmark the runner's scheduler alone: how its cost grows with the number of runs.

Run: ``python benchmarks/bench_scheduler.py [--sizes 10,100,1000]``. The scheduler of
:mod:`reprobridge_sdk.run.runner` is driven by an executor whose runs finish at once (no
process is started), over a plan of launchers where every second one needs the one before, so
that releasing runs as needs are met is exercised. The baseline is the floor any scheduler
pays: submitting the same futures and collecting them in a plain loop. Each size is measured
as the median of 5 alternated pairs; the fitted exponent of time against size is printed for
both (1.0 is linear).
"""

from __future__ import annotations

import argparse
import math
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

from reprobridge_sdk.model import EvidenceRecord, Launcher, Manifest
from reprobridge_sdk.run._execute import Job, Shared
from reprobridge_sdk.run.evidence import minimal_snapshot
from reprobridge_sdk.run.executors import Executor
from reprobridge_sdk.run.results import RunResult
from reprobridge_sdk.run.runner import _schedule

T = TypeVar("T")
R = TypeVar("R")


class _Instant(Executor):
    """Runs finish as they are submitted, with a succeeded record."""

    def __init__(self, slots: int) -> None:
        self._slots = slots
        record = EvidenceRecord.model_construct(run_id="r", status="succeeded", launcher="l")
        self._result = RunResult(run_id="r", run_dir=Path(), record=record)

    @property
    def slots(self) -> int:
        return self._slots

    def submit(self, job: Job, shared: Shared) -> Future[RunResult]:
        future: Future[RunResult] = Future()
        future.set_result(self._result)
        return future

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return [function(item) for item in items]


def _plan(size: int, launchers: int = 50) -> list[Job]:
    jobs = []
    launchers = min(launchers, size)
    per = size // launchers
    for index in range(launchers):
        needs = [f"l{index - 1}"] if index % 2 else []
        launcher = Launcher.model_validate(
            {"id": f"l{index}", "argv": ["true"], "scope": "smoke", "needs": needs}
        )
        jobs.extend(Job(launcher, seed) for seed in range(per))
    return jobs


def _shared() -> Shared:
    return Shared(
        root=Path(),
        manifest=Manifest.model_construct(),
        runs_dir=Path(),
        env_mode="current",
        base_env={},
        env_error=None,
        snapshot=minimal_snapshot(),
        drift=[],
        code_digest=None,
        lock_digest=None,
        timeout=None,
        grace=1.0,
        cancel=threading.Event(),
        echo=None,
        emit=lambda event: None,
    )


def _floor(jobs: list[Job], executor: _Instant, shared: Shared) -> None:
    futures = [executor.submit(job, shared) for job in jobs]
    for future in futures:
        future.result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shared = _shared()
    ours: list[float] = []
    floor: list[float] = []
    for size in sizes:
        jobs = _plan(size)
        executor = _Instant(slots=4)
        a: list[float] = []
        b: list[float] = []
        for pair in range(args.pairs):
            for side in ("ours", "floor") if pair % 2 == 0 else ("floor", "ours"):
                start = time.perf_counter()
                if side == "ours":
                    results, _ = _schedule(list(jobs), shared, executor)
                    assert len(results) == len(jobs)
                else:
                    _floor(jobs, executor, shared)
                (a if side == "ours" else b).append(time.perf_counter() - start)
        ours.append(statistics.median(a))
        floor.append(statistics.median(b))
        print(
            f"{len(jobs):>6} runs: scheduler {ours[-1] * 1000:8.1f} ms | plain loop "
            f"{floor[-1] * 1000:8.1f} ms | ratio {ours[-1] / floor[-1]:5.2f}"
        )
    for name, times in (("scheduler", ours), ("plain loop", floor)):
        exponent = math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])
        print(f"fitted exponent ({name}): {exponent:.2f}")


if __name__ == "__main__":
    main()
