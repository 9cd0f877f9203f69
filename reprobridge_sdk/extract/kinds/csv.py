"""The ``csv`` kind: a cell of a CSV file with a header row (spec/manifest.md §6.9)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reprobridge_sdk.extract._errors import REASONS, ExtractionError, Reason
from reprobridge_sdk.extract._numbers import as_number

from ._base import Extracted, Kind, Request, cached

__all__ = ["KIND"]

BAD_CSV = Reason("bad-csv", "X001")
_Row = dict[str, Any]


def _columns(name: str, header: Sequence[str] | None, spec: Mapping[str, Any]) -> None:
    """bad-csv unless the header names the column and every ``where`` column."""
    if not header:
        raise ExtractionError(BAD_CSV, f"{name} has no header row")
    missing = [c for c in [str(spec["column"]), *(spec.get("where") or {})] if c not in header]
    if missing:
        msg = f"{name} has no column {missing[0]!r} (columns: {', '.join(header)})"
        raise ExtractionError(BAD_CSV, msg)


def _by_index(rows: Iterable[_Row], index: int) -> _Row | None:
    """The data row at ``index``; a stream keeps at most ``-index`` rows."""
    if isinstance(rows, list):
        return rows[index] if -len(rows) <= index < len(rows) else None
    if index >= 0:
        return next((r for i, r in enumerate(rows) if i == index), None)
    tail: deque[_Row] = deque(rows, maxlen=-index)
    return tail[0] if len(tail) == -index else None


def _select(
    name: str, header: Sequence[str] | None, rows: Iterable[_Row], spec: Mapping[str, Any]
) -> tuple[float, str]:
    _columns(name, header, spec)
    column, where, index = str(spec["column"]), spec.get("where"), int(spec.get("row", -1))
    if where:
        wanted = {str(k): str(v) for k, v in where.items()}
        row = next((r for r in rows if all(r.get(k) == v for k, v in wanted.items())), None)
        if row is None:
            raise ExtractionError("no-match", f"{name}: no row where {wanted}")
    else:
        row = _by_index(rows, index)
        if row is None:
            raise ExtractionError("no-match", f"{name}: no data row {index}")
    cell = row.get(column)
    if cell is None:
        raise ExtractionError(BAD_CSV, f"{name}: the row has no cell in column {column!r}")
    return as_number(cell, f"column {column!r}")


def _whole(request: Request) -> tuple[list[str] | None, list[_Row]]:
    import csv  # noqa: PLC0415 - start-up: only for CSV outputs

    try:
        with request.file.open_text(encoding="utf-8", errors="replace", newline="") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames
            return (list(header) if header else None), list(reader)
    except csv.Error as exc:  # kept by the batch cache as the failure it is
        raise ExtractionError(BAD_CSV, f"{request.file.name} is not valid CSV: {exc}") from None


def read(request: Request) -> Extracted:
    """The cell; a batch parses the table once, a single read streams it (memory bounded by
    one row, or by the rows counted from the end)."""
    import csv  # noqa: PLC0415 - start-up: only for CSV outputs

    file, spec = request.file, request.spec
    try:
        if request.entries is not None:
            header, rows = cached(request.entries, ("csv",), lambda: _whole(request))
            return request.one(*_select(file.name, header, rows, spec))
        with file.open_text(encoding="utf-8", errors="replace", newline="") as handle:
            reader = csv.DictReader(handle)
            return request.one(*_select(file.name, reader.fieldnames, reader, spec))
    except csv.Error as exc:
        raise ExtractionError(BAD_CSV, f"{file.name} is not valid CSV: {exc}") from None


KIND = Kind("csv", "CsvExtractor", read, (BAD_CSV, REASONS["no-match"], REASONS["not-number"]))
