"""Numbers as extraction reads them: strict parsing of a matched text, and the number a
document's value stands for.

``parse_number`` accepts an optional sign, digits with an optional fraction and exponent, or
``nan``/``inf``/``infinity`` (any case), after stripping whitespace: ``"95.3%"``, ``"1_000"``
and ``"0x10"`` are *not* numbers (spec/manifest.md §6.9). ``as_number`` takes a parsed value;
a ``bool`` or ``None`` is ``not-number``.
"""

from __future__ import annotations

import json
import math
import re

from ._errors import ExtractionError

__all__ = ["as_number", "parse_number"]

_NUMBER = re.compile(r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)", re.I)


def parse_number(text: str) -> float:
    """Parse ``text`` strictly as a number; :class:`ExtractionError` (not-number) otherwise."""
    stripped = text.strip()
    if not _NUMBER.fullmatch(stripped):
        msg = f"{text!r} is not a number"
        raise ExtractionError("not-number", msg)
    return float(stripped)


def as_number(value: object, where: str) -> tuple[float, str]:
    if isinstance(value, bool) or value is None:
        msg = f"{where}: {value!r} is not a number"
        raise ExtractionError("not-number", msg)
    if isinstance(value, int):  # beyond the float range: infinite, as the literal 1e400 reads
        try:
            return float(value), str(value)
        except OverflowError:
            return (math.inf if value > 0 else -math.inf), str(value)
    if isinstance(value, float):  # the text json.dumps gives, without its overhead
        text = repr(value) if math.isfinite(value) else json.dumps(value)
        return float(value), text
    if isinstance(value, str):
        try:
            return parse_number(value), value
        except ExtractionError:
            msg = f"{where}: {value!r} is not a number"
            raise ExtractionError("not-number", msg) from None
    msg = f"{where}: a {type(value).__name__} is not a number"
    raise ExtractionError("not-number", msg)
