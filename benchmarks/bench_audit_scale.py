"""Benchmark: how the audit grows with the tasks (100 -> 1k -> 10k), against a plain script.

The artifact is the bundled example grown to ``T`` tasks (``_synthetic.grow_example``, the
realistic shape and the default): ``ceil(T / 3)`` copies of its scored launcher, each measuring
three tasks (one regex on the log, two JSON pointers on the metrics file), shipping a sample,
with the example's five seeds, so 10k tasks come with 3,334 launchers and 16,671 run
directories (record, log, metrics file, and the run ledger the runner keeps), the example's
smoke launcher and one smoke run. ``--shape csv-yaml`` reads a CSV table and a YAML summary in
place of the JSON file; ``--shape json-only`` is the labelled best case that no real artifact
looks like (ten tasks a launcher from one flat JSON output, three seeds, no samples: 10k tasks
with 1k launchers and 3k runs). The manifest is written as JSON text (YAML reads JSON) so the
script reads the very same file with :mod:`json`.

Both sides are whole processes with bytecode compiled, one CPU each, timed as pairs whose order
alternates, medians reported:

* ours: ``python -m reprobridge_sdk audit ROOT --format json -o FILE`` (everything it does:
  reading and validating the manifest with positions and sample replay, verifying every run's
  digests, ledger, code, lock and re-extracted values, verdicts, badges, the report);
* the script: reads the same manifest and records with ``json``, computes every task's
  interval vectorised with numpy and one ``scipy.stats.t.ppf``, the mean over the scored
  seeds of each task's values and whether it lies inside, and writes the verdicts as JSON. It
  verifies nothing: the ratio is the price of the checks.

Printed first: the shape and the machine's load (``uptime``). Per size: median seconds of each
side, their ratio (with the target beside it at the largest size), peak resident memory of
each process (GNU ``time``'s, not ``wait4``'s: see :func:`measure`), memory per run, and on how
many tasks the verdicts agree (with the script and with the verdicts the runs were written
for); then the exponent fitted to CPU time ~ tasks^k on both sides, over all sizes and from the
last but one size to the last. Targets (issue 24, on the realistic shape): the ratio at 10k
tasks within 3; every exponent from 1k to 10k at most 1.1.

``--seeds N`` gives each scored launcher ``N`` seeds as the tasks grow (``--seeds 1``: 10k
tasks with 3,335 runs, the issue's "10k tasks / 3k runs"). With ``--by-runs 1 9 90`` the runs
grow instead of the tasks, on the same shape: 1,000 tasks
(334 launchers of the example, or 100 of the best case) with 1, 9 and 90 seeds a scored
launcher, about 300 -> 3k -> 30k run directories, the exponent fitted on the runs. Each size
also prints the peak memory above the script's, per run (target, issue 24: at most 10 KB a run
at 30k runs).

``--quick`` runs small sizes once each (30 and 90 tasks, or 1 and 3 seeds with
``--by-runs``): a check that the benchmark runs and prints its table, not a measurement.

``--before DIR`` times the same audit on an earlier version of the package as a third side
(:func:`before_side`) and prints this version's ratios to it below each row.

Run: ``python benchmarks/bench_audit_scale.py [--shape example|csv-yaml|json-only]
[--sizes 100 1000 10000 [--seeds N] | --by-runs 1 9 90] [--repeats 5] [--quick]
[--before DIR]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import SHAPES, grow

BASELINE = r"""
import json, sys
from pathlib import Path
import numpy as np
from scipy import stats

root = Path(sys.argv[1])
manifest = json.loads((root / "rra.yaml").read_text())
tasks = manifest["tasks"]
ids = {t["id"]: i for i, t in enumerate(tasks)}
refs = np.array([[o["value"] for o in t["reference"]["observations"]] for t in tasks])
n = refs.shape[1]
m = refs.mean(axis=1)
s = refs.std(axis=1, ddof=1)
t = stats.t.ppf(0.975, n - 1)
h = np.maximum(t * s * np.sqrt(1 + 1 / n), 0.01 * np.abs(m))
sums = np.zeros(len(tasks))
counts = np.zeros(len(tasks))
for record_path in sorted((root / "runs").glob("*/record.json")):
    record = json.loads(record_path.read_text())
    if record["status"] != "succeeded" or record["scope"] != "scored":
        continue
    for item in record["measurements"]:
        i = ids[item["task"]]
        sums[i] += item["value"]
        counts[i] += 1
value = sums / np.maximum(counts, 1)
inside = (counts > 0) & (np.abs(value - m) <= h)
verdicts = np.where(inside, "compatible", "incompatible")
Path(sys.argv[2]).write_text(json.dumps(dict(zip(ids, verdicts.tolist()))))
"""


#: GNU time, which reports the peak memory of the command it runs alone (see measure).
GNU_TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def measure(argv: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in KiB and exit code of one whole
    process. On a shared machine the CPU time is the steadier of the two.

    The peak is the command's own: a child's ``ru_maxrss`` counts the pages of this (large)
    benchmark process it was forked from before it executed the command, so the command runs
    under GNU ``time -f %M`` (itself forked from here, the command forked from it) whenever
    GNU time is installed; the CPU time is ``wait4``'s, which includes the command's.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss.name, *argv] if GNU_TIME else argv
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        lines = rss.read().split()
        peak = int(lines[-1]) if GNU_TIME and lines else usage.ru_maxrss
    return seconds, usage.ru_utime + usage.ru_stime, peak, proc.returncode


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The least-squares slope of log(seconds) on log(size)."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def pairs(
    sides: dict[str, list[str]], repeats: int, ok: tuple[int, ...] = (0, 1)
) -> dict[str, tuple[float, float, int]]:
    """Run the sides as alternated pairs; per side the median wall and CPU seconds and the
    largest peak RSS (KiB)."""
    samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in sides}
    order = list(sides.items())
    for i in range(repeats):
        for name, argv in order if i % 2 == 0 else order[::-1]:
            wall, cpu, rss, code = measure(argv)
            if code not in ok:
                raise SystemExit(f"{name} exited {code}: {argv}")
            samples[name].append((wall, cpu, rss))
    return {
        name: (
            statistics.median(w for w, _, _ in got),
            statistics.median(c for _, c, _ in got),
            max(r for _, _, r in got),
        )
        for name, got in samples.items()
    }


#: This checkout's package.
PACKAGE = Path(__file__).resolve().parent.parent / "reprobridge_sdk"


def compile_bytecode(*packages: Path | str | None) -> None:
    """Write the bytecode of this checkout's package (and of each package given, e.g. the
    ``--before`` one), as an installed package has it. Where ``PYTHONDONTWRITEBYTECODE`` is
    set (containers, some CI), a checkout has none, and every process of ours would compile
    each module it imports from source, about a second of CPU on a loaded machine that no
    user pays and no peer does: the benchmarks time the commands, not Python's compiler."""
    for package in (PACKAGE, *packages):
        if package is not None:
            argv = [sys.executable, "-m", "compileall", "-q", str(package)]
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def before_side(argv: list[str], before: str | None) -> dict[str, list[str]]:
    """``argv`` (``python -m reprobridge_sdk ...``) run on an earlier version of the package
    (``before``: a directory holding its ``reprobridge_sdk``, e.g. ``git archive REV
    reprobridge_sdk | tar -x -C DIR``), as a side of its own, so that a change is measured
    before and after in the same run; no side without ``before``. ``-P`` keeps the working
    directory off the path, so the package imported is the earlier one."""
    if not before:
        return {}
    path = Path(before).resolve()
    if not (path / "reprobridge_sdk" / "__init__.py").is_file():
        raise SystemExit(f"--before {before}: no reprobridge_sdk package there")
    return {"before": ["env", f"PYTHONPATH={path}", argv[0], "-P", *argv[1:]]}


def print_before(got: dict[str, tuple[float, float, int]]) -> None:
    """The earlier version's medians and this version's ratios to them, if it was timed."""
    if "before" in got:
        (o, oc, _), (b, bc, b_kib) = got["ours"], got["before"]
        print(
            f"  before: {b:.2f} s, {bc:.2f} s CPU, {b_kib / 1024:.0f} MiB; "
            f"this version / before: wall {o / b:.2f}, CPU {oc / bc:.2f}",
            flush=True,
        )


#: Targets of issue 24, on the realistic shape.
TARGET_RATIO = 3.0
TARGET_EXPONENT = 1.1
TARGET_KB_A_RUN = 10.0


def load() -> str:
    """The machine's load as ``uptime`` prints it (the figures are taken on a shared machine)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def target(ratio: float, limit: float) -> str:
    """The target beside a measured ratio or exponent, and whether it is met."""
    return f"(target <= {limit:g}: {'met' if ratio <= limit else 'MISSED'})"


def exponents(label: str, xs: list[int], ours: list[float], peer: list[float], name: str) -> None:
    """Print the exponents fitted over all sizes and from the last but one to the last."""
    print(
        f"fitted exponent, CPU time ~ {label}^k: ours {exponent(xs, ours):.2f}, "
        f"{name} {exponent(xs, peer):.2f}"
    )
    if len(xs) > 2:
        tail = xs[-2:]
        ours_k = exponent(tail, ours[-2:])
        print(
            f"  from {tail[0]} to {tail[1]}: ours {ours_k:.2f} {target(ours_k, TARGET_EXPONENT)}, "
            f"{name} {exponent(tail, peer[-2:]):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        default="example",
        help="the grown example (default), with CSV/YAML extractors, or the JSON-pointer-only "
        "best case",
    )
    parser.add_argument(
        "--by-runs",
        type=int,
        nargs="+",
        metavar="SEEDS",
        help="grow the runs instead: 1,000 tasks with SEEDS seeds a launcher each, e.g. 1 9 90 "
        "for about 300 -> 3k -> 30k runs of the example",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        help="seeds a scored launcher as the tasks grow (default: the shape's own; the "
        "example's five give 10k tasks 16,671 runs, one seed 3,335)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, once: a smoke test")
    parser.add_argument(
        "--before", help="a directory with an earlier reprobridge_sdk, timed as a third side"
    )
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
        args.sizes = [30, 90]
        args.by_runs = [1, 3] if args.by_runs else None
    tasks_by_runs = 30 if args.quick else 1000
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    os.environ.update(env)
    shape = args.shape
    steps = (
        [(tasks_by_runs, s) for s in args.by_runs]
        if args.by_runs
        else [(t, args.seeds or 0) for t in args.sizes]
    )
    best = " (best case: no real artifact looks like it)" if shape == "json-only" else ""
    print(f"shape: {shape}{best}; {args.repeats} alternated pairs, medians")
    compile_bytecode(Path(args.before) / "reprobridge_sdk" if args.before else None)
    print(f"load before: {load()}")
    ours_t, base_t, ours_kib, run_counts = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        base_script = Path(tmp) / "baseline.py"
        base_script.write_text(BASELINE)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(base_script)], check=True)
        print(
            f"{'tasks':>6} {'runs':>6} {'ours s':>7} {'base s':>7} {'ratio':>6} "
            f"{'ours cpu':>8} {'base cpu':>8} {'ratio':>6} {'ours MiB':>8} {'base MiB':>8} "
            f"{'KB/run above':>12}"
        )
        for i, (size, seeds) in enumerate(steps):
            root = Path(tmp) / f"a{size}-{seeds}"
            rng = random.Random(size)
            grown = grow(root, size, rng, shape, seeds=seeds or None)
            runs = grown.runs
            ours = [
                *(sys.executable, "-m", "reprobridge_sdk", "audit", str(root)),
                *("--format", "json", "-o", str(root / "report.json")),
            ]
            base = [sys.executable, str(base_script), str(root), str(root / "verdicts.json")]
            sides = {"ours": ours, "base": base, **before_side(ours, args.before)}
            got = pairs(sides, args.repeats)
            report = json.loads((root / "report.json").read_text())
            plain = json.loads((root / "verdicts.json").read_text())
            mine = {t["id"]: t["attempts"][0]["verdict"] for t in report["tasks"]}
            agree = sum(v == plain[t] for t, v in mine.items())
            written = sum(grown.verdicts.get(t) == v for t, v in mine.items())
            (o, oc, o_kib), (b, bc, b_kib) = got["ours"], got["base"]
            ours_t.append(oc)
            base_t.append(bc)
            ours_kib.append(o_kib)
            run_counts.append(runs)
            last = i == len(steps) - 1
            print(
                f"{size:>6} {runs:>6} {o:>7.2f} {b:>7.2f} {o / b:>6.2f} {oc:>8.2f} {bc:>8.2f} "
                f"{oc / bc:>6.2f} {o_kib / 1024:>8.0f} {b_kib / 1024:>8.0f} "
                f"{(o_kib - b_kib) * 1.024 / runs:>12.1f}   verdicts agree with the script on "
                f"{agree}/{size}"
                + (f", with the runs' design on {written}/{size}" if grown.verdicts else ""),
                flush=True,
            )
            print_before(got)
            if last and args.by_runs:
                above = (o_kib - b_kib) * 1.024 / runs
                print(
                    f"  peak memory above the script at {runs} runs: {above:.1f} KB a run "
                    f"{target(above, TARGET_KB_A_RUN)}"
                )
            elif last:
                print(f"  CPU ratio at {size} tasks: {oc / bc:.2f} {target(oc / bc, TARGET_RATIO)}")
    print(f"load after: {load()}")
    if len(steps) > 1:
        axis, xs = ("runs", run_counts) if args.by_runs else ("tasks", args.sizes)
        exponents(axis, xs, ours_t, base_t, "script")
        grown_kb = (ours_kib[-1] - ours_kib[0]) * 1.024 / (run_counts[-1] - run_counts[0])
        print(f"our peak memory grows by {grown_kb:.1f} KB a run (smallest to largest size)")


if __name__ == "__main__":
    main()
