"""JSON Pointer reference tokens (RFC 6901), as the reader writes a value's pointer.

Rules: ``~`` is written ``~0`` and ``/`` is written ``~1``, in that order, so that
:func:`unescape_pointer` undoes :func:`escape_pointer` for every token (``~01`` is ``~1``,
never ``/``). A token with neither character is returned as it is.
"""

from __future__ import annotations

__all__ = ["escape_pointer", "unescape_pointer"]


def escape_pointer(token: str) -> str:
    """Escape one JSON Pointer reference token (RFC 6901)."""
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def unescape_pointer(token: str) -> str:
    """Undo :func:`escape_pointer`."""
    return token.replace("~1", "/").replace("~0", "~")
