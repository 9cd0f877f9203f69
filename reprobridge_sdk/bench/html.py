"""The bench report as one self-contained HTML page (spec/bench.md §18.6; preview).

No script, no style sheet or font from elsewhere: the page needs nothing but itself. Every
text of the report (ids, paths, agents' command lines) is escaped.
"""

from __future__ import annotations

from html import escape

from reprobridge_sdk.audit.present import percent as _pct
from reprobridge_sdk.model.bench import AgentPair, BenchReport, PairedTest, VariantStat

__all__ = ["STUDY", "render_html"]

#: The format's own study: success rates of coding agents from raw repositories and from
#: refined artifacts (1,029 paper results).
STUDY = (("raw", 0.764), ("refined", 0.926))

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
td.num{text-align:right}
.verified{background:#d8f0d8}.falsified{background:#f6d6d6}
svg text{font-size:12px}
"""

_BAR_H = 18
_GAP = 6
_LEFT = 260
_WIDTH = 420


def _bar(y: int, label: str, rate: float, stat: VariantStat | None, cls: str) -> str:
    width = round(_WIDTH * rate)
    parts = [
        f'<text x="{_LEFT - 8}" y="{y + 13}" text-anchor="end">{escape(label)}</text>',
        f'<rect class="{cls}" x="{_LEFT}" y="{y}" width="{width}" height="{_BAR_H}"'
        f' fill="{"#4a7fb5" if cls == "bar" else "#bbb"}"><title>{escape(label)}:'
        f" {_pct(rate)}</title></rect>",
        f'<text x="{_LEFT + width + 6}" y="{y + 13}">{_pct(rate)}</text>',
    ]
    if stat is not None and stat.wilson is not None:
        low = _LEFT + round(_WIDTH * stat.wilson.low)
        high = _LEFT + round(_WIDTH * stat.wilson.high)
        mid = y + _BAR_H // 2
        parts.append(
            f'<line class="whisker" x1="{low}" x2="{high}" y1="{mid}" y2="{mid}"'
            ' stroke="#222" stroke-width="1.5"/>'
        )
    return "".join(parts)


def _chart(report: BenchReport) -> str:
    rows: list[str] = []
    y = 0
    for stat in report.rates:
        if stat.rate is None:
            continue
        rows.append(_bar(y, f"{stat.agent[:30]} / {stat.variant}", stat.rate, stat, "bar"))
        y += _BAR_H + _GAP
    for variant, rate in STUDY:
        rows.append(_bar(y, f"the format's study / {variant}", rate, None, "study"))
        y += _BAR_H + _GAP
    height = y + 4
    return (
        f'<svg id="rates-chart" role="img" width="{_LEFT + _WIDTH + 70}" height="{height}"'
        ' xmlns="http://www.w3.org/2000/svg"><title>Success rate per agent and variant, with'
        " 95% Wilson intervals, beside the format's study</title>" + "".join(rows) + "</svg>"
    )


def _table(rid: str, header: list[str], rows: list[list[tuple[str, str]]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="{c}">{v}</td>' for v, c in row) + "</tr>" for row in rows
    )
    return f'<table id="{rid}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _pair_cells(first: str, p: PairedTest | AgentPair) -> list[tuple[str, str]]:
    """A McNemar row: the agent (or variant) it is in, then ``a - b`` and the counts."""
    return [
        (escape(first), ""),
        (escape(f"{p.a} - {p.b}"), ""),
        (str(p.pairs), "num"),
        (str(p.only_a), "num"),
        (str(p.only_b), "num"),
        (_pct(p.difference), "num"),
        (f"{p.p_value:.3g} ({p.method})", "num"),
    ]


def render_html(report: BenchReport) -> str:
    """The report as an HTML page."""
    rates = [
        [
            (escape(s.agent), ""),
            (escape(s.variant), ""),
            (str(s.runs), "num"),
            (str(s.successes), "num"),
            (_pct(s.rate), "num"),
            (f"{_pct(s.wilson.low)} to {_pct(s.wilson.high)}" if s.wilson else "-", "num"),
            (_pct(s.progress), "num"),
            ("-" if s.seconds_per_success is None else f"{s.seconds_per_success:.1f}", "num"),
            ("-" if s.cost_per_success is None else f"{s.cost_per_success:.4g}", "num"),
            (escape(", ".join(f"{k} {v}" for k, v in s.outcomes.items())), ""),
        ]
        for s in report.rates
    ]
    paired = [_pair_cells(p.agent, p) for p in report.paired]
    versus = [_pair_cells(p.variant, p) for p in report.versus]
    runs = [
        [
            (escape(r.agent), ""),
            (escape(f"{r.submission}/{r.task}"), ""),
            (escape(r.variant), ""),
            (str(r.repeat), "num"),
            (escape(r.outcome), ""),
            (escape(r.verdict), ""),
            (escape(r.icml), r.icml),
            ("-" if r.extracted is None else f"{r.extracted:g}", "num"),
            (_pct(r.progress), "num"),
            (f"{r.seconds:.1f}", "num"),
            (escape(" ".join(f.code for f in r.findings)), ""),
            (escape(r.folder), ""),
        ]
        for r in report.runs
    ]
    sandbox = "on" if report.sandbox else "OFF"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\';'
        " style-src 'unsafe-inline'\">",
        f"<title>bench: {escape(', '.join(report.agents))}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>bench: {escape(', '.join(report.agents))}</h1>",
        f'<p id="setting">suite {escape(report.suite)} (sha256 {report.suite_sha256[:12]}),'
        f" {len(report.runs)} run(s), {report.repeats} repeat(s),"
        f" executor {escape(report.executor)}, sandbox {sandbox},"
        f" network {escape(report.network)}"
        + (f" ({escape(', '.join(report.allow_hosts))})" if report.allow_hosts else "")
        + "</p>",
        "<h2>Success rate per variant</h2>",
        _chart(report),
        _table(
            "rates",
            [
                "agent",
                "variant",
                "runs",
                "verified",
                "rate",
                "95% Wilson",
                "landmarks",
                "s/success",
                "cost/success",
                "outcomes",
            ],
            rates,
        ),
        "<h2>Paired differences (McNemar)</h2>",
        _table("paired", ["agent", "a - b", "pairs", "only a", "only b", "diff", "p"], paired),
        *(
            [
                "<h2>Agent against agent (McNemar)</h2>",
                _table(
                    "versus",
                    ["variant", "a - b", "pairs", "only a", "only b", "diff", "p"],
                    versus,
                ),
            ]
            if versus
            else []
        ),
        "<h2>Runs and per-claim verdicts</h2>",
        _table(
            "runs",
            [
                "agent",
                "claim",
                "variant",
                "repeat",
                "outcome",
                "verdict",
                "ICML",
                "value",
                "landmarks",
                "seconds",
                "codes",
                "folder",
            ],
            runs,
        ),
    ]
    if report.findings:
        items = "".join(f"<li>{escape(f.code)}: {escape(f.message)}</li>" for f in report.findings)
        parts.append(f'<h2>Not benched</h2><ul id="not-benched">{items}</ul>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
