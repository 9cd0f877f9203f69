"""Benchmark ``reprobridge lock`` against ``uv pip compile --generate-hashes`` on one input.

Run: ``python benchmarks/bench_lock.py [--repeats 5] [--pip-tools]``. A temporary artifact
declares scikit-learn, numpy and pandas. Both contenders resolve against the public index
with a warm uv cache, from scratch (no previous lock), in interleaved runs; the best time of
each is compared. Prints the ratio ours / uv (target <= 2x: the overhead of the CLI, the
portability check and the manifest edit stays small). ``--pip-tools`` adds one timed run of
``reprobridge lock --resolver pip-tools`` (slow: it downloads and hashes every file).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from uv import find_uv_bin

from reprobridge_sdk.env._resolvers import isolated_environ

REQUIREMENTS = "scikit-learn\nnumpy\npandas\n"
MANIFEST = """\
# Benchmark artifact
rra_version: "1.0"
environment:
  python: "{python}"
  requirements: requirements.in
"""


def _run(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, check=False, env=isolated_environ()
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed:\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pip-tools", action="store_true")
    args = parser.parse_args()
    python = ".".join(map(str, sys.version_info[:2]))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "requirements.in").write_text(REQUIREMENTS, "utf-8")
        manifest = MANIFEST.format(python=python)
        ours_argv = [sys.executable, "-m", "reprobridge_sdk", "lock", str(root)]
        uv_argv = [
            str(find_uv_bin()),
            "pip",
            "compile",
            "--quiet",
            "--no-config",
            "--generate-hashes",
            "--index-url",
            "https://pypi.org/simple",
            "--python-version",
            python,
            "requirements.in",
            "-o",
            "uv.txt",
        ]

        def ours() -> float:
            (root / "rra.yaml").write_text(manifest, "utf-8")
            (root / "requirements.txt").unlink(missing_ok=True)
            return _run(ours_argv, root)

        def uv() -> float:
            (root / "uv.txt").unlink(missing_ok=True)
            return _run(uv_argv, root)

        uv()  # warm the uv cache for both
        ours()
        times: dict[str, list[float]] = {"ours": [], "uv": []}
        for round_ in range(args.repeats):
            pair = [("ours", ours), ("uv", uv)]
            for name, func in pair if round_ % 2 == 0 else pair[::-1]:
                times[name].append(func())
        best_ours, best_uv = min(times["ours"]), min(times["uv"])
        same = (root / "requirements.txt").read_text("utf-8").split("\n", 2)[2] == (
            root / "uv.txt"
        ).read_text("utf-8").split("\n", 2)[2]
        print(f"input: {REQUIREMENTS.split()} for Python {python}; same pins and hashes: {same}")
        print(f"reprobridge lock        {best_ours:7.3f} s")
        print(f"uv pip compile (bare)   {best_uv:7.3f} s")
        print(f"ratio ours / uv         {best_ours / best_uv:7.2f}x  (target <= 2x)")
        if args.pip_tools:
            (root / "rra.yaml").write_text(manifest, "utf-8")
            (root / "requirements.txt").unlink(missing_ok=True)
            slow = _run([*ours_argv, "--resolver", "pip-tools"], root)
            print(f"reprobridge lock --resolver pip-tools {slow:7.3f} s ({slow / best_uv:.1f}x uv)")


if __name__ == "__main__":
    main()
