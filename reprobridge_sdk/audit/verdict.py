"""Verdicts per task and attempt, in the spec's order (the first that applies wins), with
their reasons, ICML 2026 vocabulary and scores. See spec §11.3.

An audit indexes its manifest once (:class:`TaskIndex`) and each attempt once
(:class:`RunIndex`), so judging every task of an attempt is linear in tasks plus runs. The
badges are awarded by :mod:`.badges`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

from reprobridge_sdk.extract.extraction import ExtractionError, aggregate
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.model import Launcher, Manifest, Measurement
from reprobridge_sdk.model.audit import AuditFinding, IcmlVerdict, TaskAttempt, Verdict

from .facts import ManifestFacts, TaskFacts
from .interval import Interval, finite, score
from .verify import ArtifactFacts, RunEvidence

__all__ = [
    "ICML",
    "VERDICTS",
    "Judgement",
    "RunIndex",
    "TaskIndex",
    "as_audit_finding",
    "audit_finding",
    "judge_published",
    "judge_task",
]

VERDICTS: tuple[Verdict, ...] = (
    "compatible",
    "incompatible",
    "toy",
    "not-executed",
    "invalid-evidence",
    "inconclusive",
)
ICML: dict[str, IcmlVerdict] = {
    "compatible": "verified",
    "incompatible": "falsified",
    "toy": "toy",
    "not-executed": "inconclusive",
    "invalid-evidence": "inconclusive",
    "inconclusive": "inconclusive",
}


def as_audit_finding(item: Finding) -> AuditFinding:
    """The JSON model of a finding."""
    return AuditFinding(
        code=item.code,
        severity=item.severity.value,
        message=item.message,
        path=item.path,
        file=item.file or None,
        line=item.line or None,
        col=item.col or None,
        hint=item.hint,
        spec=item.spec,
    )


@dataclass(slots=True)
class Judgement:
    """A verdict under construction (turned into a :class:`TaskAttempt` at the end)."""

    attempt: str
    verdict: Verdict = "inconclusive"
    value: float | None = None
    values: list[float | None] = field(default_factory=list)
    seeds: list[int | None] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    z: float | None = None
    p: float | None = None
    reasons: list[Finding] = field(default_factory=list)

    def done(self, p_adjusted: float | None = None) -> TaskAttempt:
        return TaskAttempt(
            attempt=self.attempt,
            verdict=self.verdict,
            icml=ICML[self.verdict],
            value=self.value,
            values=self.values,
            seeds=self.seeds,
            runs=self.runs,
            z=self.z,
            p=self.p,
            p_adjusted=p_adjusted,
            reasons=[as_audit_finding(r) for r in self.reasons],
        )


def audit_finding(
    code: str, message: str, *, path: str = "", file: str = "", hint: str | None = None
) -> AuditFinding:
    """A new finding of a registered code, as an audit or bench report holds it."""
    return as_audit_finding(finding(code, message, path=path, file=file, hint=hint))


def _dedupe(findings: Sequence[Finding]) -> list[Finding]:
    seen: set[tuple[str, str, str]] = set()
    out: list[Finding] = []
    for item in findings:
        key = (item.code, item.file, item.message)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


@dataclass(frozen=True)
class TaskIndex:
    """A manifest's measurements by task, built once per audit (linear in the manifest).

    ``measuring[task]`` lists ``(launcher, measurement)`` in manifest order (launchers, then
    their measurements), the order :func:`judge_task` prefers among equal candidates; a task no
    launcher measures is absent. ``substitutes`` holds the ids of the launchers that read a
    checkpoint allowed to stand in for training (A020).
    """

    measuring: dict[str, list[tuple[Launcher, Measurement]]]
    substitutes: frozenset[str]

    @classmethod
    def of(cls, manifest: Manifest | ManifestFacts) -> TaskIndex:
        measuring: dict[str, list[tuple[Launcher, Measurement]]] = {}
        for launcher in manifest.launchers:
            for m in launcher.measurements:
                measuring.setdefault(m.task, []).append((launcher, m))
        items = {d.id: d for d in manifest.environment.data}
        substitutes = frozenset(
            launcher.id
            for launcher in manifest.launchers
            if any(
                items[d].kind == "checkpoint" and items[d].substitutes_training
                for d in launcher.data
                if d in items
            )
        )
        return cls(measuring, substitutes)

    def launchers(self, task_id: str) -> set[str]:
        """The ids of the launchers that measure ``task_id``."""
        return {launcher.id for launcher, _ in self.measuring.get(task_id, ())}


@dataclass(frozen=True)
class RunIndex:
    """One attempt's runs that have a record, by launcher id, each with its position in the
    attempt so that runs of several launchers merge back into the attempt's order. Built once
    per attempt (linear in its runs)."""

    by_launcher: dict[str, list[tuple[int, RunEvidence]]]
    _succeeded: dict[str, list[RunEvidence]] = field(default_factory=dict, compare=False)

    def succeeded_of(self, launcher_id: str) -> list[RunEvidence]:
        """The launcher's succeeded runs by start time, then directory (sorted once per
        launcher, not once per task it measures). Callers must not change the list."""
        found = self._succeeded.get(launcher_id)
        if found is None:
            found = sorted(
                (r for _, r in self.by_launcher.get(launcher_id, ()) if r.succeeded), key=_order
            )
            self._succeeded[launcher_id] = found
        return found

    @classmethod
    def of(cls, runs: Iterable[RunEvidence]) -> RunIndex:
        by_launcher: dict[str, list[tuple[int, RunEvidence]]] = {}
        for position, run in enumerate(runs):
            if run.record is not None:
                by_launcher.setdefault(run.record.launcher, []).append((position, run))
        return cls(by_launcher)

    def runs_of(self, launcher_ids: Iterable[str]) -> list[RunEvidence]:
        """The runs of these launchers, in the attempt's order."""
        groups = [self.by_launcher[i] for i in launcher_ids if i in self.by_launcher]
        if len(groups) == 1:
            return [run for _, run in groups[0]]
        return [run for _, run in sorted(chain.from_iterable(groups), key=lambda p: p[0])]


def _place(judgement: Judgement, interval: Interval, value: float, pointer: str) -> None:
    """The last steps of spec audit.md#verdicts for an aggregated ``value``: no interval,
    a value that is not finite, inside or outside; with its z-score and p-value."""
    if not interval.defined:
        code = "A027" if interval.non_finite else "A063" if interval.overflow else "A025"
        judgement.verdict = "inconclusive"
        judgement.reasons.append(finding(code, "the task has no interval", path=pointer))
        return
    scored = score(interval, value)
    if scored is not None:
        judgement.z, judgement.p = finite(scored.z), scored.p
    if not math.isfinite(value):
        judgement.verdict = "incompatible"
        judgement.reasons.append(finding("A028", f"the value is {value}", path=pointer))
        return
    if interval.floor_only:
        judgement.reasons.append(
            finding("A026", "one reference observation: floor-only interval", path=pointer)
        )
    if interval.contains(value):
        judgement.verdict = "compatible"
        return
    judgement.verdict = "incompatible"
    judgement.reasons.append(
        finding(
            "A029",
            f"{value!r} is outside [{interval.low!r}, {interval.high!r}]",
            path=pointer,
        )
    )


def judge_published(
    task: TaskFacts, interval: Interval, published: float | None, pointer: str
) -> Judgement:
    """Curation: is the published value itself compatible with the references?"""
    judgement = Judgement(attempt="published")
    if task.not_measured is not None:
        return _not_measured(judgement, task.not_measured, pointer)
    if published is None:
        judgement.reasons.append(
            finding("A032", "no published value or range", path=f"{pointer}/published")
        )
        return judgement
    judgement.value = published
    judgement.values = [published]
    _place(judgement, interval, published, f"{pointer}/reference")
    if judgement.verdict == "incompatible":
        judgement.reasons = [
            finding(
                "A031",
                f"published {published!r} is outside [{interval.low!r}, {interval.high!r}]",
                path=f"{pointer}/published",
            )
            if r.code == "A029"
            else r
            for r in judgement.reasons
        ]
    return judgement


def _not_measured(judgement: Judgement, reason: str, pointer: str) -> Judgement:
    """Step 1: a task the artifact does not measure (``reference.not_measured``) is
    inconclusive, with the artifact's reason."""
    message = f"the artifact does not measure the task: {reason}"
    judgement.reasons.append(finding("A025", message, path=f"{pointer}/reference"))
    return judgement


def _order(run: RunEvidence) -> tuple[str, str]:
    assert run.record is not None
    return (run.record.started_at, run.rel)


def judge_task(
    facts: ArtifactFacts,
    task: TaskFacts,
    index: int,
    *,
    interval: Interval,
    runs: Sequence[RunEvidence],
    label: str,
    tasks: TaskIndex | None = None,
    by_launcher: RunIndex | None = None,
) -> Judgement:
    """The verdict of ``task`` (the ``index``-th) in one attempt's verified ``runs``.

    ``tasks`` and ``by_launcher`` are the indexes of ``facts.manifest`` and ``runs``; a caller
    judging many tasks builds them once and passes them (built here when omitted).
    """
    pointer = f"/tasks/{index}"
    judgement = Judgement(attempt=label)
    if task.not_measured is not None:
        return _not_measured(judgement, task.not_measured, pointer)
    tasks = tasks if tasks is not None else TaskIndex.of(facts.manifest)
    measuring = tasks.measuring.get(task.id, [])
    if not measuring:
        judgement.reasons.append(finding("A034", "no launcher measures the task", path=pointer))
        return judgement
    ids = {launcher.id for launcher, _ in measuring}
    by_launcher = by_launcher if by_launcher is not None else RunIndex.of(runs)
    mine = by_launcher.runs_of(ids)
    bad = [f for r in mine for f in r.findings if f.severity is Severity.ERROR]
    if bad:
        judgement.verdict = "invalid-evidence"
        judgement.reasons = _dedupe(bad)
        judgement.runs = sorted({r.rel for r in mine if not r.valid})
        return judgement
    succeeded = [r for r in mine if r.succeeded]
    if not succeeded:
        judgement.verdict = "not-executed"
        judgement.reasons = _dedupe([f for r in mine for f in r.findings]) or [
            finding("A024", "no run of a launcher that measures the task", path=pointer)
        ]
        return judgement

    unread = [r.unread[task.id] for r in succeeded if task.id in r.unread]
    if unread:
        judgement.reasons = _dedupe(unread)
        judgement.runs = sorted({r.rel for r in succeeded if task.id in r.unread})
        return judgement

    candidates = _candidates(measuring, by_launcher, task, judgement, pointer)
    if not candidates:
        judgement.verdict = "not-executed"
        judgement.reasons.append(
            finding("A024", "no successful run gave a value for the task", path=pointer)
        )
        judgement.reasons.extend(_dedupe([f for r in succeeded for f in r.findings]))
        return judgement
    candidates.sort(key=lambda c: (c[0], c[1]))
    scope_rank, _, launcher, how, counted = candidates[0]
    counted.sort(key=lambda r: r.record.seed if r.record and r.record.seed is not None else -1)
    values = [r.values[task.id] for r in counted]
    judgement.values = list(values)
    judgement.seeds = [r.record.seed if r.record else None for r in counted]
    judgement.runs = [r.rel for r in counted]
    # Warnings that leave the value standing: drift (A036), output equal to a sample (A035).
    judgement.reasons.extend(
        _dedupe([f for r in counted for f in (*r.run_notes, *r.task_notes.get(task.id, ()))])
    )
    numbers = [v for v in values if v is not None]
    try:
        judgement.value = aggregate(numbers, how)
    except ExtractionError:
        judgement.value = numbers[-1]
    toy = _toy_reasons(task, tasks, launcher, len(numbers), scope_rank=scope_rank, pointer=pointer)
    if toy:
        judgement.verdict = "toy"
        judgement.reasons.extend(toy)
        return judgement
    _place(judgement, interval, judgement.value, f"{pointer}/reference")
    return judgement


#: A launcher that could give the task's value: (0 for scored, else 1; minus its number of
#: counted seeds; the launcher; its aggregate; its counted runs).
_Candidate = tuple[int, int, Launcher, str, list[RunEvidence]]


def _candidates(
    measuring: Sequence[tuple[Launcher, Measurement]],
    by_launcher: RunIndex,
    task: TaskFacts,
    judgement: Judgement,
    pointer: str,
) -> list[_Candidate]:
    """Each launcher whose latest run per seed gave the task a value (A033 for a seed run
    more than once); scored launchers are preferred, then the one with the most seeds."""
    candidates: list[_Candidate] = []
    for launcher, measurement in measuring:
        own = by_launcher.succeeded_of(launcher.id)  # those of ``succeeded`` it ran, sorted
        latest: dict[int | None, RunEvidence] = {}
        for run in own:
            assert run.record is not None
            if run.record.seed in latest:
                judgement.reasons.append(
                    finding(
                        "A033",
                        f"seed {run.record.seed} ran more than once",
                        file=run.rel,
                        path=pointer,
                    )
                )
            latest[run.record.seed] = run
        counted = [r for r in latest.values() if r.values.get(task.id) is not None]
        if counted:
            scored = 0 if launcher.scope == "scored" else 1
            candidates.append((scored, -len(counted), launcher, measurement.aggregate, counted))
    return candidates


def _toy_reasons(
    task: TaskFacts,
    tasks: TaskIndex,
    launcher: Launcher,
    numbers: int,
    *,
    scope_rank: int,
    pointer: str,
) -> list[Finding]:
    """Why the value is a toy's: smoke runs only (A016), fewer seeds than the statistic
    (A017), or a checkpoint standing in for training (A020)."""
    toy: list[Finding] = []
    if scope_rank:
        toy.append(finding("A016", "only smoke-scope runs gave a value", path=pointer))
    if numbers < task.seeds:
        toy.append(
            finding(
                "A017",
                f"{numbers} of {task.seeds} seeds gave a value",
                path=f"{pointer}/statistic/seeds",
            )
        )
    if task.kind == "full" and launcher.id in tasks.substitutes:
        toy.append(
            finding(
                "A020",
                f"launcher {launcher.id} reads a checkpoint that stands in for training",
                path=f"{pointer}/kind",
            )
        )
    return toy
