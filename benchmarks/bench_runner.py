"""Benchmark ``reprobridge run -j 2`` against the same bare processes run two at a time.

Run: ``python benchmarks/bench_runner.py [--sizes 10,100,1000] [--repeats 5]``. A throw-away
artifact whose scored launcher is the trivial ``python -c "print('acc=0.5')"`` (one value
extracted from its log) is made in a temporary directory. For each size N, whole processes are
timed side by side, as alternated pairs (which one goes first alternates), medians of
``--repeats`` pairs:

* ours: ``reprobridge run ARTIFACT --env current -j 2 --seeds 0,...,N-1`` (validation, the
  environment snapshot, N runs with their records, logs, extraction and ledger), in a fresh
  runs directory each time;
* the baseline: the same N bare processes, two at a time (``xargs -P 2``), their output
  discarded.

Both sides run with the same parallelism (2) and compiled bytecode. Printed per size: the wall
time of each side (median), the throughput ratio (baseline time / ours: 1.0 is as fast as the
bare processes; the target is at least 0.8 at 1,000 runs), the CPU time of each side's
processes, and our peak memory; then the fitted exponent of time against N for both
(1.0 is linear).
"""

from __future__ import annotations

import argparse
import compileall
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import reprobridge_sdk

MANIFEST = """
rra_version: "1.0"
artifact: {id: bench, title: Runner benchmark, license: MIT, paper: {title: Bench}}
codebase:
  upstream:
    repository: "https://example.org/b.git"
    commit: "0123456789abcdef0123456789abcdef01234567"
  refined: {kind: directory, path: code}
environment: {python: "PYVER"}
guide: {path: GUIDE.md}
tasks:
  - {id: t, dataset: d, metric: m, published: {value: 0.5}, direction: higher, kind: full}
launchers:
  - id: trivial
    argv: [python, -c, "print('acc=0.5')"]
    seeds: [0]
    scope: scored
    measurements: [{task: t, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]
"""

COMMAND = [sys.executable, "-c", "print('acc=0.5')"]


def _artifact(root: Path) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "README").write_text("bench\n")
    (root / "GUIDE.md").write_text("# Bench\n\nRun the trivial launcher.\n")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (root / "rra.yaml").write_text(MANIFEST.replace("PYVER", version))
    return root


def _timed(command: list[str], *, stdin: bytes | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the process and its children, and their peak RSS (KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss


def _ours(artifact: Path, runs: Path, size: int) -> tuple[float, float, int]:
    shutil.rmtree(runs, ignore_errors=True)
    seeds = ",".join(map(str, range(size)))
    cli = [sys.executable, "-m", "reprobridge_sdk", "run", str(artifact), "trivial"]
    return _timed([*cli, "--env", "current", "-j", "2", "--seeds", seeds, "--runs-dir", str(runs)])


def _bare(size: int) -> tuple[float, float, int]:
    lines = "".join(f"{i}\n" for i in range(size)).encode()
    return _timed(["xargs", "-P", "2", "-n", "1", "--", *COMMAND], stdin=lines)


def _fit(sizes: list[int], times: list[float]) -> float:
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if shutil.which("xargs") is None:
        sys.exit("xargs is needed for the baseline")
    compileall.compile_dir(Path(reprobridge_sdk.__file__).parent, quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="rb-bench-runner-"))
    ours_times: list[float] = []
    bare_times: list[float] = []
    try:
        artifact = _artifact(workdir / "artifact")
        runs = workdir / "runs"
        env_path = os.environ.get("PATH", "")
        os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env_path}"
        _ours(artifact, runs, 2)  # warm the caches on both sides once
        _bare(2)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; pairs of whole processes")
        for size in sizes:
            ours: list[tuple[float, float, int]] = []
            bare: list[tuple[float, float, int]] = []
            for index in range(args.repeats):
                if index % 2:
                    bare.append(_bare(size))
                    ours.append(_ours(artifact, runs, size))
                else:
                    ours.append(_ours(artifact, runs, size))
                    bare.append(_bare(size))
            ours_wall = statistics.median(t[0] for t in ours)
            bare_wall = statistics.median(t[0] for t in bare)
            ours_cpu = statistics.median(t[1] for t in ours)
            bare_cpu = statistics.median(t[1] for t in bare)
            ratios = [b[0] / o[0] for o, b in zip(ours, bare, strict=True)]
            ours_times.append(ours_wall)
            bare_times.append(bare_wall)
            print(
                f"{size:>6} runs: run -j 2 {ours_wall:7.2f} s ({size / ours_wall:6.1f} runs/s,"
                f" CPU {ours_cpu:6.2f} s) | bare -P 2 {bare_wall:7.2f} s"
                f" ({size / bare_wall:6.1f} runs/s, CPU {bare_cpu:6.2f} s) | throughput ratio"
                f" {bare_wall / ours_wall:5.2f} (median of pairs {statistics.median(ratios):5.2f};"
                f" target >= 0.8) | peak memory so far {max(t[2] for t in ours) / 1024:6.1f} MiB"
            )
        if len(sizes) > 1:
            print(
                f"fitted exponent of time against runs: run -j 2 {_fit(sizes, ours_times):4.2f},"
                f" bare processes {_fit(sizes, bare_times):4.2f}"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
