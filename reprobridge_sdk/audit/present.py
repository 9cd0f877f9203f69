"""What every audit report shows the same way: numbers rounded to their interval's
precision, badge names, counted reasons and claim labels (spec audit.md#table-report,
"Rounding")."""

from __future__ import annotations

import math
from collections.abc import Iterable

from reprobridge_sdk.model.audit import AuditFinding, CheckSignature, ReasonCount, TableRow

__all__ = [
    "badge_label",
    "check_signature_text",
    "claim_label",
    "committee_text",
    "counted",
    "floor_note",
    "general",
    "percent",
    "reason_counts",
    "rounded",
    "signers_text",
]


def _unsigned_zero(text: str) -> str:
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def general(value: float | None, digits: int = 6) -> str:
    """``value`` with ``digits`` significant digits (``g``), ``""`` if missing or not finite."""
    if value is None or not math.isfinite(value):
        return ""
    return _unsigned_zero(f"{value:.{digits}g}")


def percent(value: float | None) -> str:
    """A rate as ``97.5%``, ``-`` if missing."""
    return "-" if value is None else f"{100 * value:.1f}%"


def rounded(value: float | None, half_width: float | None = None) -> str:
    """``value`` to the precision of an interval of half-width ``half_width`` (spec
    audit.md#table-report, "Rounding"); ``""`` when missing."""
    if value is None or not math.isfinite(value):
        return "" if value is None else str(value)
    if half_width is None or not math.isfinite(half_width) or half_width <= 0:
        return general(value)
    last = math.floor(math.log10(half_width)) - 1
    if value == 0:
        return "0" if last >= 0 else f"{0:.{-last}f}"
    exponent = math.floor(math.log10(abs(value)))
    digits = min(max(exponent - last + 1, 1), 15)  # binary64 holds 15 decimal digits
    if -4 <= exponent < 16:
        decimals = digits - 1 - exponent
        if decimals >= 0:
            return _unsigned_zero(f"{value:.{decimals}f}")
        return _unsigned_zero(f"{round(value, decimals):.0f}")
    return _unsigned_zero(f"{value:.{digits - 1}e}")


def badge_label(badge: str) -> str:
    """How reports name a badge: ``results reproduced`` for ``reproduced``."""
    return "results reproduced" if badge == "reproduced" else badge


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
    """A code with its count, ``A038`` then the sign times and ``12`` (alone: ``A038``)."""
    return reason.code if reason.count == 1 else f"{reason.code} \u00d7{reason.count}"


def claim_label(task: str, attempt: str, many: bool) -> str:
    """A claim's name: the task, with ``[attempt]`` when there are several attempts."""
    return f"{task} [{attempt}]" if many else task


def committee_text(row: TableRow) -> str:
    """``5 run(s), 5 re-executed, 0 mismatched, success 100.0%``; ``""``: no committee run."""
    if not row.committee_runs:
        return ""
    parts = [f"{row.committee_runs} run(s)"]
    if row.reran:
        parts.append(f"{row.reran} re-executed, {row.rerun_mismatches} mismatched")
    if row.committee_success is not None:
        parts.append(f"success {percent(row.committee_success)}")
    return ", ".join(parts)


def signers_text(signers: dict[str, int]) -> str:
    """Who signed a row's runs, each signer with its runs' count as :func:`counted` shows a
    code's (``alice`` alone for one run), comma-separated; ``""`` for none. Names come from
    the KEYS file: shown with their control characters visible by the caller."""
    return ", ".join(name if n == 1 else f"{name} \u00d7{n}" for name, n in signers.items())


def check_signature_text(signature: CheckSignature | None) -> str:
    """Who signed the clean-room check record, as every report says it: ``signed by alice
    (key id 0123456789abcdef, committee)``, ``unsigned``, ``tampered (K004): signed by ...``;
    ``no record`` for ``None``. Names come from the KEYS file and the envelope: shown with
    their control characters visible by the caller."""
    if signature is None:
        return "no record"
    key = f"key id {signature.key_id}" if signature.key_id else "no key id"
    who = f"signed by {signature.signer} ({key}" if signature.signer else f"signed ({key}"
    who += f", {signature.role})" if signature.role else ")"
    if signature.state == "signed":
        return who
    if signature.state == "unverified":
        return f"{who}, not verified: no --trust"
    if signature.state == "untrusted":
        return f"signed by a key the KEYS file does not hold ({key})"
    if signature.state == "unsigned":
        return "unsigned"
    return (
        f"tampered ({signature.code}): {who}"
        if signature.key_id
        else (f"tampered ({signature.code})")
    )
