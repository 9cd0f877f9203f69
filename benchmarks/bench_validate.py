"""Benchmark of ``reprobridge validate`` against baselines, measured side by side.

(a) ``reprobridge validate`` on the example artifact (all layers: YAML, version, structure,
    semantics, files and digests, lock, extractor replay, guide) against ``check-jsonschema``
    doing schema-only validation of the same manifest. Target: ratio <= 0.6.
(b) ``reprobridge --help`` against a bare ``python -c pass``: the CLI's start-up cost.
(c) 1,000 copies of the example validated in one call (``-j 1`` and ``-j 2``): artifacts/s
    and CPU ms per artifact, against ``check-jsonschema`` checking the same 1,000 manifests
    against the schema in one call (schema only: no files, digests, lock or replay).
(d) ``lockfile.check_lock`` on the example's requirements lock and on a generated lock of
    500 pins with two hashes each, against pip's own requirements-file parser (parsing only,
    no checks), in process: the median over the repeats.

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
from collections.abc import Callable, Iterable, Sequence
from functools import partial
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
    parser.add_argument("--bulk-repeat", type=int, default=3, help="runs of (c); the least CPU")
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
        manifests = sorted(str(path) for path in root.glob("*/rra.yaml"))
        commands = [
            [reprobridge, "validate", str(root)],
            [reprobridge, "validate", "-j", "2", str(root)],
            [check, "--schemafile", str(schema), *manifests],
        ]
        # check-jsonschema takes about a minute for 1,000 manifests: it runs once.
        runs = [
            _least_cpu(command, args.bulk_repeat if index < 2 else 1)
            for index, command in enumerate(commands)
        ]
        (one, one_cpu), (two, two_cpu), (base, base_cpu) = runs
        n = args.copies
        print(
            f"(c) {n} artifacts in one call: "
            f"-j 1 {n / one:6.0f} artifacts/s ({one:.2f} s wall, {one_cpu:.2f} s CPU) | "
            f"-j 2 {n / two:6.0f} artifacts/s ({two:.2f} s wall, {two_cpu:.2f} s CPU)"
        )
        print(
            f"    speed-up of -j 2 over -j 1: {one / two:.2f}x; CPU per artifact "
            f"{one_cpu / n * 1000:.2f} ms, i.e. {n / one_cpu:.0f} artifacts "
            f"per CPU-second (target: hundreds/s on 2 cores; wall times suffer from other load)"
        )
        print(
            f"    check-jsonschema, schema only, same {n} manifests: {n / base:6.0f} manifests/s "
            f"({base:.2f} s wall, {base_cpu:.2f} s CPU) | ratio of CPU time, all layers -j 1 "
            f"/ schema only: {one_cpu / base_cpu:.2f}; wall -j 2 / schema only: {two / base:.2f}"
        )

    _bench_lock(example, args.repeat)


def _least_cpu(argv: Sequence[str], repeat: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of the run with the least CPU time (the least disturbed)."""
    return min((_time_cpu(argv) for _ in range(max(1, repeat))), key=lambda pair: pair[1])


def _median_ms(call: Callable[[], object], repeat: int, inner: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times) * 1000


def _pip_parse(parse: Callable[..., Iterable[object]], lock: Path, session: object) -> int:
    return len(list(parse(str(lock), session=session)))


def _bench_lock(example: Path, repeat: int) -> None:
    from reprobridge_sdk.locks.lockfile import check_lock

    try:
        from pip._internal.network.session import PipSession
        from pip._internal.req.req_file import parse_requirements
    except ImportError:
        print("(d) skipped: pip's requirements parser is not importable")
        return
    session = PipSession()
    with tempfile.TemporaryDirectory(prefix="rb-bench-lock-") as tmp:
        big = Path(tmp) / "requirements.lock"
        big.write_text(
            "".join(
                f"package-{index}=={index}.0.1 \\\n"
                f"    --hash=sha256:{index:064x} \\\n"
                f"    --hash=sha256:{index + 1:064x}\n"
                "    # via something\n"
                for index in range(500)
            ),
            encoding="utf-8",
        )
        for label, lock, inner in (
            ("example lock", example / "environment" / "requirements.lock", 50),
            ("500-pin lock", big, 3),
        ):
            if not lock.is_file():
                continue
            ours = _median_ms(partial(check_lock, lock), repeat, inner)
            pips = _median_ms(partial(_pip_parse, parse_requirements, lock, session), repeat, inner)
            print(
                f"(d) check_lock, {label}: {ours:7.2f} ms | pip's parser (no checks) "
                f"{pips:7.2f} ms | ratio {ours / pips:.2f}"
            )


if __name__ == "__main__":
    main()
