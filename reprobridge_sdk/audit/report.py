"""Audit reports: text, JSON and JUnit XML, and :data:`FORMATS` by name (spec
audit.md#table-report; the HTML report is :mod:`.html`, the CSV :mod:`.csv_report`).

Each renderer is a pure function of an :class:`AuditResult` or :class:`AuditTable`. The
artifact's text is shown through :func:`~reprobridge_sdk.findings.terminal_text` (control
characters shown, never sent); numbers through :mod:`.present`. In JUnit a task (and
attempt) is a test case: ``incompatible`` and ``invalid-evidence`` fail, ``toy``,
``not-executed`` and ``inconclusive`` are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from xml.etree import ElementTree as ET

from reprobridge_sdk.findings import finding_line
from reprobridge_sdk.findings import terminal_text as _t
from reprobridge_sdk.model.audit import (
    AttemptSummary,
    AuditFinding,
    AuditResult,
    AuditTable,
    SubmissionInfo,
    TableClaim,
    TableRow,
    TaskAttempt,
)

from .badges import earned
from .present import (
    badge_label,
    check_signature_text,
    claim_label,
    committee_text,
    counted,
    floor_note,
    general,
    percent,
    reason_counts,
    rounded,
    signers_text,
)

__all__ = [
    "FORMATS",
    "render",
    "render_json",
    "render_junit",
    "render_text",
    "sections",
    "submission_text",
]

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
    return general(value, digits) or "-"


def _num(value: float | None, half_width: float | None) -> str:
    """A number to its interval's precision (:func:`.present.rounded`), ``-`` if missing."""
    return rounded(value, half_width) or "-"


def sections(table: AuditTable) -> list[tuple[TableRow, AuditResult | None]]:
    """Each row with its audit (``None`` for a row in error): rows that were audited are, in
    order, the table's ``artifacts``."""
    audited = iter(table.artifacts)
    return [(row, None if row.status == "error" else next(audited, None)) for row in table.rows]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _paint(text: str, verdict: str, color: bool) -> str:
    return f"\x1b[{_COLOURS[verdict]}m{text}\x1b[0m" if color else text


def _text_one(result: AuditResult, color: bool, name: str | None = None) -> list[str]:
    head = f"{_t(result.artifact)}: {_t(result.title)}"
    lines = [f"{_t(name)} ({head})" if name is not None else head]
    badges = result.badges
    lines.append(
        f"  badges: available {_yes(badges.available)}, functional {_yes(badges.functional)}, "
        f"reusable {_yes(badges.reusable)}, results reproduced {_yes(badges.reproduced)}"
        + ("; results consistent (author evidence)" if badges.results == "consistent" else "")
    )
    lines.append(f"  clean-room check record: {_t(check_signature_text(badges.check_record))}")
    for badge, reasons in badges.reasons.items():
        label = badge_label(badge)
        lines.extend(_withheld_lines(label, reasons))
    lines.extend(finding_line(f, result.artifact) for f in result.findings)
    lines.extend(_evidence_lines(result))
    width = max([len(_t(t.id)) for t in result.tasks] + [4])
    many = len(result.attempts) > 1 or result.options.curation
    for task in result.tasks:
        iv = task.interval
        h = iv.half_width
        interval = f"[{_num(iv.low, h)}, {_num(iv.high, h)}]" if iv.defined else "no interval"
        flags = f" {floor_note(iv.floor_alone)}" if iv.floor_alone else ""
        stable = {True: "stable", False: "variable", None: "stability unknown"}[task.stable]
        lines.append(
            f"  {_t(task.id):<{width}}  interval {interval} n={iv.n}{flags}, "
            f"published {_num(task.published, h)}, {stable}"
        )
        for attempt in task.attempts:
            lines.extend(_text_attempt(attempt, task.id, many, color, h))
        if many:
            lines.append(
                f"  {'':<{width}}  success {percent(task.success_rate)}"
                + (" (attempts disagree)" if task.disagreement else "")
            )
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items() if v)
    lines.append(f"  verdicts: {counts or 'none'}")
    if len(result.labels) > 1:
        rates = ", ".join(f"{_t(r.label)} {percent(r.success_rate)}" for r in result.labels)
        lines.append(f"  labels: {rates}; spread {percent(result.label_spread)}")
    lines.append(
        f"  task success {percent(result.task_success)}: {'PASS' if result.passed else 'FAIL'}"
    )
    return lines


def _withheld_lines(label: str, reasons: list[AuditFinding]) -> list[str]:
    """A withheld badge's reasons, each code once, counted, with the first message."""
    lines: list[str] = []
    for group in reason_counts(reasons):
        first = next(r for r in reasons if r.code == group.code)
        where = f" [{_t(first.file)}]" if first.file else ""
        lines.append(f"    {label} withheld: {counted(group)} {_t(group.message)}{where}")
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
        lines.extend(_rerun_lines(attempt))
        for run in invalid:
            codes = ", ".join(sorted({f.code for f in run.findings if f.severity == "error"}))
            lines.append(f"    invalid run {_t(run.run)}: {codes}")
        lines.extend(
            finding_line(f, attempt.label) for f in attempt.findings if f.severity != "info"
        )
    return lines


def _badges_text(row: TableRow) -> str:
    badges = row.badges
    if badges is None:
        return "-"
    return ",".join(earned(badges)) or "none"


def why_text(why: AuditFinding | None) -> str:
    """A row's decisive finding as ``CODE message`` (``-``: none)."""
    return f"{why.code} {why.message}" if why is not None else "-"


def claim_text(claim: TableClaim) -> str:
    """``compatible (verified) 97.97 in [96.99, 98.95] floor alone (...) A026``."""
    h = claim.half_width
    interval = f"[{_num(claim.low, h)}, {_num(claim.high, h)}]" if claim.low is not None else ""
    parts = [f"{claim.verdict} ({claim.icml})", _num(claim.value, h)]
    if interval:
        parts.append(f"in {interval}")
    if claim.floor_alone:
        parts.append(floor_note(claim.floor_alone))
    if claim.code:
        parts.append(claim.code)
    return " ".join(parts)


def _rerun_lines(attempt: AttemptSummary) -> list[str]:
    """Per re-executed run and task: recorded, re-executed, difference, tolerance; then the
    shift tests over the sample."""
    lines: list[str] = []
    for run in attempt.runs:
        for row in run.rerun:
            limit = "exact" if row.tolerance == 0 else f"±{_fmt(row.tolerance, 6)}"
            lines.append(
                f"    re-executed {_t(run.run)} {_t(row.task)}: recorded {_fmt(row.recorded, 6)}"
                f", re-executed {_fmt(row.rerun, 6)}, difference {_fmt(row.difference, 6)}, "
                f"tolerance {limit} ({row.basis}): {'held' if row.held else 'MISMATCH'}"
            )
    for test in attempt.shift_tests:
        t = _fmt(test.t, 3) if test.t is not None else "inf"
        lines.append(
            f"    shift {_t(test.task)}: mean difference {_fmt(test.mean_difference, 6)} over "
            f"{test.n} runs, paired t={t} p={_fmt(test.p, 3)} at level "
            f"{test.level:g}: {'SHIFTED' if test.shifted else 'no shift'}"
        )
    lines.extend(f"    shift {_t(s.task)}: {_t(s.reason)}" for s in attempt.shift_skipped)
    return lines


def _seed_line(result: AuditResult | AuditTable) -> list[str]:
    """The sample seed, stated once the sample is drawn (secret until then)."""
    options = result.options
    if options.rerun is None:
        return []
    how = "drawn at the audit" if options.rerun_seed_drawn else "given"
    return [
        f"re-execution: {options.rerun} per launcher and task, sample seed "
        f"{options.rerun_seed} ({how}; --rerun-seed {options.rerun_seed} draws it again)"
    ]


def submission_text(info: SubmissionInfo) -> str:
    """A row's batch-file entry on one line: decision, trust policy, head, reviewers, budget
    (recorded, not enforced) and notes."""
    parts = [f"decision {info.decision}", f"trust {info.trust}"]
    if info.expect_head:
        parts.append(f"expected head {info.expect_head[:12]}")
    if info.reviewers:
        parts.append(f"reviewers {', '.join(info.reviewers)}")
    if info.budget is not None:
        budget = info.budget.model_dump(exclude_none=True)
        parts.append("budget " + " ".join(f"{k} {v}" for k, v in budget.items()))
    if info.notes:
        parts.append(f"notes: {info.notes}")
    return "; ".join(parts)


def _table_lines(table: AuditTable) -> list[str]:
    """The committee's summary: one line per row, its claims below it."""
    header = (
        "artifact",
        "status",
        "tasks",
        "success",
        "committee",
        "E/W/I",
        "runs",
        "invalid",
        "stale",
        "evidence",
        "badges",
        "why",
    )
    rows = [
        (
            _t(row.label),
            row.status,
            str(row.tasks),
            percent(row.task_success),
            committee_text(row) or "-",
            "/".join(str(row.validation.get(k, 0)) for k in ("error", "warning", "info")),
            str(row.runs),
            str(row.invalid_runs),
            str(row.stale_runs),
            row.evidence or "-",
            _badges_text(row),
            _t(why_text(row.why)),
        )
        for row in table.rows
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    for row, cells in zip(table.rows, rows, strict=True):
        out.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        many = len({c.attempt for c in row.claims}) > 1
        out.extend(
            f"    {_t(claim_label(c.task, c.attempt, many))}: {_t(claim_text(c))}"
            for c in row.claims
        )
        for badge, groups in row.withheld.items():
            label = badge_label(badge)
            out.append(f"    {label} withheld: {', '.join(counted(g) for g in groups)}")
        if row.signers:
            out.append(f"    signed by: {_t(signers_text(row.signers))}")
        if row.submission is not None:
            out.append(f"    submission: {_t(submission_text(row.submission))}")
    failed = sum(r.status == "error" for r in table.rows)
    out.append(
        f"{len(table.rows)} artifacts ({failed} not loaded): invalid runs "
        f"{sum(r.invalid_runs for r in table.rows)}, stale runs "
        f"{sum(r.stale_runs for r in table.rows)}"
    )
    return out


def _text_attempt(
    attempt: TaskAttempt, task: str, many: bool, color: bool, half_width: float | None
) -> list[str]:
    who = f"[{_t(attempt.attempt)}] " if many else ""
    score = ""
    if attempt.z is not None or attempt.p is not None:
        score = f" z={_fmt(attempt.z, 3)} p={_fmt(attempt.p, 3)}"
        if attempt.p_adjusted is not None:
            score += f" p_holm={_fmt(attempt.p_adjusted, 3)}"
    verdict = _paint(attempt.verdict, attempt.verdict, color)
    value = _num(attempt.value, half_width)
    lines = [f"    {who}{verdict} ({attempt.icml}) value {value}{score}"]
    lines.extend(finding_line(reason, task) for reason in attempt.reasons)
    return lines


def render_text(result: AuditResult | AuditTable, *, color: bool = False) -> str:
    """A human-readable report (ANSI colours only when ``color``)."""
    if isinstance(result, AuditResult):
        return "\n".join([*_text_one(result, color), *_seed_line(result)]) + "\n"
    lines: list[str] = []
    for row, item in sections(result):
        if item is not None:
            lines.extend(_text_one(item, color, row.label))
            lines.append("")
    lines.extend(finding_line(e, "") for e in result.errors)
    lines.extend(_table_lines(result))
    lines.append(
        f"task-level success {percent(result.task_level)}, "
        f"paper-macro success {percent(result.paper_macro)}"
    )
    if result.labels:
        rates = ", ".join(f"{_t(r.label)} {percent(r.success_rate)}" for r in result.labels)
        lines.append(f"labels: {rates}; spread {percent(result.label_spread)}")
    lines.extend(_seed_line(result))
    lines.append("PASS" if result.passed else "FAIL")
    return "\n".join(lines) + "\n"


def render_json(result: AuditResult | AuditTable) -> str:
    """The JSON report (schema ``audit-1.0`` / ``audit-table-1.0``)."""
    return result.model_dump_json(indent=2) + "\n"


def _rerun_properties(props: ET.Element, summary: AttemptSummary | None, task: str) -> None:
    """A test case's re-execution: how many runs of its task were re-executed and held, the
    largest difference, and the shift test or why it was not run."""
    if summary is None:
        return
    rows = [r for run in summary.runs for r in run.rerun if r.task == task]
    if rows:
        held = sum(r.held for r in rows)
        diffs = [abs(r.difference) for r in rows if r.difference is not None]
        largest = f", largest difference {_fmt(max(diffs), 6)}" if diffs else ""
        text = f"{len(rows)} re-executed, {held} held, {len(rows) - held} did not{largest}"
        ET.SubElement(props, "property", name="rerun", value=text)
    for test in summary.shift_tests:
        if test.task == task:
            shift = f"p = {_fmt(test.p, 3)} over {test.n} runs: "
            shift += "shifted" if test.shifted else "no shift"
            ET.SubElement(props, "property", name="shift", value=shift)
    for skipped in summary.shift_skipped:
        if skipped.task == task:
            ET.SubElement(props, "property", name="shift", value=f"not run: {skipped.reason}")


def _suite(
    parent: ET.Element, result: AuditResult, name: str | None = None, row: TableRow | None = None
) -> None:
    cases = [(t, a) for t in result.tasks for a in t.attempts]
    title = name if name is not None else result.artifact
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=title,
        tests=str(len(cases)),
        failures=str(sum(a.verdict in _FAILURE for _, a in cases)),
        skipped=str(sum(a.verdict in _SKIPPED for _, a in cases)),
        errors="0",
    )
    if name is not None:
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="artifact", value=result.artifact)
        ET.SubElement(props, "property", name="path", value=result.path)
        # the badges earned, then 'consistent' (results consistent, author evidence)
        badges = " ".join(earned(result.badges)) or "none"
        ET.SubElement(props, "property", name="badges", value=badges)
        if row is not None:  # the evidence state and the committee's re-execution
            ET.SubElement(props, "property", name="evidence", value=row.evidence or "")
            ET.SubElement(props, "property", name="signers", value=signers_text(row.signers))
            ET.SubElement(props, "property", name="reran", value=str(row.reran))
            mismatched = str(row.rerun_mismatches)
            ET.SubElement(props, "property", name="rerun_mismatches", value=mismatched)
            ET.SubElement(props, "property", name="committee", value=committee_text(row))
    many = len({a.attempt for _, a in cases}) > 1
    summaries = {a.label: a for a in result.attempts}
    for task, attempt in cases:
        case = ET.SubElement(
            suite, "testcase", classname=title, name=claim_label(task.id, attempt.attempt, many)
        )
        detail = "\n".join(f"{r.code} {r.message}" for r in attempt.reasons)
        iv = task.interval
        message = f"{attempt.verdict} ({attempt.icml})"
        if iv.floor_alone:
            message += f"; interval: {floor_note(iv.floor_alone)}"
        if attempt.verdict in _FAILURE:
            failure = ET.SubElement(case, "failure", message=message, type=attempt.verdict)
            failure.text = detail
        elif attempt.verdict in _SKIPPED:
            ET.SubElement(case, "skipped", message=f"{message}: {detail}" if detail else message)
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="verdict", value=attempt.verdict)
        ET.SubElement(props, "property", name="icml", value=attempt.icml)
        h = iv.half_width
        ET.SubElement(props, "property", name="value", value=rounded(attempt.value, h))
        if iv.defined:
            interval = f"[{rounded(iv.low, h)}, {rounded(iv.high, h)}]"
            ET.SubElement(props, "property", name="interval", value=interval)
        ET.SubElement(props, "property", name="floor_alone", value=iv.floor_alone or "")
        _rerun_properties(props, summaries.get(attempt.attempt), task.id)


def render_junit(result: AuditResult | AuditTable) -> str:
    """JUnit XML: one test case per task (and attempt)."""
    root = ET.Element("testsuites", name="reprobridge audit")
    if not isinstance(result, AuditTable):
        _suite(root, result)
    else:  # every row a suite named by its label; one not loaded: an error
        for row, item in sections(result):
            if item is not None:
                _suite(root, item, row.label, row)
                continue
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


def _render_csv(result: AuditResult | AuditTable) -> str:
    from reprobridge_sdk.audit.csv_report import render_csv  # noqa: PLC0415 - on use

    return render_csv(result)


#: Report formats by name.
FORMATS: dict[str, Callable[[AuditResult | AuditTable], str]] = {
    "text": render_text,
    "json": render_json,
    "junit": render_junit,
    "html": _render_html,
    "csv": _render_csv,
}


def render(result: AuditResult | AuditTable, fmt: str, *, color: bool = False) -> str:
    """Render in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "text":
        return render_text(result, color=color)
    return FORMATS[fmt](result)
