"""Atomic file writes: write to a temporary file in the same directory, then rename.

A reader never sees a half-written file and a crash never leaves one in place. The work is
done by :func:`reprobridge_sdk.io.safefs.atomic_write_bytes` (temporary created with
``O_EXCL``; with ``root``, the directory must resolve inside it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from .safefs import atomic_write_bytes as _atomic_write_bytes

__all__ = ["atomic_write_bytes", "atomic_write_json", "atomic_write_text"]


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes | Iterator[bytes],
    *,
    mode: int = 0o644,
    root: str | os.PathLike[str] | None = None,
    durable: bool = True,
) -> None:
    """Write ``data`` (bytes, or an iterator of pieces written as they come) to ``path``
    atomically (same-directory temporary file, fsync, rename).

    ``durable=False`` leaves out the fsync (see
    :func:`reprobridge_sdk.io.safefs.atomic_write_bytes`).
    """
    _atomic_write_bytes(path, data, root=root, mode=mode, durable=durable)


def atomic_write_text(
    path: str | os.PathLike[str],
    text: str,
    *,
    root: str | os.PathLike[str] | None = None,
    durable: bool = True,
) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    _atomic_write_bytes(path, text.encode("utf-8"), root=root, durable=durable)


def atomic_write_json(
    path: str | os.PathLike[str],
    data: Any,
    *,
    root: str | os.PathLike[str] | None = None,
    durable: bool = True,
) -> None:
    """Write ``data`` as indented JSON (with a final newline) to ``path`` atomically."""
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    atomic_write_text(path, text, root=root, durable=durable)
