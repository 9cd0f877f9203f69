"""Benchmark: how the audit grows with the tasks (100 -> 1k -> 10k), against a plain script.

Each synthetic artifact has ``T`` tasks measured by ``T / 10`` launchers (ten tasks each) and
three seeded runs per launcher, so 10k tasks come with 1k launchers and 3k run directories
(record, log, JSON output). The manifest is written as JSON text (YAML is a superset of JSON)
so the baseline can read the very same file with :mod:`json`.

Both sides are whole processes with bytecode compiled, one CPU each, timed as pairs whose order
alternates, medians reported:

* ours: ``python -m reprobridge_sdk audit ROOT --format json -o FILE`` (everything it does:
  reading and validating the manifest with positions, verifying every run's digests, code, lock
  and re-extracted values, verdicts, badges, the report);
* the baseline: a plain script that reads the same manifest and records with ``json``, computes
  every task's interval vectorised with numpy and one ``scipy.stats.t.ppf``, the mean over
  seeds of each task's values and whether it lies inside, and writes the verdicts as JSON. It
  verifies nothing: the ratio is the price of the checks.

Printed per size: median seconds of each side, their ratio, peak resident memory of each
process (GNU ``time``'s, not ``wait4``'s: see :func:`measure`), memory per run; then the
exponent fitted to time ~ tasks^k on both sides.
The target (issue 14): the ratio at 10k tasks within 3 and under 10 KB of memory a run above
the baseline; exponents at most 1.1.

With ``--by-runs 3 30 300`` the runs grow instead of the tasks: 1,000 tasks (100 launchers)
with 3, 30 and 300 seeds a launcher, 300 -> 3k -> 30k run directories, the exponent fitted on
the runs. Each size also prints the peak memory above the script's, per run.

Run: ``python benchmarks/bench_audit_scale.py [--sizes 100 1000 10000 | --by-runs 3 30 300]
[--repeats 5]``.
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
from typing import Any

from _synthetic import SEEDS, manifest, task_item, write_code, write_run

PER_LAUNCHER = 10

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
    if record["status"] != "succeeded":
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


def scale_launchers(tasks: int, seeds: int = len(SEEDS)) -> list[dict[str, Any]]:
    """``tasks / PER_LAUNCHER`` launchers with ``seeds`` seeds each, each measuring its ten
    tasks from one JSON output."""
    launchers = []
    for k in range(max(1, tasks // PER_LAUNCHER)):
        mine = [f"t{t}" for t in range(k * PER_LAUNCHER, min(tasks, (k + 1) * PER_LAUNCHER))]
        launchers.append(
            {
                "id": f"l{k}",
                "argv": ["python", "code/main.py", "--part", str(k), "--seed", "{seed}"],
                "scope": "scored",
                "seeds": list(range(seeds)),
                "outputs": [{"id": "metrics", "path": "metrics.json"}],
                "measurements": [
                    {
                        "task": t,
                        "extract": {"kind": "json", "output": "metrics", "pointer": f"/{t}"},
                    }
                    for t in mine
                ],
            }
        )
    return launchers


def build(root: Path, tasks: int, rng: random.Random, seeds: int = len(SEEDS)) -> int:
    """Write the artifact and its runs (``seeds`` a launcher); return the number of runs."""
    tree, lock = write_code(root)
    task_items, means = [], {}
    for t in range(tasks):
        item, means[f"t{t}"] = task_item(f"t{t}", rng)
        task_items.append(item)
    launchers = scale_launchers(tasks, seeds)
    data = manifest("scale", task_items, launchers, tree=tree, lock=lock)
    data["artifact"]["paper"]["title"] = "s"
    (root / "rra.yaml").write_text(_json_lines(data))
    runs = 0
    for launcher in launchers:
        ids = [m["task"] for m in launcher["measurements"]]
        for seed in range(seeds):
            values = {t: round(means[t] + rng.gauss(0, 0.3), 4) for t in ids}
            write_run(
                root / "runs" / f"{launcher['id']}-s{seed}",
                artifact="scale",
                launcher=launcher,
                tree=tree,
                lock=lock,
                seed=seed,
                values=values,
            )
            runs += 1
    return runs


def _json_lines(manifest: dict[str, Any]) -> str:
    """Compact JSON with one task or launcher a line (a 10k-task manifest stays under 8 MiB)."""

    def dump(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    parts = []
    for key, value in manifest.items():
        if isinstance(value, list):
            items = ",\n ".join(dump(v) for v in value)
            parts.append(f"{dump(key)}:[\n {items}]")
        else:
            parts.append(f"{dump(key)}:{dump(value)}")
    return "{" + ",\n".join(parts) + "}\n"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--by-runs",
        type=int,
        nargs="+",
        metavar="SEEDS",
        help="grow the runs instead: 1,000 tasks (100 launchers) with SEEDS seeds a launcher "
        "each, e.g. 3 30 300 for 300 -> 3k -> 30k runs",
    )
    args = parser.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    os.environ.update(env)
    steps = [(1000, s) for s in args.by_runs] if args.by_runs else [(t, 3) for t in args.sizes]
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
        for size, seeds in steps:
            root = Path(tmp) / f"a{size}-{seeds}"
            runs = build(root, size, random.Random(size), seeds)
            ours = [
                *(sys.executable, "-m", "reprobridge_sdk", "audit", str(root)),
                *("--format", "json", "-o", str(root / "report.json")),
            ]
            base = [sys.executable, str(base_script), str(root), str(root / "verdicts.json")]
            got = pairs({"ours": ours, "base": base}, args.repeats)
            report = json.loads((root / "report.json").read_text())
            plain = json.loads((root / "verdicts.json").read_text())
            agree = sum(t["attempts"][0]["verdict"] == plain[t["id"]] for t in report["tasks"])
            (o, oc, o_kib), (b, bc, b_kib) = got["ours"], got["base"]
            ours_t.append(oc)
            base_t.append(bc)
            ours_kib.append(o_kib)
            run_counts.append(runs)
            print(
                f"{size:>6} {runs:>6} {o:>7.2f} {b:>7.2f} {o / b:>6.2f} {oc:>8.2f} {bc:>8.2f} "
                f"{oc / bc:>6.2f} {o_kib / 1024:>8.0f} {b_kib / 1024:>8.0f} "
                f"{(o_kib - b_kib) * 1.024 / runs:>12.1f}   verdicts agree on {agree}/{size}"
            )
    if len(steps) > 1:
        axis, xs = ("runs", run_counts) if args.by_runs else ("tasks", args.sizes)
        print(
            f"fitted exponent, CPU time ~ {axis}^k: ours {exponent(xs, ours_t):.2f}, "
            f"baseline {exponent(xs, base_t):.2f}"
        )
        grown = (ours_kib[-1] - ours_kib[0]) * 1.024 / (run_counts[-1] - run_counts[0])
        print(f"our peak memory grows by {grown:.1f} KB a run (smallest to largest size)")


if __name__ == "__main__":
    main()
