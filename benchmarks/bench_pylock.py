"""Benchmark reading a large ``pylock.toml`` against parsing its TOML alone.

Run: ``python benchmarks/bench_pylock.py [--packages 500 2000] [--repeats 5]``. A generated
PEP 751 lock with N packages (one wheel each, hashed) is checked with
:func:`check_lock` (parse, per-package checks, line positions, packaging's validation) and,
as the baseline in the same run, parsed with ``tomllib.loads`` alone. The least time of each
is compared. The ratio should stay flat as N grows: a reader that rescans the file per
package grows quadratically and its ratio with N.
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
import tomllib
from pathlib import Path

from reprobridge_sdk.locks.lockfile import check_lock


def _lock(count: int) -> str:
    parts = ['lock-version = "1.0"\ncreated-by = "bench"\nrequires-python = ">=3.10"\n']
    for index in range(count):
        name = f"pkg{index}"
        parts.append(
            f'[[packages]]\nname = "{name}"\nversion = "1.0"\n'
            'index = "https://pypi.org/simple"\n'
            f'[[packages.wheels]]\nname = "{name}-1.0-py3-none-any.whl"\n'
            f'url = "https://files.example.org/{name}-1.0-py3-none-any.whl"\n'
            f'hashes = {{sha256 = "{index:064x}"}}\n'
        )
    return "".join(parts)


def _best(repeats: int, call: object) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--packages", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.packages:
            path = Path(tmp) / f"pylock.{count}.toml"
            text = _lock(count)
            path.write_text(text, "utf-8")
            assert check_lock(path, "pylock") == []
            ours = _best(args.repeats, functools.partial(check_lock, path, "pylock"))
            base = _best(args.repeats, functools.partial(tomllib.loads, text))
            print(
                f"{count} packages: check_lock {ours * 1000:.0f} ms, tomllib {base * 1000:.0f} ms, "
                f"ratio {ours / base:.2f}"
            )


if __name__ == "__main__":
    main()
