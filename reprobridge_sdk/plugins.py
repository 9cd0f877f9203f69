"""Plugins: entry points that add extractor kinds, data URL schemes and report formats.

The groups, names, objects and findings are spec/runner.md §10.3 ("plugins"); how a plugin
extractor is called, spec/manifest.md §6.9. What the spec leaves to the code:

* A plugin extractor gets the path the safe file layer checked and opens it again by name, so
  a directory swapped for a link between the check and that open is the plugin's to notice.
* Of two plugins with one name, the first in ``importlib.metadata`` order wins. Entry points
  are read once per process (:func:`forget` reads them again).
* One that cannot be loaded is ``UsageError`` E017; extraction and data turn it into X006, D016.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from reprobridge_sdk._plugin_stdout import stdout_to_stderr
from reprobridge_sdk.errors import UsageError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from reprobridge_sdk.findings import Finding
    from reprobridge_sdk.io.document import Document

__all__ = [
    "BUILT_IN",
    "DATA_SCHEME",
    "DATA_SCHEMES",
    "EXTRACTORS",
    "EXTRACTOR_KIND",
    "GROUPS",
    "REPORT_FORMATS",
    "TIME_LIMIT",
    "PluginEntry",
    "PluginTimeout",
    "call_with_limit",
    "forget",
    "installed",
    "load_plugin",
    "missing_schemes",
    "plugin_names",
    "refusals",
    "scheme_hint",
]

EXTRACTORS = "reprobridge.extractors"
DATA_SCHEMES = "reprobridge.data_schemes"
REPORT_FORMATS = "reprobridge.report_formats"
#: Every group, in the order listings show them.
GROUPS = (EXTRACTORS, DATA_SCHEMES, REPORT_FORMATS)

#: Seconds an extractor plugin may take for one value (X007 beyond).
TIME_LIMIT = 30.0

#: The name of an extractor kind a plugin adds (the 1.1 schema's ``^x-[a-z0-9-]+$``).
EXTRACTOR_KIND = r"x-[a-z0-9-]+"
#: The name of a data URL scheme a plugin adds (the 1.1 schema's ``^x-[a-z0-9][a-z0-9+.-]*://``).
DATA_SCHEME = r"x-[a-z0-9][a-z0-9+.-]*"

_NAMES = {
    EXTRACTORS: re.compile(EXTRACTOR_KIND),
    DATA_SCHEMES: re.compile(DATA_SCHEME),
    REPORT_FORMATS: re.compile(r"[a-z][a-z0-9-]{0,39}"),
}
_RULES = {
    EXTRACTORS: "an extractor kind starts with 'x-' followed by [a-z0-9-]",
    DATA_SCHEMES: "a data scheme starts with 'x-' followed by [a-z0-9+.-]",
    REPORT_FORMATS: "a report format is [a-z][a-z0-9-]*",
}
#: Names owned by the SDK itself, never taken by a plugin. The report formats are the one
#: list of ``--format`` values, in the order commands offer them (each command offers those
#: it writes; ``validation.reporters`` renders findings in the first five).
BUILT_IN: dict[str, Collection[str]] = {
    EXTRACTORS: frozenset({"regex", "json", "csv", "yaml"}),
    DATA_SCHEMES: frozenset({"http", "https", "s3", "gs", "hf", "file"}),
    REPORT_FORMATS: ("text", "json", "sarif", "junit", "github", "csv", "html"),
}
#: The code of a refused entry point, per group.
_REFUSAL_CODE = {EXTRACTORS: "X008", DATA_SCHEMES: "D017", REPORT_FORMATS: "E026"}


@dataclass(frozen=True)
class PluginEntry:
    """One entry point of a plugin group, as ``reprobridge plugins`` lists it."""

    group: str
    name: str
    value: str
    distribution: str
    version: str
    #: ``None`` when the entry point is used; otherwise why it is refused.
    refused: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "object": self.value,
            "distribution": self.distribution,
            "version": self.version,
            "refused": self.refused,
        }


def _dist(point: EntryPoint) -> tuple[str, str]:
    dist = point.dist
    if dist is None:
        return "an unknown distribution", ""
    return dist.name, dist.version


def _refusal(group: str, name: str) -> str | None:
    if name in BUILT_IN[group]:
        return f"{name!r} is built in and cannot be replaced"
    if not _NAMES[group].fullmatch(name):
        return f"{name!r} is not a valid name: {_RULES[group]}"
    return None


@cache
def _scan(group: str) -> tuple[PluginEntry, ...]:
    from importlib.metadata import entry_points  # noqa: PLC0415 - start-up: only when read

    found: list[PluginEntry] = []
    taken: set[str] = set()
    for point in entry_points(group=group):
        dist, version = _dist(point)
        refused = _refusal(group, point.name)
        if refused is None and point.name in taken:
            refused = f"{point.name!r} is already provided by another distribution"
        if refused is None:
            taken.add(point.name)
        found.append(PluginEntry(group, point.name, point.value, dist, version, refused))
    return tuple(found)


@cache
def _entry_points(group: str) -> dict[str, EntryPoint]:
    from importlib.metadata import entry_points  # noqa: PLC0415 - start-up: only when read

    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        if _refusal(group, point.name) is None:
            found.setdefault(point.name, point)
    return found


def forget() -> None:
    """Read the entry points again on next use (after installing or removing a plugin)."""
    _scan.cache_clear()
    _entry_points.cache_clear()


def plugin_names(group: str) -> tuple[str, ...]:
    """The names plugins add to ``group``, sorted."""
    return tuple(sorted(_entry_points(group)))


def installed(groups: tuple[str, ...] = GROUPS) -> list[PluginEntry]:
    """Every entry point of ``groups``, used or refused, sorted by group order and name."""
    rank = {group: i for i, group in enumerate(GROUPS)}
    entries = [entry for group in groups for entry in _scan(group)]
    return sorted(entries, key=lambda e: (rank.get(e.group, len(rank)), e.name, e.distribution))


def refusals(groups: tuple[str, ...] = GROUPS) -> list[Finding]:
    """One finding per refused entry point (X008, D017 or E026), in :func:`installed` order."""
    from reprobridge_sdk.findings import finding  # noqa: PLC0415 - only when listing

    return [
        finding(
            _REFUSAL_CODE[entry.group],
            f"the plugin entry point {entry.name!r} ({entry.value}, from {entry.distribution}) "
            f"in {entry.group} is ignored: {entry.refused}",
            path=f"/plugins/{entry.group}/{entry.name}",
            hint=f"ask the maintainers of {entry.distribution} to rename it; {_RULES[entry.group]}",
        )
        for entry in installed(groups)
        if entry.refused is not None
    ]


def scheme_hint(scheme: str) -> str:
    """The hint of D015: what to install for the ``x-`` URL scheme ``scheme``."""
    return (
        f"install the distribution that provides it (an entry point named {scheme!r} in "
        f"the group {DATA_SCHEMES!r}); 'reprobridge plugins' lists the installed ones"
    )


_SCHEME_URL = re.compile(rf"({DATA_SCHEME})://")


def missing_schemes(document: Document) -> list[Finding]:
    """D015 for each data item whose ``x-`` URL scheme no installed plugin provides.

    Anything but a well-formed ``x-`` URL in a list of mappings is left to the other checks.
    """
    data = document.data
    environment = data.get("environment") if isinstance(data, dict) else None
    items = environment.get("data") if isinstance(environment, dict) else None
    found: list[Finding] = []
    for index, item in enumerate(items if isinstance(items, list) else ()):
        source = item.get("source") if isinstance(item, dict) else None
        url = source.get("url") if isinstance(source, dict) else None
        match = _SCHEME_URL.match(url) if isinstance(url, str) else None
        if match is None or match.group(1) in _entry_points(DATA_SCHEMES):
            continue
        scheme = match.group(1)
        item_id = item.get("id")
        message = (
            f"no installed plugin provides the {scheme}:// URL scheme: data item "
            f"{item_id!r} cannot be fetched here"
        )
        pointer = f"/environment/data/{index}/source/url"
        located = document.finding(
            "D015", message, path=pointer, hint=scheme_hint(scheme), context="validation"
        )
        found.append(located)
    return found


def load_plugin(group: str, name: str) -> Callable[..., Any] | None:
    """The object of plugin ``name`` in ``group``; ``None`` when no plugin declares it."""
    point = _entry_points(group).get(name)
    if point is None:
        return None
    dist = _dist(point)[0]
    try:
        with stdout_to_stderr():  # a module that prints as it is imported
            loaded = point.load()
    except Exception as exc:
        problem = f"cannot be imported ({type(exc).__name__}: {exc})"
    else:
        if callable(loaded):
            return _Quiet(loaded)
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


class _Quiet:
    """A plugin's callable whose calls write their stdout to stderr (see the module)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with stdout_to_stderr():
            return self.function(*args, **kwargs)


class PluginTimeout(Exception):
    """A plugin did not return within its time limit (it is left running in its thread)."""


def call_with_limit(
    function: Callable[..., Any], *args: Any, limit: float, name: str = "plugin", **kwargs: Any
) -> Any:
    """``function(*args, **kwargs)`` in a daemon thread, waiting at most ``limit`` seconds.

    A ``BaseException`` of the plugin becomes a ``RuntimeError`` (a plugin cannot end the
    process that calls it); :class:`PluginTimeout` past ``limit``. A hung plugin keeps its
    thread until the process ends. Its stdout goes to stderr for good, so a plugin left
    running never prints into the machine output that follows.
    """
    outcome: dict[str, Any] = {}
    if isinstance(function, _Quiet):
        function = function.function  # redirected below, in this thread

    def target() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as exc:  # handed to the caller (see the docstring)
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=f"reprobridge-{name}", daemon=True)
    with stdout_to_stderr():
        thread.start()
        thread.join(limit if math.isfinite(limit) and limit > 0 else None)
    if thread.is_alive():
        msg = f"{name} did not return within {limit:g} s"
        raise PluginTimeout(msg)
    error = outcome.get("error")
    if isinstance(error, Exception):
        raise error
    if error is not None:
        msg = f"{name} raised {type(error).__name__}: {error}"
        raise RuntimeError(msg) from error
    return outcome.get("value")
