"""The audit's indexes (task -> measuring launchers, launcher -> runs) judge exactly as the
full rescans they replace, on the toy artifact's real runs of two launchers that measure the
same tasks, honest and tampered, in the attempt's order and in a shuffled one."""

from __future__ import annotations

import random
from pathlib import Path

from audit_support import edit_record

from reprobridge_sdk.audit import compatibility_interval, load_artifact
from reprobridge_sdk.audit.verdict import RunIndex, TaskIndex, judge_task
from reprobridge_sdk.audit.verify import (
    ArtifactFacts,
    RunEvidence,
    check_duplicates,
    check_run,
    discover_runs,
)
from reprobridge_sdk.extract.extraction import ExtractionCache


def _evidence(root: Path) -> tuple[ArtifactFacts, list[RunEvidence]]:
    facts = load_artifact(root)
    cache = ExtractionCache()
    runs = [
        check_run(facts, d, d.relative_to(root / "runs").as_posix(), cache)
        for d in discover_runs(root / "runs")
    ]
    check_duplicates(runs)
    return facts, runs


def _rescan_measuring(facts: ArtifactFacts, task_id: str) -> list[tuple[str, str]]:
    """The scan every task made before the index: all launchers' measurements."""
    return [
        (launcher.id, m.task)
        for launcher in facts.manifest.launchers
        for m in launcher.measurements
        if m.task == task_id
    ]


def _rescan_runs(runs: list[RunEvidence], ids: set[str]) -> list[str]:
    """The scan every task made before the index: all runs of the attempt."""
    return [r.rel for r in runs if r.record is not None and r.record.launcher in ids]


def _check(facts: ArtifactFacts, runs: list[RunEvidence]) -> list[str]:
    by_task = TaskIndex.of(facts.manifest)
    by_launcher = RunIndex.of(runs)
    verdicts = []
    for i, task in enumerate(facts.manifest.tasks):
        measuring = by_task.measuring.get(task.id, [])
        assert [(ln.id, m.task) for ln, m in measuring] == _rescan_measuring(facts, task.id)
        ids = by_task.launchers(task.id)
        assert len(ids) == 2  # the smoke and the scored launcher both measure every task
        assert [r.rel for r in by_launcher.runs_of(ids)] == _rescan_runs(runs, ids)
        interval = compatibility_interval(task.observations)
        indexed = judge_task(
            facts,
            task,
            i,
            interval=interval,
            runs=runs,
            label="runs",
            tasks=by_task,
            by_launcher=by_launcher,
        ).done()
        alone = judge_task(facts, task, i, interval=interval, runs=runs, label="runs").done()
        assert indexed == alone
        verdicts.append(indexed.verdict)
    return verdicts


def test_the_indexes_equal_the_rescans_on_honest_runs(toy: Path) -> None:
    facts, runs = _evidence(toy)
    assert {r.record.launcher for r in runs if r.record} == {"scored", "smoke"}
    assert _check(facts, runs) == ["compatible", "compatible"]
    shuffled = list(runs)
    random.Random(3).shuffle(shuffled)
    assert _check(facts, shuffled) == ["compatible", "compatible"]


def test_the_indexes_equal_the_rescans_on_tampered_runs(toy: Path) -> None:
    edit_record(toy / "runs" / "smoke-s0", lambda r: r.update(launcher="scored"))
    edit_record(toy / "runs" / "scored-s1", lambda r: r.update(code_tree_digest="0" * 64))
    facts, runs = _evidence(toy)
    assert _check(facts, runs) == ["invalid-evidence", "invalid-evidence"]
    reversed_runs = runs[::-1]
    assert _check(facts, reversed_runs) == ["invalid-evidence", "invalid-evidence"]


def test_a_task_without_a_measuring_launcher_is_absent_from_the_index(toy: Path) -> None:
    facts, runs = _evidence(toy)
    by_task = TaskIndex.of(facts.manifest)
    assert by_task.launchers("no-such-task") == set()
    assert RunIndex.of(runs).runs_of(set()) == []
    assert by_task.substitutes == frozenset()
