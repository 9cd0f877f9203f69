"""Extractor kinds added by plugins (format 1.1): find the plugin, call it, check its value.

What a plugin receives and must return, and what each failure is (X005-X007), is
spec/manifest.md §6.9 ("plugin-extractors").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from reprobridge_sdk import plugins
from reprobridge_sdk.errors import UsageError

from ._errors import ExtractionError

__all__ = ["call", "load"]


def _label(spec: Mapping[str, Any]) -> str:
    """The source label of an extractor without resolving it (``output:<id>``, file, log)."""
    if spec.get("output"):
        return f"output:{spec['output']}"
    return str(spec["file"]) if spec.get("file") else "log"


def load(kind: str, spec: Mapping[str, Any]) -> Callable[..., Any]:
    """The ``extract`` callable of plugin kind ``kind``; no-plugin or plugin-failed if none."""
    source = _label(spec)
    try:
        found = plugins.load_plugin(plugins.EXTRACTORS, kind)
    except UsageError as exc:
        raise ExtractionError("plugin-failed", f"{source}: {exc.message}", source=source) from None
    if found is None:
        msg = f"{source}: no installed plugin provides the extractor kind {kind!r}"
        raise ExtractionError("no-plugin", msg, source=source)
    return found


def call(
    plugin: Callable[..., Any], kind: str, spec: Mapping[str, Any], path: Path, source: str
) -> tuple[float, str]:
    """The plugin's value for the checked file ``path`` and the text recorded as its ``raw``
    (the ``repr`` of what it returned); plugin-failed or plugin-timeout otherwise."""
    try:
        value = plugins.call_with_limit(
            plugin, path, MappingProxyType(dict(spec)), limit=plugins.TIME_LIMIT, name=kind
        )
    except plugins.PluginTimeout:
        msg = f"{source}: the plugin {kind!r} did not return within {plugins.TIME_LIMIT:g} s"
        raise ExtractionError("plugin-timeout", msg, source=source) from None
    except Exception as exc:  # any failure of a plugin is the task's finding
        msg = f"{source}: the plugin {kind!r} raised {type(exc).__name__}: {exc}"
        raise ExtractionError("plugin-failed", msg, source=source) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        shown = type(value).__name__
        msg = f"{source}: the plugin {kind!r} returned a {shown}, not a number"
        raise ExtractionError("plugin-failed", msg, source=source)
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range
        number = math.inf
    if not math.isfinite(number):
        msg = f"{source}: the plugin {kind!r} returned {number!r}, not a finite number"
        raise ExtractionError("plugin-failed", msg, source=source)
    return number, repr(value)
