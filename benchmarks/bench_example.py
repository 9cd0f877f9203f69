"""Wall time of the bundled example (examples/digits-logreg) end to end, against bare commands.

Run: ``python benchmarks/bench_example.py [--repeats 3] [--skip-build]``.

Measured side by side in one run, each as the median of ``--repeats`` (the cold environment
build once: it downloads wheels):

* smoke launcher: ``reprobridge run <example> smoke --env current`` against the launcher's own
  command run bare (``python train.py --seed 0 --subset 300 --out ...``);
* scored launcher: ``reprobridge run <example> scored --env current`` (and with ``-j 2``)
  against the bare command for seeds 0-4 one after the other;
* scored launcher in the environment built from the lock (``--env cached``, environment
  already built) against the bare commands run with that environment's interpreter;
* environment build: ``reprobridge env create`` into an empty cache against a bare
  ``python -m venv`` + isolated ``pip install --require-hashes --no-deps -r lock``, and a
  second ``reprobridge env create`` (a cache hit).

Runs go to a temporary directory, never into the example. Every ratio is ours / baseline.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "digits-logreg"
CODE = EXAMPLE / "code"
LOCK = EXAMPLE / "environment" / "requirements.lock"
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _timed(
    argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> float:
    start = time.perf_counter()
    subprocess.run(
        list(argv),
        cwd=cwd,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


def _reprobridge(*args: str) -> list[str]:
    return [sys.executable, "-m", "reprobridge_sdk", *args]


def _bare_seeds(python: str, seeds: Sequence[int], out: Path, extra: Sequence[str] = ()) -> float:
    env = {**os.environ, **THREADS}
    start = time.perf_counter()
    for seed in seeds:
        target = out / f"bare-{seed}-{time.perf_counter_ns()}" / "metrics.json"
        argv = [python, "train.py", "--seed", str(seed), *extra, "--out", str(target)]
        quiet = subprocess.DEVNULL
        subprocess.run(argv, cwd=CODE, env=env, check=True, stdout=quiet, stderr=quiet)
    return time.perf_counter() - start


def _line(name: str, ours: float, base: float) -> None:
    print(f"{name:<48} ours {ours:8.2f} s   baseline {base:8.2f} s   ratio {ours / base:5.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--skip-build", action="store_true", help="skip the cold environment build (network)"
    )
    args = parser.parse_args(argv)
    repeats = max(1, args.repeats)

    with tempfile.TemporaryDirectory(prefix="bench-example-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(work / "cache")}
        runs = work / "runs"

        def ours(*run_args: str) -> float:
            return _timed(
                _reprobridge("run", "-C", str(EXAMPLE), *run_args, "--runs-dir", str(runs)),
                env=env,
            )

        print(f"example: {EXAMPLE.name}; median of {repeats}; ratio = ours / baseline")

        smoke = _median([ours("smoke", "--env", "current") for _ in range(repeats)])
        smoke_bare = _median(
            [_bare_seeds(sys.executable, [0], work, ["--subset", "300"]) for _ in range(repeats)]
        )
        _line("smoke launcher (--env current)", smoke, smoke_bare)

        scored = _median([ours("scored", "--env", "current") for _ in range(repeats)])
        scored_bare = _median([_bare_seeds(sys.executable, range(5), work) for _ in range(repeats)])
        _line("scored launcher, 5 seeds (--env current)", scored, scored_bare)
        scored_j2 = _median([ours("scored", "--env", "current", "-j", "2") for _ in range(repeats)])
        _line("scored launcher, 5 seeds, -j 2 (--env current)", scored_j2, scored_bare)

        if not args.skip_build:
            build = _timed(_reprobridge("env", "create", str(EXAMPLE)), env=env)
            venv = work / "bare-venv"
            pip_env = {
                key: value for key, value in os.environ.items() if not key.startswith("PIP_")
            }
            pip_env["PIP_CONFIG_FILE"] = os.devnull
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run(
                [
                    str(venv / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--isolated",
                    "--require-hashes",
                    "--no-deps",
                    "--index-url",
                    "https://pypi.org/simple",
                    "-r",
                    str(LOCK),
                ],
                check=True,
                env=pip_env,
            )
            bare_build = time.perf_counter() - start
            _line("environment build from the lock (cold)", build, bare_build)
            hit = _median(
                [
                    _timed(_reprobridge("env", "create", str(EXAMPLE)), env=env)
                    for _ in range(repeats)
                ]
            )
            _line("environment build again (cache hit)", hit, bare_build)

            cached = _median([ours("scored", "--env", "cached") for _ in range(repeats)])
            cached_bare = _median(
                [_bare_seeds(str(venv / "bin" / "python"), range(5), work) for _ in range(repeats)]
            )
            _line("scored launcher, 5 seeds (--env cached)", cached, cached_bare)
        shutil.rmtree(runs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
