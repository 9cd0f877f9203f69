"""The bounds on the work an untrusted YAML text can cause: size, nesting depth, aliases.

Why not a library: neither PyYAML nor ruamel bounds nesting or alias expansion (libyaml's
composer recurses and crashes on deep input); these bounds run on PyYAML's events and nodes.

The limits and their codes (Y004-Y006) are spec/manifest.md §3.1; each is a finding with a
position, never a crash. A fatal finding is raised as :class:`_Fatal`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io._yamlcore import _BaseLoader, _Loader, _mark

__all__ = ["MAX_ALIAS_NODES", "MAX_BYTES", "MAX_DEPTH", "nests_too_deep"]

#: Largest manifest read, in bytes (checked before parsing).
MAX_BYTES = 8 * 1024 * 1024
#: Deepest nesting of collections allowed.
MAX_DEPTH = 64
#: Most nodes that aliases may expand to, over the whole document.
MAX_ALIAS_NODES = 100_000

# Upper bound of the nesting a text can reach without flow brackets: each block level needs
# at least one more column of indentation or a "- " on the line.
_SAFE_GUARD = 800
# The nesting libyaml 0.2.5 and later refuse to pass; composing up to it is safe (tested).
_LIBYAML_NESTING = 1000


class _Fatal(Exception):
    def __init__(self, item: Finding) -> None:
        super().__init__(item.message)
        self.item = item


def _too_large(label: str, size: int) -> Finding:
    return finding(
        "Y006",
        f"the file has {size} bytes; at most {MAX_BYTES} are read",
        file=label,
        line=1,
        col=1,
    )


_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def _composer_at_risk(text: str) -> bool:
    """True unless ``text`` provably nests at most ``_SAFE_GUARD // 2`` levels.

    A flow collection needs a bracket (all brackets are counted, quoted or not). A block
    collection opens either on a line of more indentation (at most two levels per column:
    a sequence may sit at its parent mapping's indentation) or after an indicator on the same
    line (``- ``, ``? ``, ``: ``): a line nests at most ``2 * (indent + 1)`` plus its count of
    ``-``, ``?`` and ``:`` characters. A line of ``n`` characters nests at most ``2n + 2``, so
    only lines longer than half the remaining budget are looked at. A line holding another YAML
    line break counts its whole length as indentation (an overestimate, never an under one).
    """
    budget = _SAFE_GUARD // 2 - (text.count("[") + text.count("{"))
    if budget < 0:
        return not _json_nests_at_most(text, _SAFE_GUARD // 2)
    shortest = max(budget // 2 - 1, 0) + 1
    for match in re.finditer(rf"^[^\n]{{{shortest},}}", text, re.MULTILINE):
        line = match.group()
        line = line.removesuffix("\r")
        if any(b in line for b in _OTHER_BREAKS):
            indent = len(line)
        else:
            indent = len(line) - len(line.lstrip(" "))
        opened = line.count("-") + line.count("?") + line.count(":")
        if 2 * (indent + 1) + opened > budget:
            return True
    return False


def _json_nests_at_most(text: str, levels: int) -> bool:
    """True when ``text`` is JSON (read by :mod:`json`, which bounds its own recursion) and
    nests at most ``levels`` collections: YAML reads a JSON text with the same nesting, so a
    JSON manifest of many brackets needs no walk of its events before composing."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            if depth > levels:
                return False
            stack.extend((item, depth + 1) for item in value)
    return True


@functools.cache
def _composer_bounded() -> bool:
    """True when libyaml (0.2.5 and later) stops nesting at ``_LIBYAML_NESTING`` levels itself.

    Asked once per process. Then the depth walk before composing is not needed: the converter,
    or a walk after a compose error, reports Y005 exactly where the walk first would have.
    """
    if _BaseLoader is yaml.SafeLoader:  # pragma: no cover - no libyaml: always walk
        return False
    depth = _LIBYAML_NESTING + 1
    probes = ("[" * depth + "]" * depth, "- " * depth + "x")
    for probe in probes:
        try:
            yaml.compose(probe, Loader=_Loader)
        except yaml.YAMLError:
            continue
        return False  # composed: this build has no limit at that depth
    return True


def _may_be_deep(text: str) -> bool:
    if text.count("[") + text.count("{") > _SAFE_GUARD // 2:
        return True
    longest = max((len(line) for line in text.splitlines()), default=0)
    return longest * 2 > _SAFE_GUARD // 2


def nests_too_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """True when YAML ``text`` nests deeper than ``max_depth`` (a walk of events, no recursion).

    For YAML evidence read by other loaders, which would recurse (and crash) on deep input.
    """
    if not _may_be_deep(text):
        return False
    try:
        return _too_deep_at(yaml.parse(text, Loader=_Loader), max_depth, None) is not None
    except yaml.YAMLError:
        return False  # the loader reports the syntax error


def _check_depth(label: str, text: str) -> None:
    """Y005 at the first collection nested past MAX_DEPTH, whatever the PyYAML build.

    The event stream is walked (not recursively) with the fast parser. Builds of libyaml
    differ in their own nesting limits (PyYAML 6.0.4's stops at 1,000 flow levels, and its
    scanner reads far ahead of the events, so it fails before this walk sees level 65). So
    when the fast parser stops with an error, the pure-Python parser, which has no nesting
    limit of its own, walks the text again up to that error's offset: a level past MAX_DEPTH
    before it is Y005; otherwise the error stands and is reported as Y001 by the caller. The
    second walk reads no further than the first got, so it costs at most one more parse.
    """
    try:
        _walk_depth(label, text, _Loader, None)
    except yaml.MarkedYAMLError as exc:
        if _BaseLoader is yaml.SafeLoader:  # pragma: no cover - no libyaml: the error stands
            return
        mark = exc.problem_mark or exc.context_mark
        stop = mark.index if mark is not None else len(text)
        with contextlib.suppress(yaml.YAMLError):  # the caller reports the document's error
            _walk_depth(label, text, yaml.SafeLoader, stop)
    except yaml.YAMLError:  # pragma: no cover - every libyaml error carries a mark
        return


def _walk_depth(label: str, text: str, loader: type[Any], stop: int | None) -> None:
    event = _too_deep_at(yaml.parse(text, Loader=loader), MAX_DEPTH, stop)
    if event is not None:
        raise _Fatal(_too_deep(label, *_mark(event.start_mark)))


def _too_deep_at(events: Iterator[Any], max_depth: int, stop: int | None) -> Any:
    """The first collection's start event nested past ``max_depth``, before offset ``stop``."""
    depth = 0
    for event in events:
        if stop is not None and event.start_mark.index > stop:
            return None
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                return event
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return None


def _check_key_depth(label: str, key: Any, depth: int) -> None:
    """Y005 at the first collection of a node that is never converted (a collection key, or
    the value of a dropped entry: a duplicate or non-string key) nested past MAX_DEPTH, in
    document order, as the depth walk would report it."""
    stack = [(key, depth)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            continue
        if level >= MAX_DEPTH:
            line, col = _mark(node.start_mark)
            raise _Fatal(_too_deep(label, line, col))
        stack.extend((child, level + 1) for child in reversed(_children(node)))


def _children(node: Any) -> list[Any]:
    """The nodes of a collection node (a mapping's keys and values in order); none of a scalar."""
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _too_deep(label: str, line: int, col: int) -> Finding:
    return finding(
        "Y005",
        f"the document nests deeper than {MAX_DEPTH} levels",
        file=label,
        line=line,
        col=col,
    )


def _check_aliases(label: str, root: Any) -> None:
    """Y004 before any expansion: sizes of the node graph counted once per distinct node."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    unique = 0

    def size(node: Any, depth: int) -> int:
        nonlocal unique
        ident = id(node)
        known = sizes.get(ident)
        if known is not None:
            return known
        if ident in active:
            line, col = _mark(node.start_mark)
            raise _Fatal(
                finding(
                    "Y004",
                    "an alias refers to a node that contains it (recursive alias)",
                    file=label,
                    line=line,
                    col=col,
                )
            )
        unique += 1
        total = 1
        if depth <= MAX_DEPTH and not isinstance(node, yaml.ScalarNode):
            active.add(ident)
            for child in _children(node):
                total += size(child, depth + 1)
            active.discard(ident)
        sizes[ident] = total
        return total

    if size(root, 0) <= unique + MAX_ALIAS_NODES:
        return
    node = root
    while True:
        big = [child for child in _children(node) if sizes.get(id(child), 0) > MAX_ALIAS_NODES]
        if not big:
            break
        node = big[0]
    line, col = _mark(node.start_mark)
    raise _Fatal(
        finding(
            "Y004",
            f"aliases expand to more than {MAX_ALIAS_NODES} nodes",
            file=label,
            line=line,
            col=col,
            hint="write the repeated parts out, or use fewer nested aliases",
        )
    )
