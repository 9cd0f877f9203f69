"""Audit reports: text, JSON and JUnit XML (the HTML report is in :mod:`.html`).

Every renderer takes an :class:`AuditResult` (one artifact) or an :class:`AuditTable` (many)
and returns a string; nothing here reads files or clocks, so the same result always renders
to the same bytes. The artifact's text in the text and JUnit reports (titles, ids, labels,
messages, paths) passes through :func:`~reprobridge_sdk.findings.terminal_text`: its control
characters are shown, never sent; the JSON report encodes them.

JUnit: one ``testsuite`` per artifact (in a table, one with a single ``error`` test case per
artifact that could not be loaded), one ``testcase`` per task (per task and attempt when
there are several attempts, named ``<task> [<attempt>]``); ``incompatible`` and
``invalid-evidence`` are failures, ``toy``, ``not-executed`` and ``inconclusive`` are
skipped, ``compatible`` passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from xml.etree import ElementTree as ET

from reprobridge_sdk.findings import terminal_text as _t
from reprobridge_sdk.model.audit import AuditResult, AuditTable, TaskAttempt

__all__ = ["FORMATS", "render", "render_json", "render_json_chunks", "render_junit", "render_text"]

_FAILURE = {"incompatible", "invalid-evidence"}
#: Codes of a run made with other code or another lock than the artifact's.
_STALE = {"A009", "A011"}
_SKIPPED = {"toy", "not-executed", "inconclusive"}
_COLOURS = {
    "compatible": "32",
    "incompatible": "31",
    "invalid-evidence": "31;1",
    "toy": "33",
    "not-executed": "33",
    "inconclusive": "36",
}


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}g}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _paint(text: str, verdict: str, color: bool) -> str:
    return f"\x1b[{_COLOURS[verdict]}m{text}\x1b[0m" if color else text


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _text_one(result: AuditResult, color: bool) -> list[str]:
    lines = [f"{_t(result.artifact)}: {_t(result.title)}"]
    badges = result.badges
    lines.append(
        f"  badges: available {_yes(badges.available)}, functional {_yes(badges.functional)}, "
        f"results reproduced {_yes(badges.reproduced)}"
    )
    for badge, reasons in badges.reasons.items():
        label = "results reproduced" if badge == "reproduced" else badge
        lines.extend(
            f"    {label} withheld: {r.code} {_t(r.message)}"
            + (f" [{_t(r.file)}]" if r.file else "")
            for r in reasons
        )
    lines.extend(
        f"  {f.code} {_t(f.message)}" + (f" ({_t(f.path)})" if f.path else "")
        for f in result.findings
    )
    lines.extend(_evidence_lines(result))
    width = max([len(_t(t.id)) for t in result.tasks] + [4])
    many = len(result.attempts) > 1 or result.options.curation
    for task in result.tasks:
        iv = task.interval
        interval = f"[{_fmt(iv.low, 6)}, {_fmt(iv.high, 6)}]" if iv.defined else "no interval"
        flags = " floor-only" if iv.floor_only else ""
        stable = {True: "stable", False: "variable", None: "stability unknown"}[task.stable]
        lines.append(
            f"  {_t(task.id):<{width}}  interval {interval} n={iv.n}{flags}, "
            f"published {_fmt(task.published, 6)}, {stable}"
        )
        for attempt in task.attempts:
            lines.extend(_text_attempt(attempt, many, color))
        if many:
            lines.append(
                f"  {'':<{width}}  success {_rate(task.success_rate)}"
                + (" (attempts disagree)" if task.disagreement else "")
            )
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items() if v)
    lines.append(f"  verdicts: {counts or 'none'}")
    if len(result.labels) > 1:
        rates = ", ".join(f"{_t(r.label)} {_rate(r.success_rate)}" for r in result.labels)
        lines.append(f"  labels: {rates}; spread {_rate(result.label_spread)}")
    lines.append(
        f"  task success {_rate(result.task_success)}: {'PASS' if result.passed else 'FAIL'}"
    )
    return lines


def _evidence_lines(result: AuditResult) -> list[str]:
    """Validation counts, invalid and stale runs, ledger findings and re-execution."""
    lines: list[str] = []
    if result.validation:
        counts = ", ".join(f"{v} {k}(s)" for k, v in result.validation.items())
        lines.append(f"  validation: {counts}")
    for attempt in result.attempts:
        runs = attempt.runs
        invalid = [r for r in runs if not r.valid]
        stale = [r for r in runs if any(f.code in _STALE for f in r.findings)]
        who = f"[{_t(attempt.label)}] " if len(result.attempts) > 1 else ""
        summary = f"  {who}runs: {len(runs)}, invalid {len(invalid)}, stale {len(stale)}"
        if attempt.ledger_head is not None:
            summary += f"; ledger head {attempt.ledger_head[:16]}"
        if attempt.reran:
            summary += f"; re-executed {attempt.reran}, mismatches {attempt.rerun_mismatches}"
        lines.append(summary)
        for run in invalid:
            codes = ", ".join(sorted({f.code for f in run.findings if f.severity == "error"}))
            lines.append(f"    invalid run {_t(run.run)}: {codes}")
        lines.extend(
            f"    {f.code} {_t(f.message)}" for f in attempt.findings if f.severity != "info"
        )
    return lines


def _table_lines(table: AuditTable) -> list[str]:
    """The committee's summary: one line per row."""
    header = ("artifact", "status", "tasks", "success", "E/W/I", "runs", "invalid", "stale")
    rows = [
        (
            _t(row.label),
            row.status,
            str(row.tasks),
            _rate(row.task_success),
            "/".join(str(row.validation.get(k, 0)) for k in ("error", "warning", "info")),
            str(row.runs),
            str(row.invalid_runs),
            str(row.stale_runs),
        )
        for row in table.rows
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    failed = sum(r.status == "error" for r in table.rows)
    out.append(
        f"{len(table.rows)} artifacts ({failed} not loaded): invalid runs "
        f"{sum(r.invalid_runs for r in table.rows)}, stale runs "
        f"{sum(r.stale_runs for r in table.rows)}"
    )
    return out


def _text_attempt(attempt: TaskAttempt, many: bool, color: bool) -> list[str]:
    who = f"[{_t(attempt.attempt)}] " if many else ""
    score = ""
    if attempt.z is not None or attempt.p is not None:
        score = f" z={_fmt(attempt.z, 3)} p={_fmt(attempt.p, 3)}"
        if attempt.p_adjusted is not None:
            score += f" p_holm={_fmt(attempt.p_adjusted, 3)}"
    verdict = _paint(attempt.verdict, attempt.verdict, color)
    lines = [f"    {who}{verdict} ({attempt.icml}) value {_fmt(attempt.value, 6)}{score}"]
    for reason in attempt.reasons:
        where = reason.file or ""
        if reason.path:
            where = f"{where}#{reason.path}" if where else reason.path
        lines.append(
            f"      {reason.code} {_t(reason.message)}" + (f" [{_t(where)}]" if where else "")
        )
    return lines


def render_text(result: AuditResult | AuditTable, *, color: bool = False) -> str:
    """A human-readable report (ANSI colours only when ``color``)."""
    if isinstance(result, AuditResult):
        return "\n".join(_text_one(result, color)) + "\n"
    lines: list[str] = []
    for item in result.artifacts:
        lines.extend(_text_one(item, color))
        lines.append("")
    lines.extend(f"{_t(e.file or '')}: {e.code} {_t(e.message)}" for e in result.errors)
    lines.extend(_table_lines(result))
    lines.append(
        f"task-level success {_rate(result.task_level)}, "
        f"paper-macro success {_rate(result.paper_macro)}"
    )
    if result.labels:
        rates = ", ".join(f"{_t(r.label)} {_rate(r.success_rate)}" for r in result.labels)
        lines.append(f"labels: {rates}; spread {_rate(result.label_spread)}")
    lines.append("PASS" if result.passed else "FAIL")
    return "\n".join(lines) + "\n"


def render_json(result: AuditResult | AuditTable) -> str:
    """The JSON report (schema ``audit-1.0`` / ``audit-table-1.0``)."""
    return result.model_dump_json(indent=2) + "\n"


#: The lists of a report that grow with the artifact: written one item at a time.
_PIECEWISE = frozenset({"tasks", "attempts"})


def render_json_chunks(result: AuditResult | AuditTable) -> Iterator[bytes]:
    """:func:`render_json`'s report as UTF-8 bytes, byte for byte, in pieces: an audit's
    tasks and attempts are serialized one at a time, so the whole report (15 MB at 10k
    tasks) is never one string in memory, nor its encoding a second copy.

    Each item is the same model serialized alone, its lines indented two levels (JSON
    strings hold no raw line feed, so every line feed is a line of the layout); every
    other field is the report's own serialization of that field alone. A report with
    extension keys, and a table, are rendered whole.
    """
    if not isinstance(result, AuditResult) or result.__pydantic_extra__:
        yield render_json(result).encode("utf-8")
        return
    names = list(type(result).model_fields)
    yield b"{\n"
    for position, name in enumerate(names):
        end = b"\n" if position == len(names) - 1 else b",\n"
        items = getattr(result, name)
        if name in _PIECEWISE and items:
            yield f'  "{name}": [\n'.encode()
            for index, item in enumerate(items):
                body = item.__pydantic_serializer__.to_json(item, indent=2)
                more = b",\n" if index < len(items) - 1 else b"\n"
                yield b"    " + body.replace(b"\n", b"\n    ") + more
            yield b"  ]" + end
        else:  # '{\n  "name": value\n}' without its braces
            yield result.model_dump_json(indent=2, include={name})[2:-2].encode("utf-8") + end
    yield b"}\n"


def _suite(parent: ET.Element, result: AuditResult) -> None:
    cases = [(t, a) for t in result.tasks for a in t.attempts]
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=result.artifact,
        tests=str(len(cases)),
        failures=str(sum(a.verdict in _FAILURE for _, a in cases)),
        skipped=str(sum(a.verdict in _SKIPPED for _, a in cases)),
        errors="0",
    )
    many = len({a.attempt for _, a in cases}) > 1
    for task, attempt in cases:
        name = f"{task.id} [{attempt.attempt}]" if many else task.id
        case = ET.SubElement(suite, "testcase", classname=result.artifact, name=name)
        detail = "\n".join(f"{r.code} {r.message}" for r in attempt.reasons)
        message = f"{attempt.verdict} ({attempt.icml})"
        if attempt.verdict in _FAILURE:
            failure = ET.SubElement(case, "failure", message=message, type=attempt.verdict)
            failure.text = detail
        elif attempt.verdict in _SKIPPED:
            ET.SubElement(case, "skipped", message=f"{message}: {detail}" if detail else message)
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="verdict", value=attempt.verdict)
        ET.SubElement(props, "property", name="icml", value=attempt.icml)
        ET.SubElement(props, "property", name="value", value=_fmt(attempt.value, 12))


def render_junit(result: AuditResult | AuditTable) -> str:
    """JUnit XML: one test case per task (and attempt)."""
    root = ET.Element("testsuites", name="reprobridge audit")
    for item in result.artifacts if isinstance(result, AuditTable) else [result]:
        _suite(root, item)
    if isinstance(result, AuditTable):  # artifacts that could not be loaded: one error each
        for row in (r for r in result.rows if r.status == "error"):
            suite = ET.SubElement(
                root, "testsuite", name=row.label, tests="1", failures="0", skipped="0", errors="1"
            )
            case = ET.SubElement(suite, "testcase", classname=row.label, name="load")
            error = ET.SubElement(case, "error", type="not-loaded", message=row.path)
            error.text = "\n".join(f"{f.code} {f.message}" for f in row.findings)
    ET.indent(root)
    text = ET.tostring(root, "unicode")  # XML 1.0 holds no control characters: shown instead
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _t(text, lines=True) + "\n"


def _render_html(result: AuditResult | AuditTable) -> str:
    from reprobridge_sdk.audit.html import render_html  # noqa: PLC0415 - only for --format html

    return render_html(result)


#: Report formats by name.
FORMATS: dict[str, Callable[[AuditResult | AuditTable], str]] = {
    "text": render_text,
    "json": render_json,
    "junit": render_junit,
    "html": _render_html,
}


def render(result: AuditResult | AuditTable, fmt: str, *, color: bool = False) -> str:
    """Render in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "text":
        return render_text(result, color=color)
    return FORMATS[fmt](result)
