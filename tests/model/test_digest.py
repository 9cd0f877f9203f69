"""File and tree digests (spec: digests)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk.digest import TREE_DIGEST_PREFIX, file_sha256, iter_tree_entries, tree_digest


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
