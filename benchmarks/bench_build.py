"""Benchmark: ``reprobridge build`` on the test fixtures, time per fixture and share per phase.

Each fixture of ``tests/agent/build_fixtures.py`` (a raw git repository with the defects of
research code) is built end to end in a temporary directory, with one environment cache for
all of them (the fixtures share a lock, so the first build pays for the environment and the
others reuse it; pass ``--cold`` to start every build with an empty cache).

Printed per fixture: the total build time, the seconds and the share of each phase, and, as a
same-run baseline, the time of one plain run of the fixture's fixed script in the built
environment (``python <script>``): the ratio ``build / run`` says how many runs' worth of
work a build costs (a smoke run, a probe, five reference runs, the clean-room check's runs,
resolution, validation and packing).

Run: ``python benchmarks/bench_build.py [--fixtures no-deps,python2] [--cold]``.

Corpus mode (``--corpus benchmarks/build-corpus --sources DIR``): every repository of the
development corpus is built from its checkout in ``DIR/<owner>__<name>`` (``--clone`` makes
them from the URLs: ``git clone URL`` and ``git checkout COMMIT``) under a cap per build and a
cap in total. The results file (``WORK/results.json``) is written atomically after each build;
running the same command again resumes (``--fresh`` starts over). Printed: per build the phase
reached, the failure class, each claim's status against the expected one and the seconds per
phase; the success rate; the failure census by class with an example; the build's overhead
(median of build wall time over the runtime of the runs it makes, and the overhead per phase).
Run it niced on a shared machine::

    nice -n 10 python benchmarks/bench_build.py --corpus benchmarks/build-corpus \
        --sources ../corpus-sources --work ../corpus-work --build-minutes 8 --total-minutes 60
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agent"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _build_corpus import Caps, CorpusError, census, clone, load_corpus, overhead, run_corpus, table
from build_fixtures import FIXTURES, write_repo

from reprobridge_sdk.agent.pipeline import BuildOptions, build
from reprobridge_sdk.api import load
from reprobridge_sdk.env.venv import ensure_environment
from reprobridge_sdk.model.build import PHASES


def _plain_run(out: Path) -> float:
    art = load(out)
    launcher = next(item for item in art.manifest.launchers if item.scope == "scored")
    python = ensure_environment(out)
    argv = [str(python) if word == "python" else word for word in launcher.argv]
    seed = str(launcher.seeds[0]) if launcher.seeds else "0"
    argv = [word.replace("{seed}", seed) for word in argv]
    env = {**os.environ, **{k: v.replace("{seed}", seed) for k, v in launcher.env.items()}}
    started = time.monotonic()
    subprocess.run(argv, cwd=out / launcher.workdir, env=env, capture_output=True, check=False)
    return time.monotonic() - started


def _corpus(args: argparse.Namespace) -> int:
    entries = load_corpus(Path(args.corpus))
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if e.id in wanted]
    sources = Path(args.sources)
    if args.clone:
        problems = clone(entries, sources)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    caps = Caps(
        build=60 * args.build_minutes, total=60 * args.total_minutes, smoke=args.smoke_budget
    )
    work = Path(args.work)
    results = run_corpus(entries, sources, work, caps, fresh=args.fresh).results
    print(table(entries, results))
    print("\nFailure census by class:\n")
    print("| class | builds | example | its first error finding |")
    print("| --- | --- | --- | --- |")
    for name, count, example, detail in census(results):
        print(f"| {name} | {count} | {example} | {detail[:160].replace('|', '/')} |")
    median, counted, per_phase = overhead(results)
    total = sum(per_phase.values()) or 1.0
    shown = "n/a (no build made a run)" if median is None else f"{median:.1f}"
    print(f"\nOverhead: median build wall / runtime of its runs = {shown} over {counted} builds")
    print("| phase | overhead s | share |")
    print("| --- | --- | --- |")
    for phase, seconds in per_phase.items():
        print(f"| {phase} | {seconds:.0f} | {100 * seconds / total:.0f}% |")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--fixtures", default=",".join(n for n, f in FIXTURES.items() if f.end_to_end)
    )
    parser.add_argument("--cold", action="store_true", help="an empty cache for every build")
    parser.add_argument("--corpus", help="build the corpus in this folder (corpus.toml)")
    parser.add_argument("--sources", default="corpus-sources", help="checkouts of the corpus")
    parser.add_argument("--clone", action="store_true", help="clone missing checkouts, then stop")
    parser.add_argument("--work", default="corpus-work", help="artifacts, logs, results.json")
    parser.add_argument("--only", default="", help="comma-separated entry ids")
    parser.add_argument("--build-minutes", type=float, default=8.0, help="cap per build")
    parser.add_argument("--total-minutes", type=float, default=60.0, help="cap for the run")
    parser.add_argument("--smoke-budget", type=float, default=120.0, help="seconds per smoke run")
    parser.add_argument("--fresh", action="store_true", help="ignore an earlier results file")
    args = parser.parse_args()
    if args.corpus:
        try:
            raise SystemExit(_corpus(args))
        except CorpusError as exc:
            print(f"bench_build: {exc.message}", file=sys.stderr)
            for finding in exc.findings:
                print(f"  {finding.code} {finding.message}", file=sys.stderr)
            raise SystemExit(2) from None
    names = [n for n in args.fixtures.split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        shared = base / "cache"
        header = "fixture            build s   run s  ratio  " + "  ".join(
            f"{p[:6]:>6}" for p in PHASES
        )
        print(header)
        total = 0.0
        for index, name in enumerate(names):
            cache = base / f"cache-{index}" if args.cold else shared
            os.environ["REPROBRIDGE_CACHE_DIR"] = str(cache)
            repo, claims = write_repo(base / "raw", name)
            out = base / f"{name}-rra"
            started = time.monotonic()
            report = build(BuildOptions(source=str(repo), claims=claims, out=out))
            elapsed = time.monotonic() - started
            total += elapsed
            plain = _plain_run(out) if report.passed else float("nan")
            shares = "  ".join(
                f"{100 * report.phase_seconds.get(p, 0.0) / elapsed:5.1f}%" for p in PHASES
            )
            state = "" if report.passed else f"  (stopped at {report.stopped_at})"
            print(f"{name:<17} {elapsed:8.1f} {plain:7.2f} {elapsed / plain:6.1f}  {shares}{state}")
        print(f"total              {total:8.1f} s for {len(names)} fixtures")


if __name__ == "__main__":
    main()
