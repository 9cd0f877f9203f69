"""Synthetic artifacts and evidence shared by the audit benchmarks.

``bench_audit.py`` (many small artifacts, many attempts) and ``bench_audit_scale.py`` (one
artifact growing to 10k tasks) write the same kind of files: a refined code tree and a lock
whose digests the manifest names, tasks with five reference observations around a random
centre, and for every seeded run a directory holding the log, one JSON output with every task's
value, and the ``record.json`` the runner would have written (digests of both files, the code
and lock digests, the argv with the seed filled in). One writer for both, so the two benchmarks
audit evidence of one shape.
"""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path
from typing import Any

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model import (
    RECORD_NAME,
    EvidenceRecord,
    FileDigest,
    MeasuredValue,
    OutputRecord,
)

__all__ = ["SEEDS", "manifest", "task_item", "write_code", "write_run"]

#: The seeds of every launcher (three seeded runs per launcher).
SEEDS = (0, 1, 2)


def write_code(root: Path) -> tuple[str, str]:
    """The artifact's refined code, lock and guide; returns the code tree's and lock's digests."""
    (root / "code").mkdir(parents=True)
    (root / "code" / "main.py").write_text("print('synthetic')\n")
    (root / "requirements.lock").write_text("# no distributions\n")
    (root / "GUIDE.md").write_text("# Guide\n")
    return tree_digest(root / "code"), file_sha256(root / "requirements.lock")


def task_item(task_id: str, rng: random.Random) -> tuple[dict[str, Any], float]:
    """One task with five reference observations around a random centre, and their mean."""
    centre = rng.uniform(20, 95)
    refs = [round(rng.gauss(centre, 0.4), 4) for _ in range(5)]
    item = {
        "id": task_id,
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
    return item, statistics.fmean(refs)


def manifest(
    artifact_id: str,
    tasks: list[dict[str, Any]],
    launchers: list[dict[str, Any]],
    *,
    tree: str,
    lock: str,
) -> dict[str, Any]:
    """The manifest of a synthetic artifact (format 1.0) with these tasks and launchers."""
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
        "tasks": tasks,
        "launchers": launchers,
    }


def write_run(
    run_dir: Path,
    *,
    artifact: str,
    launcher: dict[str, Any],
    tree: str,
    lock: str,
    seed: int,
    values: dict[str, float],
) -> None:
    """One succeeded run of ``launcher`` (a manifest entry) with ``seed``: the log, the JSON
    output ``metrics`` holding ``values`` and the record with their digests."""
    run_dir.mkdir(parents=True)
    log = run_dir / "log.txt"
    log.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    out = run_dir / "outputs" / "metrics" / "metrics.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(values))
    record = EvidenceRecord(
        run_id=run_dir.name,
        artifact=artifact,
        launcher=launcher["id"],
        argv=[str(seed) if a == "{seed}" else a for a in launcher["argv"]],
        workdir=".",
        seed=seed,
        scope="scored",
        status="succeeded",
        started_at=f"2026-01-01T{seed // 3600:02d}:{seed // 60 % 60:02d}:{seed % 60:02d}Z",
        code_tree_digest=tree,
        lock_digest=lock,
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
