"""Benchmark: auditing 36,000 task verdicts (the size of the ICML 2026 challenge).

Synthetic artifacts and evidence are written to a temporary directory: 40 artifacts x 30
tasks x 30 attempts = 36,000 (task, attempt) verdicts, each attempt holding 3 seeded run
directories whose record, log and JSON output the auditor verifies (digests, code and lock,
argv, re-extraction of every task value) before judging. Not timed: writing the files.

Printed side by side, in the same run:

* the full audit (``audit_table``: files read, evidence verified, verdicts, badges, rates);
* the same full audit without the per-audit extraction cache (every task re-reads and
  re-parses its run's output, as before the cache), for the cache's ratio;
* the auditor's interval-and-verdict core alone, in memory (36,000 intervals and scores);
* the baseline: computing the intervals alone with scipy per task the straightforward way
  (``numpy`` mean and std plus ``scipy.stats.t.ppf`` and ``t.sf`` for every verdict).

Run: ``python benchmarks/bench_audit.py [--artifacts 40 --tasks 30 --attempts 30]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model import (
    RECORD_NAME,
    EvidenceRecord,
    FileDigest,
    MeasuredValue,
    OutputRecord,
)

SEEDS = (0, 1, 2)


def _manifest(
    artifact_id: str, tasks: int, tree: str, lock: str, rng: random.Random
) -> dict[str, Any]:
    task_items = []
    measurements = []
    for t in range(tasks):
        centre = rng.uniform(20, 95)
        refs = [round(rng.gauss(centre, 0.4), 4) for _ in range(5)]
        task_items.append(
            {
                "id": f"t{t}",
                "dataset": "synthetic",
                "metric": "score",
                "statistic": {"aggregate": "mean", "seeds": len(SEEDS)},
                "published": {"value": round(centre, 2)},
                "direction": "higher",
                "kind": "full",
                "reference": {
                    "observations": [{"value": v, "provenance": {"source": "ref"}} for v in refs]
                },
            }
        )
        measurements.append(
            {"task": f"t{t}", "extract": {"kind": "json", "output": "metrics", "pointer": f"/t{t}"}}
        )
    return {
        "rra_version": "1.0",
        "artifact": {
            "id": artifact_id,
            "title": artifact_id,
            "license": "MIT",
            "paper": {"title": artifact_id},
        },
        "codebase": {
            "upstream": {"repository": "https://example.org/x.git", "commit": "b" * 40},
            "refined": {"kind": "directory", "path": "code"},
            "tree_digest": tree,
        },
        "environment": {
            "python": "3.11",
            "lock": {"path": "requirements.lock", "format": "requirements", "sha256": lock},
        },
        "tasks": task_items,
        "launchers": [
            {
                "id": "main",
                "argv": ["python", "code/main.py", "--seed", "{seed}"],
                "scope": "scored",
                "seeds": list(SEEDS),
                "outputs": [{"id": "metrics", "path": "metrics.json"}],
                "measurements": measurements,
            }
        ],
    }


def _write_run(
    run_dir: Path, manifest: dict[str, Any], seed: int, values: dict[str, float]
) -> None:
    run_dir.mkdir(parents=True)
    log = run_dir / "log.txt"
    log.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    out = run_dir / "outputs" / "metrics" / "metrics.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(values))
    record = EvidenceRecord(
        run_id=run_dir.name,
        artifact=manifest["artifact"]["id"],
        launcher="main",
        argv=["python", "code/main.py", "--seed", str(seed)],
        workdir=".",
        seed=seed,
        scope="scored",
        status="succeeded",
        started_at=f"2026-01-01T00:00:0{seed}Z",
        code_tree_digest=manifest["codebase"]["tree_digest"],
        lock_digest=manifest["environment"]["lock"]["sha256"],
        log=FileDigest(path="log.txt", sha256=file_sha256(log), size=log.stat().st_size),
        outputs=[
            OutputRecord(
                id="metrics",
                path="outputs/metrics/metrics.json",
                sha256=file_sha256(out),
                size=out.stat().st_size,
            )
        ],
        measurements=[
            MeasuredValue(task=k, value=v, source="output:metrics") for k, v in values.items()
        ],
    )
    (run_dir / RECORD_NAME).write_text(record.model_dump_json(exclude_none=True))


def build(base: Path, artifacts: int, tasks: int, attempts: int) -> list[Path]:
    rng = random.Random(20260)
    roots = []
    for a in range(artifacts):
        root = base / f"artifact-{a}"
        (root / "code").mkdir(parents=True)
        (root / "code" / "main.py").write_text("print('synthetic')\n")
        (root / "requirements.lock").write_text("# no distributions\n")
        (root / "GUIDE.md").write_text("# Guide\n")
        manifest = _manifest(
            f"artifact-{a}",
            tasks,
            tree_digest(root / "code"),
            file_sha256(root / "requirements.lock"),
            rng,
        )
        (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        means = {
            t["id"]: statistics.fmean(o["value"] for o in t["reference"]["observations"])
            for t in manifest["tasks"]
        }
        for k in range(attempts):
            for seed in SEEDS:
                values = {tid: round(m + rng.gauss(0, 0.6), 4) for tid, m in means.items()}
                _write_run(
                    root / "attempts" / f"agent-{k}" / f"main-s{seed}", manifest, seed, values
                )
        roots.append(root)
    return roots


def _best(fn: Any, repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", type=int, default=40)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--attempts", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2, help="processes for the parallel run")
    args = parser.parse_args()
    verdicts = args.artifacts * args.tasks * args.attempts

    import numpy as np
    from scipy import stats  # baseline; also warms the import for the audit

    from reprobridge_sdk.audit import audit_table
    from reprobridge_sdk.audit.interval import compatibility_interval, score

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        roots = build(Path(tmp), args.artifacts, args.tasks, args.attempts)
        print(
            f"wrote {len(roots)} artifacts, "
            f"{args.artifacts * args.attempts * len(SEEDS)} run directories "
            f"in {time.perf_counter() - start:.1f} s (not timed)"
        )
        labels = [f"agent-{k}=attempts/agent-{k}" for k in range(args.attempts)]
        cpu = time.process_time()
        full_time, table = _best(lambda: audit_table(roots, labels), 1)
        full_cpu = time.process_time() - cpu
        from reprobridge_sdk.audit import auditor

        with_cache = auditor.ExtractionCache
        auditor.ExtractionCache = lambda: None  # type: ignore[assignment,misc,return-value]
        try:
            nocache_time, nocache_table = _best(lambda: audit_table(roots, labels), 1)
        finally:
            auditor.ExtractionCache = with_cache  # type: ignore[misc]
        assert nocache_table.model_dump() == table.model_dump()
        par_time, par_table = _best(lambda: audit_table(roots, labels, jobs=args.jobs), 1)
        assert par_table.model_dump() == table.model_dump()
        counted = sum(len(t.attempts) for r in table.artifacts for t in r.tasks)
        assert counted == verdicts, (counted, verdicts)
        rng = random.Random(7)
        cases = [
            ([rng.gauss(50, 1) for _ in range(5)], rng.gauss(50, 1.5)) for _ in range(verdicts)
        ]

        def core() -> int:
            hits = 0
            for refs, value in cases:
                interval = compatibility_interval(refs)
                score(interval, value)
                hits += interval.contains(value)
            return hits

        def baseline() -> int:
            hits = 0
            for refs, value in cases:
                xs = np.asarray(refs)
                n = len(xs)
                m, s = float(xs.mean()), float(xs.std(ddof=1))
                t = float(stats.t.ppf(0.975, n - 1))
                h = max(t * s * math.sqrt(1 + 1 / n), 0.01 * abs(m))
                z = (value - m) / (h / t)
                float(2 * stats.t.sf(abs(z), n - 1))
                hits += m - h <= value <= m + h
            return hits

        core_time, core_hits = _best(core, args.repeats)
        base_time, base_hits = _best(baseline, 1)
        assert core_hits == base_hits
    totals: dict[str, int] = {}
    for result in table.artifacts:
        for key, value in result.counts.items():
            totals[key] = totals.get(key, 0) + value
    print(
        f"verdicts: {verdicts} ({args.artifacts} artifacts x {args.tasks} tasks x "
        f"{args.attempts} attempts, {len(SEEDS)} seeded runs each); {totals}"
    )
    _line("full audit from files, 1 process", full_time, verdicts)
    _line("  the same, CPU time of the process", full_cpu, verdicts)
    _line("full audit, no extraction cache", nocache_time, verdicts)
    _line(f"full audit from files, {args.jobs} processes", par_time, verdicts)
    _line("interval+verdict core (in memory)", core_time, verdicts)
    _line("baseline: intervals alone, scipy.stats", base_time, verdicts)
    print(f"ratio full audit (1 process) / baseline intervals alone: {full_time / base_time:.2f}")
    print(f"ratio full audit with cache / without cache: {full_time / nocache_time:.2f}")
    print("(wall times grow when other processes share the CPUs; CPU time does not)")
    print(f"ratio full audit ({args.jobs} processes) / 1 process: {par_time / full_time:.2f}")
    print(f"ratio core / baseline intervals alone: {core_time / base_time:.3f}")


def _line(name: str, seconds: float, verdicts: int) -> None:
    print(f"{name:<42}: {seconds:8.3f} s  {verdicts / seconds:9.0f} verdicts/s")


if __name__ == "__main__":
    main()
