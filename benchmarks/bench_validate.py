"""Benchmark of ``reprobridge validate`` against baselines, measured side by side.

(a) ``reprobridge validate`` on the example artifact (all layers: YAML, version, structure,
    semantics, files and digests, lock, extractor replay, guide) against ``check-jsonschema``
    doing schema-only validation of the same manifest. Target: ratio <= 0.6.
(b) ``reprobridge --help`` against a bare ``python -c pass``: the CLI's start-up cost.
(c) 1,000 copies of the example validated in one call with ``-j 2`` (two worker processes)
    against two ``check-jsonschema`` processes over the two halves of the same manifests, and
    two processes of ``peer_jsonschema_rs.py`` (jsonschema-rs, the strongest simple peer) over
    the same halves (schema only: no files, digests, lock or replay). Bytecode is compiled on
    both sides first; rounds alternate the sides; medians of wall-clock and CPU time.
(d) ``lockfile.check_lock`` on the example's requirements lock and on a generated lock of
    500 pins with two hashes each, against pip's own requirements-file parser (parsing only,
    no checks), in process: the median over the repeats.

Run: ``python benchmarks/bench_validate.py [--repeat N] [--copies N] [--bulk-pairs N]
[--parts abcd]``. Timings are wall
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
    parser.add_argument("--bulk-pairs", type=int, default=3, help="alternated rounds of (c)")
    parser.add_argument("--parts", default="abcd", help="which parts to run, e.g. 'c'")
    args = parser.parse_args()

    example = _example()
    reprobridge = _tool("reprobridge")
    check = _tool("check-jsonschema")
    schema = REPO / "schemas" / "rra-1.0.schema.json"
    print(f"example artifact: {example.relative_to(REPO)}")

    if "a" in args.parts:
        _bench_single(reprobridge, check, schema, example, args.repeat)
    if "b" in args.parts:
        _bench_help(reprobridge, args.repeat)
    if "c" in args.parts:
        _bench_bulk(example, (reprobridge, check), schema, args.copies, args.bulk_pairs)
    if "d" in args.parts:
        _bench_lock(example, args.repeat)


def _bench_single(reprobridge: str, check: str, schema: Path, example: Path, repeat: int) -> None:
    # CPU time: the two sides alternated, five rounds, medians.
    cpus: tuple[list[float], list[float]] = ([], [])
    for _ in range(5):
        cpus[0].append(_time_cpu([reprobridge, "validate", str(example)])[1])
        cpus[1].append(
            _time_cpu([check, "--schemafile", str(schema), str(example / "rra.yaml")])[1]
        )
    cpu_ours, cpu_base = statistics.median(cpus[0]), statistics.median(cpus[1])
    ours, base = _side_by_side(
        [reprobridge, "validate", str(example)],
        [check, "--schemafile", str(schema), str(example / "rra.yaml")],
        repeat,
    )
    print(
        f"(a) reprobridge validate (all layers) {ours * 1000:7.1f} ms | "
        f"check-jsonschema (schema only) {base * 1000:7.1f} ms | "
        f"ratio {ours / base:.2f} (target <= 0.60); CPU time ratio {cpu_ours / cpu_base:.2f}"
    )


def _bench_help(reprobridge: str, repeat: int) -> None:
    helps, bare = _side_by_side([reprobridge, "--help"], [sys.executable, "-c", "pass"], repeat)
    print(
        f"(b) reprobridge --help {helps * 1000:7.1f} ms | python -c pass {bare * 1000:7.1f} ms | "
        f"ratio {helps / bare:.2f}, CLI overhead {(helps - bare) * 1000:.1f} ms "
        "(target: --help well under 100 ms)"
    )


def _group_cpu(commands: Sequence[Sequence[str]]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``commands`` run at the same time, as whole processes."""
    cpu = _cpu()
    start = time.perf_counter()
    procs = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for command in commands
    ]
    errors = [proc.communicate()[1] for proc in procs]
    elapsed = time.perf_counter() - start
    used = _cpu() - cpu
    for command, proc, error in zip(commands, procs, errors, strict=True):
        if proc.returncode != 0:
            sys.stderr.write(error.decode(errors="replace"))
            msg = f"{command[0]} exited {proc.returncode}"
            raise SystemExit(msg)
    return elapsed, used


def _compile_bytecode(paths: Iterable[Path]) -> None:
    """Byte-compile both sides' code up front, so no side pays for it inside the timings."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *map(str, paths)],
        check=False,
        capture_output=True,
    )


def _bench_bulk(
    example: Path, tools: tuple[str, str], schema: Path, copies: int, pairs: int
) -> None:
    """(c): the same parallelism on each side, two processes working at once.

    ``validate -j 2`` (one call, two worker processes) against two ``check-jsonschema``
    processes over the two halves of the manifests, and two processes of the jsonschema-rs
    peer script over the same halves. Rounds alternate the order of the sides; the medians of
    wall-clock and CPU time (all the processes of a side) are reported.
    """
    import sysconfig

    reprobridge, check = tools
    peer = REPO / "benchmarks" / "peer_jsonschema_rs.py"
    with tempfile.TemporaryDirectory(prefix="rb-bench-") as tmp:
        root = Path(tmp)
        for index in range(copies):
            shutil.copytree(example, root / f"artifact-{index:04d}", symlinks=True)
        manifests = sorted(str(path) for path in root.glob("*/rra.yaml"))
        half = len(manifests) // 2
        halves = (manifests[:half], manifests[half:])
        sides: dict[str, list[list[str]]] = {
            "reprobridge validate -j 2 (all layers)": [
                [reprobridge, "validate", "-j", "2", str(root)]
            ],
            "check-jsonschema x 2 (schema only)": [
                [check, "--schemafile", str(schema), *part] for part in halves
            ],
        }
        probe = subprocess.run(
            [sys.executable, str(peer), str(schema), manifests[0]], capture_output=True, check=False
        )
        if probe.returncode == 0:
            sides["jsonschema-rs x 2 (schema only)"] = [
                [sys.executable, str(peer), str(schema), *part] for part in halves
            ]
        else:
            print(f"    jsonschema-rs peer skipped: {probe.stderr.decode(errors='replace')}")
        _compile_bytecode([REPO / "reprobridge_sdk", Path(sysconfig.get_paths()["purelib"])])
        for commands in sides.values():  # warm the file cache
            _group_cpu(commands)
        names = list(sides)
        walls: dict[str, list[float]] = {name: [] for name in names}
        cpus: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(max(1, pairs)):
            order = names if round_ % 2 == 0 else list(reversed(names))
            for name in order:
                wall, cpu = _group_cpu(sides[name])
                walls[name].append(wall)
                cpus[name].append(cpu)
        wall = {name: statistics.median(values) for name, values in walls.items()}
        cpu = {name: statistics.median(values) for name, values in cpus.items()}
        n = len(manifests)
        print(f"(c) {n} artifacts, two processes at once on each side, {pairs} alternated rounds:")
        for name in names:
            print(
                f"    {name:<40} {n / wall[name]:6.0f} artifacts/s "
                f"({wall[name]:6.2f} s wall, {cpu[name]:6.2f} s CPU)"
            )
        ours = names[0]
        for name in names[1:]:
            print(
                f"    ratio ours / {name.split(' (')[0]}: wall {wall[ours] / wall[name]:.2f}, "
                f"CPU {cpu[ours] / cpu[name]:.2f}"
            )


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
