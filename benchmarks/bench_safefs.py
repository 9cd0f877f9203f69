"""Benchmark the safe file layer's opens under a root: per-component resolution against the
previous layer (resolve the whole path, check it, open with ``O_NOFOLLOW``), in the same run.

Both contenders run in this process on the same files, interleaved (alternating order), and
the best of the repeats counts. The previous layer is reproduced here as it was (a
``realpath``, a containment check, one ``open``), since the SDK no longer has it.

Run: ``python benchmarks/bench_safefs.py [--files 2000] [--repeats 5]``. Prints, per case, the
CPU time per call of each (an open and close, or a whole read) and the ratio (ours / previous;
lower is better). CPU time, not wall time: the machine is shared.

* small files at depth 3 under the root (an artifact's code, a run's outputs), opened, then
  read whole with ``read_bytes`` (which now asks for the size ``fstat`` gives, not the cap:
  the previous one asked the allocator for 64 MiB per read);
* one file at depth 1, 4, 16 and 64: the cost grows linearly with the number of components
  (the fitted exponent of the time per read from depth 16 to 64 is printed; at most 1.1);
* a file reached through a link to a sibling directory at depth 3.
"""

from __future__ import annotations

import argparse
import errno
import io
import math
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reprobridge_sdk.io import safefs

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC


def _previous_fd(path: Path, root: Path, max_bytes: int = safefs.MAX_TEXT_BYTES) -> int:
    """The previous layer's open: resolve, check containment, open the resolved path (the
    last step only without following links), fstat."""
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    if real != base and base not in real.parents:
        raise safefs.UnsafeFileError("escapes", path, f"{path} leads outside {root}")
    try:
        fd = os.open(real, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise safefs.UnsafeFileError("link", real, "link") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        os.close(fd)
        raise safefs.UnsafeFileError("not-regular", real, "not regular")
    os.set_blocking(fd, True)
    return fd


def _previous_open(path: Path, root: Path) -> None:
    os.close(_previous_fd(path, root))


def _previous_read(path: Path, root: Path) -> None:
    """The previous ``read_bytes``: the previous open, then reads asking for the cap."""
    cap = safefs.MAX_TEXT_BYTES
    with io.FileIO(_previous_fd(path, root), "rb", closefd=True) as handle:
        data = handle.read(cap + 1)
        total = len(data)
        while data and total <= cap:
            data = handle.read(cap + 1 - total)
            total += len(data)


def _ours_read(path: Path, root: Path) -> None:
    safefs.read_bytes(path, root=root)


def _ours(path: Path, root: Path) -> None:
    safefs.open_regular(path, root=root, max_bytes=safefs.MAX_TEXT_BYTES).close()


def _best(func: Callable[[], object], other: Callable[[], object], repeats: int) -> list[float]:
    """Best time of each of two functions, interleaved in alternating order."""
    times: list[list[float]] = [[], []]
    funcs = (func, other)
    for round_ in range(repeats):
        for index in (0, 1) if round_ % 2 == 0 else (1, 0):
            start = time.process_time()
            funcs[index]()
            times[index].append(time.process_time() - start)
    return [min(times[0]), min(times[1])]


def _row(name: str, count: int, ours: float, previous: float) -> float:
    ratio = ours / previous
    print(
        f"{name:<40} ours {ours / count * 1e6:8.1f} us/call  previous "
        f"{previous / count * 1e6:8.1f} us/call  ratio {ratio:5.2f}"
    )
    return ratio


def _reads(
    paths: list[Path], root: Path, read: Callable[[Path, Path], bytes]
) -> Callable[[], None]:
    def run() -> None:
        for path in paths:
            read(path, root)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-safefs-") as scratch:
        root = Path(scratch) / "artifact"
        leaf = root / "code" / "pkg" / "module"
        leaf.mkdir(parents=True)
        paths = []
        for index in range(args.files):
            path = leaf / f"f{index}.py"
            path.write_bytes(b"x = 1\n" * 20)
            paths.append(path)
        ours, previous = _best(
            _reads(paths, root, _ours), _reads(paths, root, _previous_open), args.repeats
        )
        _row(f"{args.files} small files at depth 3", args.files, ours, previous)
        ours, previous = _best(
            _reads(paths, root, _ours_read), _reads(paths, root, _previous_read), args.repeats
        )
        _row("read_bytes of the same files", args.files, ours, previous)

        per_read: dict[int, float] = {}
        count = 500
        for depth in (1, 4, 16, 64):
            directory = root.joinpath("deep", *[f"d{i}" for i in range(depth - 1)])
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / "f.txt"
            path.write_bytes(b"x\n")
            ours, previous = _best(
                _reads([path] * count, root, _ours),
                _reads([path] * count, root, _previous_open),
                args.repeats,
            )
            _row(f"one file at depth {depth + 1}", count, ours, previous)
            per_read[depth] = ours / count
        exponent = math.log(per_read[64] / per_read[16]) / math.log(4)
        print(f"{'growth of ours from depth 16 to 64':<40} fitted exponent {exponent:5.2f}")

        (root / "linked").symlink_to("code/pkg", target_is_directory=True)
        linked = [root / "linked" / "module" / path.name for path in paths[:count]]
        ours, previous = _best(
            _reads(linked, root, _ours), _reads(linked, root, _previous_open), args.repeats
        )
        _row("through a directory link at depth 3", count, ours, previous)


if __name__ == "__main__":
    main()
