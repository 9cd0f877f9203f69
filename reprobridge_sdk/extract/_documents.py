"""The file extractors of built-in kinds: ``json`` (an RFC 6901 pointer), ``csv`` (a cell by
column and row or ``where``) and ``yaml`` (a dotted key path), each reading the file opened by
the safe file layer (:class:`._opened.OpenedFile`) through its descriptor, under
:data:`~reprobridge_sdk.io.safefs.MAX_EVIDENCE_BYTES`; and :func:`cached`, the batch cache's
use by every extractor (a parsed document, a scan or its failure computed once per version of
a file). The rules of each kind are in :mod:`reprobridge_sdk.extract.extraction`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.pointer import PointerError, tokens_of, walk

from ._errors import ExtractionError
from ._numbers import as_number

if TYPE_CHECKING:
    from ._extraction_cache import _FileEntries
    from ._opened import OpenedFile

__all__ = [
    "cached",
    "extract_csv",
    "extract_json",
    "extract_yaml",
    "json_document",
    "pointed",
    "pointer_tokens",
]

_Key = tuple[object, ...]


def cached(entries: _FileEntries | None, what: _Key, compute: Callable[[], Any]) -> Any:
    """``compute()``, or the batch's earlier result; a stored failure is raised again."""
    if entries is None:
        return compute()
    found = entries.get(what, lambda: _outcome(compute))
    if isinstance(found, ExtractionError):
        raise ExtractionError(found.reason, found.message, source=found.source)
    return found


def _outcome(compute: Callable[[], Any]) -> Any:
    """``compute()``'s result, or the :class:`ExtractionError` it raised (kept as a value)."""
    try:
        return compute()
    except ExtractionError as exc:
        return exc


def _json_pointer(document: Any, pointer: str) -> Any:
    try:
        return walk(document, pointer)
    except PointerError as exc:
        raise ExtractionError("bad-json-pointer", str(exc)) from None


def _read_json(path: OpenedFile) -> Any:
    try:
        raw = path.read_bytes(safefs.MAX_EVIDENCE_BYTES)
        return safefs.loads_json(raw, path=path.lazy_name)
    except safefs.UnsafeFileError as exc:
        raise ExtractionError("decode", f"{path.name}: {exc.message}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        msg = f"{path.name} is not valid JSON: {exc}"
        raise ExtractionError("decode", msg) from None


def extract_json(
    path: OpenedFile, spec: Mapping[str, Any], entries: _FileEntries | None = None
) -> tuple[float, str]:
    document = json_document(path, entries)
    pointer = str(spec.get("pointer", ""))
    return as_number(_json_pointer(document, pointer), f"JSON pointer {pointer!r}")


_JSON_KEY: _Key = ("json",)


def json_document(path: OpenedFile, entries: _FileEntries | None) -> Any:
    """The parsed JSON file (the batch's, parsed once per version of the file)."""
    return cached(entries, _JSON_KEY, lambda: _read_json(path))


def pointer_tokens(pointer: str) -> tuple[str, ...] | None:
    """The keys an RFC 6901 ``pointer`` names, unescaped (``~1`` then ``~0``), for
    :func:`pointed`; ``None`` for a pointer that is not empty and does not start with ``/``
    (its error is :func:`_json_pointer`'s)."""
    try:
        return tokens_of(pointer)
    except PointerError:
        return None


def pointed(document: Any, pointer: str, tokens: tuple[str, ...] | None) -> Any:
    """``_json_pointer(document, pointer)`` with ``tokens`` (:func:`pointer_tokens` of
    ``pointer``) made once: object keys are followed directly; anything else (a list, a
    missing key, a bad pointer) takes the general walk, which gives the same value or the
    same error."""
    current = document
    if tokens is not None:
        for key in tokens:
            if type(current) is not dict or key not in current:
                return _json_pointer(document, pointer)
            current = current[key]
        return current
    return _json_pointer(document, pointer)


def _select_row(
    name: str, header: Sequence[str] | None, rows: Iterable[dict[str, Any]], spec: Mapping[str, Any]
) -> tuple[float, str]:
    column = str(spec["column"])
    where = spec.get("where")
    index = int(spec.get("row", -1))
    if not header:
        msg = f"{name} has no header row"
        raise ExtractionError("bad-csv", msg)
    missing = [c for c in [column, *(where or {})] if c not in header]
    if missing:
        msg = f"{name} has no column {missing[0]!r} (columns: {', '.join(header)})"
        raise ExtractionError("bad-csv", msg)
    row: dict[str, Any] | None = None
    if where:
        wanted = {str(k): str(v) for k, v in where.items()}
        row = next((r for r in rows if all(r.get(k) == v for k, v in wanted.items())), None)
        if row is None:
            msg = f"{name}: no row where {wanted}"
            raise ExtractionError("no-match", msg)
    elif isinstance(rows, list):
        row = rows[index] if -len(rows) <= index < len(rows) else None
    elif index >= 0:
        row = next((r for i, r in enumerate(rows) if i == index), None)
    else:
        tail: deque[dict[str, Any]] = deque(rows, maxlen=-index)
        row = tail[0] if len(tail) == -index else None
    if row is None:
        msg = f"{name}: no data row {index}"
        raise ExtractionError("no-match", msg)
    cell = row.get(column)
    if cell is None:
        msg = f"{name}: the row has no cell in column {column!r}"
        raise ExtractionError("bad-csv", msg)
    return as_number(cell, f"column {column!r}")


def _read_csv(path: OpenedFile) -> tuple[list[str] | None, list[dict[str, Any]]]:
    import csv  # noqa: PLC0415 - start-up: only for CSV outputs

    try:
        with path.open_text(encoding="utf-8", errors="replace", newline="") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames
            return (list(header) if header else None), list(reader)
    except csv.Error as exc:
        msg = f"{path.name} is not valid CSV: {exc}"
        raise ExtractionError("bad-csv", msg) from None


def extract_csv(
    path: OpenedFile, spec: Mapping[str, Any], entries: _FileEntries | None = None
) -> tuple[float, str]:
    if entries is not None:  # the whole table, parsed once for every extractor of the batch
        header, rows = cached(entries, ("csv",), lambda: _read_csv(path))
        return _select_row(path.name, header, rows, spec)
    import csv  # noqa: PLC0415 - start-up: only for CSV outputs

    try:  # streamed: memory bounded by one row (or by the rows counted from the end)
        with path.open_text(encoding="utf-8", errors="replace", newline="") as handle:
            reader = csv.DictReader(handle)
            return _select_row(path.name, reader.fieldnames, reader, spec)
    except csv.Error as exc:
        msg = f"{path.name} is not valid CSV: {exc}"
        raise ExtractionError("bad-csv", msg) from None


def _read_yaml(path: OpenedFile) -> Any:
    import yaml  # noqa: PLC0415 - only YAML extractors pay for it

    from reprobridge_sdk.io.document import MAX_DEPTH, nests_too_deep  # noqa: PLC0415

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = path.read_bytes(safefs.MAX_EVIDENCE_BYTES).decode("utf-8", "replace")
        if nests_too_deep(text):
            msg = f"{path.name} nests deeper than {MAX_DEPTH} levels"
            raise ExtractionError("bad-yaml", msg)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except safefs.UnsafeFileError as exc:
        raise ExtractionError("bad-yaml", f"{path.name}: {exc.message}") from None
    except yaml.YAMLError as exc:
        msg = f"{path.name} is not valid YAML: {exc}"
        raise ExtractionError("bad-yaml", msg) from None


def extract_yaml(
    path: OpenedFile, spec: Mapping[str, Any], entries: _FileEntries | None = None
) -> tuple[float, str]:
    document = cached(entries, ("yaml",), lambda: _read_yaml(path))
    key = str(spec["key"])
    current: Any = document
    for part in key.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and re.fullmatch(r"-?\d+", part):
            position = int(part)
            if not -len(current) <= position < len(current):
                msg = f"YAML key {key!r}: no item {part} in a list of {len(current)}"
                raise ExtractionError("no-match", msg)
            current = current[position]
        else:
            msg = f"YAML key {key!r}: no {part!r}"
            raise ExtractionError("no-match", msg)
    return as_number(current, f"YAML key {key!r}")
