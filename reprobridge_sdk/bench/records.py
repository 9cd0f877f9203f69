"""Evidence records in place of a results file (preview).

Which records count, and how they become a results file, is spec/bench.md §18.2
("evidence-instead"). The judge then re-extracts every value and believes none of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from reprobridge_sdk.extract.extraction import ExtractionError, aggregate
from reprobridge_sdk.model import Launcher, Manifest
from reprobridge_sdk.model.bench import BENCH_RESULTS_VERSION, BenchResults, ResultRun, TaskResult
from reprobridge_sdk.model.evidence import EvidenceRecord
from reprobridge_sdk.run.evidence import RecordError, load_record

__all__ = ["MAX_RECORDS", "RECORDS_AGENT", "results_from_records"]

#: Run folders read at most (an agent could leave any number).
MAX_RECORDS = 1000

#: The ``agent`` of a results file read from records.
RECORDS_AGENT = "evidence records"


def _records(runs: Path) -> list[tuple[str, EvidenceRecord]]:
    """The readable records under ``runs`` (a real folder; a run folder that is a link is
    skipped), by their folders' names, with their folders relative to the workspace."""
    if runs.is_symlink() or not runs.is_dir():
        return []
    found: list[tuple[str, EvidenceRecord]] = []
    children = sorted(runs.iterdir(), key=lambda p: p.name.encode("utf-8", "surrogateescape"))
    for child in children[:MAX_RECORDS]:
        if child.is_symlink() or not child.is_dir():
            continue
        try:
            found.append((f"{runs.name}/{child.name}", load_record(child)))
        except RecordError:
            continue
    return found


def _candidates(manifest: Manifest, task: str) -> list[Launcher]:
    measuring = [
        launcher
        for launcher in manifest.launchers
        if any(m.task == task for m in launcher.measurements)
    ]
    return sorted(measuring, key=lambda launcher: launcher.scope != "scored")


def _run(base: str, record: EvidenceRecord) -> ResultRun:
    return ResultRun(
        log=f"{base}/{record.log.path}" if record.log is not None else None,
        outputs={output.id: f"{base}/{output.path}" for output in record.outputs},
        seed=record.seed,
    )


def results_from_records(
    manifest: Manifest, workspace: str | os.PathLike[str], task: str
) -> BenchResults | None:
    """The results file the records under ``workspace/runs`` give for ``task`` (module
    docstring); None when no succeeded record of a launcher that measures it is there."""
    records = _records(Path(workspace) / "runs")
    for launcher in _candidates(manifest, task):
        mine = [
            (base, record)
            for base, record in records
            if record.launcher == launcher.id and record.status == "succeeded"
        ]
        if not mine:
            continue
        measurement = next(m for m in launcher.measurements if m.task == task)
        stated = [
            next((m.value for m in record.measurements if m.task == task), None)
            for _, record in mine
        ]
        value: float | None = None
        if all(item is not None for item in stated):
            try:
                value = aggregate(
                    [float(v) for v in stated if v is not None], measurement.aggregate
                )
            except ExtractionError:
                value = None
        entry = TaskResult(
            task=task,
            value=value,
            launcher=launcher.id,
            runs=[_run(base, record) for base, record in mine],
        )
        return BenchResults(
            bench_results_version=BENCH_RESULTS_VERSION, agent=RECORDS_AGENT, results=[entry]
        )
    return None
