"""Benchmark the runner's own cost per run against a bare subprocess of the same command.

Run: ``python benchmarks/bench_runner.py [--seeds 20]``. A throw-away artifact whose launcher
runs ``/bin/true`` (and one that runs ``python -c pass`` and extracts a value) is created in
a temporary directory. The runner's marginal cost per run is measured as
``(T(n seeds) - T(1 seed)) / (n - 1)`` so the fixed cost of one invocation (loading the
manifest, capturing the environment snapshot, the drift check) is reported separately.

The drift check of ``--env current`` is measured on its own, against a lock pinning 20 of the
distributions installed here: the runner's way (one in-process scan of the installed
distributions, then the lock compared with it) and the full environment check it replaced
(``check_environment(python=sys.executable)``: the interpreter probed in subprocesses, extras
and system needs checked too).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reprobridge_sdk.run import run

_HASH = "--hash=sha256:" + "0" * 64

MANIFEST = """
rra_version: "1.0"
artifact: {id: bench, title: Runner benchmark, license: MIT, paper: {title: Bench}}
codebase:
  upstream:
    repository: "https://example.org/b.git"
    commit: "0123456789abcdef0123456789abcdef01234567"
  refined: {kind: directory, path: code}
environment: {python: "3.11"}
tasks:
  - {id: t, dataset: d, metric: m, published: {value: 1.0}, direction: higher, kind: full}
launchers:
  - id: bin-true
    argv: [/bin/true]
    seeds: [0]
    scope: smoke
  - id: python
    argv: [PYTHON, -c, "print('acc=0.5')"]
    seeds: [0]
    scope: smoke
    landmarks: [{id: acc, pattern: '^acc='}]
    measurements: [{task: t, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]
"""


def _median(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="rb-bench-runner-"))
    try:
        artifact = workdir / "artifact"
        (artifact / "code").mkdir(parents=True)
        (artifact / "code" / "README").write_text("bench\n")
        (artifact / "rra.yaml").write_text(MANIFEST.replace("PYTHON", sys.executable))
        runs = workdir / "runs"
        many = list(range(args.seeds))
        for launcher, command in (
            ("bin-true", ["/bin/true"]),
            ("python", [sys.executable, "-c", "print('acc=0.5')"]),
        ):

            def _bare(command: list[str] = command) -> None:
                subprocess.run(command, capture_output=True, check=True)

            def _one(launcher: str = launcher) -> None:
                summary = run(artifact, [launcher], env_mode="current", runs_dir=runs)
                assert summary.exit_code == 0

            def _many(launcher: str = launcher) -> None:
                summary = run(artifact, [launcher], env_mode="current", runs_dir=runs, seeds=many)
                assert summary.exit_code == 0

            _one()  # warm imports and caches
            bare = _median(_bare, args.repeats * 4)
            one = _median(_one, args.repeats)
            total = _median(_many, max(1, args.repeats // 2))
            per_run = (total - one) / (args.seeds - 1)
            fixed = one - per_run
            print(
                f"{launcher:<7} bare subprocess {bare * 1000:7.2f} ms | runner per run"
                f" {per_run * 1000:7.2f} ms (ratio {per_run / bare:5.2f}x,"
                f" +{(per_run - bare) * 1000:6.2f} ms) | fixed cost per invocation"
                f" {fixed * 1000:7.1f} ms"
            )
        _bench_drift(artifact, args.repeats)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _bench_drift(artifact: Path, repeats: int) -> None:
    from reprobridge_sdk.env.check import check_environment, lock_drift
    from reprobridge_sdk.env.snapshot import installed_distributions
    from reprobridge_sdk.model.environment import Environment

    pins = sorted((d.name, d.version) for d in installed_distributions())[:20]
    (artifact / "requirements.lock").write_text(
        "".join(f"{name}=={version} \\\n    {_HASH}\n" for name, version in pins)
    )
    manifest = artifact / "rra.yaml"
    manifest.write_text(
        manifest.read_text().replace(
            'environment: {python: "3.11"}',
            'environment: {python: "3.11", lock: {path: requirements.lock, format: requirements}}',
        )
    )
    environment = Environment.model_validate(
        {"python": "3.11", "lock": {"path": "requirements.lock", "format": "requirements"}}
    )
    python = ".".join(sys.version.split()[0].split(".")[:3])

    def _new() -> object:
        installed = {d.name: d.version for d in installed_distributions()}
        return lock_drift(artifact, environment, python_full=python, installed=installed)

    def _old() -> object:
        return check_environment(artifact, python=sys.executable)

    scanned = {d.name: d.version for d in installed_distributions()}

    def _compare() -> object:  # what a run adds: the snapshot has scanned already
        return lock_drift(artifact, environment, python_full=python, installed=scanned)

    compare = _median(_compare, repeats * 4)
    new = _median(_new, repeats * 4)
    old = _median(_old, repeats)
    extras = sum(f.code == "E003" for f in check_environment(artifact, python=sys.executable))
    print(
        f"drift check: in-process scan + lock {new * 1000:7.1f} ms | full environment check"
        f" {old * 1000:7.1f} ms (ratio {new / old:5.3f}; the full check listed {extras} extras"
        " that are no longer drift)"
    )
    print(
        f"drift check on top of the run's snapshot (lock compared only) {compare * 1000:7.2f} ms"
        f" (ratio to the full check {compare / old:6.4f})"
    )


if __name__ == "__main__":
    main()
