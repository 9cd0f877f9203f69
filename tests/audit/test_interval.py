"""The compatibility interval (spec: audit): vectors computed independently, and its laws."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit import compatibility_interval, holm, score
from reprobridge_sdk.audit.interval import is_stable, published_midpoint
from reprobridge_sdk.errors import UsageError

VECTORS = json.loads((Path(__file__).parent / "vectors" / "intervals.json").read_text())["cases"]


def _approx(actual: float, expected: float | None) -> None:
    if expected is None:
        assert math.isnan(actual)
    else:
        assert actual == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_interval_vectors(case: dict[str, Any]) -> None:
    observations = [float(x) for x in case["observations"]]
    interval = compatibility_interval(observations, level=case["level"], floor=case["floor"])
    expected = case["expected"]
    assert interval.n == expected["n"]
    assert interval.defined is expected["defined"]
    assert interval.floor_bound is expected["floor_bound"]
    assert interval.floor_only is expected["floor_only"]
    for name in ("mean", "sd", "t", "half_width", "low", "high"):
        _approx(getattr(interval, name), expected[name])
    for item in case["scores"]:
        assert interval.contains(item["value"]) is item["compatible"]
        result = score(interval, item["value"])
        if item["p"] is None:
            assert result is None
            continue
        assert result is not None
        assert result.p == pytest.approx(item["p"], rel=1e-9, abs=1e-12)
        if item["z"] is None:
            assert math.isinf(result.z)
        else:
            assert result.z == pytest.approx(item["z"], rel=1e-9, abs=1e-12)
        # One definition: the p-value rejects at 1 - level exactly outside the interval.
        assert (result.p >= 1 - case["level"] - 1e-12) is item["compatible"]


def test_two_sided_beating_the_paper_is_incompatible() -> None:
    interval = compatibility_interval([70.0, 71.0, 72.0, 71.0, 70.5])
    assert not interval.contains(interval.high + 1.0)
    assert not interval.contains(interval.low - 1.0)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_value_is_never_compatible(value: float) -> None:
    interval = compatibility_interval([1.0, 1.1, 0.9])
    assert not interval.contains(value)
    result = score(interval, value)
    assert result is not None
    assert result.p == 0.0
    assert math.isinf(result.z)
    assert (result.z < 0) is (value == -math.inf)


@pytest.mark.parametrize(
    ("level", "floor"), [(0.0, 0.01), (1.0, 0.01), (0.95, -0.1), (0.95, math.nan)]
)
def test_bad_options_are_usage_errors(level: float, floor: float) -> None:
    with pytest.raises(UsageError):
        compatibility_interval([1.0, 2.0], level=level, floor=floor)


def test_published_range_counts_as_midpoint() -> None:
    assert published_midpoint(None, [88.9, 89.3]) == pytest.approx(89.1)
    assert published_midpoint(90.0, None) == 90.0
    assert published_midpoint(None, None) is None


@pytest.mark.parametrize(
    ("observations", "published", "stable"),
    [
        ([70.0, 76.9], 70.0, True),  # spread 6.9 <= 7.0
        ([70.0, 77.1], 70.0, False),  # spread 7.1 > 7.0
        ([1.0, 1.0], -10.0, True),  # |published|
        ([], 70.0, None),
        ([1.0, 2.0], None, None),
        ([1.0, math.nan], 5.0, None),
    ],
)
def test_stability(observations: list[float], published: float | None, stable: bool | None) -> None:
    assert is_stable(observations, published) is stable


def test_holm_vector() -> None:
    # Worked example: m = 4; sorted 0.005, 0.01, 0.03, 0.04 -> 0.02, 0.03, 0.06, 0.06.
    adjusted = holm([0.01, 0.04, 0.03, 0.005, None])
    assert adjusted[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjusted[4] is None
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.3, 0.02]) == pytest.approx([0.3, 0.04])


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
levels = st.floats(min_value=0.5, max_value=0.999)
floors = st.floats(min_value=0.0, max_value=0.2)


@settings(max_examples=150, deadline=None)
@given(st.lists(finite, min_size=1, max_size=12), levels, floors)
def test_property_contains_the_mean_and_respects_the_floor(
    observations: list[float], level: float, floor: float
) -> None:
    interval = compatibility_interval(observations, level=level, floor=floor)
    assert interval.defined
    assert interval.contains(interval.mean)
    assert interval.half_width >= floor * abs(interval.mean) * (1 - 1e-12)
    assert interval.low <= interval.mean <= interval.high


@settings(max_examples=150, deadline=None)
@given(st.lists(finite, min_size=2, max_size=12), levels, levels, floors)
def test_property_widens_with_the_level(
    observations: list[float], a: float, b: float, floor: float
) -> None:
    low, high = sorted((a, b))
    narrow = compatibility_interval(observations, level=low, floor=floor)
    wide = compatibility_interval(observations, level=high, floor=floor)
    assert wide.half_width >= narrow.half_width * (1 - 1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(finite, st.just(math.nan), st.just(math.inf)), max_size=8), finite)
def test_property_never_raises_and_scores_agree(observations: list[float], value: float) -> None:
    interval = compatibility_interval(observations)
    result = score(interval, value)
    if result is not None and interval.contains(value):
        assert abs(result.z) <= interval.t * (1 + 1e-9)


@pytest.mark.parametrize("df", [1, 2, 4, 9, 29, 200])
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99, 0.999])
def test_quantile_and_tail_are_scipy_stats(df: int, level: float) -> None:
    from scipy import stats

    from reprobridge_sdk.audit.interval import t_quantile

    q = 1 - (1 - level) / 2
    assert t_quantile(q, df) == pytest.approx(float(stats.t.ppf(q, df)), rel=1e-12)
    interval = compatibility_interval([0.0] * df + [1.0], level=level, floor=0.0)
    result = score(interval, interval.mean + 1.7 * interval.scale)
    assert result is not None
    assert result.p == pytest.approx(float(2 * stats.t.sf(1.7, df)), rel=1e-9)


SPEC_EXAMPLES = Path(__file__).resolve().parents[2] / "spec" / "examples" / "interval.json"


def _spec_cases() -> list[dict[str, Any]]:
    document = json.loads(SPEC_EXAMPLES.read_text())
    cases: list[dict[str, Any]] = document["cases"]
    for case in cases:
        case.update(level=document["level"], floor=document["floor"], tol=document["tolerance"])
    return cases


@pytest.mark.parametrize("case", _spec_cases(), ids=lambda c: ",".join(c["observations"]) or "none")
def test_spec_worked_examples(case: dict[str, Any]) -> None:
    interval = compatibility_interval(
        [float(x) for x in case["observations"]], level=case["level"], floor=case["floor"]
    )
    for name in ("mean", "sd", "t", "half_width", "low", "high"):
        if name not in case:
            continue
        if case[name] is None:
            assert math.isnan(getattr(interval, name))
        else:
            assert getattr(interval, name) == pytest.approx(case[name], abs=case["tol"])
    if "floor_only" in case:
        assert interval.floor_only is case["floor_only"]
    for value, compatible in case["compatible"].items():
        assert interval.contains(float(value)) is compatible, value


@pytest.mark.parametrize(
    ("observations", "mean", "sd"),
    [
        # the squares of the deviations overflow; the interval does not
        ([0.0, 1.8961503816218355e154], 9.480751908109177e153, 1.3407807929942597e154),
        ([1e300, -1e300], 0.0, 1.4142135623730952e300),
        ([1.7e308, 1.7e308], 1.7e308, 0.0),  # the sum overflows: the mean does not
        ([1e307, -1e307, 1e307, -1e307], 0.0, 1.1547005383792515e307),
    ],
)
def test_huge_observations_give_their_interval(
    observations: list[float], mean: float, sd: float
) -> None:
    """Valid JSON numbers whose sums or squares overflow binary64: the scaled computation
    gives the interval they define (hostile input, never an ``OverflowError``)."""
    interval = compatibility_interval(observations)
    assert (interval.defined, interval.overflow, interval.non_finite) == (True, False, False)
    assert interval.mean == pytest.approx(mean, rel=1e-15)
    assert interval.sd == pytest.approx(sd, rel=1e-15)
    assert interval.half_width == pytest.approx(
        max(interval.t * sd * math.sqrt(1 + 1 / len(observations)), 0.01 * abs(mean)), rel=1e-14
    )
    assert interval.low <= interval.mean <= interval.high
    assert all(math.isfinite(x) for x in (interval.low, interval.high))


@pytest.mark.parametrize(
    "observations",
    [
        [1.79e308, 1.79e308],  # the floor pushes the high bound past the largest float
        [1.79e308],  # the same with one observation
        [1e308, -1e308, 0.0],  # the half-width itself is beyond the float range
        [1.7e308] * 100 + [-1.7e308] * 2,
    ],
)
def test_an_interval_beyond_the_float_range_is_none(observations: list[float]) -> None:
    """No interval when it cannot be held in binary64: ``overflow`` (A063), not an exception
    and not an infinite bound that would contain every value."""
    interval = compatibility_interval(observations)
    assert (interval.defined, interval.overflow, interval.non_finite) == (False, True, False)
    assert interval.n == len(observations)
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert score(interval, 0.0) is None
    assert not interval.contains(1.0)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=12),
    st.floats(allow_nan=False, allow_infinity=False),
)
def test_property_any_finite_observations_never_raise(
    observations: list[float], value: float
) -> None:
    """Any finite observations: a defined interval with finite bounds, or ``overflow``."""
    interval = compatibility_interval(observations)
    assert interval.defined != interval.overflow
    if interval.defined:
        assert math.isfinite(interval.low) and math.isfinite(interval.high)
        assert interval.low <= interval.mean <= interval.high
        score(interval, value)
