"""Benchmark the fixed cost of each command: its start-up against a bare interpreter.

Run: ``python benchmarks/bench_startup.py [--repeats 5] [--no-importtime] [--against TREE]``.
Every case is a whole process, timed as alternated rounds (every case once per round, the
order reversed every other round), medians of ``--repeats`` rounds after one warm-up round
that is not counted; bytecode is compiled on every side first (``compileall`` of the
package, and the warm-up round compiles whatever else a command imports). With
``--against TREE`` (another checkout, e.g. of the previous release), every case of ours runs
a second time in each round with ``TREE`` first on ``PYTHONPATH``, and the CPU ratio of the
two is printed: a before/after comparison within one run. The cases:

* the baselines: ``python -c pass`` (the interpreter alone),
  ``python -c "import yaml, json"`` (the interpreter and the readers any manifest tool
  needs) and ``python -c "import scipy.special"`` (what the auditor's interval needed until
  the auditor computed the Student-t itself: the peer of the plain audit script);
* ``import reprobridge_sdk.extract.extraction`` (the process of ``bench_extract.py``, what
  the runner and the auditor load to extract) and ``import reprobridge_sdk.model`` (pydantic
  and the format's models);
* ``reprobridge --help``, and for each of ``extract``, ``validate``, ``run``, ``audit``,
  ``lock`` and ``digest``: ``reprobridge CMD --help`` (click and the command's module only)
  and a real small job:

  - ``extract EXAMPLE --samples``: every shipped sample log of the bundled example re-extracted
    and compared with its expected values;
  - ``extract ARTIFACT --launcher trivial --log LOG``: one value from a one-line log;
  - ``extract ARTIFACT --run RUN``: the one recorded run of the ``audit`` case below
    re-extracted (the case of issue 24's target: at most 10x ``python -c pass`` in CPU; the
    record and the launcher are read as plain data, without pydantic and the models);
  - ``validate EXAMPLE``: every layer on the bundled example (files, digests, lock, samples);
  - ``run ARTIFACT trivial --env current``: one run of ``python -c "print('acc=0.5')"`` with
    its record, ledger and extraction, in a fresh runs directory each time;
  - ``audit ARTIFACT --runs RUNS``: that run audited against a three-observation reference
    (one compatibility interval computed, without numpy or scipy);
  - ``lock ARTIFACT``: a requirements file with no requirement resolved by uv (no network;
    the manifest's lock entry is rewritten each time);
  - ``digest EXAMPLE``: the example's tree and file digests recomputed;

* ``env create EXAMPLE`` on a cache hit (the example's environment built once, before the
  rounds, into the run's own cache) against the strongest simple peer on its own hit:
  ``uv pip sync --python ENV LOCK`` into that same built environment (uv checks it is in
  sync and installs nothing). Issue 24's target: the command's overhead over the peer, the
  difference of the medians of wall time, at most 0.05 s.

Printed per case: median wall and CPU time (user + system of the process and its
children), the ratios of the wall time to ``python -c pass`` and to ``python -c "import
yaml, json"`` and of the CPU time to ``python -c pass``'s (lower is better; on a loaded
machine the CPU ratio is the steadier one), and, from one extra ``python -X importtime`` run
of the case, the import time (the sum of the top-level imports' cumulative times;
``-X importtime`` itself inflates it) with the five packages whose own import time is
largest. The date and the machine's load (``uptime``) are printed before and after. Times
are of a shared machine: compare the ratios of one run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import reprobridge_sdk

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "digits-logreg"

MANIFEST = """
rra_version: "1.0"
artifact: {id: bench, title: Start-up benchmark, license: MIT, paper: {title: Bench}}
codebase:
  upstream:
    repository: "https://example.org/b.git"
    commit: "0123456789abcdef0123456789abcdef01234567"
  refined: {kind: directory, path: code}
environment: {python: "PYVER", requirements: environment/requirements.in}
guide: {path: GUIDE.md}
tasks:
  - id: t
    dataset: d
    metric: m
    published: {value: 0.5}
    direction: higher
    kind: full
    reference:
      observations:
        - {value: 0.49, provenance: {source: bench, date: "2026-01-01"}}
        - {value: 0.50, provenance: {source: bench, date: "2026-01-01"}}
        - {value: 0.51, provenance: {source: bench, date: "2026-01-01"}}
launchers:
  - id: trivial
    argv: [python, -c, "print('acc=0.5')"]
    seeds: [0]
    scope: scored
    measurements: [{task: t, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]
"""

#: What the runner and the auditor import to extract (``bench_extract.py``'s process).
EXTRACTION = "reprobridge_sdk.extract.extraction"

#: Target of issue 24: ``extract`` of one recorded run over ``python -c pass``, in CPU.
TARGET_EXTRACT_RUN = 10.0

#: Target of issue 24: ``env create`` on a cache hit over ``uv pip sync``, seconds of wall.
TARGET_ENV_HIT = 0.05

#: The commands measured with ``--help`` and a real job.
COMMANDS = ("extract", "validate", "run", "audit", "lock", "digest")


def _artifact(root: Path) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "README").write_text("bench\n")
    (root / "environment").mkdir()
    (root / "environment" / "requirements.in").write_text("# nothing to install\n")
    (root / "GUIDE.md").write_text("# Bench\n\nRun the trivial launcher.\n")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (root / "rra.yaml").write_text(MANIFEST.replace("PYVER", version))
    (root / "sample.log").write_text("acc=0.5\n")
    return root


def _ours(*args: str) -> list[str]:
    return [sys.executable, "-m", "reprobridge_sdk", *args]


class _FreshRuns:
    """The ``run`` case's argv with a new runs directory each time it is built."""

    def __init__(self, artifact: Path, base: Path) -> None:
        self.artifact, self.base, self.count = artifact, base, 0

    def __call__(self) -> list[str]:
        self.count += 1
        runs = self.base / f"runs-{self.count}"
        return _ours(
            "run", str(self.artifact), "trivial", "--env", "current", "--runs-dir", str(runs)
        )


#: A case: its argv (or a callable building it) and its environment (None: inherited).
Case = tuple[object, "dict[str, str] | None"]


def _cases(work: Path, against: Path | None) -> dict[str, Case]:
    example = work / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    artifact = _artifact(work / "artifact")
    runs = work / "audited-runs"
    subprocess.run(
        _ours("run", str(artifact), "trivial", "--env", "current", "--runs-dir", str(runs)),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=work,
    )
    jobs: dict[str, object] = {
        "extract": _ours("extract", str(example), "--samples"),
        "validate": _ours("validate", str(example)),
        "run": _FreshRuns(artifact, work),
        "audit": _ours("audit", str(artifact), "--runs", str(runs)),
        "lock": _ours("lock", str(artifact)),
        "digest": _ours("digest", str(example)),
    }
    python = sys.executable
    ours: dict[str, object] = {
        "import extraction": [python, "-c", f"import {EXTRACTION}"],
        "import reprobridge_sdk.model": [python, "-c", "import reprobridge_sdk.model"],
        "reprobridge --help": _ours("--help"),
    }
    for name in COMMANDS:
        ours[f"{name} --help"] = _ours(name, "--help")
        ours[f"{name} (job)"] = jobs[name]
        if name == "extract":
            log = str(artifact / "sample.log")
            ours["extract --log (job)"] = _ours(
                "extract", str(artifact), "--launcher", "trivial", "--log", log
            )
            recorded = next(p for p in runs.iterdir() if (p / "record.json").is_file())
            ours["extract --run (job)"] = _ours("extract", str(artifact), "--run", str(recorded))
    cache = work / "env-cache"
    built = subprocess.run(
        _ours("env", "create", str(example), "--cache-dir", str(cache)),
        check=True,
        capture_output=True,
        text=True,
        cwd=work,
    )
    env_python = built.stdout.strip().splitlines()[-1]
    ours["env create (cache hit)"] = _ours("env", "create", str(example), "--cache-dir", str(cache))
    lock = str(example / "environment" / "requirements.lock")
    uv = shutil.which("uv") or "uv"
    cases: dict[str, Case] = {
        "python -c pass": ([python, "-c", "pass"], None),
        "uv pip sync (its cache hit)": (
            [uv, "pip", "sync", "-q", "--python", env_python, lock],
            None,
        ),
        'python -c "import yaml, json"': ([python, "-c", "import yaml, json"], None),
        "python -c 'import scipy.special'": ([python, "-c", "import scipy.special"], None),
    }
    env = None if against is None else {**os.environ, "PYTHONPATH": str(against)}
    for name, argv in ours.items():
        cases[name] = (argv, None)
        if env is not None:
            cases[f"{name} [against]"] = (argv, env)
    return cases


def _argv(case: object) -> list[str]:
    return case() if callable(case) else list(case)  # type: ignore[call-overload]


def _timed(argv: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env, cwd=cwd
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: findings (a warning-free job is not needed)
        msg = f"{argv} exited {done.returncode}"
        raise SystemExit(msg)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _importtime(argv: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[float, str]:
    """Import milliseconds of one ``-X importtime`` run, and the five heaviest packages."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        env=env,
        cwd=cwd,
    )
    total = 0
    own: Counter[str] = Counter()
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        self_us, cumulative, name = line[len("import time:") :].split("|", 2)
        if len(name) - len(name.lstrip()) == 1:
            total += int(cumulative)
        module = name.strip()
        top = ".".join(module.split(".")[:2]) if module.startswith("reprobridge") else module
        own[top.split(".")[0] if not top.startswith("reprobridge") else top] += int(self_us)
    heaviest = ", ".join(f"{name} {us / 1000:.0f}" for name, us in own.most_common(5))
    return total / 1000, heaviest


def _load() -> str:
    """The load averages, as ``uptime`` gives them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-importtime", action="store_true")
    parser.add_argument(
        "--against",
        type=Path,
        help="another source tree (a checkout holding reprobridge_sdk/): every case of ours "
        "is also run with it first on PYTHONPATH, in the same rounds",
    )
    args = parser.parse_args()
    against = None if args.against is None else args.against.resolve()
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; load before: {_load()}")
    compileall.compile_dir(Path(reprobridge_sdk.__file__).parent, quiet=1)
    if against is not None:
        compileall.compile_dir(against / "reprobridge_sdk", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cases = _cases(work, against)
        names = list(cases)
        walls: dict[str, list[float]] = {name: [] for name in names}
        cpus: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(args.repeats + 1):
            order = names if round_ % 2 == 0 else names[::-1]
            for name in order:
                argv, env = cases[name]
                wall, cpu = _timed(_argv(argv), env, work)
                if round_:  # round 0 compiles bytecode and warms the page cache
                    walls[name].append(wall)
                    cpus[name].append(cpu)
        imports = {}
        if not args.no_importtime:
            imports = {n: _importtime(_argv(cases[n][0]), cases[n][1], work) for n in names}
    bare = statistics.median(walls["python -c pass"])
    bare_cpu = statistics.median(cpus["python -c pass"])
    readers = statistics.median(walls['python -c "import yaml, json"'])
    print(f"medians of {args.repeats} alternated rounds, whole processes")
    if against is not None:
        print("[against]: the same case with the other source tree; last column: CPU / its CPU")
    print(
        f"{'case':38} {'wall':>7} {'CPU':>7} {'/pass':>6} {'/yaml':>6} {'CPU/pass':>8} "
        f"{'imports':>8}  heaviest (own import ms)"
    )
    for name in names:
        wall = statistics.median(walls[name])
        cpu = statistics.median(cpus[name])
        total, heaviest = imports.get(name, (float("nan"), ""))
        twin = f"{name} [against]"
        versus = ""
        if twin in cpus:
            versus = f"  CPU {cpu / statistics.median(cpus[twin]):.2f} of [against]"
        print(
            f"{name:38} {wall * 1000:5.0f}ms {cpu * 1000:5.0f}ms {wall / bare:6.1f} "
            f"{wall / readers:6.2f} {cpu / bare_cpu:8.1f} {total:6.0f}ms  {heaviest}{versus}"
        )
    print(f"load after: {_load()}")
    hit = statistics.median(walls["env create (cache hit)"])
    hit -= statistics.median(walls["uv pip sync (its cache hit)"])
    met = "met" if hit <= TARGET_ENV_HIT else "MISSED"
    print(
        f"env create on a cache hit: {hit * 1000:.0f} ms over uv pip sync on its own hit "
        f"(target <= {TARGET_ENV_HIT * 1000:.0f} ms: {met})"
    )
    extract_run = statistics.median(cpus["extract --run (job)"]) / bare_cpu
    met = "met" if extract_run <= TARGET_EXTRACT_RUN else "MISSED"
    print(
        f"extract of one recorded run: {extract_run:.1f}x python -c pass in CPU "
        f"(target <= {TARGET_EXTRACT_RUN:g}: {met})"
    )


if __name__ == "__main__":
    main()
