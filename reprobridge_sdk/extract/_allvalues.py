"""The values of an ``occurrence: all`` extraction, summarised as they stream by (spec §6.9).

Nothing grows with the log: each matched text is parsed, transformed and folded into the
count, last, minimum, maximum, the first :data:`KEPT_VALUES` values and :data:`KEPT_RAW`
texts, and an exact running sum (Shewchuk's partials, fed with each chunk's sum written
exactly as a few floats by :func:`_exact_terms`), so the mean is ``statistics.fmean``'s
however the log is cut into chunks: every reading path gives the same bits. A sum of finite
values that overflows is kept scaled by ``2**-SHIFT``: the mean is infinite only beyond the
float range.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ._linescan import scan_chunks
from .pattern import Regex

if TYPE_CHECKING:
    from ._opened import Readable

__all__ = ["KEPT_RAW", "KEPT_VALUES", "AllValues", "summarise"]

#: Values an ``all`` extraction keeps in order (the first ones), and a record holds.
KEPT_VALUES = 1000
#: Matched texts an ``all`` extraction keeps (the first ones), and a record holds in ``raw``.
KEPT_RAW = 10
#: The binary exponent by which the sum is scaled down once it overflows: ``2**63``
#: values of the largest float still sum below the float range.
SHIFT = 64


def _add_exact(partials: list[float], value: float) -> None:
    """Add ``value`` to the exact sum held as non-overlapping ``partials`` (Shewchuk)."""
    kept = 0
    for partial in partials:
        big, small = (partial, value) if abs(value) < abs(partial) else (value, partial)
        high = big + small
        low = small - (high - big)
        if low:
            partials[kept] = low
            kept += 1
        value = high
    partials[kept:] = [value]


def _exact_terms(values: Sequence[float]) -> list[float]:
    """The exact sum of ``values`` as floats whose sum is exact: the rounded sum, then the
    rounded remainder, until nothing remains (``math.fsum`` is correctly rounded, so it gives
    0 only for an exact 0; most chunks need one or two terms). An infinite or NaN sum is the
    one term. Raises as ``math.fsum`` does."""
    terms: list[float] = []
    while part := math.fsum(itertools.chain(values, [-term for term in terms])):
        terms.append(part)
        if not math.isfinite(part):
            break
    return terms


class AllValues:
    """A running summary of every value an ``all`` extraction reads (see the module)."""

    __slots__ = (
        "count",
        "kept",
        "last",
        "maximum",
        "minimum",
        "partials",
        "raw",
        "shift",
        "special",
    )

    def __init__(self) -> None:
        self.count = 0
        self.partials: list[float] = []
        self.shift = 0  # SHIFT once the sum of finite values has overflowed (see the module)
        self.special: list[float] = []  # non-finite values: the sum is theirs
        self.minimum = math.inf
        self.maximum = -math.inf
        self.last = math.nan
        self.kept: list[float] = []
        self.raw: list[str] = []

    def add(
        self,
        raws: Sequence[str],
        parse: Callable[[str], float],
        transform: Callable[[float], float] | None,
    ) -> None:
        """Fold one chunk's matched texts in; ``parse`` raises for a text that is no number."""
        if not raws:
            return
        values = [parse(raw) for raw in raws]
        if transform is not None:
            values = [transform(value) for value in values]
        if len(self.raw) < KEPT_RAW:
            self.raw.extend(raws[: KEPT_RAW - len(self.raw)])
        if len(self.kept) < KEPT_VALUES:
            self.kept.extend(values[: KEPT_VALUES - len(self.kept)])
        self.count += len(values)
        self.last = values[-1]
        self._add_sum(values)
        numbers = [v for v in values if not math.isnan(v)]
        if numbers:
            self.minimum = min(self.minimum, *numbers)
            self.maximum = max(self.maximum, *numbers)

    def _scaled(self, values: Sequence[float]) -> list[float]:
        return [math.ldexp(v, -self.shift) for v in values] if self.shift else list(values)

    def _add_sum(self, values: Sequence[float]) -> None:
        """Fold one chunk's values into the exact (scaled, once it overflowed) sum."""
        try:
            terms = _exact_terms(self._scaled(values))
        except OverflowError:  # finite values whose sum overflows: scale the sum from now on
            self.shift = SHIFT
            self.partials = [math.ldexp(p, -SHIFT) for p in self.partials]
            terms = _exact_terms(self._scaled(values))
        except ValueError:  # inf - inf: no sum
            terms = [math.nan]
        if not all(map(math.isfinite, terms)):  # an infinite or NaN value: the sum is theirs
            self.special.append(terms[0])
            return
        trial = list(self.partials)
        for term in terms:
            _add_exact(trial, term)
        if all(map(math.isfinite, trial)):
            self.partials = trial
            return
        # the running sum overflows (shift 0 only: scaled, it cannot)
        self.shift = SHIFT
        self.partials = [math.ldexp(p, -SHIFT) for p in self.partials]
        for term in terms:
            _add_exact(self.partials, math.ldexp(term, -SHIFT))

    @property
    def mean(self) -> float:
        """The mean of every value (NaN when there is none, or one is NaN)."""
        if not self.count:
            return math.nan
        if self.special:
            total = math.fsum(self.partials) + sum(self.special)
            return total / self.count
        mean = math.fsum(self.partials) / self.count
        if not self.shift:
            return mean
        try:
            return math.ldexp(mean, self.shift)
        except OverflowError:
            return math.copysign(math.inf, mean)


def summarise(  # noqa: PLR0917 - the scan's arguments
    path: Readable,
    rx: Regex,
    group: str | int,
    chunk_size: int,
    parse: Callable[[str], float],
    transform: Callable[[float], float] | None,
) -> AllValues:
    """Every matching line's value of ``path``, summarised in one streaming pass."""
    summary = AllValues()
    for raws in scan_chunks(path, rx, group, chunk_size):
        summary.add(raws, parse, transform)
    return summary
