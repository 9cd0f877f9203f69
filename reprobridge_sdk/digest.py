"""File and tree digests (spec §8).

* A *file digest* is the lower-case hex SHA-256 of the file's bytes.
* A *tree digest* (``sha256-tree1:<hex>``) is the SHA-256 of a canonical listing of a
  directory: one entry per regular file or symbolic link below it, sorted by the UTF-8 bytes
  of its POSIX relative path, each entry being ``<type> NUL <path> NUL <value> LF`` where
  ``<type>`` is ``f`` (regular file), ``x`` (regular file with any execute bit) or ``l``
  (symbolic link), and ``<value>`` is the file digest, or the link target as written.
  Directories themselves, timestamps, owners and other permission bits do not count; so the
  digest is independent of file-system order and of when or by whom files were written.
  Entries named in :data:`TREE_EXCLUDES` (version-control and byte-code caches) are skipped
  at any depth. A file larger than :data:`MAX_TREE_FILE_BYTES` is refused (an
  :class:`~reprobridge_sdk.io.safefs.UnsafeFileError`), never hashed.

This module is at the ground floor of the SDK and imports nothing else of it.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from reprobridge_sdk.io import safefs

__all__ = [
    "MAX_TREE_FILE_BYTES",
    "TREE_DIGEST_PREFIX",
    "TREE_EXCLUDES",
    "file_sha256",
    "files_sha256",
    "handle_sha256",
    "iter_tree_entries",
    "tree_digest",
]

TREE_DIGEST_PREFIX = "sha256-tree1:"
#: Names skipped at any depth when computing a tree digest.
TREE_EXCLUDES = frozenset({".git", ".hg", ".svn", "__pycache__", ".DS_Store"})

_CHUNK = 1 << 20
#: Largest file hashed into a tree digest (1 GiB): code trees hold code, not data; a larger
#: (or sparse) file is refused with :class:`~reprobridge_sdk.io.safefs.UnsafeFileError`.
MAX_TREE_FILE_BYTES = 1 << 30


def file_sha256(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int | None = None,
    allow_links: bool = True,
    deadline: float | None = None,
) -> str:
    """The hex SHA-256 of a regular file's content (through the safe file layer).

    With ``root`` the path must stay inside it (with ``allow_links`` False it must not be a
    link at all); a non-regular file, or one larger than ``max_bytes`` (by ``fstat`` or by
    the bytes actually read), raises :class:`~reprobridge_sdk.io.safefs.UnsafeFileError`, as
    does hashing that lasts more than ``deadline`` seconds (``"too-slow"``).
    """
    with safefs.open_regular(
        path, root=root, max_bytes=max_bytes, allow_links=allow_links
    ) as handle:
        return handle_sha256(handle, max_bytes=max_bytes, deadline=deadline, name=path)


def handle_sha256(
    handle: io.RawIOBase | io.BufferedIOBase,
    *,
    max_bytes: int | None = None,
    deadline: float | None = None,
    name: str | os.PathLike[str] = "",
) -> str:
    """The hex SHA-256 of what is left to read from an open binary file (a file the caller
    opened through the safe file layer: hashing the descriptor it checked, not a name).

    ``max_bytes`` caps the bytes read, whatever ``fstat`` said (a file of ``/proc`` says 0);
    ``deadline`` (seconds) caps the time: past either, :class:`~reprobridge_sdk.io.safefs.
    UnsafeFileError` (``"too-large"``, ``"too-slow"``) naming ``name``.
    """
    file_digest = getattr(hashlib, "file_digest", None)
    if file_digest is not None and max_bytes is None and deadline is None:
        return str(file_digest(handle, "sha256").hexdigest())
    digest = hashlib.sha256()
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    total = 0
    end = None if deadline is None else time.monotonic() + deadline
    while size := handle.readinto(buffer):
        total += size
        if max_bytes is not None and total > max_bytes:
            msg = f"{name} has more than {max_bytes} bytes; at most {max_bytes} are hashed"
            raise safefs.UnsafeFileError("too-large", name, msg, limit=max_bytes)
        digest.update(view[:size])
        if end is not None and time.monotonic() > end:
            msg = f"{name} took longer than {deadline} s to hash"
            raise safefs.UnsafeFileError("too-slow", name, msg, limit=round(deadline or 0))
    return digest.hexdigest()


def files_sha256(
    paths: Sequence[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    max_bytes: int | None = None,
) -> list[str]:
    """The hex SHA-256 of several files, hashed in parallel threads, in the order given.

    ``hashlib`` releases the GIL while it hashes large buffers, so threads use several cores.
    ``workers`` defaults to the number of CPUs (at most 8); one worker hashes sequentially.
    """
    count = len(paths)
    if workers is None:
        workers = min(8, os.cpu_count() or 1)
    if count < 2 or workers < 2:
        return [file_sha256(path, max_bytes=max_bytes) for path in paths]
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - start-up: several files only

    with ThreadPoolExecutor(max_workers=min(workers, count)) as pool:
        return list(pool.map(lambda path: file_sha256(path, max_bytes=max_bytes), paths))


def iter_tree_entries(root: str | os.PathLike[str]) -> Iterator[tuple[str, str, str]]:
    """Yield ``(type, relative_posix_path, value)`` for the tree digest, in canonical order."""
    base = Path(root)
    entries: list[tuple[bytes, str, str, Path]] = []
    stack = [base]
    while stack:
        current = stack.pop()
        with os.scandir(current) as iterator:
            for entry in iterator:
                if entry.name in TREE_EXCLUDES or entry.name.endswith(".pyc"):
                    continue
                path = Path(entry.path)
                rel = path.relative_to(base).as_posix()
                if entry.is_symlink():
                    entries.append((rel.encode(), "l", rel, path))
                elif entry.is_dir():
                    stack.append(path)
                elif entry.is_file():
                    mode = entry.stat().st_mode
                    kind = "x" if mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) else "f"
                    entries.append((rel.encode(), kind, rel, path))
    entries.sort(key=lambda item: item[0])
    files = [path for _, kind, _, path in entries if kind != "l"]
    digests = iter(files_sha256(files, max_bytes=MAX_TREE_FILE_BYTES))
    for _, kind, rel, path in entries:
        # os.readlink, not Path.readlink: the target exactly as written, not normalised.
        value = os.readlink(path) if kind == "l" else next(digests)  # noqa: PTH115
        yield kind, rel, value


def tree_digest(root: str | os.PathLike[str]) -> str:
    """The ``sha256-tree1:`` digest of a directory."""
    digest = hashlib.sha256()
    for kind, rel, value in iter_tree_entries(root):
        digest.update(f"{kind}\0{rel}\0{value}\n".encode())
    return TREE_DIGEST_PREFIX + digest.hexdigest()
