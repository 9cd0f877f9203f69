"""The ``json`` kind: an RFC 6901 JSON Pointer into a JSON file (spec §6.9)."""

from __future__ import annotations

from typing import Any

from reprobridge_sdk.extract._errors import REASONS, ExtractionError, Reason
from reprobridge_sdk.extract._numbers import as_number
from reprobridge_sdk.io import reading, safefs
from reprobridge_sdk.io.pointer import PointerError, walk

from ._base import Extracted, Kind, Request, cached

__all__ = ["KIND"]

BAD_POINTER = Reason("bad-json-pointer", "X001")
DECODE = Reason("decode", "X001")


def _read_json(request: Request) -> Any:
    file = request.file
    try:
        return reading.parse_json(file.read_bytes(safefs.MAX_EVIDENCE_BYTES), name=file.lazy_name)
    except safefs.UnsafeFileError as exc:
        raise ExtractionError(DECODE, f"{file.name}: {exc.message}") from None
    except reading.Unreadable as exc:
        if not exc.malformed:  # too deep
            raise ExtractionError(DECODE, f"{file.name}: {exc.message}") from None
        raise ExtractionError(DECODE, f"{file.name} is not valid JSON: {exc}") from None


def read(request: Request) -> Extracted:
    document = cached(request.entries, ("json",), lambda: _read_json(request))
    pointer = str(request.spec.get("pointer", ""))
    try:
        found = walk(document, pointer)
    except PointerError as exc:
        raise ExtractionError(BAD_POINTER, str(exc)) from None
    return request.one(*as_number(found, f"JSON pointer {pointer!r}"))


KIND = Kind("json", "JsonExtractor", read, (BAD_POINTER, DECODE, REASONS["not-number"]))
