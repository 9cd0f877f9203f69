"""Measurement extraction: read a number off a run's log or output files (spec §6.9).

It works on plain mappings, so the validator calls it without building models. An
:class:`ExtractionCache` shares parsed documents and scans between the extractions of a batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reprobridge_sdk.io import safefs

from . import _plugin, kinds
from ._allvalues import KEPT_RAW, KEPT_VALUES
from ._errors import REASONS, ExtractionError, TemplateError
from ._extraction_cache import ExtractionCache
from ._facts import line_safe, required_literal
from ._linescan import DEFAULT_CHUNK, MAX_LINE
from ._numbers import parse_number
from ._opened import OpenedFile, open_checked
from .kinds import Extracted, Request
from .kinds._base import apply_transform, plain
from .kinds.regex import regex_matches
from .template import render_template

#: Where an extraction may read: under one root (a path, or one opened once for many reads:
#: :class:`~reprobridge_sdk.io.safefs.OpenRoot`), the first of several that holds the file,
#: or anywhere (None).
Root = Path | safefs.OpenRoot | Sequence[Path] | None

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
    "TemplateError",
    "aggregate",
    "apply_transform",
    "extract_many",
    "extract_value",
    "line_safe",
    "parse_number",
    "plain",
    "regex_matches",
    "render_template",
    "required_literal",
]


def _source(
    spec: Mapping[str, Any],
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
) -> tuple[Path, str]:
    """The file an extractor reads and how errors name it (``output:<id>``, file, ``log``)."""
    output = spec.get("output")
    file = spec.get("file")
    if output:
        if output not in outputs:
            msg = f"output {output!r} was not produced"
            raise ExtractionError("missing-file", msg, source=f"output:{output}")
        found = outputs[output]
        return found if isinstance(found, Path) else Path(found), f"output:{output}"
    if file:
        relative = render_template(str(file), context)
        return files_base / relative, relative
    if log is None:
        raise ExtractionError("missing-file", "there is no log to read", source="log")
    return log if isinstance(log, Path) else Path(log), "log"


def extract_value(
    extractor: Mapping[str, Any] | Any,
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
    chunk_size: int = DEFAULT_CHUNK,
    cache: ExtractionCache | None = None,
    root: Root = None,
    max_bytes: int | None = None,
    transform: Mapping[str, Any] | Any | None = None,
    opened: OpenedFile | None = None,
) -> Extracted:
    """Read the value(s) an extractor describes; :class:`ExtractionError` on failure.

    ``transform`` is applied to each value, before the mean of ``all``. The file is opened by
    the safe file layer under ``root`` and ``max_bytes`` (``unsafe-file``), unless handed over
    ``opened`` (the auditor's descriptor of the file it has just hashed; the caller closes it).
    """
    spec = plain(extractor)
    kind = spec.get("kind")
    plugin = _plugin.load(kind, spec) if isinstance(kind, str) and kind.startswith("x-") else None
    path, source = _source(spec, log=log, files_base=files_base, outputs=outputs, context=context)
    file = opened if opened is not None else _open(path, source, root, max_bytes, cache)
    if file is None:
        msg = f"{source}: file {path.name!r} does not exist"
        raise ExtractionError("missing-file", msg, source=source)
    shape = None if transform is None else plain(transform)
    try:
        if plugin is not None:
            value, raw = _plugin.call(plugin, str(kind), spec, file.path, source)
            return Request(file, spec, source, None, chunk_size, shape).one(value, raw)
        entries = None if cache is None else cache.entries(file)
        return _read(kind, Request(file, spec, source, entries, chunk_size, shape))
    finally:
        # a batch's cache keeps its files open for the next extraction; a handed file is the
        # caller's to close
        if cache is None and opened is None:
            file.close()


def _open(
    path: Path,
    source: str,
    root: Root,
    max_bytes: int | None,
    cache: ExtractionCache | None,
) -> OpenedFile | None:
    """``path`` opened once (kept open by a batch's cache); None when it is missing."""
    if cache is None:
        return _checked(path, root, source, max_bytes)
    where = root if root is None or isinstance(root, (Path, safefs.OpenRoot)) else tuple(root)
    rules = (where, max_bytes)
    return cache.opened(path, rules, lambda: _checked(path, root, source, max_bytes))


def _read(kind: object, request: Request) -> Extracted:
    """The value(s) of a built-in kind, by its reader in :data:`kinds.KINDS`.

    An :class:`ExtractionError` gets the source if it names none; an ``OSError`` while
    reading becomes ``missing-file``."""
    entry = kinds.KINDS.get(kind) if isinstance(kind, str) else None
    source = request.source
    if entry is None:
        msg = f"unknown extractor kind {kind!r}"
        raise ExtractionError("bad-extractor", msg, source=source)
    try:
        return entry.read(request)
    except ExtractionError as exc:
        if not exc.source:
            exc.source = source
        raise
    except OSError as exc:
        msg = f"{source}: cannot read {request.file.name!r}: {exc.strerror}"
        raise ExtractionError("missing-file", msg, source=source) from None


def _checked(path: Path, root: Root, source: str, max_bytes: int | None) -> OpenedFile | None:
    """``path`` opened by :func:`._opened.open_checked`; ``unsafe-file`` when refused (the
    refusal in the error's ``refusal``)."""
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
    root: Root = None,
) -> list[Extracted | ExtractionError]:
    """:func:`extract_value` for each extractor over one run's files, sharing one cache; a
    failure is returned in the extractor's place, not raised."""
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


def _single(items: list[float]) -> float:
    if len(items) != 1:
        raise ExtractionError("aggregate", f"aggregate 'single' needs one value, got {len(items)}")
    return items[0]


def _mean(items: list[float]) -> float:
    import statistics  # noqa: PLC0415 - start-up: only when seeds are aggregated

    try:
        return statistics.fmean(items)
    except OverflowError:  # the sum of finite values overflows
        return _scaled_mean(items)


def _median(items: list[float]) -> float:
    import statistics  # noqa: PLC0415 - start-up: only when seeds are aggregated

    middle = float(statistics.median(items))
    if math.isinf(middle) and all(map(math.isfinite, items)):
        ordered = sorted(items)  # the two middle values' sum overflowed
        low, high = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
        return low / 2 + high / 2
    return middle


def _std(items: list[float]) -> float:
    import statistics  # noqa: PLC0415 - start-up: only when seeds are aggregated

    return statistics.stdev(items) if len(items) > 1 else 0.0


_AGGREGATE: Mapping[str, Callable[[list[float]], float]] = {
    "single": _single,
    "mean": _mean,
    "median": _median,
    "min": min,
    "max": max,
    "std": _std,
}
#: Aggregations of per-seed values into a task's statistic.
AGGREGATES = tuple(_AGGREGATE)


def aggregate(values: Sequence[float], how: str) -> float:
    """Combine per-seed values into the task's statistic (spec §6.9, "aggregate").

    ``std`` is the sample standard deviation (n - 1), ``0.0`` for one value. Huge finite
    values never raise: a ``mean`` or ``median`` whose sum overflows is computed scaled.
    """
    items = [float(v) for v in values]
    if not items:
        raise ExtractionError("aggregate", "no values to aggregate")
    combine = _AGGREGATE.get(how)
    if combine is None:
        msg = f"unknown aggregate {how!r} (one of {', '.join(AGGREGATES)})"
        raise ExtractionError("aggregate", msg)
    return combine(items)
