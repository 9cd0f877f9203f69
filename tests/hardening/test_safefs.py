"""The safe file layer's rules, one by one, on real files, links and FIFOs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reprobridge_sdk.io import safefs


def test_json_depth_limit_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    raw = ("[" * safefs.MAX_JSON_DEPTH + "]" * safefs.MAX_JSON_DEPTH).encode()
    assert isinstance(safefs.loads_json(raw, path=path), list)
    raw = ('{"a":' * (safefs.MAX_JSON_DEPTH + 1) + "1" + "}" * (safefs.MAX_JSON_DEPTH + 1)).encode()
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.loads_json(raw, path=path)
    assert (caught.value.reason, caught.value.limit) == ("too-deep", safefs.MAX_JSON_DEPTH)
    assert caught.value.findings[0].code == "F011"


def test_links_inside_are_followed_links_out_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "real.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside")
    (root / "in.txt").symlink_to("real.txt")
    (root / "out.txt").symlink_to(tmp_path / "secret.txt")
    assert safefs.read_text(root / "in.txt", root=root) == "inside"
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.read_text(root / "out.txt", root=root)
    assert caught.value.reason == "escapes"
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.read_text(root / "in.txt", root=root, allow_links=False)
    assert caught.value.reason == "link"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.read_bytes(tmp_path / "fifo")
    assert caught.value.reason == "not-regular"
    assert caught.value.findings[0].code == "F009"


def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "sparse"
    with path.open("wb") as handle:
        handle.truncate(5 * 1024**3)
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.read_bytes(path, max_bytes=1024)
    assert (caught.value.reason, caught.value.limit) == ("too-large", 1024)
    assert caught.value.findings[0].code == "F010"


def test_exclusive_creation_never_writes_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "planted").symlink_to(victim)
    with pytest.raises(FileExistsError):
        safefs.create_exclusive(tmp_path / "planted")
    safefs.atomic_write_bytes(tmp_path / "planted", b"new")  # replaces the link itself
    assert victim.read_text() == "precious"
    assert (tmp_path / "planted").read_bytes() == b"new"
    assert not (tmp_path / "planted").is_symlink()


def test_writes_through_a_linked_directory_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "docs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(safefs.UnsafeFileError):
        safefs.atomic_write_bytes(root / "docs" / "GUIDE.md", b"x", root=root)
    assert list(outside.iterdir()) == []
