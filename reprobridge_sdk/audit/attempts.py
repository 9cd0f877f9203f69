"""Many attempts: labels, success rates, spreads and disagreements (spec audit.md#attempts).

An attempt is a directory of run directories, labelled ``LABEL=DIR``; attempts that share a
label get unique names (``label#2``) and keep the label as their ``group``.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model.audit import AttemptSummary, LabelRate, TaskAudit

__all__ = [
    "COMMITTEE_LABEL",
    "DEFAULT_ATTEMPT",
    "Attempt",
    "label_rates",
    "mean",
    "parse_attempt",
    "spread",
    "summarize_tasks",
    "unique_labels",
]

#: The directory of run directories audited when no attempt is given.
DEFAULT_ATTEMPT = "runs"


@dataclass(frozen=True)
class Attempt:
    """A directory of run directories and its label."""

    label: str
    path: Path


def parse_attempt(text: str | os.PathLike[str] | Attempt) -> Attempt:
    """``LABEL=DIR`` or ``DIR`` (labelled by the directory's name)."""
    if isinstance(text, Attempt):
        return text
    raw = os.fspath(text)
    label, sep, path = raw.partition("=")
    if sep and label and path and "/" not in label:
        return Attempt(label=label, path=Path(path))
    if sep and not (label and path):
        msg = f"an attempt is LABEL=DIR or DIR, got {raw!r}"
        raise UsageError(msg)
    path_obj = Path(raw)
    return Attempt(label=path_obj.name or raw, path=path_obj)


def unique_labels(attempts: Sequence[Attempt]) -> list[str]:
    """A unique name per attempt: repeated labels get ``#2``, ``#3``, ..."""
    seen: dict[str, int] = {}
    names: list[str] = []
    for attempt in attempts:
        seen[attempt.label] = seen.get(attempt.label, 0) + 1
        count = seen[attempt.label]
        names.append(attempt.label if count == 1 else f"{attempt.label}#{count}")
    return names


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not ``None``; ``None`` when there are none."""
    items = [v for v in values if v is not None]
    return sum(items) / len(items) if items else None


def spread(rates: Sequence[LabelRate]) -> float | None:
    """Max minus min of the label rates (``None`` with fewer than two rated labels)."""
    values = [r.success_rate for r in rates if r.success_rate is not None]
    return max(values) - min(values) if len(values) >= 2 else None


#: The label of the committee's own attempt (``--attempt committee=DIR``): its verdicts are
#: shown apart and never count in the authors' success (spec audit.md#attempts).
COMMITTEE_LABEL = "committee"


def summarize_tasks(tasks: Sequence[TaskAudit], committee: Collection[str] = ()) -> None:
    """Fill each task's success rate and disagreement flag from its attempts; the attempts
    named in ``committee`` (the committee's own) are left out of the success rate."""
    for task in tasks:
        verdicts = [a.verdict for a in task.attempts]
        counted = [a.verdict for a in task.attempts if a.attempt not in committee]
        task.success_rate = (
            sum(v == "compatible" for v in counted) / len(counted) if counted else None
        )
        task.disagreement = len(set(verdicts)) > 1


def label_rates(
    pairs: Iterable[tuple[Sequence[AttemptSummary], Sequence[TaskAudit]]], failed: int = 0
) -> list[LabelRate]:
    """Rates per label group over one or several artifacts (``(attempts, tasks)`` pairs);
    each of ``failed`` artifacts (not loaded) adds one non-compatible pair to every group."""
    hits: dict[str, int] = {}
    total: dict[str, int] = {}
    names: dict[str, set[str]] = {}
    order: list[str] = []
    for attempts, tasks in pairs:
        group_of = {a.label: a.group for a in attempts}
        for attempt in attempts:
            if attempt.group not in names:
                names[attempt.group] = set()
                order.append(attempt.group)
            names[attempt.group].add(attempt.label)
        for task in tasks:
            for verdict in task.attempts:
                group = group_of.get(verdict.attempt)
                if group is None:
                    continue
                total[group] = total.get(group, 0) + 1
                hits[group] = hits.get(group, 0) + (verdict.verdict == "compatible")
    return [
        LabelRate(
            label=group,
            attempts=len(names[group]),
            success_rate=(
                hits.get(group, 0) / (total.get(group, 0) + failed)
                if total.get(group, 0) + failed
                else None
            ),
        )
        for group in order
    ]
