"""The file an extractor reads, opened once by the safe file layer and read only through that
descriptor, never by its name again: a directory swapped for a link to the outside after the
check cannot lead a read there.

A file handed over with ``data`` (the bytes the caller hashed) gives those bytes to the
document readers, so what is parsed is what was hashed. A plugin receives
:attr:`OpenedFile.path` and opens the file itself.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from reprobridge_sdk.io import safefs

__all__ = ["OpenedFile", "Readable", "open_checked"]


class OpenedFile:
    """A regular file opened by the safe file layer; readers read it through its descriptor."""

    __slots__ = ("_data", "_handle", "_path", "_pinned", "_resolve", "_stat", "given")

    def __init__(
        self,
        given: Path | str,
        handle: io.FileIO,
        *,
        resolve: bool,
        pinned: bool = False,
        data: bytes | None = None,
    ) -> None:
        #: The path as the caller gave it (the batch cache's key, with the descriptor's stat);
        #: a string names the same file as its path (the auditor's run loop makes no object).
        self.given = given
        self._handle = handle
        self._resolve = resolve
        self._pinned = pinned
        self._path: Path | None = None
        self._stat: os.stat_result | None = None
        self._data = data

    @property
    def path(self) -> Path:
        """The path with its links resolved (under a root; else as given), only to name the
        file in messages and for plugins: resolved on first use (most reads never need it)."""
        if self._path is None:
            given = self.given
            if self._resolve:
                self._path = _resolved(given)
            else:
                self._path = given if isinstance(given, Path) else Path(given)
        return self._path

    @property
    def name(self) -> str:
        return self.path.name

    def __str__(self) -> str:
        return str(self.given)

    @property
    def lazy_name(self) -> _LazyName:
        """:attr:`path` for a message, resolved only if the message is made."""
        return _LazyName(self)

    @property
    def pinned(self) -> bool:
        """Whether the file's version is taken once (see the module): its :meth:`stat`
        never changes."""
        return self._pinned

    def stat(self) -> os.stat_result:
        """The opened file's own status (``fstat``; for a pinned file, the first one)."""
        if self._stat is not None:
            return self._stat
        found = os.fstat(self._handle.fileno())
        if self._pinned:
            self._stat = found
        return found

    def open(self, mode: str = "rb") -> io.BufferedReader:
        """A new binary reader of the opened file from its start (``mode`` must be ``"rb"``,
        as :meth:`pathlib.Path.open` is called by the scans)."""
        if mode != "rb":
            msg = f"an opened file is read as bytes, not {mode!r}"
            raise ValueError(msg)
        fd = os.dup(self._handle.fileno())
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            return open(fd, "rb", closefd=True)  # noqa: PTH123 - a descriptor, not a path
        except BaseException:
            os.close(fd)
            raise

    def open_text(self, **options: Any) -> IO[str]:
        """A text reader of the opened file from its start (``encoding`` ... as for ``open``)."""
        return io.TextIOWrapper(self.open(), **options)

    def read_bytes(self, max_bytes: int) -> bytes:
        """The whole file, at most ``max_bytes`` (else the safe file layer's ``"too-large"``)."""
        if self._data is not None:
            if len(self._data) > max_bytes:  # as read_opened says it of a file read to its end
                name = self.lazy_name
                msg = f"{name} grew beyond {max_bytes} bytes while it was read"
                raise safefs.UnsafeFileError("too-large", name, msg, limit=max_bytes)
            return self._data
        with self.open() as handle:
            return safefs.read_opened(handle, max_bytes=max_bytes, name=self.lazy_name)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> OpenedFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        _trace: TracebackType | None,
    ) -> None:
        self.close()


class _LazyName:
    """An opened file's resolved path as ``str`` / ``os.fspath``, resolved when formatted."""

    __slots__ = ("_file",)

    def __init__(self, file: OpenedFile) -> None:
        self._file = file

    def __fspath__(self) -> str:
        return str(self._file.path)

    def __str__(self) -> str:
        return str(self._file.path)


#: What the scans read: a path (opened by name, for callers without a root) or an opened file.
Readable = Path | OpenedFile


def _resolved(path: Path | str) -> Path:
    """``path`` with its links resolved, only to name the file (messages, plugins): the name
    may change under a concurrent swap (``realpath`` itself may then fail), the descriptor
    does not."""
    try:
        return Path(os.path.realpath(path))
    except OSError:
        return Path(path)


def open_checked(
    path: Path, root: Path | safefs.OpenRoot | Sequence[Path] | None, max_bytes: int | None
) -> OpenedFile | None:
    """``path`` opened under ``root`` (see the module); ``None`` when it is missing; raises
    :class:`~reprobridge_sdk.io.safefs.UnsafeFileError` when it is refused."""
    roots: Sequence[Path | safefs.OpenRoot | None]
    if root is None or isinstance(root, (Path, safefs.OpenRoot)):
        roots = [root]
    else:
        roots = list(root) or [None]  # an empty sequence of roots: no root, as with None
    refused: safefs.UnsafeFileError | None = None
    for base in roots:
        try:
            handle = safefs.open_regular(path, root=base, max_bytes=max_bytes)
        except safefs.UnsafeFileError as exc:
            if exc.reason != "escapes":
                raise
            refused = exc
            continue
        except FileNotFoundError:
            return None
        return OpenedFile(path, handle, resolve=base is not None)
    assert refused is not None  # every root refused it
    raise refused
