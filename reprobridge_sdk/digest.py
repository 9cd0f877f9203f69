"""File and tree digests, as spec ``manifest.md#digests`` (§8) defines them.

A file larger than :data:`MAX_TREE_FILE_BYTES` is refused (an
:class:`~reprobridge_sdk.io.safefs.UnsafeFileError`), never hashed. This module is at the
ground floor of the SDK and imports nothing else of it.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import IO, TYPE_CHECKING

from reprobridge_sdk.io import safefs

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = [
    "MAX_TREE_FILE_BYTES",
    "TREE_DIGEST_PREFIX",
    "TREE_EXCLUDES",
    "WrittenFiles",
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

    With ``root`` the path must stay inside it. A non-regular file, one over ``max_bytes``
    (by ``fstat`` or by the bytes read) or hashing past ``deadline`` seconds raises
    ``UnsafeFileError``.
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
    """The hex SHA-256 of what is left to read from an open binary file.

    Hashes the descriptor the caller checked, not a name. ``max_bytes`` caps the bytes read
    whatever ``fstat`` said (a ``/proc`` file says 0), ``deadline`` the seconds: past either,
    ``UnsafeFileError`` (``"too-large"``, ``"too-slow"``).
    """
    if max_bytes is None and deadline is None:
        return hashlib.file_digest(handle, "sha256").hexdigest()
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


#: What identifies a file's content for :class:`WrittenFiles`: device, inode, size, mode, and
#: the modification and change times in nanoseconds (a write or a ``chmod`` moves the
#: change time, which no user can set back).
_Identity = tuple[int, int, int, int, int, int]
_WRITTEN: ContextVar[dict[_Identity, str] | None] = ContextVar("written_files", default=None)


def _identity(info: os.stat_result) -> _Identity:
    return (
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mode,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


class WrittenFiles:
    """The file digests of files this process writes, hashed as their bytes pass through.

    :meth:`copy` writes a file and remembers its digest under the identity its descriptor
    has when the writing ends; inside ``with written:`` a tree digest takes a remembered
    file's digest instead of reading the file again (unpacking then validating reads each
    file once). A file changed since has another identity and is read as usual; the change
    times are only as fine as the file system's clock, so this is for a tree the process
    has just written itself and reads right after, as unpacking does.
    """

    def __init__(self) -> None:
        self._digests: dict[_Identity, str] = {}

    def copy(self, source: IO[bytes], target: IO[bytes]) -> str:
        """Copy the rest of ``source`` to ``target`` (a regular file opened for writing,
        its mode already set) and return the hex SHA-256 of the bytes copied."""
        digest = hashlib.sha256()
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            target.write(chunk)
        target.flush()
        value = digest.hexdigest()
        self._digests[_identity(os.fstat(target.fileno()))] = value
        return value

    def __enter__(self) -> WrittenFiles:
        self._token = _WRITTEN.set(self._digests)
        return self

    def __exit__(self, *exc: object) -> None:
        _WRITTEN.reset(self._token)


#: Most files open at once while a tree is hashed (each is hashed from its descriptor).
_IN_FLIGHT = 64


def iter_tree_entries(root: str | os.PathLike[str]) -> Iterator[tuple[str, str, str]]:
    """Yield ``(type, relative_posix_path, value)`` for the tree digest (spec/manifest.md §8).

    Each entry is opened once by descriptor without following links, and typed and hashed
    from that descriptor, so a file swapped for a link meanwhile is never hashed through it;
    an entry that changes type raises ``UnsafeFileError`` (``"unreadable"``).
    """
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - start-up: trees only

    base = os.fspath(root)
    entries: list[tuple[bytes, str, str, Future[str] | str]] = []
    pending: deque[Future[str]] = deque()
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        for directory, dirnames, filenames, dir_fd in os.fwalk(base):
            dirnames[:] = [d for d in dirnames if d not in TREE_EXCLUDES]
            prefix = os.path.relpath(directory, base)
            for name in (*dirnames, *filenames):
                if name in TREE_EXCLUDES or name.endswith(".pyc"):
                    continue
                rel = name if prefix == "." else f"{prefix}/{name}".replace(os.sep, "/")
                found = _tree_entry(name, dir_fd, f"{directory}/{name}", pool)
                if found is None:
                    continue
                kind, value = found
                if not isinstance(value, str):
                    pending.append(value)
                    while len(pending) > _IN_FLIGHT:
                        pending.popleft().result()
                entries.append((rel.encode(), kind, rel, value))
        entries.sort(key=lambda item: item[0])
        for _, kind, rel, value in entries:
            yield kind, rel, value if isinstance(value, str) else value.result()


def _tree_entry(
    name: str, dir_fd: int, path: str, pool: ThreadPoolExecutor
) -> tuple[str, Future[str] | str] | None:
    """The kind and value of one directory entry, opened once (see :func:`iter_tree_entries`);
    ``None`` for a directory (walked by ``fwalk``) or a special file. A file of the current
    :class:`WrittenFiles` that is unchanged is not opened: its digest is the remembered one."""
    written = _WRITTEN.get()
    if written:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            pass  # opened below, which says why it cannot be
        else:
            value = written.get(_identity(info))
            if value is not None and info.st_size <= MAX_TREE_FILE_BYTES:
                return _kind(info), value
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EMLINK):
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(errno.ENOENT, "removed while hashed", path) from None
            raise safefs.UnsafeFileError("unreadable", path, f"{path}: {exc.strerror}") from None
        try:  # a link: its target exactly as written, not normalised
            return "l", os.readlink(name, dir_fd=dir_fd)
        except OSError:
            msg = f"{path} changed while the tree was hashed"
            raise safefs.UnsafeFileError("unreadable", path, msg) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    if info.st_size > MAX_TREE_FILE_BYTES:
        os.close(fd)
        msg = f"{path} has {info.st_size} bytes; at most {MAX_TREE_FILE_BYTES} are hashed"
        raise safefs.UnsafeFileError("too-large", path, msg, limit=MAX_TREE_FILE_BYTES)
    os.set_blocking(fd, True)
    handle = io.FileIO(fd, "rb", closefd=True)

    def _hash() -> str:
        with handle:
            return handle_sha256(handle, max_bytes=MAX_TREE_FILE_BYTES, name=path)

    return _kind(info), pool.submit(_hash)


def _kind(info: os.stat_result) -> str:
    return "x" if info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) else "f"


def tree_digest(root: str | os.PathLike[str]) -> str:
    """The ``sha256-tree1:`` digest of a directory."""
    digest = hashlib.sha256()
    for kind, rel, value in iter_tree_entries(root):
        digest.update(f"{kind}\0{rel}\0{value}\n".encode())
    return TREE_DIGEST_PREFIX + digest.hexdigest()
