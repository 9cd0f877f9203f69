"""The one reader of document files: bounded bytes, UTF-8, then JSON or TOML (spec §15.1-§15.2).

Every reader of a document takes the file, its size limit, encoding and syntax from here,
and turns an :class:`Unreadable` into its own finding code. YAML is ``io.document``'s.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from reprobridge_sdk.io import safefs

__all__ = [
    "MAX_TOML_DEPTH",
    "Problem",
    "Unreadable",
    "decode",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_json",
]

#: Deepest nesting of tables and arrays accepted in a TOML document (a lock, settings).
MAX_TOML_DEPTH = 64

#: Why a document cannot be read: the file (``missing``, ``io``, ``unsafe``, ``too-large``),
#: its encoding, or its content (``syntax``, ``too-deep``, ``duplicate-key``).
Problem = Literal[
    "missing", "io", "unsafe", "too-large", "encoding", "syntax", "too-deep", "duplicate-key"
]

_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)")


class Unreadable(ValueError):
    """A document that cannot be read: ``problem``, the reader's ``message`` (the safe file
    layer's or the parser's words, without a position) and where (1-based; 0: unknown).

    ``size`` is the file's size for ``too-large``; ``offset`` the byte for ``encoding``.
    """

    def __init__(
        self,
        problem: Problem,
        message: str,
        *,
        line: int = 0,
        col: int = 0,
        size: int = 0,
        offset: int = 0,
    ) -> None:
        super().__init__(message)
        self.problem: Problem = problem
        self.message = message
        self.line = line
        self.col = col
        self.size = size
        self.offset = offset

    @property
    def malformed(self) -> bool:
        """True when the file was read but its bytes are not a document of the format."""
        return self.problem in {"encoding", "syntax", "duplicate-key"}


def read_bytes(
    path: str | os.PathLike[str],
    *,
    max_bytes: int,
    root: str | os.PathLike[str] | safefs.OpenRoot | None = None,
    allow_links: bool = True,
) -> bytes:
    """The bytes of a regular file through the safe file layer, at most ``max_bytes``."""
    try:
        return safefs.read_bytes(path, root=root, max_bytes=max_bytes, allow_links=allow_links)
    except safefs.UnsafeFileError as exc:
        if exc.reason != "too-large":
            raise Unreadable("unsafe", exc.message) from exc
        try:
            size = max(Path(path).stat().st_size, max_bytes + 1)
        except OSError:  # pragma: no cover - it was just opened
            size = max_bytes + 1
        raise Unreadable("too-large", exc.message, size=size) from exc
    except FileNotFoundError as exc:
        raise Unreadable("missing", exc.strerror or str(exc)) from exc
    except OSError as exc:
        raise Unreadable("io", exc.strerror or str(exc)) from exc


def decode(raw: bytes) -> str:
    """``raw`` as UTF-8 text, without a leading byte order mark; ``encoding`` at the first
    byte that is not UTF-8 (its line, its column in characters, its offset)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        col = len(raw[start : exc.start].decode("utf-8", "replace")) + 1
        message = f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not valid UTF-8"
        raise Unreadable("encoding", message, line=line, col=col, offset=exc.start) from exc
    return text.removeprefix("\ufeff")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) < len(pairs):
        key = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise Unreadable("duplicate-key", f"duplicate key {key!r}")
    return value


def parse_json(
    raw: bytes,
    *,
    name: str | os.PathLike[str] = "",
    max_depth: int = safefs.MAX_JSON_DEPTH,
    unique_keys: bool = False,
) -> Any:
    """The JSON value of ``raw`` (``name`` names it in a refusal, formatted only then).

    ``syntax`` at the parser's line and column, ``encoding``, ``too-deep`` past
    ``max_depth``, and with ``unique_keys`` ``duplicate-key`` for an object that repeats a
    key (which JSON readers resolve differently).
    """
    hook = _unique if unique_keys else None
    try:
        return safefs.loads_json(raw, path=name, max_depth=max_depth, object_pairs_hook=hook)
    except safefs.UnsafeFileError as exc:  # too deep
        raise Unreadable("too-deep", exc.message) from exc
    except json.JSONDecodeError as exc:
        raise Unreadable("syntax", str(exc), line=exc.lineno, col=exc.colno) from exc
    except UnicodeDecodeError as exc:
        raise Unreadable("encoding", str(exc), offset=exc.start) from exc


def read_json(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = safefs.MAX_EVIDENCE_BYTES,
    max_depth: int = safefs.MAX_JSON_DEPTH,
    root: str | os.PathLike[str] | safefs.OpenRoot | None = None,
    allow_links: bool = True,
    unique_keys: bool = False,
) -> Any:
    """:func:`read_bytes` of ``path``, then :func:`parse_json`."""
    raw = read_bytes(path, root=root, max_bytes=max_bytes, allow_links=allow_links)
    return parse_json(raw, name=path, max_depth=max_depth, unique_keys=unique_keys)


def parse_toml(text: str, *, max_depth: int = MAX_TOML_DEPTH) -> dict[str, Any]:
    """The table of a TOML ``text``: ``syntax`` at its line and column (the end of the text
    for an error at its end), or ``too-deep``. A repeated key is a syntax error in TOML."""
    import tomllib  # noqa: PLC0415 - start-up: only a reader of TOML pays for it

    try:
        data = tomllib.loads(text)
    except RecursionError:  # deeply nested arrays or inline tables
        raise Unreadable("too-deep", f"the document nests deeper than {max_depth} levels") from None
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_AT.search(str(exc))
        if at is not None and at.group(1):
            line, col = int(at.group(1)), int(at.group(2))
        else:  # "(at end of document)"
            line, col = text.count("\n") + 1, len(text.rsplit("\n", 1)[-1]) + 1
        message = _TOML_AT.sub("", str(exc)).strip()
        raise Unreadable("syntax", message, line=line, col=col) from exc
    if safefs.deeper_than(data, max_depth):
        raise Unreadable("too-deep", f"the document nests deeper than {max_depth} levels")
    return data
