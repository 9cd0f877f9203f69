"""A kind a test adds: ``tsv``, a column of a tab-separated file with a header row.

Written as a built-in kind is (a module of ``reprobridge_sdk/extract/kinds/``): its name, its
reader, its reasons and their codes, and its semantic rule. ``row_pattern`` (optional) picks
the last row whose first cell matches it; otherwise the last row counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reprobridge_sdk import ExtractionError
from reprobridge_sdk.extract._errors import REASONS, Reason
from reprobridge_sdk.extract._numbers import as_number
from reprobridge_sdk.extract.kinds import Extracted, Kind, Request
from reprobridge_sdk.extract.pattern import PatternError, author_pattern, check_pattern

BAD_TSV = Reason("bad-tsv", "X001")
#: A row pattern that is not one: the semantic layer reports it (R016, X004), replay does not.
BAD_ROW_PATTERN = Reason("bad-row-pattern", None, "semantic")
REASONS_OF_TSV = (BAD_TSV, BAD_ROW_PATTERN, REASONS["no-match"], REASONS["not-number"])


def read(request: Request) -> Extracted:
    text = request.file.read_bytes(1 << 20).decode("utf-8", "replace")
    rows = [line.split("\t") for line in text.splitlines() if line]
    column = str(request.spec["column"])
    if not rows or column not in rows[0]:
        raise ExtractionError(BAD_TSV, f"{request.file.name}: no column {column!r}")
    pattern = request.spec.get("row_pattern")
    try:
        rx = author_pattern(pattern) if isinstance(pattern, str) else None
    except PatternError as exc:
        raise ExtractionError(BAD_ROW_PATTERN, exc.message) from None
    data = [row for row in rows[1:] if rx is None or rx.search(row[0])]
    if not data:
        raise ExtractionError("no-match", f"{request.file.name}: no data row")
    return request.one(*as_number(data[-1][rows[0].index(column)], f"column {column!r}"))


def check(extract: Mapping[str, Any], pointer: str, add: Callable[..., None]) -> None:
    check_pattern(extract.get("row_pattern"), f"{pointer}/row_pattern", add)


KIND = Kind(
    "tsv", "TsvExtractor", read, (BAD_TSV, REASONS["no-match"], REASONS["not-number"]), check
)
