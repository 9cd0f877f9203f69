"""Benchmark the Dask executor against local runs: N trivial runs, 2 workers on each side.

Run: ``python benchmarks/bench_executors.py [--runs 1000] [--pairs 3]``. A throw-away artifact
whose launcher runs ``python -c "print('acc=0.5')"`` over N seeds is run as whole processes,
``reprobridge run --env current -j 2`` (two local threads, one subprocess each) against
``reprobridge run --env current -j 2 --executor dask-local`` (a LocalCluster of two worker
processes, started and stopped inside the measured process). Pairs are alternated and the
medians reported; the ratio is dask-local over local (lower is better), with the cost per run
and the throughput of each side. The fixed cost of starting the cluster is measured with one
run and reported beside it, so the per-run overhead of the scheduler can be told apart.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MANIFEST = """
rra_version: "1.0"
artifact: {id: bench, title: Executor benchmark, license: MIT, paper: {title: Bench}}
codebase:
  upstream:
    repository: "https://example.org/b.git"
    commit: "0123456789abcdef0123456789abcdef01234567"
  refined: {kind: directory, path: code}
environment: {python: "3.11"}
tasks:
  - {id: t, dataset: d, metric: m, published: {value: 1.0}, direction: higher, kind: full}
launchers:
  - id: trivial
    argv: [python, -c, "print('acc=0.5')"]
    seeds: [0]
    scope: smoke
    measurements: [{task: t, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]
"""


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="rb-bench-executors-"))
    try:
        artifact = workdir / "artifact"
        (artifact / "code").mkdir(parents=True)
        (artifact / "code" / "README").write_text("bench\n")
        (artifact / "rra.yaml").write_text(MANIFEST)
        cli = [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            str(artifact),
            "trivial",
            "--no-validate",
        ]
        seeds = ",".join(map(str, range(args.runs)))
        sides = {
            "local": [*cli, "--env", "current", "-j", "2"],
            "dask-local": [*cli, "--env", "current", "-j", "2", "--executor", "dask-local"],
        }
        times: dict[str, list[float]] = {name: [] for name in sides}
        fixed: dict[str, list[float]] = {name: [] for name in sides}
        for pair in range(args.pairs):
            order = list(sides) if pair % 2 == 0 else list(reversed(sides))
            for name in order:
                shutil.rmtree(artifact / "runs", ignore_errors=True)
                times[name].append(_timed([*sides[name], "--seeds", seeds]))
                shutil.rmtree(artifact / "runs", ignore_errors=True)
                fixed[name].append(_timed([*sides[name], "--seeds", "0"]))
        print(f"{args.runs} trivial runs, 2 workers each side, {args.pairs} alternated pairs:")
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name in sides:
            once = statistics.median(fixed[name])
            per_run = (medians[name] - once) / max(1, args.runs - 1)
            print(
                f"  {name:<10} total {medians[name]:7.2f} s | one run {once:6.2f} s | "
                f"per run {per_run * 1000:6.2f} ms | {args.runs / medians[name]:6.1f} runs/s"
            )
        local_once = statistics.median(fixed["local"])
        dask_once = statistics.median(fixed["dask-local"])
        local_per = (medians["local"] - local_once) / max(1, args.runs - 1)
        dask_per = (medians["dask-local"] - dask_once) / max(1, args.runs - 1)
        print(
            f"ratio dask-local / local: total {medians['dask-local'] / medians['local']:.2f}, "
            f"per run {dask_per / local_per:.2f}, "
            f"cluster start-up +{dask_once - local_once:.2f} s"
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
