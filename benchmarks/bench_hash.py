"""Benchmark file hashing: ours against a bare ``hashlib.file_digest`` loop, in the same run.

Each contender's best time over interleaved repeats is compared.

Run: ``python benchmarks/bench_hash.py [--size-mib 2048] [--repeats 3]``. Files are generated
in a temporary directory and deleted afterwards. Prints, for each case, the times and the
ratio (baseline time / our time; higher is better):

* one large file: ``reprobridge_sdk.digest.file_sha256`` vs ``hashlib.file_digest`` on the
  same file (target >= 0.9x: hashing runs at the SHA-256 limit of the CPU);
* several files: ``files_sha256`` (parallel threads) vs a sequential loop (speed-up);
* re-verifying unchanged files with the digest cache vs hashing them again (cold).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reprobridge_sdk.digest import file_sha256, files_sha256
from reprobridge_sdk.env.hashing import DigestCache


def _write(path: Path, size: int) -> None:
    block = os.urandom(1 << 20)
    with path.open("wb") as handle:
        written = 0
        while written < size:
            chunk = block[: min(len(block), size - written)]
            handle.write(chunk)
            written += len(chunk)
    past = time.time() - 60
    os.utime(path, (past, past))  # outside the digest cache's racy window


def _cpu() -> float:
    """CPU seconds (user and system) used by this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _bare(path: Path) -> str:
    with path.open("rb", buffering=0) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _pair(
    ours: Callable[[], object], base: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Best time of each, runs interleaved (in alternating order) so that load on the
    machine hits both contenders alike."""
    times: dict[int, list[float]] = {0: [], 1: []}
    funcs = (ours, base)
    for round_ in range(repeats):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for index in order:
            start = time.perf_counter()
            funcs[index]()
            times[index].append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


def _row(name: str, ours: float, base: float, target: str) -> None:
    ratio = base / ours if ours > 0 else float("inf")
    print(f"{name:<44} ours {ours:8.4f} s  baseline {base:8.4f} s  ratio {ratio:8.2f}x  {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--files", type=int, default=max(2, os.cpu_count() or 2))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    size = args.size_mib << 20
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.bin"
        _write(big, size)
        _bare(big)  # warm the page cache for both contenders
        assert file_sha256(big) == _bare(big)
        ours, base = _pair(lambda: file_sha256(big), lambda: _bare(big), args.repeats)
        rate = size / base / 1e9
        print(f"one file of {args.size_mib} MiB (bare hashlib {rate:.2f} GB/s)")
        _row("file_sha256 vs hashlib.file_digest", ours, base, "(target >= 0.90x)")

        parts = []
        for i in range(args.files):
            part = Path(tmp) / f"part{i}.bin"
            _write(part, size // args.files)
            parts.append(part)
        for part in parts:
            _bare(part)
        par, seq = _pair(
            lambda: files_sha256(parts), lambda: [file_sha256(p) for p in parts], args.repeats
        )
        print(f"{args.files} files of {size // args.files >> 20} MiB on {os.cpu_count()} CPUs")
        _row("files_sha256 (threads) vs sequential loop", par, seq, "(speed-up)")
        before, start = _cpu(), time.perf_counter()
        files_sha256(parts)
        used = (_cpu() - before) / (time.perf_counter() - start)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(
            f"  cores busy during the parallel run: {used:.2f} "
            f"(load average {load:.1f}; a speed-up needs idle cores)"
        )

        store = Path(tmp) / "cache" / "sha256.json"
        warm = DigestCache(store)
        warm.sha256_many(parts)
        warm.save()

        def reverify() -> None:
            DigestCache(store).sha256_many(parts)

        cached, cold = _pair(reverify, lambda: DigestCache(None).sha256_many(parts), args.repeats)
        _row("re-verify with digest cache vs cold", cached, cold, "(nearly free)")


if __name__ == "__main__":
    main()
