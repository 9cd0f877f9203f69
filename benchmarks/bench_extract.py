"""Benchmark measurement extraction on a large generated log against grep.

Run: ``python benchmarks/bench_extract.py [--size-mib 1024]``. The log is generated in a
temporary directory and deleted afterwards. Prints, for each case, our time, the baseline's
time in the same run, and the ratio (ours / baseline; lower is better):

* last occurrence (reverse chunked scan) vs ``grep PATTERN FILE | tail -1`` (target <= 0.1x);
* nothing matches (the bounded worst case: one full reverse pass) vs ``grep PATTERN FILE``;
* all occurrences vs ``grep PATTERN FILE`` (target <= 2x for a pattern with a literal part);
* peak memory of a process extracting from logs of two sizes (flat in the log's size).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reprobridge_sdk.extract.extraction import regex_matches

PATTERN = r"^eval acc=([0-9.]+)"
GREP_PATTERN = r"^eval acc=[0-9.]+"
NEVER = r"^never=([0-9.]+)"
GREP_NEVER = r"^never=[0-9.]+"
NO_LITERAL = r"^([0-9]+)$"
DENSE = r"grad_norm=([0-9]+)x"


def _make_log(path: Path, size: int) -> None:
    lines = []
    for i in range(1000):
        if i == 500:
            lines.append(f"eval acc=0.{9000 + i}\n")
        else:
            lines.append(f"step {i:06d} loss={1 / (i + 1):.6f} lr=0.000100 grad_norm=1.2345\n")
    block = "".join(lines).encode() * 64
    with path.open("wb") as handle:
        written = 0
        while written < size:
            handle.write(block)
            written += len(block)
        handle.write(b"eval acc=0.9876\nfinal line\n")


def _time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times = []
    result: object = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _grep(*args: str, tail: bool = False) -> Callable[[], str]:
    env = {**os.environ, "LC_ALL": "C"}
    command = "grep -E " + " ".join(f"'{a}'" for a in args)
    if tail:
        command += " | tail -1"
    else:
        command += " | wc -l"

    def _run() -> str:
        return subprocess.run(
            command, shell=True, capture_output=True, text=True, env=env, check=False
        ).stdout.strip()

    return _run


_PEAK = """
import sys
from reprobridge_sdk.extract.extraction import regex_matches
regex_matches(sys.argv[1], sys.argv[2], occurrence=sys.argv[3])
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]))
"""


def _peak_kib(path: Path, pattern: str, occurrence: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path), pattern, occurrence],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def _row(name: str, ours: float, base: float, target: str) -> None:
    print(
        f"{name:<34} ours {ours * 1000:9.1f} ms   baseline {base * 1000:9.1f} ms"
        f"   ratio {ours / base:7.3f}x   (target {target})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("grep") is None:
        sys.exit("grep is needed for the baseline")
    workdir = Path(tempfile.mkdtemp(prefix="rb-bench-extract-"))
    try:
        log = workdir / "big.log"
        small = workdir / "small.log"
        _make_log(log, args.size_mib << 20)
        _make_log(small, 64 << 20)
        size_mib = log.stat().st_size / (1 << 20)
        print(f"log: {size_mib:.0f} MiB, python {sys.version.split()[0]}")
        _grep(GREP_PATTERN, str(log))()  # warm the page cache
        reps = args.repeats

        ours, got = _time(lambda: regex_matches(log, PATTERN, occurrence="last"), reps)
        base, want = _time(_grep(GREP_PATTERN, str(log), tail=True), 3)
        assert got == ("0.9876",), got
        assert str(want).endswith("0.9876"), want
        _row("last occurrence", ours, base, "<= 0.1x")

        ours, got = _time(lambda: regex_matches(log, NEVER, occurrence="last"), reps)
        base, _ = _time(_grep(GREP_NEVER, str(log)), 3)
        assert got == ()
        _row("nothing matches, last (worst case)", ours, base, "bounded: one pass")

        ours, got = _time(lambda: regex_matches(log, PATTERN, occurrence="all"), reps)
        base, want = _time(_grep(GREP_PATTERN, str(log)), 3)
        assert isinstance(got, tuple)
        assert len(got) == int(str(want)), (len(got), want)
        _row(f"all occurrences ({len(got)} lines)", ours, base, "<= 2x")

        for name, pattern in (("no literal", NO_LITERAL), ("literal on every line", DENSE)):
            ours, got = _time(lambda p=pattern: regex_matches(log, p, occurrence="last"), 1)
            base, _ = _time(_grep(pattern.replace("(", "").replace(")", ""), str(log)), 1)
            assert got == ()
            _row(f"{name}, nothing matches", ours, base, "bounded: one pass")
            print(f"{'':<34} ours {size_mib / ours:9.1f} MiB/s")

        for occurrence in ("last", "all"):
            peak_small = _peak_kib(small, NEVER, occurrence)
            peak_big = _peak_kib(log, NEVER, occurrence)
            print(
                f"peak memory, {occurrence:<4} nothing matches:   64 MiB log"
                f" {peak_small / 1024:6.1f} MiB, {size_mib:.0f} MiB log {peak_big / 1024:6.1f} MiB"
                f"   ratio {peak_big / peak_small:5.2f}x (flat: ~1.0x)"
            )
        print(json.dumps({"size_mib": round(size_mib)}))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
