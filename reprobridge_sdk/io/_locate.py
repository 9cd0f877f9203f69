"""Where one value of a document is written, found without a node graph (spec §3, "yaml").

Why a second path: composing the graph to locate one finding of a 10k-task manifest took 60%
more CPU and 500 against 145 MiB of peak memory (``docs/performance.md``, 2026-12-02).

The answer is exactly the node converter's (``_nodes``). Each pointer is found by one walk of
the event stream along its path only; an alias, or anything the walk does not expect, hands
over to the node converter's positions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from reprobridge_sdk.io._events import Span
from reprobridge_sdk.io.pointer import ancestors, escape_pointer

__all__ = ["Locator"]

Position = tuple[int, int]
#: A located pointer: the value's position and, for a mapping entry, its key's.
Found = tuple[Position, Position | None]

_WALKS_BEFORE_ALL = 8
_SCALAR, _ALIAS = yaml.ScalarEvent, yaml.AliasEvent
_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
_MAP_START = yaml.MappingStartEvent


def _tokens(pointer: str) -> list[str] | None:
    """The reference tokens of ``pointer`` as written (escaped), None when it is not one."""
    if not pointer:
        return []
    if not pointer.startswith("/"):
        return None
    return pointer[1:].split("/")


class Locator:
    """Finds pointers in the text of a document read without a finding.

    ``fallback`` gives the full converter's maps of value and key positions, used when the
    event walk meets what it does not handle.
    """

    def __init__(
        self,
        text: str,
        *,
        loader: type[Any],
        spans: dict[str, Span] | None = None,
        fallback: Callable[[], tuple[dict[str, Position], dict[str, Position]]],
    ) -> None:
        self._text = text
        self._spans = spans or {}
        self._loader = loader
        self._fallback = fallback
        self._found: dict[str, Found | None] = {}
        self._complete: set[str] = set()  # collections whose every entry is in _found
        self._walks = 0
        self._all: tuple[dict[str, Position], dict[str, Position]] | None = None

    def locate(self, pointer: str, *, key: bool = False) -> Position:
        """``(line, col)`` of ``pointer`` or of its nearest ancestor that exists; (0, 0) if
        none. With ``key=True`` a mapping entry's key is preferred.
        """
        for current in ancestors(pointer):
            found = self.find(current)
            if found is not None:
                value, key_at = found
                return key_at if key and key_at is not None else value
        return (0, 0)

    def find(self, pointer: str) -> Found | None:
        """The position of the value at ``pointer`` and of its key, or None if there is none."""
        if self._all is not None:
            values, keys = self._all
            at = values.get(pointer)
            return None if at is None else (at, keys.get(pointer))
        if pointer in self._found:
            return self._found[pointer]
        tokens = _tokens(pointer)
        if tokens is None or self._absent(pointer):
            return None
        if self._walks >= _WALKS_BEFORE_ALL:
            self._all = self._walk_all()
            return self.find(pointer)
        if len(tokens) == 2:
            span = self._spans.get(pointer)
            if span is not None and span[4]:  # a sequence's item (no key): where it starts
                found = ((span[1] + 1, span[2] + 1), None)
                self._found[pointer] = found
                return found
        if len(tokens) > 2:
            base = f"/{tokens[0]}/{tokens[1]}"
            span = self._spans.get(base)
            if span is not None:  # below a task or a launcher: read its span alone
                start, line, col, end, _ = span
                piece = " " * col + self._text[start:end]
                self._walk_to(pointer[len(base) :], tokens[2:], piece, base, line)
                if self._all is None:
                    return self._found.setdefault(pointer, None)
                return self.find(pointer)
        self._walks += 1
        self._walk_to(pointer, tokens, self._text, "", 0)
        if self._all is not None:  # the walk handed over to the full converter's positions
            return self.find(pointer)
        return self._found.setdefault(pointer, None)

    def _absent(self, pointer: str) -> bool:
        """A collection on the pointer's path is complete and lacks the path's next entry."""
        current = pointer
        while current:
            parent = current.rsplit("/", 1)[0]
            if parent in self._complete and current not in self._found:
                return True
            current = parent
        return False

    # -- YAML events --------------------------------------------------------------------------

    def _events(self, text: str) -> Any:
        loader = self._loader(text)
        try:
            while loader.check_event():
                yield loader.get_event()
        finally:
            loader.dispose()

    def _give_up(self) -> None:
        self._all = self._fallback()

    def _walk_to(self, pointer: str, tokens: list[str], text: str, base: str, line0: int) -> None:
        """Walk the events along ``pointer``'s path, recording the entries of the collections
        on it, until the pointer is found or the deepest existing collection of the path ends
        (then a pointer below it that was not recorded is absent).

        ``text`` is the document's, or the span of the collection at ``base`` (``line0`` its
        first line, 0-based); pointers are relative to ``base``.
        """
        path = [""]
        for token in tokens:
            path.append(f"{path[-1]}/{token}")
        wanted = set(path)
        stack: list[list[Any]] = []
        try:
            events = self._events(text)
            for event in events:
                kind = type(event)
                if kind in _ENDS:
                    self._complete.add(base + stack.pop()[0])
                    return
                placed = _place(stack, event, line0)
                if placed is None:
                    continue
                here, at, key_at = placed
                if here or not base:
                    self._found.setdefault(base + here, (at, key_at))
                if kind is _SCALAR:
                    continue
                if here == pointer:
                    return
                if here in wanted:
                    stack.append([here, kind is _MAP_START, 0, None, None])
                else:
                    _skip(events)
        except (_GiveUp, yaml.YAMLError):  # the text was read once without an error
            self._give_up()

    def _walk_all(self) -> tuple[dict[str, Position], dict[str, Position]]:
        """Every position, in one walk of the events (no node graph)."""
        values: dict[str, Position] = {}
        keys: dict[str, Position] = {}
        stack: list[list[Any]] = []
        try:
            for event in self._events(self._text):
                kind = type(event)
                if kind in _ENDS:
                    stack.pop()
                    continue
                placed = _place(stack, event, 0)
                if placed is None:
                    continue
                here, at, key_at = placed
                values.setdefault(here, at)
                if key_at is not None:
                    keys.setdefault(here, key_at)
                if kind is not _SCALAR:
                    stack.append([here, kind is _MAP_START, 0, None, None])
        except (_GiveUp, yaml.YAMLError):  # the text was read once without an error
            return self._fallback()
        return values, keys


class _GiveUp(Exception):
    """The walk met what it does not handle (an alias, a collection key): the full
    converter's positions answer instead."""


def _place(
    stack: list[list[Any]], event: Any, line0: int
) -> tuple[str, Position, Position | None] | None:
    """The pointer, position and key position of the node ``event`` starts, given the
    collections open around it (frames: [pointer, is_mapping, next index, pending key
    token, key position]); None for a key (kept in its frame) or an event that starts no node.
    """
    kind = type(event)
    if kind is _ALIAS:
        raise _GiveUp
    if kind is not _SCALAR and kind not in _STARTS:
        return None  # stream and document events
    mark = event.start_mark
    at = (mark.line + line0 + 1, mark.column + 1)
    if not stack:
        return "", at, None
    frame = stack[-1]
    if not frame[1]:
        frame[2] += 1
        return f"{frame[0]}/{frame[2] - 1}", at, None
    if frame[3] is None:  # a key
        if kind is not _SCALAR:
            raise _GiveUp
        frame[3] = escape_pointer(event.value)
        frame[4] = at
        return None
    here, key_at = f"{frame[0]}/{frame[3]}", frame[4]
    frame[3] = None
    return here, at, key_at


def _skip(events: Any) -> None:
    """Consume the events of the collection just started, to its end."""
    depth = 1
    for event in events:
        kind = type(event)
        if kind is _ALIAS:
            raise _GiveUp
        if kind in _STARTS:
            depth += 1
        elif kind in _ENDS:
            depth -= 1
            if not depth:
                return
