"""Byte-identical evidence across seeds: a copy (A038) or a seed without effect (A079); spec
security.md#auditor-rules and audit.md#re-execution.

Identical bytes alone do not show a copy (a deterministic program writes them): two runs are
a copy when they also share a run identity or a timestamp. A re-execution that gives two
seeds different values turns an A079 into A038 (:func:`settle_by_rerun`). Runs of one seed
that agree byte for byte propose ``deterministic: true`` (C027, :func:`same_run`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model import MANIFEST_NAME, RECORD_NAME

if TYPE_CHECKING:
    from pathlib import Path

    from reprobridge_sdk.model import Launcher
    from reprobridge_sdk.model.audit import RerunComparison
    from reprobridge_sdk.model.evidence import EvidenceRecord

    from ._evidence import RunRecord
    from .verify import RunEvidence

    #: A typed record (the runner's, the author's) or one the audit condensed.
    Record = EvidenceRecord | RunRecord

__all__ = [
    "SAME_SEED_HINT",
    "check_duplicates",
    "copy_signs",
    "record_files",
    "same_run",
    "same_seed_suggestions",
    "settle_by_rerun",
]

#: What C027 proposes, wherever runs of one seed agree byte for byte.
SAME_SEED_HINT = (
    "if the launcher's runs are identical by design, add 'deterministic: true' to it (format "
    "1.1); leave it out if an unseeded generator or a parallel kernel may change its output"
)


def _identity(record: Record) -> str:
    """The run id without the record's own ``-s<seed>`` part."""
    if record.seed is None:
        return record.run_id
    return re.sub(rf"-s{record.seed}(?=-|$)", "", record.run_id, count=1)


def copy_signs(first: Record, later: Record) -> list[str]:
    """What the two records share that two runs of the runner never do (empty: nothing)."""
    signs: list[str] = []
    if first.run_id == later.run_id or _identity(first) == _identity(later):
        signs.append("the same run identity")
    if first.started_at == later.started_at:
        signs.append(f"the same start time {later.started_at}")
    if first.ended_at is not None and first.ended_at == later.ended_at:
        signs.append(f"the same end time {later.ended_at}")
    return signs


def _files(record: Record) -> list[tuple[str, str]]:
    files = [("log", record.log.sha256)] if record.log is not None and record.log.size != 0 else []
    files += [(f"output {o.id}", o.sha256) for o in record.outputs if o.size != 0]
    return files


def check_duplicates(runs: Sequence[RunEvidence]) -> None:
    """A038 (copied) or A079 (the seed has no effect) on every run whose log or output is
    byte-identical to one of an earlier run with another seed (see the module).

    Only succeeded runs with a seed take part. Runs are compared in the order given (the
    attempt's order), so the first holder of a digest keeps its value.
    """
    seen: dict[str, RunEvidence] = {}
    for run in runs:
        record = run.record
        if record is None or not run.succeeded or record.seed is None:
            continue
        matches: list[tuple[RunEvidence, str, list[str]]] = []
        for what, digest in _files(record):
            first = seen.setdefault(digest, run)
            earlier = first.record
            if earlier is not None and earlier.seed != record.seed:
                matches.append((first, what, copy_signs(earlier, record)))
        if not matches:
            continue
        # A copy shown by any identical file decides; else the first file names the twin.
        first, what, signs = next((m for m in matches if m[2]), matches[0])
        if signs:
            _copied(run, first, what, "; both records have " + ", ".join(signs))
        else:
            _no_effect(run, first, what)


def _message(run: RunEvidence, first: RunEvidence, what: str) -> str:
    assert run.record is not None and first.record is not None
    return (
        f"the {what} of seed {run.record.seed} (run {run.rel or '.'}) is byte-identical to "
        f"that of seed {first.record.seed} (run {first.rel or '.'})"
    )


def _where(run: RunEvidence) -> str:
    return f"{run.rel}/{RECORD_NAME}".lstrip("/")


def _copied(run: RunEvidence, first: RunEvidence, what: str, why: str) -> None:
    run.findings.append(
        finding(
            "A038",
            _message(run, first, what) + why,
            path="/log" if what == "log" else "/outputs",
            file=_where(run),
            hint="each seed must be run; a copied run is not evidence",
        )
    )
    run.values = dict.fromkeys(run.values)


def _no_effect(run: RunEvidence, first: RunEvidence, what: str) -> None:
    note = finding(
        "A079",
        _message(run, first, what) + ": the seed has no effect on it",
        path="/log" if what == "log" else "/outputs",
        file=_where(run),
        hint="expected of a deterministic program; re-execution tells it from a copy",
    )
    run.findings.append(note)
    run.run_notes.append(note)
    run.twin = first


def _differ(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    return a != b


def settle_by_rerun(
    runs: Sequence[RunEvidence], comparisons: Mapping[Path, Sequence[RerunComparison]]
) -> int:
    """Turn A079 into A038 where both runs of a pair were re-executed and their re-executions
    differ (``comparisons``: by run path); the number of runs turned."""
    turned = 0
    for run in runs:
        first = run.twin
        if first is None:
            continue
        mine = {c.task: c.rerun for c in comparisons.get(run.path, ())}
        theirs = {c.task: c.rerun for c in comparisons.get(first.path, ())}
        differing = sorted(t for t in mine.keys() & theirs.keys() if _differ(mine[t], theirs[t]))
        if not differing:
            continue
        note = next(f for f in run.findings if f.code == "A079")
        run.findings.remove(note)
        run.run_notes[:] = [f for f in run.run_notes if f is not note]
        task = differing[0]
        run.findings.append(
            finding(
                "A038",
                note.message.replace(": the seed has no effect on it", "")
                + f"; re-executed, the two seeds give different values of task {task} "
                f"({mine[task]!r}, {theirs[task]!r}): the seed has an effect",
                path=note.path,
                file=note.file,
                hint="each seed must be run; a copied run is not evidence",
            )
        )
        run.values = dict.fromkeys(run.values)
        run.twin = None
        turned += 1
    return turned


def record_files(record: Record) -> dict[str, str]:
    """The digests of a run's log and outputs, by what they are (``log``, ``output ID``)."""
    files = {"log": record.log.sha256} if record.log is not None else {}
    return files | {f"output {o.id}": o.sha256 for o in record.outputs}


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def _values(record: Record) -> dict[str, float | None]:
    return {m.task: m.value for m in record.measurements}


def same_run(one: Record, two: Record) -> bool:
    """Whether two runs (of one seed) gave the same values, at least one, and byte-identical
    files, by the digests their records keep."""
    files, values, others = record_files(one), _values(one), _values(two)
    return (
        bool(files)
        and files == record_files(two)
        and any(v is not None for v in values.values())
        and values.keys() == others.keys()
        and all(_same(values[task], others[task]) for task in values)
    )


def same_seed_suggestions(
    launchers: Sequence[Launcher],
    pairs: Mapping[str, Sequence[tuple[Record, Record]]],
) -> list[Finding]:
    """C027 for each launcher not declared deterministic whose same-seed ``pairs`` met by a
    re-execution (launcher id -> a recorded run and its re-execution, a run and its repeat)
    all agree (:func:`same_run`); one pair that differs keeps the launcher from it."""
    found: list[Finding] = []
    for index, launcher in enumerate(launchers):
        met = pairs.get(launcher.id, ())
        if launcher.deterministic or not met or not all(same_run(a, b) for a, b in met):
            continue
        first = met[0][0]
        shown = ", ".join(f"{task} {value!r}" for task, value in sorted(_values(first).items()))
        found.append(
            finding(
                "C027",
                f"launcher {launcher.id}: executed again with the recorded seed, {len(met)} "
                f"pair(s) of runs of one seed gave the same values and byte-identical files "
                f"({', '.join(sorted(record_files(first)))}), as run {first.run_id} of seed "
                f"{first.seed} ({shown}). With 'deterministic: true', a re-execution of its "
                "runs must match their values exactly, and no run is executed twice",
                path=f"/launchers/{index}/deterministic",
                file=MANIFEST_NAME,
                hint=SAME_SEED_HINT,
            )
        )
    return found
