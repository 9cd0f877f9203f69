"""Benchmark: a committee's batch of 200 example-shaped artifacts, in one command or 200.

The batch is ``_synthetic.write_batch``: 200 copies of the bundled example (its three tasks, its
smoke and scored launchers with their shipped samples, its guide, code and lock), each with an
id of its own and the runs of its five seeds and one smoke run, with their ledger. Both sides
are whole processes (the package's bytecode written first), timed as pairs whose order
alternates, medians of wall time (the target's measure: the batch is about using both cores) and
of CPU time:

* ``validate -j 2``: ``python -m reprobridge_sdk validate BATCH -j 2 --format json`` (the
  directory whose subdirectories are the artifacts), against the same command on each artifact
  alone, 200 processes run two at a time;
* ``audit --table -j 2``: ``python -m reprobridge_sdk audit --table -j 2 A1 ... A200 --format
  json -o FILE``, against ``audit Ai --format json -o FILEi``, 200 processes two at a time.

A side that exits other than 0 (an invalid artifact, a failed audit) stops the benchmark: it
would time the error path.

Printed: the machine's load (``uptime``) before and after, then per command the median wall and
CPU seconds of each side, their ratios, and the target beside the wall ratio. Target (issue 24):
the batch command takes at most 0.6x the wall time of the 200 one-artifact processes run two at
a time, for ``validate -j 2`` and for ``audit --table -j 2``.

``--quick`` runs a batch of 4 once: a check that the benchmark runs and prints its table, not a
measurement.

Run: ``python benchmarks/bench_batch.py [--count 200 --repeats 3 --jobs 2] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import write_batch
from bench_audit_scale import compile_bytecode, load, measure, target

#: Target of issue 24: the batch command's wall time over the one-artifact processes'.
TARGET_BATCH = 0.6


def at_a_time(argvs: list[list[str]], jobs: int) -> tuple[float, float, list[int]]:
    """Run ``argvs`` as processes, ``jobs`` at a time; the wall seconds of the whole, the CPU
    seconds (user + system) of all of them and their exit codes."""
    waiting = list(reversed(argvs))
    running: dict[int, subprocess.Popen[bytes]] = {}
    codes: list[int] = []
    cpu = 0.0
    start = time.perf_counter()
    while waiting or running:
        while waiting and len(running) < jobs:
            proc = subprocess.Popen(
                waiting.pop(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            running[proc.pid] = proc
        pid, status, usage = os.wait4(-1, 0)
        proc = running.pop(pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        codes.append(proc.returncode)
        cpu += usage.ru_utime + usage.ru_stime
    return time.perf_counter() - start, cpu, codes


def compare(name: str, batch: list[str], singles: list[list[str]], jobs: int, repeats: int) -> None:
    """Time ``batch`` against ``singles`` run ``jobs`` at a time, alternated; print medians."""
    ours: list[tuple[float, float]] = []
    peer: list[tuple[float, float]] = []
    for i in range(repeats):
        for side in ("ours", "peer") if i % 2 == 0 else ("peer", "ours"):
            if side == "ours":
                wall, cpu, _, code = measure(batch)
                if code != 0:
                    raise SystemExit(f"{name}: the batch command exited {code}: {batch[:8]} ...")
                ours.append((wall, cpu))
            else:
                wall, cpu, codes = at_a_time(singles, jobs)
                if set(codes) != {0}:
                    raise SystemExit(f"{name}: a one-artifact process exited {sorted(set(codes))}")
                peer.append((wall, cpu))
    o, oc = statistics.median(w for w, _ in ours), statistics.median(c for _, c in ours)
    p, pc = statistics.median(w for w, _ in peer), statistics.median(c for _, c in peer)
    print(
        f"{name:<22} {o:>8.2f} {p:>8.2f} {o / p:>6.2f} {oc:>8.2f} {pc:>8.2f} {oc / pc:>6.2f}  "
        f"wall ratio {target(o / p, TARGET_BATCH)}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="artifacts in the batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a batch of 4, once: a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.count, args.repeats = 4, 1
    os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    cli = [sys.executable, "-m", "reprobridge_sdk"]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "batch"
        roots = write_batch(base, args.count, random.Random(2026))
        out = Path(tmp) / "out"
        out.mkdir()
        print(
            f"a batch of {args.count} example-shaped artifacts, -j {args.jobs} against "
            f"{args.count} processes {args.jobs} at a time; {args.repeats} alternated pairs, "
            "medians"
        )
        compile_bytecode()
        print(f"load before: {load()}")
        print(
            f"{'command':<22} {'batch s':>8} {'singles':>8} {'ratio':>6} {'batch cpu':>8} "
            f"{'singles':>8} {'ratio':>6}"
        )
        j = ["-j", str(args.jobs)]
        compare(
            f"validate -j {args.jobs}",
            [*cli, "validate", str(base), *j, "--format", "json", "-o", str(out / "v.json")],
            [
                [*cli, "validate", str(r), "--format", "json", "-o", str(out / f"v-{r.name}")]
                for r in roots
            ],
            args.jobs,
            args.repeats,
        )
        compare(
            f"audit --table -j {args.jobs}",
            [
                *(*cli, "audit", "--table", *j, *map(str, roots)),
                *("--format", "json", "-o", str(out / "t.json")),
            ],
            [
                [*cli, "audit", str(r), "--format", "json", "-o", str(out / f"a-{r.name}")]
                for r in roots
            ],
            args.jobs,
            args.repeats,
        )
        print(f"load after: {load()}")


if __name__ == "__main__":
    main()
