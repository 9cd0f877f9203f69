"""The ``regex`` kind: a pattern applied line by line to the log or a file (spec §6.9).

The scans are :mod:`reprobridge_sdk.extract._linescan` and ``_allvalues`` (constant memory).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.extract import _linescan
from reprobridge_sdk.extract._allvalues import AllValues, summarise
from reprobridge_sdk.extract._errors import REASONS, ExtractionError, Reason
from reprobridge_sdk.extract._linescan import DEFAULT_CHUNK
from reprobridge_sdk.extract._numbers import parse_number
from reprobridge_sdk.extract._opened import OpenedFile
from reprobridge_sdk.extract.pattern import PatternError, Regex, author_pattern, check_pattern

from ._base import Extracted, Kind, Request, apply_transform, cached

if TYPE_CHECKING:
    from reprobridge_sdk.extract._extraction_cache import ExtractionCache

__all__ = ["KIND", "regex_matches"]

BAD_REGEX = Reason("bad-regex", None, "semantic")
_OCCURRENCES = ("first", "last", "all")


def _occurrence(value: object) -> str:
    occurrence = str(value)
    if occurrence not in _OCCURRENCES:
        msg = f"unknown occurrence {occurrence!r} (first, last or all)"
        raise ExtractionError(BAD_REGEX, msg)
    return occurrence


def _compile(pattern: str, group: str | int) -> Regex:
    try:
        compiled = author_pattern(pattern)
    except PatternError as exc:
        msg = f"invalid regular expression {pattern!r}: {exc.message}"
        raise ExtractionError(BAD_REGEX, msg, dialect=exc.reason == "dialect") from None
    if isinstance(group, int) and not 0 <= group <= compiled.groups:
        raise ExtractionError(BAD_REGEX, f"pattern {pattern!r} has no group {group}")
    if isinstance(group, str) and group not in compiled.groupindex:
        raise ExtractionError(BAD_REGEX, f"pattern {pattern!r} has no group named {group!r}")
    return compiled


def regex_matches(
    path: str | Path | OpenedFile,
    pattern: str,
    *,
    group: str | int = 1,
    occurrence: str = "last",
    chunk_size: int = DEFAULT_CHUNK,
    cache: ExtractionCache | None = None,
) -> tuple[str, ...]:
    """The group text of the first, last or all matching lines of a file (maybe empty)."""
    occurrence = _occurrence(occurrence)
    rx = _compile(pattern, group)
    source = path if isinstance(path, OpenedFile) else Path(path)
    entries = None if cache is None else cache.entries(source)
    found: tuple[str, ...] = cached(
        entries,
        ("regex", rx.pattern, group, occurrence),
        lambda: _linescan.scan(source, rx, group, occurrence, chunk_size),
    )
    return found


def _all(request: Request, rx: Regex, group: str | int) -> Extracted:
    """Every matching line's value, transformed, summarised in one streaming pass."""
    transform = request.transform
    change: Callable[[float], float] | None = None
    key: tuple[object, ...] | None = None
    if transform is not None:
        change = lambda v: apply_transform(v, transform)  # noqa: E731
        key = (transform.get("scale", 1.0), transform.get("offset", 0.0), transform.get("round"))
    summary: AllValues = cached(
        request.entries,
        ("regex-all", rx.pattern, group, key),
        lambda: summarise(request.file, rx, group, request.chunk_size, parse_number, change),
    )
    if not summary.count:
        msg = f"{request.source}: no line matches {rx.pattern!r}"
        raise ExtractionError("no-match", msg, source=request.source)
    return Extracted(
        values=tuple(summary.kept),
        raw=tuple(summary.raw),
        source=request.source,
        count=summary.count,
        mean=summary.mean,
        many=True,
    )


def read(request: Request) -> Extracted:
    spec = request.spec
    group = spec.get("group", 1)
    group = group if isinstance(group, (int, str)) else 1
    occurrence = _occurrence(spec.get("occurrence", "last"))
    rx = _compile(str(spec["pattern"]), group)
    if occurrence == "all":
        return _all(request, rx, group)
    raws: tuple[str, ...] = cached(
        request.entries,
        ("regex", rx.pattern, group, occurrence),
        lambda: _linescan.scan(request.file, rx, group, occurrence, request.chunk_size),
    )
    if not raws:
        msg = f"{request.source}: no line matches {rx.pattern!r}"
        raise ExtractionError("no-match", msg, source=request.source)
    return request.one(parse_number(raws[0]), raws[0])


def check(extract: Mapping[str, Any], pointer: str, add: Callable[..., None]) -> None:
    """R016 and X004 for the pattern, R017 for a group it does not define."""
    compiled = check_pattern(extract.get("pattern"), f"{pointer}/pattern", add)
    group = extract.get("group", 1)
    if compiled is None or isinstance(group, bool):
        return
    where = f"{pointer}/group"  # where the group is, or would be (default 1)
    if isinstance(group, int) and not 0 <= group <= compiled.groups:
        add(
            "R017",
            f"the pattern has {compiled.groups} group(s); group {group} does not exist",
            where,
            hint="capture the number with parentheses, e.g. 'acc: ([0-9.]+)'",
        )
    elif isinstance(group, str) and group not in compiled.groupindex:
        add(
            "R017",
            f"the pattern defines no group named {group!r}",
            where,
            hint=f"write (?P<{group}>...) in the pattern",
        )


KIND = Kind(
    "regex",
    "RegexExtractor",
    read,
    (BAD_REGEX, REASONS["no-match"], REASONS["not-number"]),
    check,
)
