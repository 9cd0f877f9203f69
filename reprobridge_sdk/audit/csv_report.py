"""The committee's table as CSV, one row per artifact (spec audit.md#table-csv).

RFC 4180 in UTF-8 with a byte-order mark; the columns are :data:`COLUMNS`, then
:data:`CLAIM_COLUMNS` for each claim. A text cell that could start a spreadsheet formula is
prefixed with a quote and its control characters are shown (:func:`csv_text`, OWASP "CSV
injection").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from reprobridge_sdk.findings import terminal_text
from reprobridge_sdk.model.audit import AuditResult, AuditTable, TableClaim, TableRow

from .badges import earned
from .present import check_signature_text, claim_label, counted, rounded, signers_text

__all__ = ["CLAIM_COLUMNS", "COLUMNS", "csv_document", "csv_text", "render_csv"]

#: The columns of every row.
COLUMNS = (
    "id",
    "path",
    "artifact",
    "archive_sha256",
    "status",
    "committee_runs",
    "committee_success",
    "badges",
    "withheld",
    "why_code",
    "why",
    "evidence",
    "signers",
    "check_record",
    "decision",
    "reviewers",
    "notes",
)
#: The columns of claim ``n``: ``claim_n`` then ``claim_n_<suffix>``.
CLAIM_COLUMNS = ("", "verdict", "icml", "value", "low", "high", "floor_alone", "code")

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: str | None) -> str:
    """A text cell, safe to open: control characters shown, a formula start quoted."""
    cell = terminal_text(value, lines=True) if value else ""
    return f"'{cell}" if cell.startswith(_FORMULA) else cell


def _badges(row: TableRow) -> str:
    badges = row.badges
    if badges is None:
        return ""
    return " ".join(earned(badges))


def _withheld(row: TableRow) -> str:
    return "; ".join(
        f"{badge}: {' '.join(counted(g) for g in groups)}" for badge, groups in row.withheld.items()
    )


def _claim(claim: TableClaim, many: bool) -> list[str]:
    h = claim.half_width
    return [
        csv_text(claim_label(claim.task, claim.attempt, many)),
        claim.verdict,
        claim.icml,
        rounded(claim.value, h),
        rounded(claim.low, h),
        rounded(claim.high, h),
        claim.floor_alone or "",
        csv_text(claim.code),
    ]


def _submission(row: TableRow) -> list[str]:
    """decision, reviewers (space-separated) and notes of a --submissions row, or empty."""
    info = row.submission
    if info is None:
        return ["", "", ""]
    return [info.decision, csv_text(" ".join(info.reviewers)), csv_text(info.notes)]


def _row_cells(row: TableRow, width: int) -> list[str]:
    why = row.why
    cells = [
        csv_text(row.label),
        csv_text(row.path),
        csv_text(row.artifact),
        row.archive_sha256 or "",
        row.status,
        str(row.committee_runs) if row.status != "error" else "",
        "" if row.committee_success is None else f"{100 * row.committee_success:.1f}%",
        _badges(row),
        csv_text(_withheld(row)),
        csv_text(why.code if why else None),
        csv_text(why.message if why else None),
        row.evidence or "",
        csv_text(signers_text(row.signers)),
        "" if row.badges is None else csv_text(check_signature_text(row.badges.check_record)),
        *_submission(row),
    ]
    many = len({c.attempt for c in row.claims}) > 1
    for claim in row.claims:
        cells.extend(_claim(claim, many))
    cells.extend([""] * (len(CLAIM_COLUMNS) * (width - len(row.claims))))
    return cells


def render_csv(result: AuditResult | AuditTable) -> str:
    """The table as CSV text (an audit of one artifact: a table of one row)."""
    if isinstance(result, AuditResult):
        from .table import table_row  # noqa: PLC0415 - avoids a cycle at import

        rows = [table_row(result)]
    else:
        rows = list(result.rows)
    width = max([len(r.claims) for r in rows] + [0])
    header = list(COLUMNS)
    for n in range(1, width + 1):
        header.extend(f"claim_{n}_{s}" if s else f"claim_{n}" for s in CLAIM_COLUMNS)
    return csv_document(header, (_row_cells(row, width) for row in rows))


def csv_document(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """RFC 4180 text with a byte-order mark (module doc); cells already made safe."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return "\ufeff" + out.getvalue()
