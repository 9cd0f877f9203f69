"""The batch cache behind :class:`reprobridge_sdk.extract.extraction.ExtractionCache`.

One entry table per *version* of a file: a version is the file's path, inode, size and
modification time, so a file that changes is read again. The tables hold whatever the
extractors computed from that version (a parsed JSON, CSV or YAML document, a regex scan, or
the failure to make one), each computed once. The least recently used files are dropped
beyond ``max_files``.

The cache knows nothing of extraction: failures are stored as values by the caller
(:mod:`reprobridge_sdk.extract.extraction`), which replays them.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from stat import S_ISREG
from typing import Any

__all__ = ["ExtractionCache"]

_Key = tuple[object, ...]
#: Most checked paths remembered (then the memo starts again).
_MAX_CHECKED = 1 << 16


class _FileEntries:
    """What the batch computed from one version of one file."""

    __slots__ = ("cache", "items")

    def __init__(self, cache: ExtractionCache) -> None:
        self.cache = cache
        self.items: dict[_Key, object] = {}

    def get(self, what: _Key, compute: Callable[[], Any]) -> Any:
        """``compute()``'s result, computed once (an exception it raises is not stored)."""
        if what in self.items:
            self.cache.hits += 1
            return self.items[what]
        self.cache.misses += 1
        found = self.items[what] = compute()
        return found


class ExtractionCache:
    """Parsed documents and regex scans of files, shared by the extractions of a batch.

    Not thread-safe: use one per thread (or per audit). See "Batches" in
    :mod:`reprobridge_sdk.extract.extraction`.
    """

    def __init__(self, max_files: int = 256) -> None:
        self.max_files = max_files
        self._files: OrderedDict[tuple[str, int, int, int], _FileEntries] = OrderedDict()
        self._checked: dict[tuple[object, ...], Path] = {}
        self.hits = 0
        self.misses = 0

    def checked(self, path: Path, rules: Hashable, check: Callable[[], Path]) -> Path:
        """``check()`` (the safe file layer's resolution of ``path`` under ``rules``: its root
        and size limit), done once per version of the file as ``lstat`` sees it.

        The tasks of a run read the same output: its path is resolved and checked once, not
        once per task. The key holds the path's own ``lstat`` (device, inode, size, mtime,
        mode), so a file replaced, grown, or turned into a link is checked again; a refusal
        (an exception) is never stored. A directory on the way swapped for a link while the
        batch runs is not noticed: the batch reads evidence that does not change under it.
        """
        try:
            info = os.lstat(path)
        except OSError:
            return check()  # missing: the check and the caller report it
        key = (
            str(path),
            rules,
            info.st_dev,
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            info.st_mode,
        )
        found = self._checked.get(key)
        if found is None:
            found = check()
            if len(self._checked) >= _MAX_CHECKED:
                self._checked.clear()
            self._checked[key] = found
        return found

    def entries(self, path: Path) -> _FileEntries | None:
        """The entries of the file's current version; ``None`` if it is not a regular file."""
        try:
            stat = path.stat()
        except OSError:
            return None
        if not S_ISREG(stat.st_mode):
            return None
        key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
        found = self._files.get(key)
        if found is None:
            found = self._files[key] = _FileEntries(self)
            while len(self._files) > self.max_files:
                self._files.popitem(last=False)
        else:
            self._files.move_to_end(key)
        return found
