"""The second path of the reader: data from libyaml's events, without composing nodes.

Why a second path: reading is most of ``validate`` (``docs/performance.md``, 2026-12-02: 44-59%
of its CPU with this path, 66-79% without it), and composing a node graph doubles the peak
memory (57 against 26 MiB for a manifest of 1,000 tasks).

Rules: see :func:`_from_events`; whenever it gives data, that is the node converter's.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from reprobridge_sdk.io._guards import MAX_DEPTH
from reprobridge_sdk.io._yamlcore import (
    _BOOL,
    _INT,
    _MAYBE_NOT_STR,
    _NULL,
    _STR,
    _float,
    _int,
    _Loader,
    core_tag,
)
from reprobridge_sdk.io.pointer import escape_pointer

#: Where a collection is written: offset of its first character, 0-based line and column,
#: offset past its end, and whether it is a sequence's item.
Span = tuple[int, int, int, int, bool]


class _NotEvents(Exception):
    """The text holds something the event converter leaves to the node converter."""


_SCALAR_EVENT, _ALIAS_EVENT = yaml.ScalarEvent, yaml.AliasEvent
_MAPPING_START, _SEQUENCE_START = yaml.MappingStartEvent, yaml.SequenceStartEvent
_MAPPING_END, _SEQUENCE_END = yaml.MappingEndEvent, yaml.SequenceEndEvent


# The numbers manifests hold most (``3``, ``-0.5``, ``63.42``): one match instead of the core
# schema's four patterns in turn, with the same reading.
_PLAIN_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?\Z")


def _event_scalar(value: str) -> Any:
    """The data of a plain scalar that may not be a string; :class:`_NotEvents` when the
    converter would report it (a number JSON cannot carry)."""
    if _PLAIN_DECIMAL.match(value):
        if "." in value:
            number = float(value)
            if math.isfinite(number):
                return number
            raise _NotEvents
        exact = _int(value)
        if exact is None:
            raise _NotEvents
        return exact
    tag = core_tag(value)
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return value[0] in "tT"
    if tag == _INT:
        exact = _int(value)
        if exact is None:
            raise _NotEvents
        return exact
    if value.lower().endswith((".nan", ".inf")):
        raise _NotEvents
    number = _float(value)
    if not math.isfinite(number):
        raise _NotEvents
    return number


def _from_events(text: str, spans: dict[str, Span] | None = None) -> dict[str, Any] | None:
    """The data of a YAML text read from libyaml's events, without composing nodes; None
    when the text needs the node converter.

    It reads only documents in which the node converter would find nothing and that need no
    node graph: one document whose top is a mapping; no anchor, alias or explicit tag; keys
    that are scalars read as strings, none twice; no number JSON cannot carry; nesting under
    MAX_DEPTH. ``spans`` is filled for the ``Locator``. No recursion: no depth of input can
    crash it.
    """
    loader = _Loader(text)
    try:
        return _convert_events(loader.get_event, {} if spans is None else spans)
    except (_NotEvents, yaml.YAMLError):
        return None
    finally:
        loader.dispose()


_STARTS = (_MAPPING_START, _SEQUENCE_START)
_ENDS = (_MAPPING_END, _SEQUENCE_END)
#: The span of a collection two levels down while it is read: pointer, offset, line, column,
#: whether it is a sequence's item.
_Opened = tuple[str, int, int, int, bool]


def _expect(get: Any, first: type[yaml.Event], second: type[yaml.Event]) -> None:
    """The next two events are of these types (the stream's and the document's frame)."""
    if type(get()) is not first or type(get()) is not second:
        raise _NotEvents


def _scalar_data(event: Any) -> Any:
    """The data of a scalar event: quoted ones are strings, plain ones by the core schema."""
    if event.anchor is not None or event.tag is not None:
        raise _NotEvents
    value = event.value
    if event.implicit[0] and (not value or value[0] in _MAYBE_NOT_STR):
        return _event_scalar(value)
    return value


def _new_collection(event: Any, top: Any, key: str | None, in_map: bool, depth: int) -> Any:
    """The empty collection a start event opens, placed in ``top`` (the collection it is in)."""
    if event.anchor is not None or event.tag is not None:
        raise _NotEvents
    if (in_map and key is None) or depth >= MAX_DEPTH:
        raise _NotEvents  # a collection key, or nesting the converter reports
    new: Any = {} if type(event) is _MAPPING_START else []
    if in_map:
        top[key] = new
    elif top is not None:
        top.append(new)
    elif type(event) is not _MAPPING_START:
        raise _NotEvents  # a sequence at the top: Y002
    return new


def _track(
    event: Any, depth: int, *, top: Any, key: str | None, in_map: bool, outer: str, inner: _Opened
) -> tuple[str, _Opened]:
    """The pointer of the collection one level down and the span of the one two levels down,
    once ``event`` opened a collection at ``depth`` 1 or 2 as the last entry of ``top``."""
    name = escape_pointer(key) if in_map else str(len(top) - 1)  # type: ignore[arg-type]
    if depth == 1:
        return f"/{name}", inner
    mark = event.start_mark
    return outer, (f"{outer}/{name}", mark.index, mark.line, mark.column, not in_map)


def _convert_events(get: Any, spans: dict[str, Span]) -> dict[str, Any] | None:
    _expect(get, yaml.StreamStartEvent, yaml.DocumentStartEvent)
    stack: list[tuple[Any, Any, bool]] = []
    top: Any = None  # the collection being filled
    key: str | None = None  # the pending key of a mapping (None: a key comes next)
    in_map = False
    outer = ""  # the pointer of the collection one level down being read
    inner: _Opened = ("", 0, 0, 0, False)  # the one two levels down, and its start
    while True:
        event = get()
        kind = type(event)
        if kind is _SCALAR_EVENT:
            value = _scalar_data(event)
            if key is not None:
                top[key] = value
                key = None
            elif in_map:
                if type(value) is not str or value in top:
                    raise _NotEvents  # a non-string or duplicate key: a finding
                key = value
            elif top is None:
                raise _NotEvents  # a scalar document
            else:
                top.append(value)
        elif kind in _STARTS:
            new = _new_collection(event, top, key, in_map, len(stack))
            if len(stack) in (1, 2):  # a collection one or two levels down: track its span
                outer, inner = _track(
                    event, len(stack), top=top, key=key, in_map=in_map, outer=outer, inner=inner
                )
            stack.append((top, key, in_map))
            top, key, in_map = new, None, kind is _MAPPING_START
        elif kind in _ENDS:
            done = top
            top, _, in_map = stack.pop()
            key = None
            if len(stack) == 2:
                spans[inner[0]] = (inner[1], inner[2], inner[3], event.end_mark.index, inner[4])
            if top is None:
                break
        else:
            raise _NotEvents  # an alias, or an event out of place
    _expect(get, yaml.DocumentEndEvent, yaml.StreamEndEvent)  # else a second document: Y011
    return done  # type: ignore[no-any-return]
