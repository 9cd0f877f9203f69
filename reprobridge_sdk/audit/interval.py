"""The compatibility interval, the auditor's core: a Student-t prediction interval of the
reference observations with a relative floor, the scores of a value against it, stability,
and Holm's correction. See spec §11 and §11.1.

Every outcome is defined, never a crash: no, one, equal or non-finite observations, and
observations so large that their sums overflow (computed again on values scaled by a power
of two; an interval beyond the float range is ``overflow``, A063). The t quantiles and tails
come from :mod:`._studentt` (no SciPy import).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reprobridge_sdk.errors import UsageError

from ._studentt import t_quantile, t_two_sided

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_LEVEL",
    "STABILITY_THRESHOLD",
    "Interval",
    "Score",
    "check_options",
    "compatibility_interval",
    "finite",
    "holm",
    "is_stable",
    "published_midpoint",
    "score",
    "t_quantile",
]

DEFAULT_LEVEL = 0.95
DEFAULT_FLOOR = 0.01
#: Relative spread (of the published value) up to which a task counts as stable.
STABILITY_THRESHOLD = 0.10


@dataclass(frozen=True, slots=True)
class Interval:
    """A compatibility interval, or the reason there is none.

    ``defined`` is false for ``n = 0``, non-finite observations and an interval beyond the
    float range (``overflow``); then ``low``, ``high``, ``mean`` and ``half_width`` are NaN.
    ``sd`` is NaN when ``n < 2``. ``t`` is the quantile used (NaN when ``n < 2``).
    """

    n: int
    mean: float
    sd: float
    half_width: float
    low: float
    high: float
    level: float
    floor: float
    t: float
    floor_bound: bool
    floor_only: bool
    non_finite: bool
    overflow: bool = False

    @property
    def defined(self) -> bool:
        return self.n >= 1 and not self.non_finite and not self.overflow

    @property
    def scale(self) -> float:
        """The prediction scale ``h / t`` (NaN when undefined or ``n < 2``)."""
        if not self.defined or self.n < 2:
            return math.nan
        return self.half_width / self.t

    def contains(self, value: float) -> bool:
        """Whether ``value`` is compatible (inside, bounds included)."""
        if not self.defined or not math.isfinite(value):
            return False
        return self.low <= value <= self.high


@dataclass(frozen=True, slots=True)
class Score:
    """How far a value lies from the reference mean, in prediction-scale units."""

    z: float
    p: float


def finite(value: float | None) -> float | None:
    """``value``, or ``None`` when it is missing or not finite (a result holds no NaN)."""
    return value if value is not None and math.isfinite(value) else None


def check_options(level: float, floor: float) -> None:
    """:class:`UsageError` unless ``0 < level < 1`` and ``floor`` is finite and ``>= 0``."""
    if not (isinstance(level, (int, float)) and 0.0 < level < 1.0):
        msg = f"level must be strictly between 0 and 1, got {level!r}"
        raise UsageError(msg)
    if not (isinstance(floor, (int, float)) and math.isfinite(floor) and floor >= 0.0):
        msg = f"floor must be a finite number >= 0, got {floor!r}"
        raise UsageError(msg)


def _t_sf(value: float, df: int) -> float:
    """``P(T > value)`` for ``value >= 0`` (:mod:`._studentt`)."""
    return t_two_sided(value, df) / 2.0


def compatibility_interval(
    observations: Iterable[float],
    *,
    level: float = DEFAULT_LEVEL,
    floor: float = DEFAULT_FLOOR,
) -> Interval:
    """The compatibility interval of reference ``observations`` (see the module docstring)."""
    check_options(level, floor)
    xs = [float(x) for x in observations]
    n = len(xs)
    nan = math.nan
    if n == 0 or not all(math.isfinite(x) for x in xs):
        return Interval(n, nan, nan, nan, nan, nan, level, floor, nan, False, False, n > 0)
    if n == 1:
        mean = xs[0]
        floor_width = floor * abs(mean)
        low, high = mean - floor_width, mean + floor_width
        if not (math.isfinite(low) and math.isfinite(high)):
            return _beyond_range(1, level, floor)
        return Interval(1, mean, nan, floor_width, low, high, level, floor, nan, True, True, False)
    mean, sd = _moments(xs, n)
    floor_width = floor * abs(mean)
    t = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1)
    width = t * sd * math.sqrt(1.0 + 1.0 / n)
    bound = floor_width > width
    half = floor_width if bound else width
    low, high = mean - half, mean + half
    if not (math.isfinite(sd) and math.isfinite(low) and math.isfinite(high)):
        return _beyond_range(n, level, floor)
    return Interval(n, mean, sd, half, low, high, level, floor, t, bound, False, False)


def _beyond_range(n: int, level: float, floor: float) -> Interval:
    """No interval: the one of these observations is beyond the float range (A063)."""
    nan = math.nan
    return Interval(n, nan, nan, nan, nan, nan, level, floor, nan, False, False, False, True)


def _moments(xs: list[float], n: int) -> tuple[float, float]:
    """The mean and sample standard deviation of ``n >= 2`` finite numbers.

    The direct expressions first (the reports' digits); when one of their intermediates
    overflows (``fsum`` raises; a deviation or its square is infinite), the same expressions
    on the numbers scaled by ``2**-e``, ``e`` the binary exponent of the largest magnitude
    (exact: a power of two), scaled back. Either result is infinite only when the true value
    is beyond the float range.
    """
    try:
        mean = math.fsum(xs) / n
        sd = math.sqrt(math.fsum([(x - mean) ** 2 for x in xs]) / (n - 1))
    except OverflowError:
        sd = math.inf  # an intermediate overflowed: computed again, scaled, below
    if math.isfinite(sd):
        return mean, sd
    exponent = math.frexp(max(abs(x) for x in xs))[1]
    ys = [math.ldexp(x, -exponent) for x in xs]  # every |y| < 1: no overflow below
    scaled_mean = math.fsum(ys) / n
    scaled_sd = math.sqrt(math.fsum([(y - scaled_mean) ** 2 for y in ys]) / (n - 1))
    return _ldexp(scaled_mean, exponent), _ldexp(scaled_sd, exponent)


def _ldexp(value: float, exponent: int) -> float:
    """``value * 2**exponent``, infinite (not an exception) beyond the float range."""
    try:
        return math.ldexp(value, exponent)
    except OverflowError:
        return math.copysign(math.inf, value)


def score(interval: Interval, value: float) -> Score | None:
    """The z-score and two-sided p-value of ``value`` (``None`` when ``n < 2`` or undefined)."""
    if not interval.defined or interval.n < 2:
        return None
    if not math.isfinite(value):
        return Score(-math.inf if value == -math.inf else math.inf, 0.0)
    scale = interval.scale
    delta = value - interval.mean
    if scale == 0.0:
        return Score(0.0, 1.0) if delta == 0.0 else Score(math.copysign(math.inf, delta), 0.0)
    z = delta / scale
    p = min(1.0, 2.0 * _t_sf(abs(z), interval.n - 1))
    return Score(z, p)


def published_midpoint(value: float | None, value_range: Sequence[float] | None) -> float | None:
    """The published value: ``value``, else the midpoint of ``range``; ``None`` if neither."""
    if value is not None:
        return float(value)
    if value_range is not None and len(value_range) == 2:
        return (float(value_range[0]) + float(value_range[1])) / 2.0
    return None


def is_stable(observations: Sequence[float], published: float | None) -> bool | None:
    """``max - min <= 0.10 * |published|``; ``None`` when it cannot be decided."""
    if not observations or published is None or not math.isfinite(published):
        return None
    if not all(math.isfinite(x) for x in observations):
        return None
    return max(observations) - min(observations) <= STABILITY_THRESHOLD * abs(published)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (``None`` entries are left out of the family).

    Sort the ``m`` p-values ascending; the i-th (0-based) is multiplied by ``m - i``, the
    running maximum is taken so adjusted values never decrease, and each is capped at 1.
    """
    indexed = sorted(
        ((p, i) for i, p in enumerate(p_values) if p is not None), key=lambda item: item[0]
    )
    m = len(indexed)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
