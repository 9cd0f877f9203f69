"""The auditor's own Student-t (``audit._studentt``) against SciPy, the independent oracle.

Laws: quantiles within a relative 1e-12 of ``scipy.special.stdtrit`` and two-sided tails
within 1e-10 of ``2 * stdtr`` (down to 1e-300) for 1 to 10,000 degrees of freedom; the tail
falls as ``t`` grows; a quantile's tail is its probability; defined answers at the edges
(NaN, infinities, ``t`` near the float maximum, probabilities outside (0, 1)).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special

from reprobridge_sdk.audit._studentt import t_quantile, t_two_sided

DFS = [*range(1, 62), 75, 100, 200, 1000, 10_000]
PROBABILITIES = [0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.99995]
POINTS = [0.05, 0.3, 1.0, 1.5, 2.0, 2.7, 4.0, 7.0, 15.0, 60.0, 1e3, 1e6, 1e12]


@pytest.mark.parametrize("df", DFS)
def test_quantiles_are_scipys(df: int) -> None:
    for q in PROBABILITIES:
        expected = float(special.stdtrit(df, q))
        assert t_quantile(q, df) == pytest.approx(expected, rel=1e-12), q
        assert t_quantile(1.0 - q, df) == pytest.approx(-expected, rel=1e-12), q


@pytest.mark.parametrize("df", DFS)
def test_two_sided_tails_are_scipys(df: int) -> None:
    for t in POINTS:
        expected = 2.0 * float(special.stdtr(df, -t))
        if expected < 1e-300:
            assert t_two_sided(t, df) < 1e-290
            continue
        assert t_two_sided(t, df) == pytest.approx(expected, rel=1e-10), t
        assert t_two_sided(-t, df) == t_two_sided(t, df)


@given(
    df=st.integers(1, 5000),
    a=st.floats(0.0, 50.0, allow_nan=False),
    b=st.floats(0.0, 50.0, allow_nan=False),
)
def test_the_tail_falls_as_t_grows(df: int, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert 0.0 <= t_two_sided(high, df) <= t_two_sided(low, df) <= 1.0


@given(df=st.integers(1, 2000), q=st.floats(0.5001, 0.99999))
def test_a_quantiles_tail_is_its_probability(df: int, q: float) -> None:
    t = t_quantile(q, df)
    assert t > 0.0
    assert t_two_sided(t, df) == pytest.approx(2.0 * (1.0 - q), rel=1e-9)


def test_edges_have_defined_answers() -> None:
    assert math.isnan(t_two_sided(math.nan, 3))
    assert t_two_sided(0.0, 3) == 1.0
    assert t_two_sided(math.inf, 3) == 0.0
    assert t_two_sided(-math.inf, 7) == 0.0
    # one degree of freedom: the tail of a huge t is 2 / (pi t), not 0 (no overflow of t**2)
    assert t_two_sided(1e300, 1) == pytest.approx(2.0 / (math.pi * 1e300), rel=1e-12)
    assert 0.0 <= t_two_sided(1e200, 2) < 1e-300  # 1e-400: below the smallest double
    assert t_quantile(0.5, 4) == 0.0
    for outside in (0.0, 1.0, -0.1, 1.5, math.nan):
        assert math.isnan(t_quantile(outside, 4))
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736174698, rel=1e-14)
    assert t_quantile(0.975, 2) == pytest.approx(4.302652729749464, rel=1e-14)
