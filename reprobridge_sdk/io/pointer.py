"""JSON Pointer (RFC 6901): the one owner of escaping, walking and pydantic locations.

Why not a library: ``jsonpointer`` has neither a lenient walk nor pydantic's locations, and
its errors name no step; these 100 lines cost less than one more dependency.

Rules: ``~`` is written ``~0`` and ``/`` is written ``~1``, in that order, so that
:func:`unescape_pointer` undoes :func:`escape_pointer` for every token (``~01`` is ``~1``,
never ``/``). A list index is ``0`` or a number without a leading zero.

Grammar (RFC 6901, section 3; EBNF)::

    json-pointer    = { "/" reference-token } ;
    reference-token = { unescaped | escaped } ;
    escaped         = "~" ( "0" | "1" ) ;   (* "~0" is "~", "~1" is "/" *)
    unescaped       = any character but "/" and "~" ;
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = [
    "PointerError",
    "ancestors",
    "escape_pointer",
    "from_loc",
    "pointer_of",
    "resolve",
    "tokens_of",
    "unescape_pointer",
    "walk",
]

_INDEX = re.compile(r"0|[1-9][0-9]*")


class PointerError(LookupError):
    """A pointer that is malformed or names nothing in the document (the message says which)."""


def escape_pointer(token: str) -> str:
    """Escape one JSON Pointer reference token (RFC 6901)."""
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def unescape_pointer(token: str) -> str:
    """Undo :func:`escape_pointer`."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer_of(tokens: Iterable[str | int]) -> str:
    """The pointer of a path of keys and list indices."""
    return "".join("/" + escape_pointer(str(token)) for token in tokens)


def ancestors(pointer: str) -> Iterator[str]:
    """``pointer``, then each pointer above it, up to the root ``""``."""
    while True:
        yield pointer
        if not pointer:
            return
        pointer = pointer.rsplit("/", 1)[0] if "/" in pointer else ""


def tokens_of(pointer: str) -> tuple[str, ...]:
    """The unescaped tokens of ``pointer``; :class:`PointerError` when it is malformed."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        msg = f"JSON pointer {pointer!r} must be empty or start with '/'"
        raise PointerError(msg)
    return tuple(unescape_pointer(token) for token in pointer[1:].split("/"))


def walk(data: Any, pointer: str) -> Any:
    """The value ``pointer`` names in ``data``; :class:`PointerError` naming the failing step."""
    current = data
    for key in tokens_of(pointer):
        if isinstance(current, dict):
            if key not in current:
                msg = f"JSON pointer {pointer!r}: no key {key!r}"
                raise PointerError(msg)
            current = current[key]
        elif isinstance(current, list):
            if not _INDEX.fullmatch(key) or int(key) >= len(current):
                msg = f"JSON pointer {pointer!r}: no item {key!r} in a list of {len(current)}"
                raise PointerError(msg)
            current = current[int(key)]
        else:
            msg = f"JSON pointer {pointer!r}: cannot index into a {type(current).__name__}"
            raise PointerError(msg)
    return current


def resolve(data: Any, pointer: str, default: Any = None) -> Any:
    """The value ``pointer`` names in ``data``, or ``default`` when it names nothing."""
    try:
        return walk(data, pointer)
    except PointerError:
        return default


def from_loc(data: Any, loc: Sequence[int | str]) -> str:
    """The pointer of a pydantic error location in ``data``.

    A location step that is not a key of the object there but its ``kind`` tag (pydantic's
    discriminated unions insert the tag) is skipped.
    """
    parts: list[str | int] = []
    current = data
    for item in loc:
        if isinstance(current, dict) and isinstance(item, str) and item not in current:
            if current.get("kind") == item:
                continue
            parts.append(item)
            current = None
            continue
        parts.append(item)
        if isinstance(current, dict):
            current = current.get(item)
        elif isinstance(current, list) and isinstance(item, int) and item < len(current):
            current = current[item]
        else:
            current = None
    return pointer_of(parts)
