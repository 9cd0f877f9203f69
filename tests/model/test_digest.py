"""File and tree digests (spec: digests)."""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reprobridge_sdk.digest
from reprobridge_sdk.digest import (
    TREE_DIGEST_PREFIX,
    WrittenFiles,
    file_sha256,
    iter_tree_entries,
    tree_digest,
)


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_file_sha256_matches_hashlib(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024 + 17)
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def test_tree_digest_is_the_documented_byte_layout(tmp_path: Path) -> None:
    _write_tree(tmp_path, {"b.txt": b"bee\n", "a/z.py": b"print(1)\n"})
    run = tmp_path / "run.sh"
    run.write_bytes(b"#!/bin/sh\n")
    run.chmod(0o755)
    expected = hashlib.sha256()
    for kind, rel, data in [
        ("f", "a/z.py", b"print(1)\n"),
        ("f", "b.txt", b"bee\n"),
        ("x", "run.sh", b"#!/bin/sh\n"),
    ]:
        expected.update(f"{kind}\0{rel}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    assert tree_digest(tmp_path) == TREE_DIGEST_PREFIX + expected.hexdigest()


def test_tree_digest_ignores_timestamps_and_caches(tmp_path: Path) -> None:
    _write_tree(tmp_path, {"m.py": b"x = 1\n"})
    before = tree_digest(tmp_path)
    os.utime(tmp_path / "m.py", (1, 1))
    _write_tree(tmp_path, {"__pycache__/m.cpython-311.pyc": b"\0", ".git/HEAD": b"ref\n"})
    assert tree_digest(tmp_path) == before


def test_tree_digest_sees_content_names_and_modes(tmp_path: Path) -> None:
    _write_tree(tmp_path, {"m.py": b"x = 1\n"})
    base = tree_digest(tmp_path)
    (tmp_path / "m.py").write_bytes(b"x = 2\n")
    changed = tree_digest(tmp_path)
    assert changed != base
    (tmp_path / "m.py").chmod(0o755)
    assert tree_digest(tmp_path) != changed
    (tmp_path / "m.py").rename(tmp_path / "n.py")
    assert tree_digest(tmp_path) not in {base, changed}


def test_symlinks_are_recorded_by_target_not_followed(tmp_path: Path) -> None:
    _write_tree(tmp_path, {"data.txt": b"d"})
    (tmp_path / "link").symlink_to("data.txt")
    entries = list(iter_tree_entries(tmp_path))
    assert ("l", "link", "data.txt") in entries


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.txt", fullmatch=True),
        st.binary(max_size=64),
        min_size=1,
        max_size=6,
    )
)
def test_tree_digest_is_independent_of_creation_order(files: dict[str, bytes]) -> None:
    import tempfile

    # No name collides with a directory: directories never end in ``.txt``, files always do.
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        _write_tree(Path(one), files)
        _write_tree(Path(two), dict(reversed(list(files.items()))))
        assert tree_digest(one) == tree_digest(two)


def _write_hashed(root: Path, files: dict[str, tuple[bytes, bool]], written: WrittenFiles) -> None:
    """Write ``files`` as unpacking does: mode first, then the bytes, hashed as they pass."""
    for rel, (data, executable) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("xb") as out:
            os.fchmod(out.fileno(), 0o755 if executable else 0o644)
            assert written.copy(io.BytesIO(data), out) == hashlib.sha256(data).hexdigest()


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.txt", fullmatch=True),
        st.tuples(st.binary(max_size=3 * 1024 * 1024 // 64), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.from_regex(r"[a-z]{1,6}\.lnk", fullmatch=True), max_size=2, unique=True),
)
def test_a_tree_digest_of_written_files_equals_the_one_read_again(
    files: dict[str, tuple[bytes, bool]], links: list[str]
) -> None:
    """The digests remembered while writing give the tree digest that reading gives."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        written = WrittenFiles()
        _write_hashed(root, files, written)
        for name in links:
            (root / name).symlink_to(next(iter(files)))
        with written:
            remembered = list(iter_tree_entries(root))
        assert remembered == list(iter_tree_entries(root))


def test_written_files_are_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = WrittenFiles()
    _write_hashed(
        tmp_path, {"a.py": (b"a = 1\n", False), "b/run.sh": (b"#!/bin/sh\n", True)}, written
    )
    expected = tree_digest(tmp_path)

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("a written file was read again")

    monkeypatch.setattr(reprobridge_sdk.digest, "handle_sha256", refuse)
    with written:
        assert tree_digest(tmp_path) == expected


def _until_the_clock_moves(path: Path) -> None:
    """Wait until a write to ``path`` would get another change time (the file system's
    clock is coarser than nanoseconds)."""
    before = path.stat().st_ctime_ns
    probe = path.parent / ".probe"
    while True:
        probe.write_bytes(b"")
        if probe.stat().st_ctime_ns != before:
            probe.unlink()
            return
        time.sleep(0.002)


def test_a_written_file_changed_afterwards_is_read_again(tmp_path: Path) -> None:
    """Hostile: the same size and mode, other bytes, a link in a file's place, a new mode."""
    written = WrittenFiles()
    files = dict.fromkeys(("a.py", "b.py", "c.py", "d.py"), (b"same size\n", False))
    _write_hashed(tmp_path, files, written)
    _until_the_clock_moves(tmp_path / "d.py")
    (tmp_path / "a.py").write_bytes(b"SAME SIZE\n")
    (tmp_path / "b.py").unlink()
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "c.py").chmod(0o755)
    os.utime(tmp_path / "d.py", ns=(0, 0))
    with written:
        assert tree_digest(tmp_path) == _fresh(tmp_path)
    assert ("l", "b.py", "a.py") in list(iter_tree_entries(tmp_path))


def _fresh(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.iterdir(), key=lambda p: p.name.encode()):
        if path.is_symlink():
            kind, value = "l", os.readlink(path)
        else:
            kind = "x" if path.stat().st_mode & 0o111 else "f"
            value = hashlib.sha256(path.read_bytes()).hexdigest()
        digest.update(f"{kind}\0{path.name}\0{value}\n".encode())
    return TREE_DIGEST_PREFIX + digest.hexdigest()
