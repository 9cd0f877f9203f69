"""Measurement extraction: read a number off a run's log or output files (spec §6.9).

This module works on *plain mappings* (the YAML form of an extractor and a transform) so the
validator can call it without building pydantic models; a pydantic model is accepted too and
turned into a mapping with ``model_dump()``.

Extractors
----------
``regex``
    The pattern is applied **line by line** (lines end at LF; a trailing CR is dropped; bytes
    that are not UTF-8 are decoded with U+FFFD replacement, so any log can be read). A line
    counts when ``pattern.search(line)`` matches and the chosen group (name or number)
    took part in the match; each line gives at most one value (its first match).
    ``occurrence`` picks the first matching line, the last, or all of them in order.

    *All* is streamed in constant memory: the values are summarised as the file is read
    (count, exact running sum for the mean, minimum, maximum, last; see
    :mod:`reprobridge_sdk.extract._allvalues`), and only the first
    :data:`~reprobridge_sdk.extract._allvalues.KEPT_VALUES` values and
    :data:`~reprobridge_sdk.extract._allvalues.KEPT_RAW` matched texts are kept. With a
    ``transform`` each value is transformed before it is summarised (the mean of transformed
    values, as the runner and the auditor record and check it).

    *Last* reads the file **from its end** in chunks and stops at the first matching line it
    meets, so its cost depends on where the match is, not on the log's length. When nothing
    matches, the bound is one full reverse pass over the file at chunk speed, with memory
    bounded by ``chunk_size + MAX_LINE`` bytes. *First* and *all* stream forward with the same
    memory bound. When the pattern has a literal part that every match must contain (and is
    not case-insensitive), the scan looks for that literal with ``bytes.find``/``rfind`` and
    runs the regular expression only on the lines that contain it; otherwise, when no match
    can cross a line break, the pattern runs over whole chunks (see
    :mod:`reprobridge_sdk.extract._linescan`); otherwise line by line. A single line longer than
    :data:`MAX_LINE` bytes is matched in segments of at most that size.
``json``
    An RFC 6901 JSON Pointer (``~0`` and ``~1`` escapes) into a JSON file.
``csv``
    A cell of a CSV file with a header row: ``column`` by name, ``row`` by index among the
    data rows (negative from the end), or the first row whose columns equal ``where``.
``yaml``
    A dotted key path into a YAML file (list items by index).
``x-<name>`` (format 1.1)
    A kind added by an installed plugin (:mod:`reprobridge_sdk.plugins`, called by
    :mod:`._plugin`): looked up before the file is resolved, so a missing plugin is
    ``no-plugin`` whatever the file; the plugin gets the file checked as for every kind.

Numbers are parsed strictly: an optional sign, digits with an optional fraction and exponent,
or ``nan``/``inf``. ``"95.3%"``, ``"1_000"`` and ``"0x10"`` are *not* numbers; let the regular
expression capture only the number. Booleans are not numbers.

Batches
-------
An :class:`ExtractionCache` shares parsed JSON, CSV and YAML documents and regular expression
scans between extractions that read the same file (an auditor re-extracting thirty tasks from
one output reads and parses it once). Entries are keyed by the file's path, inode, size and
modification time, so a file that changes is read again; the cache keeps at most
``max_files`` files' documents (the least recently used are dropped). :func:`extract_many`
runs several extractors over one run's files with one cache.

Opening
-------
The file an extractor reads is opened once by the safe file layer (component by component
from the root's descriptor, ``O_NOFOLLOW``; :mod:`reprobridge_sdk.extract._opened`) and every
reader reads it through that descriptor, never by its name again: a directory swapped for a
link to the outside after the check cannot lead the read there. A cache keeps a batch's files
open (at most a few) and reuses a descriptor while the name still leads to the same version
of the file; :meth:`ExtractionCache.close` closes them (as does dropping the cache).

Templates
---------
``{name}`` is replaced from a context mapping (``seed``, ``run_dir``, params); ``{{`` and
``}}`` stand for literal braces; any other brace, or a name missing from the context, is a
template error. :func:`render_template` is shared with the runner for argv.

Modules: numbers are parsed by :mod:`._numbers`, JSON, CSV and YAML files read by
:mod:`._documents`, regex scans run by :mod:`._linescan` and :mod:`._allvalues`, the file
opened by :mod:`._opened`, plugin kinds called by :mod:`._plugin`; this module holds the
public API.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.io import safefs

from . import _linescan, _plugin, kinds
from ._allvalues import KEPT_RAW, KEPT_VALUES, AllValues, summarise
from ._documents import (
    cached,
    json_document,
    pointed,
    pointer_tokens,
)
from ._errors import REASONS, ExtractionError, TemplateError
from ._extraction_cache import ExtractionCache
from ._linescan import DEFAULT_CHUNK, MAX_LINE, line_safe, required_literal
from ._numbers import as_number, parse_number
from ._opened import NOT_PARSED, OpenedFile, Readable, open_checked
from .pattern import PatternError, Regex, author_pattern
from .template import render_template

if TYPE_CHECKING:
    from ._extraction_cache import _FileEntries

__all__ = [
    "AGGREGATES",
    "DEFAULT_CHUNK",
    "KEPT_RAW",
    "KEPT_VALUES",
    "MAX_LINE",
    "REASONS",
    "Extracted",
    "ExtractionCache",
    "ExtractionError",
    "OpenedFile",
    "Prepared",
    "TemplateError",
    "aggregate",
    "apply_transform",
    "extract_many",
    "extract_value",
    "line_safe",
    "parse_number",
    "prepare",
    "read_prepared",
    "regex_matches",
    "render_template",
    "required_literal",
]

#: Aggregations of per-seed values into a task's statistic.
AGGREGATES = ("single", "mean", "median", "min", "max", "std")


@dataclass(frozen=True)
class Extracted:
    """What an extractor read: the numbers, the text they came from, and where.

    For ``occurrence: all``, ``values`` and ``raw`` keep only the first values and texts
    (see :mod:`reprobridge_sdk.extract._allvalues`); ``count`` is how many values there
    were and ``mean`` their mean. Otherwise there is one value, and ``mean`` is it.
    """

    values: tuple[float, ...]
    raw: tuple[str, ...]
    source: str
    count: int = -1
    mean: float = math.nan

    def __post_init__(self) -> None:
        if self.count < 0:  # built from every value: the count and mean are theirs
            object.__setattr__(self, "count", len(self.values))
            if self.values:
                import statistics  # noqa: PLC0415 - start-up: only for several values

                object.__setattr__(self, "mean", statistics.fmean(self.values))

    @property
    def value(self) -> float:
        """The (first) value."""
        return self.values[0]


# --------------------------------------------------------------------------- regex scan


def _compile(pattern: str, group: str | int) -> Regex:
    try:
        compiled = author_pattern(pattern)
    except PatternError as exc:
        msg = f"invalid regular expression {pattern!r}: {exc.message}"
        raise ExtractionError("bad-regex", msg, dialect=exc.reason == "dialect") from None
    if isinstance(group, int):
        if not 0 <= group <= compiled.groups:
            msg = f"pattern {pattern!r} has no group {group}"
            raise ExtractionError("bad-regex", msg)
    elif group not in compiled.groupindex:
        msg = f"pattern {pattern!r} has no group named {group!r}"
        raise ExtractionError("bad-regex", msg)
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
    if occurrence not in ("first", "last", "all"):
        msg = f"unknown occurrence {occurrence!r} (first, last or all)"
        raise ExtractionError("bad-regex", msg)
    rx = _compile(pattern, group)
    source = path if isinstance(path, OpenedFile) else Path(path)
    return _scan(source, rx, group, occurrence, chunk_size, _entries(cache, source))


def _entries(cache: ExtractionCache | None, path: Readable) -> _FileEntries | None:
    return None if cache is None else cache.entries(path)


def _transform_key(transform: Mapping[str, Any] | None) -> tuple[object, ...] | None:
    if transform is None:
        return None
    return (transform.get("scale", 1.0), transform.get("offset", 0.0), transform.get("round"))


def _all_values(  # noqa: PLR0917 - private helper
    path: Readable,
    rx: Regex,
    group: str | int,
    chunk_size: int,
    transform: Mapping[str, Any] | None,
    entries: _FileEntries | None,
) -> AllValues:
    """Every matching line's value, summarised in one streaming pass (cached per batch)."""

    change = None if transform is None else lambda v: apply_transform(v, transform)
    key = ("regex-all", rx.pattern, group, _transform_key(transform))
    found: AllValues = cached(
        entries, key, lambda: summarise(path, rx, group, chunk_size, parse_number, change)
    )
    return found


def _scan(  # noqa: PLR0917 - private helper
    path: Readable,
    rx: Regex,
    group: str | int,
    occurrence: str,
    chunk_size: int,
    entries: _FileEntries | None,
) -> tuple[str, ...]:
    found: tuple[str, ...] = cached(
        entries,
        ("regex", rx.pattern, group, occurrence),
        lambda: _linescan.scan(path, rx, group, occurrence, chunk_size),
    )
    return found


# --------------------------------------------------------------------------- public API


def _plain(obj: Any) -> Mapping[str, Any]:
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump()
        assert isinstance(data, Mapping)
        return data
    if not isinstance(obj, Mapping):
        msg = f"an extractor must be a mapping, not a {type(obj).__name__}"
        raise TypeError(msg)
    return obj


def _source(
    spec: Mapping[str, Any],
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
) -> tuple[Path, str]:
    output = spec.get("output")
    file = spec.get("file")
    if output:
        if output not in outputs:
            msg = f"output {output!r} was not produced"
            raise ExtractionError("missing-file", msg, source=f"output:{output}")
        found = outputs[output]
        return (found if isinstance(found, Path) else Path(found)), f"output:{output}"
    if file:
        relative = render_template(str(file), context)
        return files_base / relative, relative
    if log is None:
        msg = "there is no log to read"
        raise ExtractionError("missing-file", msg, source="log")
    return (log if isinstance(log, Path) else Path(log)), "log"


def extract_value(
    extractor: Mapping[str, Any] | Any,
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
    chunk_size: int = DEFAULT_CHUNK,
    cache: ExtractionCache | None = None,
    root: Path | Sequence[Path] | None = None,
    max_bytes: int | None = None,
    transform: Mapping[str, Any] | Any | None = None,
    opened: OpenedFile | None = None,
) -> Extracted:
    """Read the value(s) an extractor describes; :class:`ExtractionError` on failure.

    With ``transform`` (a measurement's), the values returned are transformed; for
    ``occurrence: all`` each value is, before the mean is taken.

    With a ``cache``, a file's parsed document or regex scan is reused by later extractions
    of the same file version (see :class:`ExtractionCache`). The file is checked by the safe
    file layer first: a FIFO, device or other non-regular file, a file over ``max_bytes``, or
    (with ``root``, the artifact or run directory) a path whose links lead outside ``root``,
    is never read (reason ``"unsafe-file"``).

    ``opened``: the file the extractor reads, already opened by the caller through the safe
    file layer (the auditor's descriptor of the log or output whose digest it has just
    checked): it is read through a duplicate of that descriptor, never opened again by name,
    so the bytes read are those of the file that was checked. ``root`` and ``max_bytes`` are
    then the caller's business (its open applied its own rules); the caller closes it.
    """
    spec = _plain(extractor)
    kind = spec.get("kind")
    plugin = _plugin.load(kind, spec) if isinstance(kind, str) and kind.startswith("x-") else None
    path, source = _source(spec, log=log, files_base=files_base, outputs=outputs, context=context)
    handed = opened
    if handed is not None:
        pass  # the caller's descriptor (see above)
    elif cache is None:
        opened = _checked(path, root, source, max_bytes)
    else:
        rules = (root if root is None or isinstance(root, Path) else tuple(root), max_bytes)
        given = path
        opened = cache.opened(given, rules, lambda: _checked(given, root, source, max_bytes))
    if opened is None:
        msg = f"{source}: file {path.name!r} does not exist"
        raise ExtractionError("missing-file", msg, source=source)
    try:
        if plugin is not None:
            value, raw = _plugin.call(plugin, str(kind), spec, opened.path, source)
            if transform is not None:
                value = apply_transform(value, transform)
            return Extracted(values=(value,), raw=(raw,), source=source)
        return _read(opened, spec, source, chunk_size, _entries(cache, opened), transform)
    finally:
        # a batch's cache keeps its files open for the next extraction; a given file is the
        # caller's to close
        if cache is None and handed is None:
            opened.close()


class _Reading:
    """What an error while reading ``file`` for ``source`` becomes: an
    :class:`ExtractionError` carries the source (unless it names one); an ``OSError`` becomes
    ``missing-file`` naming the file (its name resolved only then). One rule for
    :func:`extract_value`'s readers and :func:`read_prepared`."""

    __slots__ = ("file", "source")

    def __init__(self, file: OpenedFile, source: str) -> None:
        self.file = file
        self.source = source

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        if isinstance(exc, ExtractionError):
            if not exc.source:
                exc.source = self.source
        elif isinstance(exc, OSError):
            msg = f"{self.source}: cannot read {self.file.name!r}: {exc.strerror}"
            raise ExtractionError("missing-file", msg, source=self.source) from None


@dataclass(frozen=True, slots=True)
class Prepared:
    """An extractor of a built-in kind and its transform, made ready once (:func:`prepare`) to
    read many opened files: the auditor's measurement, read from each run of its launcher."""

    #: The extractor as a plain mapping (``None`` for a typed ``json`` extractor: read off
    #: its fields, never needed as a mapping).
    spec: Mapping[str, Any] | None
    #: The transform as a plain mapping (``None``: none).
    transform: Mapping[str, Any] | None
    #: For ``json``: the pointer, its keys (:func:`._documents.pointer_tokens`) and how a
    #: value that is not a number is named; else ``None``.
    pointer: str | None = None
    tokens: tuple[str, ...] | None = None
    where: str = ""


def prepare(extractor: Mapping[str, Any] | Any, transform: Any = None) -> Prepared | None:
    """``extractor`` (a mapping or a typed model, and a measurement's ``transform``) ready for
    :func:`read_prepared`; ``None`` for a plugin kind (``x-...``), which :func:`extract_value`
    calls. A typed ``json`` extractor's pointer is its field (what its mapping would say),
    without dumping the model."""
    plain = None if transform is None else _plain(transform)
    spec: Mapping[str, Any] | None = None
    if not isinstance(extractor, Mapping) and getattr(extractor, "kind", None) == "json":
        pointer = str(extractor.pointer)
    else:
        spec = _plain(extractor)
        kind = spec.get("kind")
        if isinstance(kind, str) and kind.startswith("x-"):
            return None
        if kind != "json":
            return Prepared(spec, plain)
        pointer = str(spec.get("pointer", ""))
    where = f"JSON pointer {pointer!r}"
    return Prepared(spec, plain, pointer, pointer_tokens(pointer), where)


def read_prepared(
    prepared: Prepared, opened: OpenedFile, *, source: str, cache: ExtractionCache | None
) -> float:
    """The value :func:`extract_value` gives (its ``mean``) for ``prepared`` read from
    ``opened`` (a file the caller opened, as ``opened=`` there) with this ``cache``, named
    ``source`` in errors; the same :class:`ExtractionError` on failure.

    The per-call work of :func:`extract_value` that depends only on the extractor (its
    mapping, kind, plugin lookup and source, the transform's mapping, a JSON pointer's keys)
    was done once by :func:`prepare`: a run's JSON output serving ten measurements is
    parsed once (the cache) and then only pointed into. A pinned file (whose version never
    changes, :class:`OpenedFile`) keeps the document it gave (:attr:`OpenedFile.document`):
    its later measurements ask neither the cache nor the file again.
    """
    if prepared.pointer is None:
        assert prepared.spec is not None  # only a json extractor's may be left out
        entries = None if cache is None else cache.entries(opened)
        read = _read(opened, prepared.spec, source, DEFAULT_CHUNK, entries, prepared.transform)
        return read.mean
    with _Reading(opened, source):
        document = opened.document
        if document is NOT_PARSED:
            document = json_document(opened, None if cache is None else cache.entries(opened))
            if opened.pinned:
                opened.document = document
        found = pointed(document, prepared.pointer, prepared.tokens)
        value = found if type(found) is float else as_number(found, prepared.where)[0]
    if prepared.transform is not None:
        value = apply_transform(value, prepared.transform)
    return value + 0.0  # the mean of one value, as Extracted gives it (-0.0 becomes 0.0)


def _read(  # noqa: PLR0917 - private helper of extract_value
    path: OpenedFile,
    spec: Mapping[str, Any],
    source: str,
    chunk_size: int,
    entries: _FileEntries | None,
    transform: Mapping[str, Any] | Any | None,
) -> Extracted:
    """The value(s) of a built-in kind, read through the opened file."""
    kind = spec.get("kind")
    with _Reading(path, source):
        if kind == "regex":
            pattern = str(spec["pattern"])
            group = spec.get("group", 1)
            group = group if isinstance(group, (int, str)) else 1
            occurrence = str(spec.get("occurrence", "last"))
            if occurrence not in ("first", "last", "all"):
                msg = f"unknown occurrence {occurrence!r} (first, last or all)"
                raise ExtractionError("bad-regex", msg)
            rx = _compile(pattern, group)
            if occurrence == "all":
                plain = None if transform is None else _plain(transform)
                summary = _all_values(path, rx, group, chunk_size, plain, entries)
                if not summary.count:
                    msg = f"{source}: no line matches {pattern!r}"
                    raise ExtractionError("no-match", msg, source=source)
                return Extracted(
                    values=tuple(summary.kept),
                    raw=tuple(summary.raw),
                    source=source,
                    count=summary.count,
                    mean=summary.mean,
                )
            raws = _scan(path, rx, group, occurrence, chunk_size, entries)
            if not raws:
                msg = f"{source}: no line matches {pattern!r}"
                raise ExtractionError("no-match", msg, source=source)
            value, raw = parse_number(raws[0]), raws[0]
        elif (read := kinds.reader(kind)) is not None:
            value, raw = read(path, spec, entries)
        else:
            msg = f"unknown extractor kind {kind!r}"
            raise ExtractionError("bad-extractor", msg, source=source)
    if transform is not None:
        value = apply_transform(value, transform)
    return Extracted(values=(value,), raw=(raw,), source=source)


def _checked(
    path: Path, root: Path | Sequence[Path] | None, source: str, max_bytes: int | None
) -> OpenedFile | None:
    """``path`` opened once inside ``root`` (or one of several roots), a regular file of at
    most ``max_bytes`` (:func:`._opened.open_checked`); ``None`` when it is missing, else
    ``unsafe-file`` (the refusal's own reason in the error's ``refusal``)."""
    try:
        return open_checked(path, root, max_bytes)
    except safefs.UnsafeFileError as exc:
        error = ExtractionError("unsafe-file", f"{source}: {exc.message}", source=source)
        error.refusal = exc
        raise error from None


def extract_many(
    extractors: Iterable[Mapping[str, Any] | Any],
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
    cache: ExtractionCache | None = None,
    root: Path | Sequence[Path] | None = None,
) -> list[Extracted | ExtractionError]:
    """:func:`extract_value` for each extractor over one run's files, sharing one cache.

    Each file is read and parsed once for the batch (once for all batches given the same
    ``cache``). A failure is returned in the extractor's place, not raised.
    """
    shared = cache if cache is not None else ExtractionCache()
    results: list[Extracted | ExtractionError] = []
    for extractor in extractors:
        try:
            results.append(
                extract_value(
                    extractor,
                    log=log,
                    files_base=files_base,
                    outputs=outputs,
                    context=context,
                    cache=shared,
                    root=root,
                )
            )
        except ExtractionError as exc:
            results.append(exc)
    if cache is None:
        shared.close()  # the batch's own cache: its files are not read again
    return results


def _scaled_mean(items: list[float]) -> float:
    """The mean of finite ``items`` whose sum overflows: computed on them scaled by ``2**-e``
    (``e`` the binary exponent of the largest magnitude; exact), scaled back."""
    exponent = math.frexp(max(abs(x) for x in items))[1]
    scaled = math.fsum(math.ldexp(x, -exponent) for x in items) / len(items)
    try:
        return math.ldexp(scaled, exponent)
    except OverflowError:
        return math.copysign(math.inf, scaled)


def apply_transform(value: float, transform: Mapping[str, Any] | Any | None) -> float:
    """``value * scale + offset``, then rounded to ``round`` decimals when given."""
    if transform is None:
        return value
    spec = _plain(transform)
    result = value * float(spec.get("scale", 1.0)) + float(spec.get("offset", 0.0))
    digits = spec.get("round")
    if digits is not None and math.isfinite(result):
        result = round(result, int(digits))
    return result


def aggregate(values: Sequence[float], how: str) -> float:
    """Combine per-seed values into the task's statistic.

    ``single`` needs exactly one value. ``std`` is the *sample* standard deviation (n - 1);
    with a single value it is ``0.0`` (no spread observed). An empty sequence is an error.
    Huge finite values (a log may print ``1e308``) never raise: a ``mean`` whose sum
    overflows, or a ``median`` whose two middle values do, is computed on the values halved
    or scaled by a power of two, so a statistic a float can hold is given (infinite only
    beyond the float range); other values keep every digit of :mod:`statistics`.
    """
    items = [float(v) for v in values]
    if not items:
        raise ExtractionError("aggregate", "no values to aggregate")
    if how == "single":
        if len(items) != 1:
            msg = f"aggregate 'single' needs one value, got {len(items)}"
            raise ExtractionError("aggregate", msg)
        return items[0]
    import statistics  # noqa: PLC0415 - start-up: only when seeds are aggregated

    if how == "mean":
        try:
            return statistics.fmean(items)
        except OverflowError:  # the sum of finite values overflows
            return _scaled_mean(items)
    if how == "median":
        middle = float(statistics.median(items))
        if math.isinf(middle) and all(map(math.isfinite, items)):
            ordered = sorted(items)  # the two middle values' sum overflowed
            low, high = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
            return low / 2 + high / 2
        return middle
    if how == "min":
        return min(items)
    if how == "max":
        return max(items)
    if how == "std":
        return statistics.stdev(items) if len(items) > 1 else 0.0
    msg = f"unknown aggregate {how!r} (one of {', '.join(AGGREGATES)})"
    raise ExtractionError("aggregate", msg)
