"""What every audit report shows the same way (spec audit.md#table-report).

* :func:`rounded`: the one rounding of a number to its interval's precision, used by the
  text, HTML, JUnit and CSV reports (the JSON report keeps every digit);
* :func:`floor_note`: the words for an interval that is the floor alone;
* :func:`reason_counts`: findings grouped by code, with their count, in first-seen order;
* :func:`claim_label`: the name of one (task, attempt) pair.

Precision rule: the last digit shown is the one of the half-width's second significant digit
(the decimal exponent ``floor(log10(h)) - 1``). So the half-width itself shows two
significant digits and a value, a bound or a published number the same decimals: with
``h = 0.98``, ``97.97446420000001`` is ``97.97``. A value shows at least one and at most 15
significant digits (binary64 holds 15 decimal digits exactly). Without a usable half-width
(no interval, ``h`` zero, negative, infinite or NaN) a number shows six significant digits,
trailing zeros dropped. Fixed notation for magnitudes from 1e-4 to below 1e16, scientific
notation otherwise; zero never shows a sign; a non-finite number is ``inf``, ``-inf`` or
``nan``; a missing one is the empty string.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from reprobridge_sdk.model.audit import AuditFinding, ReasonCount, TableRow

__all__ = [
    "FALLBACK_DIGITS",
    "MAX_DIGITS",
    "claim_label",
    "committee_text",
    "counted",
    "floor_note",
    "last_digit",
    "reason_counts",
    "rounded",
]

#: Significant digits of a number without a usable half-width.
FALLBACK_DIGITS = 6
#: The most significant digits a number shows (binary64 holds 15 decimal digits exactly).
MAX_DIGITS = 15


def last_digit(half_width: float | None) -> int | None:
    """The decimal exponent of the last digit shown, or ``None`` without a usable width."""
    if half_width is None or not math.isfinite(half_width) or half_width <= 0:
        return None
    return math.floor(math.log10(half_width)) - 1


def _unsigned_zero(text: str) -> str:
    if text.startswith("-") and float(text) == 0:
        return text[1:]
    return text


def rounded(value: float | None, half_width: float | None = None) -> str:
    """``value`` to the precision of an interval of half-width ``half_width`` (module doc)."""
    if value is None:
        return ""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    last = last_digit(half_width)
    if last is None:
        return _unsigned_zero(f"{value:.{FALLBACK_DIGITS}g}")
    if value == 0:
        return "0" if last >= 0 else f"{0:.{-last}f}"
    exponent = math.floor(math.log10(abs(value)))
    digits = min(max(exponent - last + 1, 1), MAX_DIGITS)
    if -4 <= exponent < 16:
        decimals = digits - 1 - exponent
        if decimals >= 0:
            return _unsigned_zero(f"{value:.{decimals}f}")
        return _unsigned_zero(f"{round(value, decimals):.0f}")
    return _unsigned_zero(f"{value:.{digits - 1}e}")


def floor_note(reason: str | None) -> str:
    """``floor alone (identical references)``: the words every report prints, or ``""``."""
    return f"floor alone ({reason.replace('-', ' ')})" if reason else ""


def reason_counts(items: Iterable[AuditFinding]) -> list[ReasonCount]:
    """Findings grouped by code in first-seen order: the count and the first message."""
    out: dict[str, ReasonCount] = {}
    for item in items:
        known = out.get(item.code)
        if known is None:
            out[item.code] = ReasonCount(
                code=item.code, severity=item.severity, count=1, message=item.message
            )
        else:
            known.count += 1
    return list(out.values())


def counted(reason: ReasonCount) -> str:
    """A code with its count, ``A038`` and the sign times then ``12`` (alone: ``A038``)."""
    return reason.code if reason.count == 1 else f"{reason.code} \u00d7{reason.count}"


def claim_label(task: str, attempt: str, many: bool) -> str:
    """A claim's name: the task, with ``[attempt]`` when there are several attempts."""
    return f"{task} [{attempt}]" if many else task


def committee_text(row: TableRow) -> str:
    """The committee's attempt of a table row, apart from the authors' success:
    ``5 run(s), 5 re-executed, 0 mismatched, success 100.0%``; empty: the committee made no
    run."""
    if not row.committee_runs:
        return ""
    parts = [f"{row.committee_runs} run(s)"]
    if row.reran:
        parts.append(f"{row.reran} re-executed, {row.rerun_mismatches} mismatched")
    if row.committee_success is not None:
        parts.append(f"success {100 * row.committee_success:.1f}%")
    return ", ".join(parts)
