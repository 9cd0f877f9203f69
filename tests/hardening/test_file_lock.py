"""The one inter-process lock (``io/filelock.py``): a second process waits for the first,
and a planted link or FIFO at the lock's path is refused, not followed."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from reprobridge_sdk.io.filelock import file_lock


def _hold(path: str, held: multiprocessing.synchronize.Event, done: str) -> None:
    with file_lock(path):
        held.set()
        time.sleep(0.5)
        Path(done).write_text("released", encoding="utf-8")


def test_a_second_process_waits_for_the_holder(tmp_path: Path) -> None:
    lock = tmp_path / "deep" / "x.lock"
    done = tmp_path / "done"
    context = multiprocessing.get_context("spawn")
    held = context.Event()
    holder = context.Process(target=_hold, args=(str(lock), held, str(done)))
    holder.start()
    try:
        assert held.wait(60)
        fd = os.open(lock, os.O_RDWR)
        try:  # the lock is really held: a non-blocking attempt fails while the holder sleeps
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        with file_lock(lock):  # waits for the holder to finish its block
            assert done.read_text(encoding="utf-8") == "released"
    finally:
        holder.join(60)
    assert holder.exitcode == 0
    assert lock.is_file()  # left in place for the next process


def test_the_lock_is_released_after_an_error(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    with pytest.raises(RuntimeError), file_lock(lock):
        raise RuntimeError
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_a_planted_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    lock = tmp_path / "runs" / ".ledger.lock"
    lock.parent.mkdir()
    lock.symlink_to(outside)
    with pytest.raises(OSError), file_lock(lock):
        pass
    assert not outside.exists()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    os.mkfifo(lock)
    with pytest.raises(OSError), file_lock(lock):
        pass
