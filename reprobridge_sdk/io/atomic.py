"""Atomic writes of files and directories: built beside the target, then renamed into place.

The one owner of atomic writes (``tests/test_atomic_owner.py``): a reader never sees a
half-written file or directory and a crash never leaves one in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .safefs import atomic_open
from .safefs import atomic_write_bytes as _atomic_write_bytes

__all__ = [
    "atomic_directory",
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "json_text",
]


def json_text(data: Any, *, sort_keys: bool = False) -> str:
    """``data`` as the SDK's one JSON text, for files and for the command line alike.

    Indented by two spaces, non-ASCII as UTF-8 characters, a final newline; a lone surrogate
    (a file name that is not UTF-8) stays its ``\\u`` escape, so the text always encodes.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=sort_keys) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes | Iterator[bytes],
    *,
    mode: int = 0o644,
    root: str | os.PathLike[str] | None = None,
    durable: bool = True,
) -> None:
    """Write ``data`` (bytes, or an iterator of pieces) to ``path`` atomically.

    ``durable=False`` leaves out the fsync (see ``safefs.atomic_open``).
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
    atomic_write_text(path, json_text(data), root=root, durable=durable)


@contextlib.contextmanager
def atomic_directory(
    path: str | os.PathLike[str], *, replace: bool = False, fresh: bool = False
) -> Iterator[Path]:
    """A staging directory beside ``path``, renamed to it when the block ends without an error.

    The directory is whole or absent. The rename replaces an empty directory at ``path``;
    anything else there is an ``OSError`` (another writer placed it first), unless ``replace``:
    then it is removed just before the rename. ``fresh``: the staging path does not exist yet
    when the block starts (for a tool that creates the directory itself).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        if fresh:
            staging.rmdir()
        yield staging
        if replace:
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.exists():
                shutil.rmtree(target)
        staging.replace(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
