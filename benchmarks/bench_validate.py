"""Benchmark of ``reprobridge validate`` against baselines, measured side by side.

(a) ``reprobridge validate`` on the example artifact (all layers: YAML, version, structure,
    semantics, files and digests, lock, extractor replay, guide) against ``check-jsonschema``
    doing schema-only validation of the same manifest. Target: ratio <= 0.6.
(b) ``reprobridge --help`` against a bare ``python -c pass``: the CLI's start-up cost.
(c) 1,000 copies of the example validated in one call (``-j 1`` and ``-j 2``): artifacts/s.

Run: ``python benchmarks/bench_validate.py [--repeat N] [--copies N]``. Timings are wall
clock of real subprocesses, interleaved, and the median over the repeats is reported.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _example() -> Path:
    for manifest in sorted((REPO / "examples").glob("*/rra.yaml")):
        return manifest.parent
    return REPO / "tests" / "validate" / "vectors" / "valid-minimal"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: Sequence[str], *, expect: tuple[int, ...] = (0,)) -> float:
    return _time_cpu(argv, expect=expect)[0]


def _time_cpu(argv: Sequence[str], *, expect: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system, the process and its children)."""
    cpu = _cpu()
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    used = _cpu() - cpu
    if proc.returncode not in expect:
        sys.stderr.write(proc.stderr.decode(errors="replace"))
        msg = f"{argv[0]} exited {proc.returncode}"
        raise SystemExit(msg)
    return elapsed, used


def _side_by_side(ours: Sequence[str], theirs: Sequence[str], repeat: int) -> tuple[float, float]:
    _time(ours)  # warm the file cache and byte-code
    _time(theirs)
    mine, base = [], []
    for _ in range(repeat):
        mine.append(_time(ours))
        base.append(_time(theirs))
    return statistics.median(mine), statistics.median(base)


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        msg = f"{name} is not installed (pip install -e '.[test]')"
        raise SystemExit(msg)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--copies", type=int, default=1000)
    args = parser.parse_args()

    example = _example()
    reprobridge = _tool("reprobridge")
    check = _tool("check-jsonschema")
    schema = REPO / "schemas" / "rra-1.0.schema.json"
    print(f"example artifact: {example.relative_to(REPO)}")

    cpu_ours = min(_time_cpu([reprobridge, "validate", str(example)])[1] for _ in range(5))
    cpu_base = min(
        _time_cpu([check, "--schemafile", str(schema), str(example / "rra.yaml")])[1]
        for _ in range(5)
    )
    ours, base = _side_by_side(
        [reprobridge, "validate", str(example)],
        [check, "--schemafile", str(schema), str(example / "rra.yaml")],
        args.repeat,
    )
    print(
        f"(a) reprobridge validate (all layers) {ours * 1000:7.1f} ms | "
        f"check-jsonschema (schema only) {base * 1000:7.1f} ms | "
        f"ratio {ours / base:.2f} (target <= 0.60); CPU time ratio {cpu_ours / cpu_base:.2f}"
    )

    helps, bare = _side_by_side(
        [reprobridge, "--help"], [sys.executable, "-c", "pass"], args.repeat
    )
    print(
        f"(b) reprobridge --help {helps * 1000:7.1f} ms | python -c pass {bare * 1000:7.1f} ms | "
        f"ratio {helps / bare:.2f}, CLI overhead {(helps - bare) * 1000:.1f} ms "
        "(target: --help well under 100 ms)"
    )

    with tempfile.TemporaryDirectory(prefix="rb-bench-") as tmp:
        root = Path(tmp)
        for index in range(args.copies):
            shutil.copytree(example, root / f"artifact-{index:04d}", symlinks=True)
        one, one_cpu = _time_cpu([reprobridge, "validate", str(root)])
        two, two_cpu = _time_cpu([reprobridge, "validate", "-j", "2", str(root)])
        print(
            f"(c) {args.copies} artifacts in one call: "
            f"-j 1 {args.copies / one:6.0f} artifacts/s ({one:.2f} s wall, {one_cpu:.2f} s CPU) | "
            f"-j 2 {args.copies / two:6.0f} artifacts/s ({two:.2f} s wall, {two_cpu:.2f} s CPU)"
        )
        print(
            f"    speed-up of -j 2 over -j 1: {one / two:.2f}x; CPU per artifact "
            f"{one_cpu / args.copies * 1000:.1f} ms, i.e. {args.copies / one_cpu:.0f} artifacts "
            f"per CPU-second (target: hundreds/s on 2 cores; wall times suffer from other load)"
        )


if __name__ == "__main__":
    main()
