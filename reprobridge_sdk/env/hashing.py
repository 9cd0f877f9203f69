"""A digest cache: re-verifying an unchanged file costs a ``stat``, not a read.

Entries are keyed by absolute path and checked by size, ``mtime_ns``, inode and device; one
hashed within two seconds of its mtime is not trusted. The cache is one JSON file, written
atomically, rebuilt when damaged; files are hashed through the safe file layer.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from reprobridge_sdk.digest import files_sha256
from reprobridge_sdk.io import reading
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.io.safefs import MAX_HASH_BYTES

__all__ = ["DigestCache", "default_cache"]

_FORMAT = 1
_RACY_SECONDS = 2.0


class DigestCache:
    """SHA-256 digests of files, remembered across runs while the files do not change."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._entries: dict[str, list[int | str | float]] = {}
        self._dirty = False
        if self.path is not None:
            with contextlib.suppress(reading.Unreadable):
                data = reading.read_json(self.path)
                if isinstance(data, dict) and data.get("format") == _FORMAT:
                    entries = data.get("entries")
                    if isinstance(entries, dict):
                        self._entries = entries

    @staticmethod
    def _key(path: Path) -> str:
        return str(path.resolve())

    @staticmethod
    def _stamp(stat: os.stat_result) -> list[int]:
        return [stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev]

    def lookup(self, path: str | os.PathLike[str]) -> str | None:
        """The cached digest of ``path`` if the file is unchanged since it was hashed."""
        target = Path(path)
        try:
            stat = target.stat()
        except OSError:
            return None
        entry = self._entries.get(self._key(target))
        if not entry or entry[:4] != self._stamp(stat):
            return None
        hashed_at = float(entry[5])
        if hashed_at - stat.st_mtime_ns / 1e9 < _RACY_SECONDS:
            return None
        return str(entry[4])

    def remember(self, path: str | os.PathLike[str], digest: str, stat: os.stat_result) -> None:
        with self._lock:
            self._entries[self._key(Path(path))] = [*self._stamp(stat), digest, time.time()]
            self._dirty = True

    def sha256(self, path: str | os.PathLike[str]) -> str:
        """The digest of ``path``, from the cache when the file is unchanged."""
        return self.sha256_many([path])[0]

    def sha256_many(
        self, paths: Sequence[str | os.PathLike[str]], *, workers: int | None = None
    ) -> list[str]:
        """Digests of several files: cached ones at once, the others hashed in parallel."""
        results: list[str | None] = [self.lookup(p) for p in paths]
        todo = [i for i, r in enumerate(results) if r is None]
        stats = {i: Path(paths[i]).stat() for i in todo}
        for i, digest in zip(
            todo,
            files_sha256([paths[i] for i in todo], workers=workers, max_bytes=MAX_HASH_BYTES),
            strict=True,
        ):
            results[i] = digest
            if Path(paths[i]).stat().st_mtime_ns == stats[i].st_mtime_ns:  # not written meanwhile
                self.remember(paths[i], digest, stats[i])
        return [str(r) for r in results]

    def save(self) -> None:
        """Write the cache (atomically) if it changed; entries of deleted files are dropped."""
        if self.path is None or not self._dirty:
            return
        with self._lock:
            entries = {k: v for k, v in self._entries.items() if Path(k).exists()}
            with contextlib.suppress(OSError):
                atomic_write_json(self.path, {"format": _FORMAT, "entries": entries})
            self._dirty = False


def default_cache(cache_dir: str | os.PathLike[str] | None = None) -> DigestCache:
    """The digest cache under the SDK's cache directory (see ``env.venv.cache_root``)."""
    from reprobridge_sdk.env.venv import cache_root  # noqa: PLC0415 - avoid a cycle at import

    return DigestCache(cache_root(cache_dir) / "digests" / "sha256.json")
