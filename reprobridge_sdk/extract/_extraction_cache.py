"""The batch cache behind :class:`reprobridge_sdk.extract.extraction.ExtractionCache`.

The cache knows nothing of extraction: failures are stored as values by the caller
(:func:`reprobridge_sdk.extract.kinds._base.cached`), which raises them again.
"""

from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from ._opened import OpenedFile

if TYPE_CHECKING:
    from pathlib import Path

    from ._opened import Readable

__all__ = ["ExtractionCache"]

_Key = tuple[object, ...]
#: Most files kept open by a batch (a run's outputs and log, a few runs).
_MAX_OPEN = 16


def _version(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _close_all(opened: OrderedDict[tuple[str, Hashable], OpenedFile]) -> None:
    while opened:
        opened.popitem()[1].close()


class _Counts:
    """A cache's hits and misses, shared with its entries (which must not hold the cache:
    a cycle would keep the cache, and so its open files, alive until a collection)."""

    __slots__ = ("hits", "misses")

    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0


class _FileEntries:
    """What the batch computed from one version of one file."""

    __slots__ = ("counts", "items")

    def __init__(self, counts: _Counts) -> None:
        self.counts = counts
        self.items: dict[_Key, object] = {}

    def get(self, what: _Key, compute: Callable[[], Any]) -> Any:
        """``compute()``'s result, computed once (an exception it raises is not stored)."""
        if what in self.items:
            self.counts.hits += 1
            return self.items[what]
        self.counts.misses += 1
        found = self.items[what] = compute()
        return found


class ExtractionCache:
    """Parsed documents and regex scans of files, shared by the extractions of a batch.

    Entries are keyed by the file's version (path, inode, size, modification time), so a
    changed file is read again; at most ``max_files`` files' entries are kept. Not
    thread-safe: use one per thread (or per audit).
    """

    def __init__(self, max_files: int = 256) -> None:
        self.max_files = max_files
        self._files: OrderedDict[tuple[str, int, int, int], _FileEntries] = OrderedDict()
        self._open: OrderedDict[tuple[str, Hashable], OpenedFile] = OrderedDict()
        # the descriptors kept open are closed with the cache (or by close())
        self._finalizer = weakref.finalize(self, _close_all, self._open)
        self._counts = _Counts()
        # the pinned opened file asked last and its entries (its version never changes: the
        # tasks of a run ask for the same file one after another)
        self._last: tuple[OpenedFile, _FileEntries] | None = None

    def opened(
        self, path: Path, rules: Hashable, open_file: Callable[[], OpenedFile | None]
    ) -> OpenedFile | None:
        """``open_file()``, kept open for the batch while ``path`` leads to the same version.

        The tasks of a run read one output once, not once per task. Every byte is read through
        a descriptor the safe file layer opened, so a directory swapped for a link to the
        outside never leads a read there (the name then leads to another file: opened again,
        and refused). A refusal or a missing file is not kept.
        """
        key = (str(path), rules)
        kept = self._open.get(key)
        if kept is not None:
            try:
                now = path.stat()
            except OSError:
                now = None
            if now is not None and _version(now) == _version(kept.stat()):
                self._open.move_to_end(key)
                return kept
            del self._open[key]
            kept.close()
        found = open_file()
        if found is not None:
            self._open[key] = found
            while len(self._open) > _MAX_OPEN:
                self._open.popitem(last=False)[1].close()
        return found

    @property
    def hits(self) -> int:
        """Answers given from what was computed before."""
        return self._counts.hits

    @property
    def misses(self) -> int:
        """Answers computed."""
        return self._counts.misses

    def close(self) -> None:
        """Close the descriptors kept open (the cache stays usable)."""
        _close_all(self._open)

    def entries(self, path: Readable) -> _FileEntries | None:
        """The entries of the file's current version; ``None`` if it is not a regular file.

        For an opened file the version is the descriptor's own (``fstat``): the file the
        extraction reads, whatever its name points at now.
        """
        last = self._last
        if last is not None and last[0] is path:
            return last[1]
        try:
            stat = path.stat()
        except OSError:
            return None
        if not S_ISREG(stat.st_mode):
            return None
        key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        found = self._files.get(key)
        if found is None:
            found = self._files[key] = _FileEntries(self._counts)
            while len(self._files) > self.max_files:
                self._files.popitem(last=False)
        else:
            self._files.move_to_end(key)
        self._last = (path, found) if isinstance(path, OpenedFile) and path.pinned else None
        return found
