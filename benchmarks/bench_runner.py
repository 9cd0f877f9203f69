"""Benchmark the runner's own cost per run against a bare subprocess of the same command.

Run: ``python benchmarks/bench_runner.py [--seeds 20]``. A throw-away artifact whose launcher
runs ``/bin/true`` (and one that runs ``python -c pass`` and extracts a value) is created in
a temporary directory. The runner's marginal cost per run is measured as
``(T(n seeds) - T(1 seed)) / (n - 1)`` so the fixed cost of one invocation (loading the
manifest, capturing the environment snapshot, the drift check) is reported separately.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reprobridge_sdk.run import run

MANIFEST = """
rra_version: "1.0"
artifact: {id: bench, title: Runner benchmark, license: MIT, paper: {title: Bench}}
codebase:
  upstream:
    repository: "https://example.org/b.git"
    commit: "0123456789abcdef0123456789abcdef01234567"
  refined: {kind: directory, path: code}
environment: {python: "3.11"}
tasks:
  - {id: t, dataset: d, metric: m, published: {value: 1.0}, direction: higher, kind: full}
launchers:
  - id: bin-true
    argv: [/bin/true]
    seeds: [0]
    scope: smoke
  - id: python
    argv: [PYTHON, -c, "print('acc=0.5')"]
    seeds: [0]
    scope: smoke
    landmarks: [{id: acc, pattern: '^acc='}]
    measurements: [{task: t, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]
"""


def _median(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="rb-bench-runner-"))
    try:
        artifact = workdir / "artifact"
        (artifact / "code").mkdir(parents=True)
        (artifact / "code" / "README").write_text("bench\n")
        (artifact / "rra.yaml").write_text(MANIFEST.replace("PYTHON", sys.executable))
        runs = workdir / "runs"
        many = list(range(args.seeds))
        for launcher, command in (
            ("bin-true", ["/bin/true"]),
            ("python", [sys.executable, "-c", "print('acc=0.5')"]),
        ):

            def _bare(command: list[str] = command) -> None:
                subprocess.run(command, capture_output=True, check=True)

            def _one(launcher: str = launcher) -> None:
                summary = run(artifact, [launcher], env_mode="current", runs_dir=runs)
                assert summary.exit_code == 0

            def _many(launcher: str = launcher) -> None:
                summary = run(artifact, [launcher], env_mode="current", runs_dir=runs, seeds=many)
                assert summary.exit_code == 0

            _one()  # warm imports and caches
            bare = _median(_bare, args.repeats * 4)
            one = _median(_one, args.repeats)
            total = _median(_many, max(1, args.repeats // 2))
            per_run = (total - one) / (args.seeds - 1)
            fixed = one - per_run
            print(
                f"{launcher:<7} bare subprocess {bare * 1000:7.2f} ms | runner per run"
                f" {per_run * 1000:7.2f} ms (ratio {per_run / bare:5.2f}x,"
                f" +{(per_run - bare) * 1000:6.2f} ms) | fixed cost per invocation"
                f" {fixed * 1000:7.1f} ms"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
