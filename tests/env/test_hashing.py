"""Parallel hashing and the digest cache."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from reprobridge_sdk.digest import file_sha256, files_sha256, tree_digest
from reprobridge_sdk.env.hashing import DigestCache, default_cache


def _old(path: Path) -> None:
    """Make a file's mtime a minute old, outside the racy window."""
    past = time.time() - 60
    os.utime(path, (past, past))


def _files(tmp_path: Path, count: int = 6) -> list[Path]:
    paths = []
    for i in range(count):
        path = tmp_path / f"f{i}.bin"
        path.write_bytes(os.urandom(1000 + i * 37))
        _old(path)
        paths.append(path)
    return paths


def test_parallel_equals_sequential(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    expected = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert files_sha256(paths, workers=4) == expected
    assert files_sha256(paths, workers=1) == expected
    assert files_sha256([]) == []


def test_tree_digest_unchanged_by_parallel_hashing(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.txt").write_text("x", "utf-8")
    (root / "y.txt").write_text("y", "utf-8")
    lines = sorted(
        [
            ("a/b/x.txt", hashlib.sha256(b"x").hexdigest()),
            ("y.txt", hashlib.sha256(b"y").hexdigest()),
        ]
    )
    canonical = "".join(f"f\0{rel}\0{digest}\n" for rel, digest in lines)
    expected = "sha256-tree1:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert tree_digest(root) == expected


def test_cache_hits_survive_a_restart(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    store = tmp_path / "cache" / "sha256.json"
    cache = DigestCache(store)
    digests = cache.sha256_many(paths)
    assert digests == [file_sha256(p) for p in paths]
    cache.save()
    fresh = DigestCache(store)
    assert [fresh.lookup(p) for p in paths] == digests


def test_cache_misses_after_a_change(tmp_path: Path) -> None:
    path = _files(tmp_path, 1)[0]
    cache = DigestCache(tmp_path / "c.json")
    first = cache.sha256(path)
    assert cache.lookup(path) == first
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF  # same size, other content
    path.write_bytes(bytes(data))
    os.utime(path, (time.time() - 30, time.time() - 30))  # another mtime, still old
    assert cache.lookup(path) is None
    assert cache.sha256(path) == hashlib.sha256(bytes(data)).hexdigest()
    replacement = tmp_path / "other.bin"
    replacement.write_bytes(bytes(data))
    os.utime(replacement, (time.time() - 30, time.time() - 30))
    replacement.replace(path)  # same size and mtime, another inode
    assert cache.lookup(path) is None


def test_recent_files_are_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "new.bin"
    path.write_bytes(b"fresh")
    cache = DigestCache(None)
    assert cache.sha256(path) == hashlib.sha256(b"fresh").hexdigest()
    assert cache.lookup(path) is None  # written within the racy window


@pytest.mark.parametrize(
    "damage", [b"{not json", b'{"format": 1, "entries": {"\xff": 1}}', b"[" * 10_000, b"[]"]
)
def test_damaged_cache_is_ignored(tmp_path: Path, damage: bytes) -> None:
    """Not JSON, not UTF-8, nested too deep or not an object: the cache starts empty."""
    store = tmp_path / "sha256.json"
    store.write_bytes(damage)
    path = _files(tmp_path, 1)[0]
    cache = DigestCache(store)
    assert cache.sha256(path) == file_sha256(path)
    cache.save()
    assert json.loads(store.read_text("utf-8"))["format"] == 1


def test_a_cache_that_is_a_directory_is_ignored(tmp_path: Path) -> None:
    store = tmp_path / "sha256.json"
    store.mkdir()
    path = _files(tmp_path, 1)[0]
    assert DigestCache(store).sha256(path) == file_sha256(path)


def test_default_cache_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "rb"))
    assert default_cache().path == tmp_path / "rb" / "digests" / "sha256.json"
    monkeypatch.delenv("REPROBRIDGE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache().path == tmp_path / "xdg" / "reprobridge" / "digests" / "sha256.json"
