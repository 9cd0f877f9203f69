"""The statistics of the bench report (spec bench.md#bench-report; preview).

* :func:`wilson`: the Wilson score interval of ``k / n`` (Wilson 1927), inside [0, 1] and
  with its coverage for small ``n`` and rates near 0 or 1.
* :func:`mcnemar`: McNemar's test of paired successes over the discordant pairs ``b`` and
  ``c``: exact (two-sided binomial at one half) under 25, else chi-square with the
  continuity correction; no discordant pair gives 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["EXACT_BELOW", "McNemar", "mcnemar", "wilson"]

#: Discordant pairs below which McNemar's test is computed exactly.
EXACT_BELOW = 25


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes / n`` at ``level``; None when ``n`` is 0."""
    from scipy.stats import norm  # noqa: PLC0415 - scipy loads with the report only

    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} not in [0, {n}]")
    z = float(norm.ppf(1 - (1 - level) / 2))
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class McNemar:
    """McNemar's test of ``b`` against ``c`` discordant pairs."""

    b: int
    c: int
    p_value: float
    method: str  # "exact" or "chi-square"
    statistic: float | None = None


def mcnemar(b: int, c: int) -> McNemar:
    """McNemar's test of the discordant counts ``b`` and ``c`` (module docstring)."""
    from scipy.stats import binom, chi2  # noqa: PLC0415

    if b < 0 or c < 0:
        raise ValueError("counts must be non-negative")
    n = b + c
    if n == 0:
        return McNemar(b, c, 1.0, "exact")
    if n < EXACT_BELOW:
        p = min(1.0, 2.0 * float(binom.cdf(min(b, c), n, 0.5)))
        return McNemar(b, c, p, "exact")
    statistic = (abs(b - c) - 1) ** 2 / n
    return McNemar(b, c, float(chi2.sf(statistic, 1)), "chi-square", statistic)
