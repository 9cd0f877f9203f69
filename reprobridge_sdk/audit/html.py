"""The self-contained HTML audit report: inline CSS and inline SVG, no script, no asset.

The page opens offline in any browser: a summary with the badges and verdict counts, a table
of tasks with their verdicts and reasons, and per task an SVG plot of the reference
observations, the compatibility interval, the published value and the reproduced values
(per seed and aggregated, coloured by verdict). Elements carry ``class`` and ``data-*``
attributes so the page can be checked from its DOM.
"""

from __future__ import annotations

import math
from html import escape

from reprobridge_sdk.model.audit import AuditResult, AuditTable, TaskAudit

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d232a;
background:#fff}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{font-size:1.2rem;margin-top:2rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
.badges{display:flex;gap:.5rem;margin:.8rem 0}
.badge{padding:.25rem .7rem;border-radius:1rem;font-weight:600;font-size:.9rem}
.badge.yes{background:#1a7f37;color:#fff}.badge.no{background:#d0d7de;color:#57606a}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}
.verdict{font-weight:600;padding:.1rem .4rem;border-radius:.3rem;white-space:nowrap}
.v-compatible{background:#dafbe1;color:#116329}
.v-incompatible,.v-invalid-evidence{background:#ffebe9;color:#a40e26}
.v-toy,.v-not-executed{background:#fff8c5;color:#7d4e00}
.v-inconclusive{background:#ddf4ff;color:#0a3069}
.reasons{margin:0;padding-left:1rem;font-size:.85rem}.code{font-family:monospace}
.plot{display:block;margin:.3rem 0 1rem;background:#fff}
.meta{color:#57606a;font-size:.9rem}
"""
_VERDICT_COLOUR = {
    "compatible": "#1a7f37",
    "incompatible": "#cf222e",
    "invalid-evidence": "#82071e",
    "toy": "#bf8700",
    "not-executed": "#8c959f",
    "inconclusive": "#0969da",
}
_W = 640
_LEFT = 130
_RIGHT = 20
_ROW = 26


def _num(value: float | None, digits: int = 6) -> str:
    if value is None or not math.isfinite(value):
        return "&#8211;"
    return escape(f"{value:.{digits}g}")


def _verdict(verdict: str) -> str:
    return f'<span class="verdict v-{escape(verdict)}">{escape(verdict)}</span>'


def _points(task: TaskAudit) -> list[float]:
    values: list[float | None] = [*task.observations, task.published]
    iv = task.interval
    if iv.defined:
        values += [iv.low, iv.high, iv.mean]
    for attempt in task.attempts:
        values += [attempt.value, *attempt.values]
    return [v for v in values if v is not None and math.isfinite(v)]


def _plot(task: TaskAudit) -> str:
    """An SVG strip plot: one row for references, one for published, one per attempt."""
    rows = ["references", "published", *[a.attempt for a in task.attempts]]
    height = _ROW * len(rows) + 34
    points = _points(task)
    lo, hi = (min(points), max(points)) if points else (0.0, 1.0)
    if hi - lo < 1e-12:
        pad = abs(lo) * 0.01 or 1.0
        lo, hi = lo - pad, hi + pad
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad

    def x(value: float) -> float:
        return _LEFT + (value - lo) / (hi - lo) * (_W - _LEFT - _RIGHT)

    def y(row: int) -> float:
        return 10 + _ROW * row + _ROW / 2

    parts = [
        f'<svg class="plot" data-task="{escape(task.id)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{_W}" height="{height}" viewBox="0 0 {_W} {height}" role="img" '
        f'aria-label="{escape(task.id)}: references, interval, published and reproduced">'
    ]
    parts.append(f'<rect x="0" y="0" width="{_W}" height="{height}" fill="#ffffff"/>')
    iv = task.interval
    bottom = 10 + _ROW * len(rows)
    if iv.defined and iv.low is not None and iv.high is not None and iv.mean is not None:
        x0, x1 = x(iv.low), x(iv.high)
        parts.append(
            f'<rect class="interval" x="{x0:.2f}" y="10" width="{max(x1 - x0, 1.0):.2f}" '
            f'height="{bottom - 10}" fill="#dafbe1" stroke="#1a7f37" stroke-width="1">'
            f"<title>interval [{_num(iv.low)}, {_num(iv.high)}]</title></rect>"
        )
        parts.append(
            f'<line class="mean" x1="{x(iv.mean):.2f}" x2="{x(iv.mean):.2f}" y1="10" '
            f'y2="{bottom}" stroke="#1a7f37" stroke-dasharray="4 3"/>'
        )
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
                f'fill="#57606a"><title>reference {_num(value)}</title></circle>'
            )
    if task.published is not None and math.isfinite(task.published):
        px, py = x(task.published), y(1)
        parts.append(
            f'<path class="published" d="M{px:.2f} {py - 7:.1f} L{px + 7:.2f} {py:.1f} '
            f'L{px:.2f} {py + 7:.1f} L{px - 7:.2f} {py:.1f} Z" fill="#8250df">'
            f"<title>published {_num(task.published)}</title></path>"
        )
    for index, attempt in enumerate(task.attempts, start=2):
        colour = _VERDICT_COLOUR[attempt.verdict]
        for value in attempt.values:
            if value is not None and math.isfinite(value):
                parts.append(
                    f'<circle class="seed" cx="{x(value):.2f}" cy="{y(index):.1f}" r="3" '
                    f'fill="none" stroke="{colour}"><title>seed value {_num(value)}</title>'
                    "</circle>"
                )
        if attempt.value is not None and math.isfinite(attempt.value):
            parts.append(
                f'<circle class="reproduced" data-verdict="{escape(attempt.verdict)}" '
                f'cx="{x(attempt.value):.2f}" cy="{y(index):.1f}" r="6.5" fill="{colour}">'
                f"<title>{escape(attempt.attempt)}: {_num(attempt.value)} "
                f"({escape(attempt.verdict)})</title></circle>"
            )
    for tick in range(5):
        value = lo + (hi - lo) * (tick + 0.5) / 5
        parts.append(
            f'<text class="tick" x="{x(value):.1f}" y="{bottom + 16}" font-size="11" '
            f'text-anchor="middle" fill="#57606a">{_num(value, 5)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _reasons(items: list[tuple[str, str]]) -> str:
    if not items:
        return ""
    lis = "".join(
        f'<li><span class="code">{escape(code)}</span> {escape(message)}</li>'
        for code, message in items
    )
    return f'<ul class="reasons">{lis}</ul>'


def _artifact(result: AuditResult, level: int) -> str:
    h = f"h{level}"
    badges = result.badges
    out = [f'<section class="artifact" data-artifact="{escape(result.artifact)}">']
    out.append(f"<{h}>{escape(result.artifact)}: {escape(result.title)}</{h}>")
    out.append('<div class="badges">')
    for name, flag in (
        ("available", badges.available),
        ("functional", badges.functional),
        ("reproduced", badges.reproduced),
    ):
        title = escape(badges.criteria.get(name, ""))
        label = "results reproduced" if name == "reproduced" else name
        out.append(
            f'<span class="badge {"yes" if flag else "no"}" data-badge="{name}" '
            f'title="{title}">{label}: {"yes" if flag else "no"}</span>'
        )
    out.append("</div>")
    opts = result.options
    out.append(
        f'<p class="meta">level {_num(opts.level)}, floor {_num(opts.floor)}, '
        f"Holm {'on' if opts.holm else 'off'}{', curation' if opts.curation else ''}; "
        f"verdict <strong>{'PASS' if result.passed else 'FAIL'}</strong></p>"
    )
    counts = "".join(
        f"<tr><td>{_verdict(k)}</td><td>{v}</td></tr>" for k, v in result.counts.items()
    )
    out.append(f'<table class="counts"><tr><th>verdict</th><th>count</th></tr>{counts}</table>')
    if result.findings:
        out.append(_reasons([(f.code, f.message) for f in result.findings]))
    head = "<tr><th>task</th><th>metric</th><th>interval</th><th>published</th>"
    head += "<th>attempt</th><th>verdict</th><th>value</th><th>z</th><th>p</th><th>reasons</th>"
    head += "</tr>"
    rows: list[str] = []
    for task in result.tasks:
        iv = task.interval
        interval = f"[{_num(iv.low)}, {_num(iv.high)}]" if iv.defined else "none"
        span = max(len(task.attempts), 1)
        first = (
            f'<td rowspan="{span}">{escape(task.id)}</td><td rowspan="{span}">'
            f'{escape(task.metric)}</td><td rowspan="{span}">{interval} (n={iv.n})</td>'
            f'<td rowspan="{span}">{_num(task.published)}</td>'
        )
        if not task.attempts:
            rows.append(
                f'<tr class="task" data-task="{escape(task.id)}">{first}'
                '<td colspan="6">no attempt</td></tr>'
            )
        for i, attempt in enumerate(task.attempts):
            cells = (
                f"<td>{escape(attempt.attempt)}</td><td>{_verdict(attempt.verdict)}"
                f" ({escape(attempt.icml)})</td><td>{_num(attempt.value)}</td>"
                f"<td>{_num(attempt.z, 3)}</td><td>{_num(attempt.p, 3)}</td>"
                f"<td>{_reasons([(r.code, r.message) for r in attempt.reasons])}</td>"
            )
            rows.append(
                f'<tr class="task" data-task="{escape(task.id)}" '
                f'data-attempt="{escape(attempt.attempt)}" '
                f'data-verdict="{escape(attempt.verdict)}">{first if i == 0 else ""}{cells}</tr>'
            )
    out.append(f'<table class="tasks">{head}{"".join(rows)}</table>')
    for task in result.tasks:
        out.append(f"<h{level + 1}>{escape(task.id)}</h{level + 1}>{_plot(task)}")
    out.append("</section>")
    return "\n".join(out)


def render_html(result: AuditResult | AuditTable) -> str:
    """The whole page as one string."""
    if isinstance(result, AuditResult):
        title = f"Audit of {result.artifact}"
        body = _artifact(result, 1)
    else:
        title = "Audit of many artifacts"
        rows = "".join(
            f"<tr><td>{escape(r.artifact)}</td><td>{len(r.tasks)}</td>"
            f"<td>{_num(r.task_success)}</td><td>{'yes' if r.badges.available else 'no'}</td>"
            f"<td>{'yes' if r.badges.functional else 'no'}</td>"
            f"<td>{'yes' if r.badges.reproduced else 'no'}</td></tr>"
            for r in result.artifacts
        )
        body = (
            f'<h1>{title}</h1><p class="meta">task-level success {_num(result.task_level)}, '
            f"paper-macro success {_num(result.paper_macro)}, label spread "
            f'{_num(result.label_spread)}</p><table class="summary"><tr><th>artifact</th>'
            f"<th>tasks</th><th>success</th><th>available</th><th>functional</th>"
            f"<th>reproduced</th></tr>{rows}</table>"
            + "".join(_artifact(r, 2) for r in result.artifacts)
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n"
    )
