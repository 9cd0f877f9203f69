"""The one owner of atomic writes (``io.atomic``): a file or a directory appears at its path
whole, or the path is as it was and nothing is left beside it. Failures are real exceptions
raised inside the writing block; a second writer that placed the directory first is a real
directory on disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobridge_sdk.io.atomic import atomic_directory, atomic_open, atomic_write_bytes


class _Stop(Exception):
    pass


def _beside(path: Path) -> list[str]:
    """What lies beside ``path`` other than ``path`` itself."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def test_a_file_appears_whole_with_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out" / "archive.bin"
    with atomic_open(target, mode=0o600) as handle:
        handle.write(b"part one ")
        assert not target.exists()  # nothing at the path while it is written
        handle.write(b"part two")
    assert target.read_bytes() == b"part one part two"
    assert target.stat().st_mode & 0o777 == 0o600
    assert _beside(target) == []


def test_a_failed_file_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "lock.txt"
    target.write_bytes(b"old")
    with pytest.raises(_Stop), atomic_open(target) as handle:
        handle.write(b"new, half")
        raise _Stop
    assert target.read_bytes() == b"old"
    assert _beside(target) == []


def test_a_failing_iterator_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"old")

    def pieces() -> Iterator[bytes]:
        yield b"new"
        raise _Stop

    with pytest.raises(_Stop):
        atomic_write_bytes(target, pieces())
    assert target.read_bytes() == b"old"
    assert _beside(target) == []


def test_a_directory_appears_whole(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "r1"
    with atomic_directory(target) as staging:
        assert staging.parent == target.parent and staging.is_dir()
        (staging / "sub").mkdir()
        (staging / "sub" / "f.txt").write_text("x")
        assert not target.exists()
    assert (target / "sub" / "f.txt").read_text() == "x"
    assert _beside(target) == []


def test_a_failed_directory_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "crate"
    with pytest.raises(_Stop), atomic_directory(target) as staging:
        (staging / "half.json").write_text("{")
        raise _Stop
    assert not target.exists()
    assert _beside(target) == []


def test_an_empty_directory_is_replaced_a_full_one_is_not(tmp_path: Path) -> None:
    target = tmp_path / "crate"
    target.mkdir()
    with atomic_directory(target) as staging:
        (staging / "a").write_text("a")
    assert (target / "a").read_text() == "a"
    # another writer placed a full directory first: OSError, its content kept, no staging left
    with pytest.raises(OSError), atomic_directory(target) as staging:
        (staging / "b").write_text("b")
    assert sorted(os.listdir(target)) == ["a"]
    assert _beside(target) == []


@pytest.mark.parametrize("kind", ["file", "link", "directory"])
def test_replace_removes_what_was_there(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "code"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    if kind == "file":
        target.write_text("old")
    elif kind == "link":
        target.symlink_to(outside)
    else:
        target.mkdir()
        (target / "old.txt").write_text("old")
    with atomic_directory(target, replace=True, fresh=True) as staging:
        assert not staging.exists()  # fresh: for a tool that makes the directory itself
        staging.mkdir()
        (staging / "new.txt").write_text("new")
    assert target.is_dir() and not target.is_symlink()
    assert sorted(os.listdir(target)) == ["new.txt"]
    assert (outside / "keep.txt").read_text() == "keep"  # a link is removed, not followed
    assert _beside(target) == ["outside"]
