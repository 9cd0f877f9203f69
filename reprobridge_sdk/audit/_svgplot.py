"""The HTML report's plot of one task: an inline SVG strip of the reference observations, the
compatibility interval, the published value and each attempt's values, coloured by verdict."""

from __future__ import annotations

import math
from html import escape

from reprobridge_sdk.model.audit import IntervalResult, TaskAttempt, TaskAudit

from .present import general, rounded

__all__ = ["number_html", "rounded_html", "task_plot"]


_VERDICT_COLOUR = {
    "compatible": "#1a7f37",
    "incompatible": "#cf222e",
    "invalid-evidence": "#82071e",
    "toy": "#bf8700",
    "not-executed": "#8c959f",
    "inconclusive": "#0969da",
}
_W, _LEFT, _RIGHT, _ROW = 640, 130, 20, 26  # the plot's width, margins and row height


def number_html(value: float | None, digits: int = 6) -> str:
    """:func:`.present.general`, a dash if missing."""
    return general(value, digits) or "&#8211;"


def rounded_html(value: float | None, half_width: float | None) -> str:
    """:func:`.present.rounded`, a dash if missing."""
    return rounded(value, half_width) or "&#8211;"


def _points(task: TaskAudit) -> list[float]:
    values: list[float | None] = [*task.observations, task.published]
    iv = task.interval
    if iv.defined:
        values += [iv.low, iv.high, iv.mean]
    for attempt in task.attempts:
        values += [attempt.value, *attempt.values]
    return [v for v in values if v is not None and math.isfinite(v)]


class _Scale:
    """Where a value and a row of the strip plot are drawn."""

    def __init__(self, points: list[float]) -> None:
        lo, hi = (min(points), max(points)) if points else (0.0, 1.0)
        if hi - lo < 1e-12:
            pad = abs(lo) * 0.01 or 1.0
            lo, hi = lo - pad, hi + pad
        pad = (hi - lo) * 0.08
        self.lo, self.hi = lo - pad, hi + pad

    def x(self, value: float) -> float:
        return _LEFT + (value - self.lo) / (self.hi - self.lo) * (_W - _LEFT - _RIGHT)

    @staticmethod
    def y(row: int) -> float:
        return 10 + _ROW * row + _ROW / 2


def task_plot(task: TaskAudit) -> str:
    """An SVG strip plot: one row for references, one for published, one per attempt."""
    rows = ["references", "published", *[a.attempt for a in task.attempts]]
    height = _ROW * len(rows) + 34
    scale = _Scale(_points(task))
    x, y = scale.x, scale.y
    parts = [
        f'<svg class="plot" data-task="{escape(task.id)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{_W}" height="{height}" viewBox="0 0 {_W} {height}" role="img" '
        f'aria-label="{escape(task.id)}: references, interval, published and reproduced">'
    ]
    parts.append(f'<rect x="0" y="0" width="{_W}" height="{height}" fill="#ffffff"/>')
    iv = task.interval
    bottom = 10 + _ROW * len(rows)
    parts += _interval_marks(scale, iv, bottom)
    for row, label in enumerate(rows):
        parts.append(
            f'<text x="{_LEFT - 8}" y="{y(row) + 4:.1f}" text-anchor="end" font-size="12" '
            f'fill="#1d232a">{escape(label)}</text>'
        )
        parts.append(
            f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y(row):.1f}" y2="{y(row):.1f}" '
            f'stroke="#eaeef2"/>'
        )
    for value in task.observations:
        if value is not None and math.isfinite(value):
            parts.append(
                f'<circle class="ref" cx="{x(value):.2f}" cy="{y(0):.1f}" r="4.5" '
                f'fill="#57606a"><title>reference {rounded_html(value, iv.half_width)}'
                "</title></circle>"
            )
    if task.published is not None and math.isfinite(task.published):
        px, py = x(task.published), y(1)
        parts.append(
            f'<path class="published" d="M{px:.2f} {py - 7:.1f} L{px + 7:.2f} {py:.1f} '
            f'L{px:.2f} {py + 7:.1f} L{px - 7:.2f} {py:.1f} Z" fill="#8250df">'
            f"<title>published {rounded_html(task.published, iv.half_width)}</title></path>"
        )
    for index, attempt in enumerate(task.attempts, start=2):
        parts += _attempt_marks(scale, attempt, index, iv.half_width)
    for tick in range(5):
        value = scale.lo + (scale.hi - scale.lo) * (tick + 0.5) / 5
        parts.append(
            f'<text class="tick" x="{x(value):.1f}" y="{bottom + 16}" font-size="11" '
            f'text-anchor="middle" fill="#57606a">{number_html(value, 5)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _interval_marks(scale: _Scale, iv: IntervalResult, bottom: int) -> list[str]:
    """The compatibility interval's band and its mean's line, when it is defined."""
    if not (iv.defined and iv.low is not None and iv.high is not None and iv.mean is not None):
        return []
    x0, x1 = scale.x(iv.low), scale.x(iv.high)
    return [
        f'<rect class="interval" x="{x0:.2f}" y="10" width="{max(x1 - x0, 1.0):.2f}" '
        f'height="{bottom - 10}" fill="#dafbe1" stroke="#1a7f37" stroke-width="1">'
        f"<title>interval [{rounded_html(iv.low, iv.half_width)}, "
        f"{rounded_html(iv.high, iv.half_width)}]</title></rect>",
        f'<line class="mean" x1="{scale.x(iv.mean):.2f}" x2="{scale.x(iv.mean):.2f}" y1="10" '
        f'y2="{bottom}" stroke="#1a7f37" stroke-dasharray="4 3"/>',
    ]


def _attempt_marks(
    scale: _Scale, attempt: TaskAttempt, index: int, half_width: float | None
) -> list[str]:
    """An attempt's row: each seed's value and the reproduced value, in its verdict's colour."""
    colour = _VERDICT_COLOUR[attempt.verdict]
    x, y = scale.x, scale.y
    parts = [
        f'<circle class="seed" cx="{x(value):.2f}" cy="{y(index):.1f}" r="3" '
        f'fill="none" stroke="{colour}"><title>seed value '
        f"{rounded_html(value, half_width)}</title>"
        "</circle>"
        for value in attempt.values
        if value is not None and math.isfinite(value)
    ]
    if attempt.value is not None and math.isfinite(attempt.value):
        parts.append(
            f'<circle class="reproduced" data-verdict="{escape(attempt.verdict)}" '
            f'cx="{x(attempt.value):.2f}" cy="{y(index):.1f}" r="6.5" fill="{colour}">'
            f"<title>{escape(attempt.attempt)}: {rounded_html(attempt.value, half_width)} "
            f"({escape(attempt.verdict)})</title></circle>"
        )
    return parts
