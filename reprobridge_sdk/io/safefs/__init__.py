"""The safe file layer: every read and write of an artifact's or a run's files goes through it.

Why no library: none resolves paths below a root's descriptor with caps (os lacks openat2).

The rules are spec/security.md §15.1 (containment, regular files only, no check-then-open
window, size limits, writes) and §15.2 (deadlines, JSON depth). A refusal is an
:class:`UnsafeFileError` whose ``reason`` callers turn into a finding (:func:`refusal`). This
module imports nothing of the SDK but its exception base and the findings, so the ground floor
(:mod:`reprobridge_sdk.digest`) may use it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ._beneath import (
    _CLOEXEC,
    _NOFOLLOW,
    _NONBLOCK,
    MAX_LINK_HOPS,
    OpenRoot,
    UnsafeFileError,
    UnsafeReason,
    _open_beneath,
    _open_error,
    _real,
    is_inside,
    refusal,
    resolve_inside,
)

__all__ = [
    "HASH_SECONDS",
    "MAX_EVIDENCE_BYTES",
    "MAX_HASH_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_LINK_HOPS",
    "MAX_TEXT_BYTES",
    "OpenRoot",
    "UnsafeFileError",
    "UnsafeReason",
    "atomic_open",
    "atomic_write_bytes",
    "create_exclusive",
    "deeper_than",
    "is_inside",
    "loads_json",
    "open_regular",
    "read_bytes",
    "read_opened",
    "read_text",
    "refusal",
    "resolve_inside",
]

#: Largest text file read whole (a guide, a sample, a lock, a record): 64 MiB.
MAX_TEXT_BYTES = 64 * 1024 * 1024
#: Largest structured evidence file (JSON, CSV, YAML output or record) parsed whole: 256 MiB.
MAX_EVIDENCE_BYTES = 256 * 1024 * 1024
#: Largest single file hashed to check a declared digest (a lock, a patch, a data item):
#: 64 GiB. A sparse file claiming more is refused rather than read.
MAX_HASH_BYTES = 64 * 1024 * 1024 * 1024
#: Longest a single file's hashing may take before it is refused (``"too-slow"``): 30
#: minutes, the time of a 64 GiB file on a disk that reads 40 MB/s.
HASH_SECONDS = 1800.0
#: Deepest nesting of arrays and objects accepted in JSON evidence.
MAX_JSON_DEPTH = 256


def open_regular(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int | None = None,
    allow_links: bool = True,
) -> io.FileIO:
    """Open a regular file for binary reading (spec/security.md §15.1).

    With ``root`` (a path, or an :class:`OpenRoot`) the path is resolved inside it from its
    descriptor, and with ``allow_links`` False a path that is itself a link is refused.
    Without ``root`` (a venv's interpreter, a cache) links are followed and the resolved path
    is opened with ``O_NOFOLLOW``. Raises :class:`UnsafeFileError`, or ``FileNotFoundError``
    (callers report a missing file with their own code).
    """
    target = path if isinstance(path, Path) else Path(path)
    if isinstance(root, OpenRoot):
        fd = _open_beneath(root.path, target, allow_links=allow_links, opened=root)
    elif root is not None:
        fd = _open_beneath(root, target, allow_links=allow_links)
    else:
        if not allow_links and target.is_symlink():
            raise UnsafeFileError("link", target, f"{target} is a symbolic link")
        target = _real(target)
        try:
            fd = os.open(target, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
        except OSError as exc:
            raise _open_error(exc, target, path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            msg = f"{target} is not a regular file ({_kind(info.st_mode)})"
            raise UnsafeFileError("not-regular", target, msg)
        if max_bytes is not None and info.st_size > max_bytes:
            msg = f"{target} has {info.st_size} bytes; at most {max_bytes} are read"
            raise UnsafeFileError("too-large", target, msg, limit=max_bytes)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
    allow_links: bool = True,
) -> bytes:
    """The content of a regular file, at most ``max_bytes`` (else ``"too-large"``)."""
    with open_regular(path, root=root, max_bytes=max_bytes, allow_links=allow_links) as handle:
        return read_opened(handle, max_bytes=max_bytes, name=path)


def read_opened(
    handle: io.RawIOBase | io.BufferedIOBase,
    *,
    max_bytes: int = MAX_TEXT_BYTES,
    name: str | os.PathLike[str] = "",
) -> bytes:
    """The rest of a file opened by :func:`open_regular` (from its offset), at most
    ``max_bytes`` (else ``"too-large"``, naming ``name``): for a caller that keeps the
    descriptor to read the file again, never reopening it by name."""
    # ask for the size fstat gives (plus one byte, to see growth), not the cap: a read
    # allocates what it asks for, and the cap is 64 MiB for a 100-byte file
    size = max(0, os.fstat(handle.fileno()).st_size - handle.tell())
    data = handle.read(min(size, max_bytes) + 1) or b""
    # read() of a raw file may return short, or the file grew; keep reading to the cap.
    chunks = [data]
    total = len(data)
    while data and total <= max_bytes:
        # what fstat promised is left, else growth in 64 KiB steps (never past the cap)
        data = handle.read(min(max(size - total, 1 << 16), max_bytes + 1 - total)) or b""
        chunks.append(data)
        total += len(data)
    if total > max_bytes:
        msg = f"{name} grew beyond {max_bytes} bytes while it was read"
        raise UnsafeFileError("too-large", name, msg, limit=max_bytes)
    return b"".join(chunks)


def read_text(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
    allow_links: bool = True,
    errors: str = "strict",
) -> str:
    """:func:`read_bytes` decoded as UTF-8 (``UnicodeDecodeError`` with ``errors="strict"``)."""
    raw = read_bytes(path, root=root, max_bytes=max_bytes, allow_links=allow_links)
    return raw.decode("utf-8", errors)


def loads_json(
    raw: bytes,
    *,
    path: str | os.PathLike[str],
    max_depth: int = MAX_JSON_DEPTH,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """Parse the bytes of a JSON file (``path`` names it in a refusal) under the depth cap
    (``UnsafeFileError`` past it, ``ValueError`` for bad JSON). The readers of documents call
    it through :func:`reprobridge_sdk.io.reading.parse_json`, which reads the file too."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:  # cannot nest deeper than its brackets
        return json.loads(raw, object_pairs_hook=object_pairs_hook)
    # ``path`` is formatted only in a refusal (a caller may name the file lazily)
    try:  # the C decoder stops with RecursionError (never a crash) past the recursion limit
        value = json.loads(raw, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        msg = f"{path} nests deeper than {max_depth} levels"
        raise UnsafeFileError("too-deep", path, msg, limit=max_depth) from None
    if deeper_than(value, max_depth):
        msg = f"{path} nests deeper than {max_depth} levels"
        raise UnsafeFileError("too-deep", path, msg, limit=max_depth)
    return value


def deeper_than(value: Any, max_depth: int) -> bool:
    """Whether a parsed JSON or TOML value nests arrays and objects deeper than ``max_depth``
    (itself level 1; level by level, no recursion, stops at the first level past the limit)."""
    level: list[Any] = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        deeper: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item
            deeper += [c for c in children if type(c) is dict or type(c) is list]
        level = deeper
    return False


def create_exclusive(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = 0o600,
    append: bool = False,
) -> int:
    """Create ``path`` with ``O_EXCL | O_NOFOLLOW``; a link or file already there is refused.

    The parent directory is created if needed. With ``root`` it is resolved (and made) one
    component at a time inside the root, and the file is created relative to its descriptor
    (a directory link that leads out is ``"escapes"``). Returns the open (write-only)
    descriptor. ``FileExistsError`` when something is already at ``path``.
    """
    target = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    if append:
        flags |= os.O_APPEND
    if root is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        return os.open(target, flags, mode)
    parent = _open_beneath(root, target.parent, directory=True, create=True)
    try:
        return os.open(target.name, flags, mode, dir_fd=parent)
    finally:
        os.close(parent)


def _temporary(directory: Path, name: str, dir_fd: int | None) -> tuple[int, str]:
    """An ``O_EXCL`` temporary file beside ``name``: its descriptor and its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for _ in range(100):
        candidate = f".{name}.{os.urandom(6).hex()}.tmp"
        where = candidate if dir_fd is not None else os.fspath(directory / candidate)
        with contextlib.suppress(FileExistsError):
            return os.open(where, flags, 0o600, dir_fd=dir_fd), candidate
    msg = f"cannot create a temporary file in {directory}"  # pragma: no cover
    raise UnsafeFileError("unreadable", directory, msg)  # pragma: no cover


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes | Iterator[bytes],
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = 0o644,
    durable: bool = True,
) -> None:
    """Write ``data`` (bytes, or an iterator of pieces written as they come) to ``path``
    atomically, through :func:`atomic_open`."""
    with atomic_open(path, root=root, mode=mode, durable=durable) as handle:
        if isinstance(data, bytes):
            handle.write(data)
        else:
            for chunk in data:
                handle.write(chunk)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = 0o644,
    durable: bool = True,
) -> Iterator[BinaryIO]:
    """A file to write that appears at ``path`` whole when the block ends without an error.

    An ``O_EXCL`` temporary beside it, fsync, rename (spec/security.md §15.1 "Writes"); on an
    error ``path`` is as before. With ``root`` the directory is resolved (and made) inside it.

    ``durable=False`` leaves out the fsync: the rename is still atomic for every reader and
    survives the writer's crash, but not the operating system's. Use it only for a file that
    a later durable write replaces.
    """
    target = Path(path)
    if root is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        parent = None
    else:
        parent = _open_beneath(root, target.parent, directory=True, create=True)
    try:
        fd, tmp = _temporary(target.parent, target.name, parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
                os.fchmod(handle.fileno(), mode)
            if parent is None:
                (target.parent / tmp).replace(target)
            else:
                os.replace(tmp, target.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                if parent is None:
                    (target.parent / tmp).unlink()
                else:
                    os.unlink(tmp, dir_fd=parent)
            raise
    finally:
        if parent is not None:
            os.close(parent)
