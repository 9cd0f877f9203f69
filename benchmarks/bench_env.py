"""Benchmark building an environment with uv against the pip path, from a loopback index.

Run: ``python benchmarks/bench_env.py [--repeats 3] [--wheels DIR]``. The wheels of
scikit-learn and its dependencies (numpy, scipy, joblib, threadpoolctl) for this interpreter
are downloaded once from the public index (or taken from ``--wheels``), served by a PEP 503
index on 127.0.0.1, and locked as hashed requirements. Both contenders are the same call,
``ensure_environment(..., installer=...)``, into a fresh environment cache each time:

* cold: the installer's own cache (``UV_CACHE_DIR`` / ``PIP_CACHE_DIR``) is empty;
* warm: the installer's cache holds every wheel from a previous build.

Runs interleave uv and pip; the least time of each is compared. Prints ``uv / pip`` ratios
(lower is better: uv's share of pip's time).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from packaging.utils import parse_wheel_filename

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ecosystem"))

from eco_wheelhouse import serve_index, write_index

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env.venv import ensure_environment

REQUIREMENTS = ["scikit-learn", "numpy", "scipy", "joblib", "threadpoolctl"]


def _download(dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
         "--isolated", "--index-url", "https://pypi.org/simple", "--dest", str(dest),
         *REQUIREMENTS],
        check=True,
    )  # fmt: skip
    return sorted(dest.glob("*.whl"))


def _lock(wheels: list[Path]) -> str:
    lines = []
    for wheel in wheels:
        name, version, _, _ = parse_wheel_filename(wheel.name)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        lines.append(f"{name}=={version} --hash=sha256:{digest}")
    return "\n".join(lines) + "\n"


def _artifact(root: Path, lock: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "requirements.txt").write_text(lock, "utf-8")
    python = "{}.{}".format(*sys.version_info[:2])
    (root / "rra.yaml").write_text(
        f'rra_version: "1.0"\nenvironment:\n  python: "{python}"\n  lock:\n'
        f"    path: requirements.txt\n    format: requirements\n"
        f"    sha256: {file_sha256(root / 'requirements.txt')}\n",
        "utf-8",
    )
    return root


def _build(art: Path, work: Path, installer: str, installer_cache: Path) -> float:
    envs = work / f"envs-{installer}"
    shutil.rmtree(envs, ignore_errors=True)
    variable = "UV_CACHE_DIR" if installer == "uv" else "PIP_CACHE_DIR"
    previous = os.environ.get(variable)
    os.environ[variable] = str(installer_cache)
    try:
        start = time.perf_counter()
        ensure_environment(art, cache_dir=envs, installer=installer)  # type: ignore[arg-type]
        return time.perf_counter() - start
    finally:
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous
        shutil.rmtree(envs, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--wheels", type=Path, help="a directory of wheels already downloaded")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wheels = sorted(args.wheels.glob("*.whl")) if args.wheels else _download(work / "dl")
        write_index(work / "index", wheels)
        art = _artifact(work / "art", _lock(wheels))
        size = sum(w.stat().st_size for w in wheels) / 2**20
        print(f"{len(wheels)} wheels, {size:.1f} MiB, served on loopback")
        with serve_index(work / "index") as url:
            os.environ["REPROBRIDGE_INDEX_URL"] = url
            times: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.repeats):
                for installer in ("uv", "pip"):
                    cache = work / f"cache-{installer}"
                    shutil.rmtree(cache, ignore_errors=True)
                    times.setdefault((installer, "cold"), []).append(
                        _build(art, work, installer, cache)
                    )
                    times.setdefault((installer, "warm"), []).append(
                        _build(art, work, installer, cache)
                    )
    for state in ("cold", "warm"):
        uv, pip = min(times[("uv", state)]), min(times[("pip", state)])
        print(f"{state}: uv {uv:.2f} s, pip {pip:.2f} s, ratio uv/pip {uv / pip:.2f}")


if __name__ == "__main__":
    main()
