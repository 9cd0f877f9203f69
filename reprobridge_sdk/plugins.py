"""Plugins: entry points that add report formats.

A plugin is an installed distribution that declares entry points in one of these groups (in
its ``pyproject.toml``, ``[project.entry-points."reprobridge.report_formats"]``):

``reprobridge.report_formats``
    name: the ``--format`` value (lower case, ``[a-z][a-z0-9-]*``, not a built-in format);
    object: ``render(pairs) -> str``, where ``pairs`` is a list of ``(label, findings)`` and
    each finding a :class:`reprobridge_sdk.findings.Finding`. The string is written to stdout
    or to ``-o FILE`` as it is.

Rules and edge cases
    * A name that is not well formed, or that a built-in already owns, is ignored: a plugin
      cannot replace ``json`` or ``sarif``.
    * Two plugins declaring the same name: the first in ``importlib.metadata`` order wins.
    * A plugin is imported only when its name is used. One that cannot be imported, or whose
      object is not callable, raises :class:`~reprobridge_sdk.errors.UsageError` with an E017
      finding naming the entry point and its distribution.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from reprobridge_sdk.errors import UsageError

__all__ = ["REPORT_FORMATS", "load_plugin", "plugin_names"]

REPORT_FORMATS = "reprobridge.report_formats"

_NAMES = {
    REPORT_FORMATS: re.compile(r"[a-z][a-z0-9-]{0,39}"),
}
#: Names owned by the SDK itself, never taken by a plugin.
_BUILT_IN = {
    REPORT_FORMATS: frozenset({"text", "json", "sarif", "junit", "github", "html"}),
}


@cache
def _entry_points(group: str) -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        if not _NAMES[group].fullmatch(point.name) or point.name in _BUILT_IN[group]:
            continue
        found.setdefault(point.name, point)
    return found


def plugin_names(group: str) -> tuple[str, ...]:
    """The names plugins add to ``group``, sorted."""
    return tuple(sorted(_entry_points(group)))


def load_plugin(group: str, name: str) -> Callable[..., Any] | None:
    """The object of plugin ``name`` in ``group``; ``None`` when no plugin declares it."""
    point = _entry_points(group).get(name)
    if point is None:
        return None
    dist = point.dist.name if point.dist is not None else "an unknown distribution"
    try:
        loaded = point.load()
    except Exception as exc:
        problem = f"cannot be imported ({type(exc).__name__}: {exc})"
    else:
        if callable(loaded):
            return loaded  # type: ignore[no-any-return]
        problem = "is not callable"
    from reprobridge_sdk.findings import finding  # noqa: PLC0415 - only on failure

    message = f"the plugin {name!r} ({point.value}, from {dist}) in {group} {problem}"
    item = finding(
        "E017",
        message,
        path=f"/plugins/{group}/{name}",
        hint=f"reinstall or uninstall {dist}",
    )
    raise UsageError(message, [item])
