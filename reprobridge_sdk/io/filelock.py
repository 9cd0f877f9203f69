"""An exclusive advisory lock on a file, held for a block: one process at a time.

The one owner of inter-process locks (the environment cache, the upstream cache, the run
ledger). The lock file is created if needed and left in place: removing it would let a
waiting process lock a file that a newcomer has just replaced.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["file_lock"]

_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created with its folder if needed) for the block,
    waiting while another process holds it.

    A symbolic link or anything but a regular file at ``path`` is an :class:`OSError`, so a
    planted link cannot make the lock create or open a file elsewhere. Where there is no
    ``fcntl`` (Windows), the block runs unlocked.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, _FLAGS, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{target} is not a regular file")
        try:
            import fcntl  # noqa: PLC0415 - POSIX only
        except ImportError:  # pragma: no cover - Windows: not serialised
            yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
