"""Implausible references: the interval is only as good as the observations it is built from.

Per task: an observation or published value outside the metric's domain (known from its
unit or an error metric's name) is A080; an interval reaching past the domain is A081; one
wider than :data:`DEFAULT_WIDE_SHARE` of the published value is A082; an observation that
its cited run does not give is A083. See spec §11.2 ("Plausible references").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from reprobridge_sdk.extract.extraction import ExtractionError, aggregate
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.validation.replay import same_value

from .facts import TaskFacts
from .interval import Interval

__all__ = [
    "DEFAULT_WIDE_SHARE",
    "domain",
    "plausibility",
    "provenance_mismatches",
]

#: The share of the published value an interval's width may reach before A082.
DEFAULT_WIDE_SHARE = 0.25

_PERCENT = frozenset({"%", "percent", "percentage", "pct"})
_FRACTION = frozenset({"fraction", "proportion"})
_ERROR = re.compile(r"\b(error|errors|mse|rmse|mae)\b")
_SIGNED = re.compile(r"\b(signed|log)\b")


def domain(unit: str | None, metric: str) -> tuple[float, float] | None:
    """The metric's domain [low, high] from its unit or its name; None when unknown."""
    stated = (unit or "").strip().lower()
    if stated in _PERCENT:
        return 0.0, 100.0
    if stated in _FRACTION:
        return 0.0, 1.0
    if stated:
        return None
    text = metric.lower()
    if _ERROR.search(text) and not _SIGNED.search(text):
        return 0.0, math.inf
    return None


def _span(bounds: tuple[float, float]) -> str:
    low, high = bounds
    return f"[{low:g}, {high:g}]" if math.isfinite(high) else f"[{low:g}, ∞)"


def _outside(value: float, bounds: tuple[float, float]) -> bool:
    return math.isfinite(value) and not bounds[0] <= value <= bounds[1]


def plausibility(task: TaskFacts, index: int, interval: Interval, *, floor: float) -> list[Finding]:
    """A080, A081 and A082 of one task (``index``: its position in the manifest)."""
    where = f"/tasks/{index}"
    bounds = domain(task.unit, task.metric)
    found: list[Finding] = []
    if bounds is not None:
        outside = [
            (f"reference observation {value:g}", f"reference/observations/{number}/value")
            for number, value in enumerate(task.observations)
            if _outside(value, bounds)
        ]
        if task.published is not None and _outside(task.published, bounds):
            outside.append((f"the published value {task.published:g}", "published"))
        found += [
            finding(
                "A080",
                f"task {task.id}: {what} is outside the domain {_span(bounds)} of its metric",
                path=f"{where}/{pointer}",
                hint="check the unit: e.g. a fraction written as a percentage",
            )
            for what, pointer in outside
        ]
        if interval.defined and not found:
            found.extend(_beyond(task, where, interval, bounds, floor))
    if interval.defined and task.published is not None and math.isfinite(task.published):
        width = interval.high - interval.low
        if width > DEFAULT_WIDE_SHARE * abs(task.published):
            found.append(
                finding(
                    "A082",
                    f"task {task.id}: the interval [{interval.low:.6g}, {interval.high:.6g}] "
                    f"is {width:.6g} wide, more than {DEFAULT_WIDE_SHARE:.0%} of the published "
                    f"value {task.published:.6g}",
                    path=f"{where}/reference",
                    hint="references this far apart call almost any value compatible; check "
                    "them against their runs",
                )
            )
    return found


def _beyond(
    task: TaskFacts,
    where: str,
    interval: Interval,
    bounds: tuple[float, float],
    floor: float,
) -> list[Finding]:
    slack = floor * abs(interval.mean) if math.isfinite(interval.mean) else 0.0
    low, high = bounds
    if interval.low >= low - slack and interval.high <= high + slack:
        return []
    return [
        finding(
            "A081",
            f"task {task.id}: the interval [{interval.low:.6g}, {interval.high:.6g}] reaches "
            f"past the domain {_span(bounds)} of its metric",
            path=f"{where}/reference",
            hint="part of the interval is impossible: check the references' spread",
        )
    ]


def provenance_mismatches(
    tasks: Sequence[TaskFacts],
    recorded: Mapping[str, Mapping[str, float | None]],
    aggregates: Mapping[tuple[str, str], str] | None = None,
    launchers: Mapping[str, str] | None = None,
) -> list[Finding]:
    """A083 for each observation whose cited runs gave another value of the task.

    ``recorded``: run id -> task -> recorded value, of the runs the audit reads. One run
    (``run``) is compared as it is; a repetition (``runs``), when every run of it is read and
    gave a value, as its values aggregated with the measurement's aggregate (``aggregates``:
    (launcher, task) -> how; ``launchers``: run id -> launcher)."""
    found: list[Finding] = []
    for index, task in enumerate(tasks):
        for number, (value, cited) in enumerate(_cited(task)):
            run_value = _cited_value(task.id, cited, recorded, aggregates or {}, launchers or {})
            if run_value is None or same_value(value, run_value):
                continue
            found.append(
                finding(
                    "A083",
                    f"task {task.id}: reference observation {value!r} cites run "
                    f"{', '.join(cited)}, whose record gives {run_value!r}",
                    path=f"/tasks/{index}/reference/observations/{number}/value",
                    hint="a reference is the value its run recorded: add it with "
                    "`reprobridge references add`",
                )
            )
    return found


def _cited(task: TaskFacts) -> Iterable[tuple[float, tuple[str, ...]]]:
    count = len(task.observations)
    runs = task.runs if len(task.runs) == count else (None,) * count
    repetitions = task.repetitions if len(task.repetitions) == count else ((),) * count
    for value, run, repetition in zip(task.observations, runs, repetitions, strict=True):
        yield value, (run,) if run is not None else repetition


def _cited_value(
    task: str,
    cited: tuple[str, ...],
    recorded: Mapping[str, Mapping[str, float | None]],
    aggregates: Mapping[tuple[str, str], str],
    launchers: Mapping[str, str],
) -> float | None:
    """The value the cited runs recorded (aggregated for a repetition); None when unknown."""
    values = [recorded.get(run, {}).get(task) for run in cited]
    numbers = [v for v in values if v is not None]
    if not cited or len(numbers) != len(cited):
        return None
    if len(cited) == 1:
        return numbers[0]
    how = {aggregates.get((launchers.get(run, ""), task)) for run in cited}
    if len(how) != 1 or None in how:
        return None
    try:
        return aggregate(numbers, how.pop() or "mean")
    except ExtractionError:
        return None
