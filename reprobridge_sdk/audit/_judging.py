"""Each task's result in an audit: its interval and published value, and its verdict in
every attempt, with Holm's correction over one attempt's tasks. See spec §11.2 and §11.3."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from reprobridge_sdk.findings import finding
from reprobridge_sdk.model.audit import AuditOptions, IntervalResult, TaskAudit

from ._checks import _Checks
from .facts import ManifestFacts
from .interval import Interval, finite, is_stable
from .interval import holm as holm_adjust
from .verdict import (
    VERDICTS,
    Judgement,
    RunIndex,
    TaskIndex,
    judge_published,
    judge_task,
)
from .verify import ArtifactFacts, RunEvidence

__all__ = ["judge_columns", "settle_columns", "task_audits"]


def _interval_result(interval: Interval) -> IntervalResult:
    return IntervalResult(
        defined=interval.defined,
        n=interval.n,
        mean=finite(interval.mean),
        sd=finite(interval.sd),
        half_width=finite(interval.half_width),
        low=finite(interval.low),
        high=finite(interval.high),
        t=finite(interval.t),
        floor_bound=interval.floor_bound,
        floor_only=interval.floor_only,
        non_finite=interval.non_finite,
        floor_alone=_floor_alone(interval),
    )


def _floor_alone(interval: Interval) -> Literal["one-reference", "identical-references"] | None:
    """The interval is the floor alone: one reference, or references all equal."""
    if not interval.defined:
        return None
    if interval.n == 1:
        return "one-reference"
    return "identical-references" if interval.sd == 0 else None


def task_audits(manifest: ManifestFacts, intervals: Sequence[Interval]) -> list[TaskAudit]:
    """Each task's result before any attempt is judged: its published value, references and
    interval."""
    tasks: list[TaskAudit] = []
    for task, interval in zip(manifest.tasks, intervals, strict=True):
        observations = task.observations
        published = task.published
        tasks.append(
            TaskAudit(
                id=task.id,
                title=task.title,
                metric=task.metric,
                direction=task.direction,
                kind=task.kind,
                seeds=task.seeds,
                published=finite(published),
                observations=[finite(x) for x in observations],
                stable=is_stable(observations, published),
                interval=_interval_result(interval),
                published_compatible=(
                    interval.contains(published)
                    if published is not None and interval.defined
                    else None
                ),
            )
        )
    return tasks


def judge_columns(
    facts: ArtifactFacts,
    *,
    names: Sequence[str],
    evidence: Sequence[list[RunEvidence]],
    intervals: Sequence[Interval],
    tasks: Sequence[TaskAudit],
    checks: _Checks,
    curation: bool,
) -> list[list[Judgement]]:
    """Judge every (task, attempt): one column per attempt (after the published values' own
    column in curation mode), tainted by the attempt's evidence errors."""
    manifest = facts.manifest
    columns: list[list[Judgement]] = []
    if curation:
        columns.append(
            [
                judge_published(task, intervals[i], tasks[i].published, f"/tasks/{i}")
                for i, task in enumerate(manifest.tasks)
            ]
        )
    by_task = TaskIndex.of(manifest)  # once per audit: tasks x launchers is never rescanned
    for name, runs in zip(names, evidence, strict=True):
        by_launcher = RunIndex.of(runs)
        columns.append(
            [
                checks.taint(
                    judge_task(
                        facts,
                        task,
                        i,
                        interval=intervals[i],
                        runs=runs,
                        label=name,
                        tasks=by_task,
                        by_launcher=by_launcher,
                    ),
                    len(columns) - (1 if curation else 0),
                    by_task.launchers(task.id),
                )
                for i, task in enumerate(manifest.tasks)
            ]
        )
    return columns


def settle_columns(
    columns: list[list[Judgement]], tasks: Sequence[TaskAudit], options: AuditOptions
) -> list[dict[str, int]]:
    """Apply Holm's correction to each column (one attempt's tasks), add each judgement to its
    task's result and count the verdicts per column. The columns are emptied as they go."""
    alpha = 1.0 - options.level
    verdict_counts: list[dict[str, int]] = []
    for column in columns:
        adjusted = holm_adjust([j.p for j in column]) if options.holm else [None] * len(column)
        counted: dict[str, int] = dict.fromkeys(VERDICTS, 0)
        # Each judgement is released as its result is made (last first: a pop is O(1)).
        for i in range(len(column) - 1, -1, -1):
            judgement, p_adj = column.pop(), adjusted[i]
            if (
                p_adj is not None
                and judgement.verdict == "incompatible"
                and p_adj >= alpha
                and any(r.code in {"A029", "A031"} for r in judgement.reasons)
            ):
                judgement.verdict = "compatible"
                judgement.reasons.append(
                    finding(
                        "A030",
                        f"Holm-adjusted p = {p_adj:.4g} >= {alpha:.4g}",
                        path=f"/tasks/{i}",
                    )
                )
            counted[judgement.verdict] += 1
            tasks[i].attempts.append(judgement.done(p_adj))
        verdict_counts.append(counted)
    return verdict_counts
