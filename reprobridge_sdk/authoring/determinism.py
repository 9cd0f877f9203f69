"""Identical runs of one seed: a suggestion to declare ``deterministic: true`` (C027).

The rule is spec/authoring.md §14.2 ("same-seed-runs"); ``references add`` and ``check`` ask.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from reprobridge_sdk.api import load
from reprobridge_sdk.audit.duplicates import SAME_SEED_HINT, copy_signs, record_files
from reprobridge_sdk.audit.verify import RunEvidence, RunRecord, artifact_facts, check_run
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.run.evidence import RecordError, load_record
from reprobridge_sdk.versions import MANIFEST_NAME

if TYPE_CHECKING:
    from pathlib import Path

    from reprobridge_sdk.model import Launcher, Manifest

__all__ = ["suggest_after_check", "suggest_deterministic"]


def suggest_deterministic(
    manifest: Manifest, runs: Sequence[RunEvidence], *, file: str = ""
) -> list[Finding]:
    """One C027 per launcher not declared deterministic whose same-seed runs all agree.

    ``file``: the manifest's name to show. Invalid, failed or unseeded runs and copies
    (``copy_signs``) take no part.
    """
    groups: dict[tuple[str, int], list[RunEvidence]] = {}
    for run in runs:
        record = run.record
        if record is None or record.seed is None or not (run.succeeded and run.valid):
            continue
        group = groups.setdefault((record.launcher, record.seed), [])
        if not any(copy_signs(_record(other), record) for other in group):
            group.append(run)
    agreeing: dict[str, list[tuple[int, list[RunEvidence]]]] = {}
    differing: set[str] = set()
    for (launcher, seed), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        if all(_identical(group[0], other) for other in group[1:]):
            agreeing.setdefault(launcher, []).append((seed, group))
        else:
            differing.add(launcher)
    return [
        _suggestion(manifest, index, launcher, agreeing[launcher.id], file)
        for index, launcher in enumerate(manifest.launchers)
        if launcher.id in agreeing and launcher.id not in differing and not launcher.deterministic
    ]


def suggest_after_check(
    root: Path, recorded: Sequence[Path], made: Sequence[Path]
) -> list[Finding]:
    """:func:`suggest_deterministic` for the runs ``made`` by a clean-room check of the
    artifact at ``root`` (its copy) and the ``recorded`` runs of the same launcher and seed.

    A recorded run is verified only when its record names the same file digests as the
    check's run: otherwise it differs by its record alone, and no file of it is read.
    """
    art = load(root)
    facts = artifact_facts(art)
    fresh = [check_run(facts, path, path.name) for path in made]
    files = {(r.record.launcher, r.record.seed): record_files(r.record) for r in fresh if r.record}
    runs = list(fresh)
    for path in recorded:
        try:
            record = load_record(path)
        except RecordError:  # unreadable: it takes no part
            continue
        digests = files.get((record.launcher, record.seed))
        if digests is None:
            continue
        if record_files(record) == digests:
            runs.append(check_run(facts, path, path.name))
        else:
            runs.append(RunEvidence(path=path, rel=path.name, record=RunRecord.of(record)))
    return suggest_deterministic(art.manifest, runs, file=MANIFEST_NAME)


def _record(run: RunEvidence) -> RunRecord:
    assert run.record is not None  # grouped runs have one
    return run.record


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def _identical(first: RunEvidence, other: RunEvidence) -> bool:
    """The same values (the auditor's, at least one) and the same files, byte for byte."""
    files = record_files(_record(first))
    values, others = first.values, other.values
    return (
        bool(files)
        and files == record_files(_record(other))
        and any(v is not None for v in values.values())
        and values.keys() == others.keys()
        and all(_same(values[task], others[task]) for task in values)
    )


def _tolerance(manifest: Manifest, task_id: str) -> str:
    task = next((t for t in manifest.tasks if t.id == task_id), None)
    declared = task.same_seed_tolerance if task is not None else None
    if declared is not None:
        return f"task {task_id}'s same_seed_tolerance {declared:g}"
    return f"task {task_id}'s observed same-seed spread (at most its interval half-width)"


def _suggestion(
    manifest: Manifest,
    index: int,
    launcher: Launcher,
    agreeing: list[tuple[int, list[RunEvidence]]],
    file: str,
) -> Finding:
    seed, runs = agreeing[0]
    names = " and ".join(_record(run).run_id for run in runs)
    values = runs[0].values
    shown = ", ".join(f"{task} {value!r}" for task, value in sorted(values.items()))
    what = sorted(record_files(_record(runs[0])))
    also = ""
    if len(agreeing) > 1:
        seeds = ", ".join(str(s) for s, _ in agreeing[1:])
        also = f"; so did the runs of seed(s) {seeds}"
    instead = ", ".join(_tolerance(manifest, task) for task in sorted(values))
    return finding(
        "C027",
        f"launcher {launcher.id}: runs {names} of seed {seed} gave the same values ({shown}) "
        f"and byte-identical files ({', '.join(what)}){also}. With 'deterministic: true', a "
        f"re-execution of its runs must match their values exactly, in place of {instead}",
        path=f"/launchers/{index}/deterministic",
        file=file,
        hint=SAME_SEED_HINT,
    )
