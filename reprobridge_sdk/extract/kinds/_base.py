"""What a kind's reader is given and gives back (spec §6.9), and the batch cache's use.

A reader reads one ``OpenedFile`` (never by its name again) and returns an :class:`Extracted`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.extract._errors import ExtractionError, Reason

if TYPE_CHECKING:
    from reprobridge_sdk.extract._extraction_cache import _FileEntries
    from reprobridge_sdk.extract._opened import OpenedFile

__all__ = ["Check", "Extracted", "Kind", "Request", "apply_transform", "cached", "plain"]

#: ``add(code, message, path, hint=None)``: how a semantic check reports a finding.
Check = Callable[[Mapping[str, Any], str, Callable[..., None]], None]


@dataclass(frozen=True)
class Extracted:
    """What an extractor read: the numbers, the text they came from, and where.

    For ``occurrence: all``, ``values`` and ``raw`` keep only the first values and texts
    (:mod:`reprobridge_sdk.extract._allvalues`); ``count`` is how many there were and
    ``mean`` their mean. Otherwise there is one value, and ``mean`` is it.
    """

    values: tuple[float, ...]
    raw: tuple[str, ...]
    source: str
    count: int = -1
    mean: float = math.nan
    #: The summary of every value (``occurrence: all``): a record keeps the mean, the count
    #: and the first values, not one value.
    many: bool = False

    def __post_init__(self) -> None:
        if self.count < 0:  # built from every value: the count and mean are theirs
            object.__setattr__(self, "count", len(self.values))
            if len(self.values) == 1:  # the mean of one value, as fmean gives it (-0.0 is 0.0)
                object.__setattr__(self, "mean", float(self.values[0]) + 0.0)
            elif self.values:
                import statistics  # noqa: PLC0415 - start-up: only for several values

                object.__setattr__(self, "mean", statistics.fmean(self.values))

    @property
    def value(self) -> float:
        """The (first) value."""
        return self.values[0]


def plain(obj: Any) -> Mapping[str, Any]:
    """An extractor or transform as a plain mapping (a pydantic model is dumped)."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump()
        assert isinstance(data, Mapping)
        return data
    if not isinstance(obj, Mapping):
        msg = f"an extractor must be a mapping, not a {type(obj).__name__}"
        raise TypeError(msg)
    return obj


def apply_transform(value: float, transform: Mapping[str, Any] | Any | None) -> float:
    """``value * scale + offset``, then rounded to ``round`` decimals when given."""
    if transform is None:
        return value
    spec = plain(transform)
    result = value * float(spec.get("scale", 1.0)) + float(spec.get("offset", 0.0))
    digits = spec.get("round")
    if digits is not None and math.isfinite(result):
        result = round(result, int(digits))
    return result


@dataclass(frozen=True)
class Request:
    """One extraction: the opened file, the extractor, and how to read it."""

    file: OpenedFile
    spec: Mapping[str, Any]
    #: How errors name the file (``log``, ``output:<id>`` or the relative path).
    source: str
    #: The batch cache's entries for this version of the file (None: no cache).
    entries: _FileEntries | None
    chunk_size: int
    #: The measurement's transform as a plain mapping (None: none).
    transform: Mapping[str, Any] | None

    def one(self, value: float, raw: str) -> Extracted:
        """The single value read, transformed."""
        if self.transform is not None:
            value = apply_transform(value, self.transform)
        return Extracted(values=(value,), raw=(raw,), source=self.source)


@dataclass(frozen=True)
class Kind:
    """One built-in extractor kind: an entry of :data:`reprobridge_sdk.extract.kinds.KINDS`."""

    #: The manifest's ``kind``.
    name: str
    #: The class of :mod:`reprobridge_sdk.model` that is the kind's part of the format.
    model: str
    #: Reads the value(s) from the opened file.
    read: Callable[[Request], Extracted]
    #: Every reason the kind fails with, its own and the common ones.
    reasons: tuple[Reason, ...]
    #: The kind's rules that a schema cannot express (the semantic layer's), if any.
    check: Check | None = None


def cached(
    entries: _FileEntries | None, what: tuple[object, ...], compute: Callable[[], Any]
) -> Any:
    """``compute()``, or the batch's earlier result; a stored failure is raised again."""
    if entries is None:
        return compute()
    found = entries.get(what, lambda: _outcome(compute))
    if isinstance(found, ExtractionError):
        raise ExtractionError(found.why, found.message, source=found.source)
    return found


def _outcome(compute: Callable[[], Any]) -> Any:
    """``compute()``'s result, or the :class:`ExtractionError` it raised (kept as a value)."""
    try:
        return compute()
    except ExtractionError as exc:
        return exc
