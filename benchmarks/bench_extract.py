"""Benchmark regex extraction on large logs, whole process against whole process.

Run: ``python benchmarks/bench_extract.py [--sizes 10,100,1024] [--repeats 5]`` (log sizes in
MiB). The logs are generated in a temporary directory (a training log: ``step ... loss=...``
lines, one ``eval acc=...`` line in a thousand) and deleted afterwards. Every case compares
whole processes, as alternated pairs (which side goes first alternates), medians of
``--repeats`` pairs, the file in the page cache, bytecode compiled on our side:

* ours: ``python -c`` importing the library and calling ``extract_value`` (what the runner
  and the auditor call) on the log, printing the value and the process's peak memory;
* ``last`` occurrence vs ``tac LOG | grep -m1 -E PATTERN`` (the peer that also reads from the
  end);
* ``all`` occurrences vs ``grep -c -E PATTERN LOG`` and ripgrep ``rg -c PATTERN LOG`` (if
  installed), for a pattern with a literal prefix on a few lines, a pattern without a
  literal, a literal on every line that never matches, and a literal on every line that
  matches every line (the value is the mean of them all, streamed in constant memory).

Printed per size and case: both times (median wall seconds), the ratios (ours / peer; lower
is better), and our peak memory; at the end, the fitted exponent of time against the log's
size for each case (1.0 is linear) and the peak memory across sizes (flat is the target).
"""

from __future__ import annotations

import argparse
import compileall
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import reprobridge_sdk

#: (name, occurrence, our pattern, the peers' pattern)
CASES = [
    ("last, literal prefix", "last", r"^eval acc=([0-9.]+)", r"^eval acc=[0-9.]+"),
    ("all, literal prefix", "all", r"^eval acc=([0-9.]+)", r"^eval acc=[0-9.]+"),
    ("all, no literal (no match)", "all", r"^([0-9]+)$", r"^[0-9]+$"),
    ("all, literal on every line (no match)", "all", r"grad_norm=([0-9]+)x", r"grad_norm=[0-9]+x"),
    ("all, literal on every line (all match)", "all", r"loss=([0-9.]+)", r"loss=[0-9.]+"),
]

OURS = """
import sys
from pathlib import Path
from reprobridge_sdk.extract.extraction import ExtractionError, extract_value
spec = {"kind": "regex", "pattern": sys.argv[2], "occurrence": sys.argv[3]}
try:
    got = extract_value(spec, log=Path(sys.argv[1]), files_base=Path("."), outputs={}, context={})
    print(got.count, got.mean)
except ExtractionError:
    print(0, "nan")
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]))
"""


def _make_log(path: Path, size: int) -> None:
    lines = []
    for i in range(1000):
        if i == 500:
            lines.append(f"eval acc=0.{9000 + i}\n")
        else:
            lines.append(f"step {i:06d} loss={1 / (i + 1):.6f} lr=0.000100 grad_norm=1.2345\n")
    block = "".join(lines).encode()
    with path.open("wb") as handle:
        written = 0
        while written + len(block) <= size:
            handle.write(block)
            written += len(block)
        handle.write(b"eval acc=0.9876\nfinal line\n")


def _shell(command: str) -> Callable[[], str]:
    env = {**os.environ, "LC_ALL": "C"}

    def _run() -> str:
        done = subprocess.run(
            command, shell=True, capture_output=True, text=True, env=env, check=False
        )
        return done.stdout.strip()

    return _run


def _ours(log: Path, pattern: str, occurrence: str) -> Callable[[], str]:
    def _run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", OURS, str(log), pattern, occurrence],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    return _run


def _timed(fn: Callable[[], str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _pairs(ours: Callable[[], str], peers: list[Callable[[], str]], repeats: int) -> tuple:
    """Median times of ours and each peer, measured in alternated rounds; ours' last output."""
    mine: list[float] = []
    theirs: list[list[float]] = [[] for _ in peers]
    out = ""
    for index in range(repeats):
        order = [-1, *range(len(peers))]
        if index % 2:
            order.reverse()
        for which in order:
            if which < 0:
                took, out = _timed(ours)
                mine.append(took)
            else:
                took, _ = _timed(peers[which])
                theirs[which].append(took)
    return statistics.median(mine), [statistics.median(t) for t in theirs], out


def _fit(sizes: list[float], times: list[float]) -> float:
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1024", help="log sizes in MiB")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for tool in ("grep", "tac"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed for the baseline")
    ripgrep = shutil.which("rg")
    compileall.compile_dir(Path(reprobridge_sdk.__file__).parent, quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="rb-bench-extract-"))
    growth: dict[str, list[float]] = {name: [] for name, *_ in CASES}
    memory: dict[str, list[float]] = {name: [] for name, *_ in CASES}
    print(f"python {sys.version.split()[0]}; ripgrep {'yes' if ripgrep else 'not installed'}")
    try:
        for size_mib in sizes:
            log = workdir / f"log-{size_mib}.log"
            _make_log(log, size_mib << 20)
            _shell(f"cat '{log}' > /dev/null")()  # into the page cache
            print(f"--- log of {log.stat().st_size / (1 << 20):.0f} MiB")
            for name, occurrence, pattern, peer in CASES:
                if occurrence == "last":
                    peers = [_shell(f"tac '{log}' | grep -m1 -E '{peer}'")]
                    labels = ["tac | grep -m1"]
                else:
                    peers = [_shell(f"grep -c -E '{peer}' '{log}'")]
                    labels = ["grep -c"]
                    if ripgrep:
                        peers.append(_shell(f"rg -c '{peer}' '{log}'"))
                        labels.append("rg -c")
                ours, theirs, out = _pairs(_ours(log, pattern, occurrence), peers, args.repeats)
                lines = out.splitlines()
                count, peak_kib = lines[0].split()[0], int(lines[-1])
                growth[name].append(ours)
                memory[name].append(peak_kib / 1024)
                compared = ", ".join(
                    f"{label} {t:7.3f} s (ratio {ours / t:6.2f})"
                    for label, t in zip(labels, theirs, strict=True)
                )
                print(
                    f"{name:<40} {count:>9} values | ours {ours:7.3f} s, peak"
                    f" {peak_kib / 1024:6.1f} MiB | {compared}"
                )
            log.unlink()
        if len(sizes) > 1:
            print("--- growth with the log's size (fitted exponent of time; peak memory)")
            for name, *_ in CASES:
                peaks = " / ".join(f"{m:.0f}" for m in memory[name])
                print(f"{name:<40} exponent {_fit(sizes, growth[name]):4.2f}, peak {peaks} MiB")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
