"""The statistics of the bench report against published values."""

from __future__ import annotations

import pytest

from reprobridge_sdk.bench.stats import EXACT_BELOW, mcnemar, wilson


def test_wilson_matches_the_textbook_values() -> None:
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662; Wilson 8/10 -> 0.4902 to 0.9433.
    low, high = wilson(81, 263)  # type: ignore[misc]
    assert low == pytest.approx(0.2553, abs=5e-5)
    assert high == pytest.approx(0.3662, abs=5e-5)
    low, high = wilson(8, 10)  # type: ignore[misc]
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)


def test_wilson_at_the_edges_stays_in_zero_one() -> None:
    assert wilson(0, 10) == (0.0, pytest.approx(0.2775, abs=5e-5))
    assert wilson(10, 10) == (pytest.approx(0.7225, abs=5e-5), 1.0)
    assert wilson(0, 0) is None
    with pytest.raises(ValueError, match="not in"):
        wilson(3, 2)


def test_wilson_narrows_with_a_lower_level() -> None:
    wide, narrow = wilson(5, 10, 0.99), wilson(5, 10, 0.90)
    assert wide is not None and narrow is not None
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]


def test_mcnemar_exact_for_few_discordant_pairs() -> None:
    # b = 10, c = 2: two-sided exact binomial p = 2 * P(X <= 2 | n = 12, 1/2) = 0.03857
    test = mcnemar(10, 2)
    assert test.method == "exact"
    assert test.p_value == pytest.approx(0.0385742, abs=1e-6)
    assert mcnemar(2, 10).p_value == test.p_value
    assert mcnemar(0, 0).p_value == 1.0
    assert mcnemar(1, 0).p_value == 1.0
    assert mcnemar(5, 0).p_value == pytest.approx(0.0625)  # 2 * 0.5^5


def test_mcnemar_chi_square_with_continuity_from_25_pairs() -> None:
    # b = 30, c = 10: (|30 - 10| - 1)^2 / 40 = 9.025, p = 0.002663 (1 d.f.)
    test = mcnemar(30, 10)
    assert EXACT_BELOW <= 30 + 10
    assert test.method == "chi-square"
    assert test.statistic == pytest.approx(9.025)
    assert test.p_value == pytest.approx(0.0026631, abs=1e-6)
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar(-1, 2)
