"""The batch interval and score functions equal the one-task ones, bit for bit.

The auditor computes every task's interval with :func:`compatibility_intervals` and the
reports print every digit, so "close" is not enough: each field must be the same float (NaN
compared as NaN, the sign of zero and of infinities kept).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit import Interval, Score, compatibility_interval, score
from reprobridge_sdk.audit.interval import compatibility_intervals, scores
from reprobridge_sdk.errors import UsageError

VECTORS = json.loads((Path(__file__).parent / "vectors" / "intervals.json").read_text())["cases"]


def _bits(value: object) -> object:
    """A float as its bytes (NaN equal to NaN, -0.0 unequal to 0.0); anything else as is."""
    return struct.pack("<d", value) if isinstance(value, float) else value


def _same_interval(a: Interval, b: Interval) -> bool:
    return [_bits(x) for x in astuple(a)] == [_bits(x) for x in astuple(b)]


def _same_score(a: Score | None, b: Score | None) -> bool:
    if a is None or b is None:
        return a is b
    return (_bits(a.z), _bits(a.p)) == (_bits(b.z), _bits(b.p))


def test_vectors_in_one_batch() -> None:
    """Every vector of the interval suite at its own level and floor, and their scores."""
    for case in VECTORS:
        rows = [[float(x) for x in case["observations"]]]
        (batch,) = compatibility_intervals(rows, level=case["level"], floor=case["floor"])
        one = compatibility_interval(rows[0], level=case["level"], floor=case["floor"])
        assert _same_interval(batch, one), case["name"]
        values = [float(item["value"]) for item in case["scores"]]
        got = scores([batch] * len(values), values)
        assert all(_same_score(g, score(one, v)) for g, v in zip(got, values, strict=True)), case[
            "name"
        ]


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
any_float = st.floats(allow_nan=True, allow_infinity=True)
rows = st.lists(st.lists(st.one_of(finite, finite, any_float), max_size=12), max_size=30)


def _one_by_one(rows: list[list[float]]) -> list[Interval]:
    return [compatibility_interval(r, level=0.9, floor=0.02) for r in rows]


@settings(max_examples=200, deadline=None)
@given(rows=rows, values=st.lists(st.one_of(finite, any_float), min_size=30, max_size=30))
@example(rows=[[], [1.0], [2.0, 2.0], [0.0, 0.0, 0.0], [1.0, math.nan]], values=[0.0] * 30)
@example(rows=[[0.0, 0.0], [5.0, 5.0, 5.0]], values=[0.0, -1.0] + [math.inf] * 28)
# Sums or squares that overflow: both take the scaled branch (or say ``overflow``, A063).
@example(rows=[[0.0, 1.8961503816218355e154]], values=[0.0] * 30)
@example(rows=[[1e308, -1e308, 0.0], [1e300, -1e300]], values=[0.0] * 30)
# ``x ** 2`` (C pow) and ``x * x`` differ in the last bit for one of these deviations.
@example(rows=[[34.1994, 33.3393, 34.3742, 34.1116, 34.6573]], values=[34.0] * 30)
@example(rows=[[1e307, -1e307, 1e307, -1e307]], values=[1e308] * 30)
@example(
    rows=[[1.7e308, 1.7e308], [1.79e308] * 2, [1.7e308] * 9 + [-1.7e308] * 2], values=[0.0] * 30
)
def test_batch_equals_one_by_one(rows: list[list[float]], values: list[float]) -> None:
    ones = _one_by_one(rows)
    batch = compatibility_intervals(rows, level=0.9, floor=0.02)
    assert len(batch) == len(ones)
    assert all(_same_interval(a, b) for a, b in zip(batch, ones, strict=True))
    mine = values[: len(rows)]
    got = scores(batch, mine)
    assert all(_same_score(g, score(i, v)) for g, i, v in zip(got, ones, mine, strict=True))


@pytest.mark.parametrize(("level", "floor"), [(1.0, 0.01), (0.95, -1.0), (0.95, math.inf)])
def test_bad_options_are_usage_errors(level: float, floor: float) -> None:
    with pytest.raises(UsageError):
        compatibility_intervals([[1.0, 2.0]], level=level, floor=floor)


def test_scores_needs_one_value_per_interval() -> None:
    intervals = compatibility_intervals([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError):  # the type is the contract, not the interpreter's text
        scores(intervals, [1.0])


def test_settled_scores_are_the_one_at_a_time_scores() -> None:
    """The auditor queues each judgement's score and sets them in one batch per attempt:
    the z and p it sets are bit for bit those of placing each judgement alone."""
    from reprobridge_sdk.audit.verdict import Judgement, PendingScores, _place, settle_scores

    rows = [[0.5, 0.52, 0.49], [1.0, 1.0], [2.0, 2.5, 3.0, 2.2], [7.0], [0.1, 0.3]]
    values = [0.51, 1.0, 9.0, 7.0, -math.inf]
    intervals = compatibility_intervals(rows)
    pending: PendingScores = []
    queued = [Judgement(attempt="a") for _ in rows]
    alone = [Judgement(attempt="a") for _ in rows]
    for q, a, interval, value in zip(queued, alone, intervals, values, strict=True):
        _place(q, interval, value, "/tasks/0", pending)
        _place(a, interval, value, "/tasks/0")
    assert len(pending) == len(rows)
    settle_scores(pending)
    assert pending == []
    for q, a in zip(queued, alone, strict=True):
        assert (q.verdict, [r.code for r in q.reasons]) == (a.verdict, [r.code for r in a.reasons])
        assert (_bits(q.z), _bits(q.p)) == (_bits(a.z), _bits(a.p))
    assert queued[0].p is not None and queued[1].p is not None
