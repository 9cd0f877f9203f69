"""The built-in extractor kinds (spec §6.9): one table from a kind to what reads it.

A file kind is one reader module, ``read(opened, spec, entries) -> (value, raw)`` raising
:class:`~reprobridge_sdk.extract._errors.ExtractionError` with a reason of
:data:`~reprobridge_sdk.extract._errors.REASONS`, and one entry here. Extraction dispatches
through the table; ``tests/extraction/test_kinds.py`` fails when another layer (the model, the
schemas, the field notes, the plugin registry's reserved names, the spec, the vectors) does
not know a registered kind. ``regex`` is the one kind
read line by line (:mod:`reprobridge_sdk.extract._linescan`), not through a reader.

A reader is named as ``"module:function"`` and imported on its first use, as
:mod:`reprobridge_sdk.schema` names its models.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "Kind", "reader"]


@dataclass(frozen=True)
class Kind:
    """One built-in extractor kind."""

    #: The manifest's model of the kind (a class of :mod:`reprobridge_sdk.model`).
    model: str
    #: ``"module:function"`` reading the value, or None for ``regex`` (scanned by lines).
    reader: str | None
    #: The reasons the kind fails with besides the common ones (each a key of ``REASONS``).
    reasons: tuple[str, ...] = ()


#: Every built-in extractor kind; a new one is one entry (and its reader module).
KINDS: Mapping[str, Kind] = {
    "regex": Kind("RegexExtractor", None, ("no-match", "not-number", "bad-regex")),
    "json": Kind(
        "JsonExtractor",
        "reprobridge_sdk.extract._documents:extract_json",
        ("bad-json-pointer", "decode", "not-number"),
    ),
    "csv": Kind(
        "CsvExtractor",
        "reprobridge_sdk.extract._documents:extract_csv",
        ("bad-csv", "no-match", "not-number"),
    ),
    "yaml": Kind(
        "YamlExtractor",
        "reprobridge_sdk.extract._documents:extract_yaml",
        ("bad-yaml", "no-match", "not-number"),
    ),
}

_Reader = Callable[..., tuple[float, str]]
_loaded: dict[str, _Reader] = {}


def reader(kind: object) -> _Reader | None:
    """The reader of a built-in file kind (imported once), or None for any other kind."""
    entry = KINDS.get(kind) if isinstance(kind, str) else None
    if entry is None or entry.reader is None:
        return None
    if entry.reader not in _loaded:
        module, _, name = entry.reader.partition(":")
        function: Any = getattr(importlib.import_module(module), name)
        _loaded[entry.reader] = function
    return _loaded[entry.reader]
