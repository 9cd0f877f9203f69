"""The self-contained HTML audit report (spec audit.md#table-report): inline CSS and SVG, no
asset; a table's page adds a small inline script that sorts and filters its summary.

Elements carry ``class`` and ``data-*`` attributes so the page can be checked from its DOM;
a table's rows link to their sections by :func:`anchor`.
"""

from __future__ import annotations

import re
from html import escape

from reprobridge_sdk.model.audit import (
    AuditFinding,
    AuditResult,
    AuditTable,
    Badges,
    TableRow,
)

from ._svgplot import number_html as _num
from ._svgplot import rounded_html as _r
from ._svgplot import task_plot
from .badges import BADGES, earned
from .present import (
    badge_label,
    check_signature_text,
    claim_label,
    committee_text,
    counted,
    floor_note,
    reason_counts,
    signers_text,
)
from .report import sections, submission_text, why_text

__all__ = ["anchor", "render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d232a;
background:#fff}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{font-size:1.2rem;margin-top:2rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
.badges{display:flex;gap:.5rem;margin:.8rem 0}
.badge{padding:.25rem .7rem;border-radius:1rem;font-weight:600;font-size:.9rem}
.badge.yes{background:#1a7f37;color:#fff}.badge.no{background:#d0d7de;color:#57606a}
.results{padding:.25rem .7rem;border-radius:1rem;font-size:.9rem;color:#7d4e00;
border:1px dashed #9a6700}
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
#rows th{cursor:pointer}.status{font-weight:600}.s-passed{color:#116329}
.s-failed,.s-error{color:#a40e26}
.floor-alone{color:#7d4e00;font-weight:600}.claims{margin:0;padding-left:1rem}
"""


def _floor(reason: str | None) -> str:
    if not reason:
        return ""
    return (
        f' <span class="floor-alone" data-floor-alone="{escape(reason)}" title="the interval '
        f'is the floor alone: no spread of the references in it">{floor_note(reason)}</span>'
    )


def anchor(index: int, label: str) -> str:
    """A safe, unique HTML id for row ``index``: ``a<n>-`` and the label's letters and digits."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:40].rstrip("-")
    return f"a{index + 1}-{slug}" if slug else f"a{index + 1}"


def _verdict(verdict: str) -> str:
    return f'<span class="verdict v-{escape(verdict)}">{escape(verdict)}</span>'


def _reasons(items: list[tuple[str, str]]) -> str:
    if not items:
        return ""
    lis = "".join(
        f'<li><span class="code">{escape(code)}</span> {escape(message)}</li>'
        for code, message in items
    )
    return f'<ul class="reasons">{lis}</ul>'


def _withheld(reasons: list[AuditFinding]) -> list[str]:
    """A withheld badge's reasons, each code once with its count and first message."""
    out: list[str] = []
    for group in reason_counts(reasons):
        first = next(r for r in reasons if r.code == group.code)
        out.append(
            f'<li class="withheld" data-code="{escape(group.code)}" data-count="{group.count}">'
            f'<span class="code">{escape(counted(group))}</span> {escape(group.message)}'
            + (f' <span class="meta">{escape(first.file)}</span>' if first.file else "")
            + "</li>"
        )
    return out


def _badge_details(result: AuditResult) -> str:
    """Per badge: why it is withheld, or the evidence behind it; and the checks."""
    badges = result.badges
    parts: list[str] = []
    for name in BADGES:
        reasons = badges.reasons.get(name, [])
        evidence = badges.evidence.get(name, [])
        checks = badges.checks.get(name, [])
        items = "".join(_withheld(reasons))
        items += "".join(
            f'<li class="evidence" data-evidence="{escape(e)}">{escape(e)}</li>' for e in evidence
        )
        if name == "reusable":
            items += _check_signer(badges)
        items += "".join(
            f'<li class="check" data-check="{escape(c)}">check <span class="code">'
            f"{escape(c)}</span></li>"
            for c in checks
        )
        label = badge_label(name)
        verdict = "withheld" if reasons else "awarded"
        parts.append(
            f'<details class="badge-detail" data-badge="{name}"><summary>{label}: '
            f"{verdict}</summary><ul>{items}</ul></details>"
        )
    return "".join(parts)


def _check_signer(badges: Badges) -> str:
    """Who signed the clean-room check record, in the reusable badge's details."""
    record = badges.check_record
    state = record.state if record is not None else "none"
    return (
        f'<li class="check-signer" data-check-signer="{state}">clean-room check record: '
        f"{escape(check_signature_text(record))}</li>"
    )


def _rerun(result: AuditResult) -> str:
    """Per attempt that re-executed runs: recorded beside re-executed values, the shift tests
    and the sample seed (secret until the report)."""
    opts = result.options
    if opts.rerun is None:
        return ""
    how = "drawn at the audit" if opts.rerun_seed_drawn else "given"
    out = [
        f'<p class="meta rerun-seed" data-seed="{opts.rerun_seed}">re-execution: '
        f"{escape(str(opts.rerun))} per launcher and task, sample seed {opts.rerun_seed} "
        f"({how})</p>"
    ]
    head = (
        "<tr><th>attempt</th><th>run</th><th>task</th><th>recorded</th><th>re-executed</th>"
        "<th>difference</th><th>tolerance</th><th>held</th></tr>"
    )
    rows: list[str] = []
    for attempt in result.attempts:
        for run in attempt.runs:
            for row in run.rerun:
                limit = "exact" if row.tolerance == 0 else f"±{_num(row.tolerance)}"
                rows.append(
                    f'<tr class="rerun" data-run="{escape(run.run)}" '
                    f'data-task="{escape(row.task)}" data-held="{str(row.held).lower()}">'
                    f"<td>{escape(attempt.label)}</td><td>{escape(run.run)}</td>"
                    f"<td>{escape(row.task)}</td><td>{_num(row.recorded)}</td>"
                    f"<td>{_num(row.rerun)}</td><td>{_num(row.difference)}</td>"
                    f"<td>{limit} ({escape(row.basis)})</td>"
                    f"<td>{'yes' if row.held else 'no'}</td></tr>"
                )
        rows.extend(
            f'<tr class="shift" data-task="{escape(t.task)}" data-shifted='
            f'"{str(t.shifted).lower()}"><td>{escape(attempt.label)}</td>'
            f'<td colspan="7">shift of {escape(t.task)}: mean difference '
            f"{_num(t.mean_difference)} over {t.n} runs, paired t test p = {_num(t.p, 3)} "
            f"(level {_num(t.level)}): {'shifted' if t.shifted else 'no shift'}</td></tr>"
            for t in attempt.shift_tests
        )
        rows.extend(
            f'<tr class="shift-skipped" data-task="{escape(t.task)}" data-n="{t.n}">'
            f"<td>{escape(attempt.label)}</td>"
            f'<td colspan="7">shift of {escape(t.task)} not tested: {escape(t.reason)}</td></tr>'
            for t in attempt.shift_skipped
        )
    if rows:
        out.append(f'<table class="reruns">{head}{"".join(rows)}</table>')
    return "".join(out)


def _artifact(result: AuditResult, level: int, row: TableRow | None = None, ident: str = "") -> str:
    h = f"h{level}"
    badges = result.badges
    where = f' id="{ident}"' if ident else ""
    out = [f'<section class="artifact"{where} data-artifact="{escape(result.artifact)}">']
    title = f"{escape(result.artifact)}: {escape(result.title)}"
    if row is not None:
        title = f'{escape(row.label)} <span class="meta">({title})</span>'
    out.append(f"<{h}>{title}</{h}>")
    out.append('<div class="badges">')
    for name in BADGES:
        flag = bool(getattr(badges, name))
        title = escape(badges.criteria.get(name, ""))
        label = badge_label(name)
        out.append(
            f'<span class="badge {"yes" if flag else "no"}" data-badge="{name}" '
            f'title="{title}">{label}: {"yes" if flag else "no"}</span>'
        )
    if badges.results == "consistent":
        out.append(
            '<span class="results consistent" data-results="consistent" '
            'title="every rule holds, but no run the committee made: not the badge">'
            "results consistent (author evidence)</span>"
        )
    out.append("</div>")
    out.append(_badge_details(result))
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
        hw = iv.half_width
        interval = f"[{_r(iv.low, hw)}, {_r(iv.high, hw)}]" if iv.defined else "none"
        span = max(len(task.attempts), 1)
        first = (
            f'<td rowspan="{span}">{escape(task.id)}</td><td rowspan="{span}">'
            f'{escape(task.metric)}</td><td rowspan="{span}">{interval} (n={iv.n})'
            f"{_floor(iv.floor_alone)}</td>"
            f'<td rowspan="{span}">{_r(task.published, hw)}</td>'
        )
        if not task.attempts:
            rows.append(
                f'<tr class="task" data-task="{escape(task.id)}">{first}'
                '<td colspan="6">no attempt</td></tr>'
            )
        for i, attempt in enumerate(task.attempts):
            cells = (
                f"<td>{escape(attempt.attempt)}</td><td>{_verdict(attempt.verdict)}"
                f" ({escape(attempt.icml)})</td><td>{_r(attempt.value, hw)}</td>"
                f"<td>{_num(attempt.z, 3)}</td><td>{_num(attempt.p, 3)}</td>"
                f"<td>{_reasons([(r.code, r.message) for r in attempt.reasons])}</td>"
            )
            rows.append(
                f'<tr class="task" data-task="{escape(task.id)}" '
                f'data-attempt="{escape(attempt.attempt)}" '
                f'data-verdict="{escape(attempt.verdict)}">{first if i == 0 else ""}{cells}</tr>'
            )
    out.append(f'<table class="tasks">{head}{"".join(rows)}</table>')
    out.append(_rerun(result))
    for task in result.tasks:
        out.append(f"<h{level + 1}>{escape(task.id)}</h{level + 1}>{task_plot(task)}")
    out.append("</section>")
    return "\n".join(out)


def _unloaded(row: TableRow, ident: str) -> str:
    """The section of a row whose artifact could not be loaded: its findings."""
    return (
        f'<section class="artifact unloaded" id="{ident}" data-label="{escape(row.label)}">'
        f'<h2>{escape(row.label)} <span class="meta">(not loaded)</span></h2>'
        f"{_reasons([(f.code, f.message) for f in row.findings])}</section>"
    )


def render_html(result: AuditResult | AuditTable) -> str:
    """The whole page as one string."""
    if isinstance(result, AuditResult):
        title = f"Audit of {result.artifact}"
        body = _artifact(result, 1)
    else:
        title = "Audit of many artifacts"
        parts = [_table(result)]
        for index, (row, item) in enumerate(sections(result)):
            ident = anchor(index, row.label)
            parts.append(_artifact(item, 2, row, ident) if item else _unloaded(row, ident))
        body = "".join(parts)
    script = f"<script>{_SCRIPT}</script>" if isinstance(result, AuditTable) else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head><body>\n{body}\n{script}</body></html>\n"
    )


#: Sorting and filtering of the table, inline and offline. Clicking a column header sorts by
#: it (again: reversed; numbers by value, rows without a number last in either direction);
#: the text box keeps rows whose text contains it; the status menu
#: keeps rows of one status. The page's fragment sets the initial state, e.g.
#: ``#sort=success&dir=desc&q=toy&status=failed`` (so a headless browser can be checked).
_SCRIPT = """
(function(){
var table=document.getElementById('rows');if(!table)return;
var body=table.tBodies[0],heads=table.tHead.rows[0].cells;
var q=document.getElementById('filter'),st=document.getElementById('status');
var state={sort:null,dir:'asc'};
function key(row,col){var c=row.cells[col];var v=c.getAttribute('data-value');
 if(v!==null&&v!==''&&!isNaN(Number(v)))return Number(v);return c.textContent.toLowerCase();}
function sort(col,dir){var rows=Array.prototype.slice.call(body.rows);
 rows.sort(function(a,b){var x=key(a,col),y=key(b,col);
  if(typeof x!==typeof y)return typeof x==='number'?-1:1;
  var r=x<y?-1:x>y?1:0;return dir==='desc'?-r:r;});
 rows.forEach(function(r){body.appendChild(r);});
 for(var i=0;i<heads.length;i++)heads[i].setAttribute('aria-sort',
  i===col?(dir==='desc'?'descending':'ascending'):'none');
 state.sort=col;state.dir=dir;}
function filter(){var text=q.value.toLowerCase(),want=st.value,shown=0;
 Array.prototype.forEach.call(body.rows,function(r){
  var ok=(!text||r.textContent.toLowerCase().indexOf(text)>=0)&&
   (!want||r.getAttribute('data-status')===want);
  r.hidden=!ok;if(ok)shown++;});
 document.getElementById('shown').textContent=String(shown);}
Array.prototype.forEach.call(heads,function(h,i){h.addEventListener('click',function(){
 sort(i,state.sort===i&&state.dir==='asc'?'desc':'asc');});});
q.addEventListener('input',filter);st.addEventListener('change',filter);
var p={};location.hash.replace(/^#/,'').split('&').forEach(function(kv){
 var i=kv.indexOf('=');
 if(i>0)p[decodeURIComponent(kv.slice(0,i))]=decodeURIComponent(kv.slice(i+1));});
if(p.q)q.value=p.q;if(p.status)st.value=p.status;
if(p.sort){for(var i=0;i<heads.length;i++)if(heads[i].getAttribute('data-key')===p.sort)
 sort(i,p.dir==='desc'?'desc':'asc');}
filter();
})();
"""

_COLUMNS = (
    ("artifact", "artifact"),
    ("status", "status"),
    ("tasks", "tasks"),
    ("success", "success"),
    ("committee", "committee"),
    ("errors", "validation errors"),
    ("warnings", "warnings"),
    ("infos", "infos"),
    ("runs", "runs"),
    ("invalid", "invalid runs"),
    ("stale", "stale runs"),
    ("reran", "re-executed"),
    ("badges", "badges"),
    ("why", "why"),
    ("claims", "claims"),
    ("path", "path or archive"),
)


def _cell(text: str, value: object = None) -> str:
    data = "" if value is None else f' data-value="{escape(str(value))}"'
    return f"<td{data}>{text}</td>"


def _withheld_counts(row: TableRow) -> str:
    if not row.withheld:
        return ""
    parts = [
        f"{badge_label(badge)} withheld: "
        + ", ".join(f'<span class="code">{escape(counted(g))}</span>' for g in groups)
        for badge, groups in row.withheld.items()
    ]
    return '<br><span class="meta withheld-counts">' + "<br>".join(parts) + "</span>"


def _why(row: TableRow) -> str:
    if row.why is None:
        return '<span class="why">&#8211;</span>'
    return (
        f'<span class="why" data-code="{escape(row.why.code)}">{escape(why_text(row.why))}</span>'
    )


def _claims(row: TableRow) -> str:
    """One item per claim: its verdict beside the ICML name, value, interval, floor, code."""
    if not row.claims:
        return ""
    many = len({c.attempt for c in row.claims}) > 1
    items: list[str] = []
    for c in row.claims:
        h = c.half_width
        interval = f" in [{_r(c.low, h)}, {_r(c.high, h)}]" if c.low is not None else ""
        code = f' <span class="code">{escape(c.code)}</span>' if c.code else ""
        items.append(
            f'<li class="claim" data-task="{escape(c.task)}" data-verdict="{escape(c.verdict)}"'
            f' data-icml="{escape(c.icml)}">{escape(claim_label(c.task, c.attempt, many))}: '
            f"{_verdict(c.verdict)} ({escape(c.icml)}) {_r(c.value, h)}{interval}"
            f"{_floor(c.floor_alone)}{code}</li>"
        )
    return f'<ul class="claims">{"".join(items)}</ul>'


def _submission(row: TableRow) -> str:
    """The evidence state of a row and its submissions-file entry, below its path."""
    out = ""
    if row.evidence is not None:
        out += (
            f'<br><span class="meta row-evidence" data-row-evidence="{escape(row.evidence)}">'
            f"evidence: {escape(row.evidence)}</span>"
        )
    if row.signers:
        out += (
            '<br><span class="meta row-signers">signed by: '
            f"{escape(signers_text(row.signers))}</span>"
        )
    if row.submission is not None:
        out += (
            f'<br><span class="meta submission" data-decision="{escape(row.submission.decision)}">'
            f"{escape(submission_text(row.submission))}</span>"
        )
    return out


def _table(table: AuditTable) -> str:
    """The summary table: one row per artifact given, sortable and filterable offline."""
    head = "".join(
        f'<th data-key="{key}" aria-sort="none" title="sort by {escape(label)}">'
        f"{escape(label)}</th>"
        for key, label in _COLUMNS
    )
    rows: list[str] = []
    for index, row in enumerate(table.rows):
        badges = row.badges
        earned_text = ", ".join(earned(badges)) if badges is not None else ""
        where = (
            f'{escape(row.path)}<br><span class="code">sha256:{escape(row.archive_sha256)}</span>'
            if row.archive_sha256
            else escape(row.path)
        )
        where += _submission(row)
        validation = row.validation
        reran = f"{row.reran} ({row.rerun_mismatches} mismatched)" if row.reran else "0"
        link = f'<a href="#{anchor(index, row.label)}">{escape(row.label)}</a>'
        rows.append(
            f'<tr class="row" data-status="{escape(row.status)}" '
            f'data-label="{escape(row.label)}">'
            + _cell(link)
            + _cell(f'<span class="status s-{escape(row.status)}">{escape(row.status)}</span>')
            + _cell(str(row.tasks), row.tasks)
            + _cell(_num(row.task_success), row.task_success)
            + _cell(escape(committee_text(row)) or "&#8211;", row.committee_success)
            + _cell(str(validation.get("error", 0)), validation.get("error", 0))
            + _cell(str(validation.get("warning", 0)), validation.get("warning", 0))
            + _cell(str(validation.get("info", 0)), validation.get("info", 0))
            + _cell(str(row.runs), row.runs)
            + _cell(str(row.invalid_runs), row.invalid_runs)
            + _cell(str(row.stale_runs), row.stale_runs)
            + _cell(reran, row.reran)
            + _cell((escape(earned_text) or "none") + _withheld_counts(row))
            + _cell(_why(row))
            + _cell(_claims(row))
            + _cell(where)
            + "</tr>"
        )
    failed = sum(r.status == "error" for r in table.rows)
    invalid = sum(r.invalid_runs for r in table.rows)
    stale = sum(r.stale_runs for r in table.rows)
    return (
        "<h1>Audit of many artifacts</h1>"
        f'<p class="meta">{len(table.rows)} artifacts ({failed} not loaded, counted as failed '
        f"in every rate); invalid runs {invalid}, stale runs {stale}; task-level success "
        f"{_num(table.task_level)}, paper-macro success {_num(table.paper_macro)}, label "
        f"spread {_num(table.label_spread)}; verdict "
        f"<strong>{'PASS' if table.passed else 'FAIL'}</strong></p>"
        '<p class="controls"><label>filter <input id="filter" type="search"></label> '
        '<label>status <select id="status"><option value="">any</option>'
        '<option value="passed">passed</option><option value="failed">failed</option>'
        '<option value="error">error</option></select></label> '
        f'showing <span id="shown">{len(table.rows)}</span></p>'
        f'<table class="summary" id="rows"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
