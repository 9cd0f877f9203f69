"""Links and special files planted in a directory tree, found without following any.

Why not a library: ``os.walk`` and ``pathlib`` stat by path and follow or race links; no
maintained library lists a tree from directory descriptors with ``O_NOFOLLOW`` at each step.

:func:`scan_tree` lists a run folder (spec/runner.md §10.1, "run-folder-scan") opening only
directories, so a link is never resolved and a FIFO never opened. It is bounded in entries,
depth and time; a scan cut short says so (:attr:`TreeScan.stopped`).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass, field
from typing import Literal

from . import safefs

__all__ = [
    "MAX_SCAN_DEPTH",
    "MAX_SCAN_ENTRIES",
    "SCAN_SECONDS",
    "EntryKind",
    "StopReason",
    "TreeScan",
    "scan_tree",
    "shown",
]

#: Most entries (files, directories, links) one scan looks at: as many as a pack holds.
MAX_SCAN_ENTRIES = 100_000
#: Deepest level of directories below the root that a scan enters.
MAX_SCAN_DEPTH = 64
#: Longest one scan may take, in seconds.
SCAN_SECONDS = 60.0

EntryKind = Literal["link", "fifo", "socket", "block-device", "char-device"]
StopReason = Literal["entries", "depth", "deadline", "unreadable"]

_OPEN_DIR = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
#: What ``openat`` says of a link opened with ``O_NOFOLLOW | O_DIRECTORY``.
_LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}


@dataclass(frozen=True)
class TreeScan:
    """What :func:`scan_tree` found: ``planted`` as ``(relative path, kind)`` sorted by path;
    ``stopped`` says why the scan did not cover the whole tree (``None``: it did), and
    ``stopped_at`` the relative path where it stopped (``""``: the root)."""

    planted: tuple[tuple[str, EntryKind], ...]
    stopped: StopReason | None = None
    stopped_at: str | None = None


def _kind(mode: int) -> EntryKind | None:
    for test, name in (
        (stat.S_ISLNK, "link"),
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISBLK, "block-device"),
        (stat.S_ISCHR, "char-device"),
    ):
        if test(mode):
            return name  # type: ignore[return-value]  # one of EntryKind
    return None


def shown(name: str) -> str:
    """A file name as text that always encodes (bytes that are not UTF-8 as ``\\xNN``)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def scan_tree(root: str | os.PathLike[str] | safefs.OpenRoot) -> TreeScan:
    """Every link and special file below ``root`` (a path, or a root opened once), without
    following any, within the limits of this module. Raises ``FileNotFoundError`` or
    :class:`~reprobridge_sdk.io.safefs.UnsafeFileError` when the root cannot be opened."""
    scan = _Scan(MAX_SCAN_ENTRIES, MAX_SCAN_DEPTH, time.monotonic() + SCAN_SECONDS)
    opened = root if isinstance(root, safefs.OpenRoot) else safefs.OpenRoot(root)
    try:
        # the root's descriptor only looks names up (O_PATH): list it through a readable one
        top = os.open(".", _OPEN_DIR, dir_fd=opened.fd)
    except OSError:
        if opened is not root:
            opened.close()
        return TreeScan((), "unreadable", "")
    scan.pending.append((top, "", 0))
    try:
        while scan.pending and (scan.cut is None or scan.cut[0] not in {"entries", "deadline"}):
            fd, prefix, depth = scan.pending.pop()
            try:
                scan.list_directory(fd, prefix, depth)
            except OSError:
                scan.cut = scan.cut or ("unreadable", prefix.rstrip("/"))
            finally:
                os.close(fd)
    finally:
        for fd, _, _ in scan.pending:
            os.close(fd)
        if opened is not root:
            opened.close()
    scan.planted.sort()
    if scan.cut is None:
        return TreeScan(tuple(scan.planted))
    return TreeScan(tuple(scan.planted), scan.cut[0], scan.cut[1])


@dataclass
class _Scan:
    """The state of one :func:`scan_tree`: its limits, what it found, what is left."""

    max_entries: int
    max_depth: int
    deadline: float
    planted: list[tuple[str, EntryKind]] = field(default_factory=list)
    #: Directories opened and not listed yet: descriptor, relative prefix, depth.
    pending: list[tuple[int, str, int]] = field(default_factory=list)
    cut: tuple[StopReason, str] | None = None  # the first part left out, and why
    seen: int = 0

    def list_directory(self, fd: int, prefix: str, depth: int) -> None:
        """List the directory ``fd``: note its planted entries, queue its subdirectories."""
        with os.scandir(fd) as listing:
            for entry in listing:
                self.seen += 1
                where = f"{prefix}{shown(entry.name)}"
                if self.seen > self.max_entries or time.monotonic() > self.deadline:
                    self.cut = ("entries" if self.seen > self.max_entries else "deadline", where)
                    return
                if entry.is_dir(follow_symlinks=False):
                    self._directory(fd, entry.name, where, depth)
                elif not entry.is_file(follow_symlinks=False):
                    kind = _entry_kind(entry)
                    if kind is not None:
                        self.planted.append((where, kind))

    def _directory(self, fd: int, name: str, where: str, depth: int) -> None:
        if depth >= self.max_depth:
            self.cut = self.cut or ("depth", where)  # the rest is still scanned
            return
        below = _open_below(fd, name)
        if isinstance(below, int):
            self.pending.append((below, f"{where}/", depth + 1))
        elif below == "unreadable":
            self.cut = self.cut or ("unreadable", where)
        elif below != "gone":
            self.planted.append((where, below))


def _entry_kind(entry: os.DirEntry[str]) -> EntryKind | None:
    """The kind of an entry that is neither a directory nor a regular file (``lstat``
    relative to its directory; ``None`` when it is gone since)."""
    if entry.is_symlink():
        return "link"
    try:
        return _kind(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return None


def _open_below(fd: int, name: str) -> int | EntryKind | Literal["gone", "unreadable"]:
    """The directory ``name`` of ``fd`` opened without following a link, or what is there
    instead: a link or special file swapped in since it was listed, nothing (gone since, or
    a regular file now), or a directory that cannot be read."""
    try:
        return os.open(name, _OPEN_DIR, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return "gone"
        if exc.errno not in _LINK_ERRNOS:
            return "unreadable"
    try:
        return _kind(os.lstat(name, dir_fd=fd).st_mode) or "gone"
    except OSError:
        return "gone"
