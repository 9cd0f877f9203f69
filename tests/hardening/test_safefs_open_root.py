"""``safefs.OpenRoot``: a root opened once for several reads gives the answers of the root as
a path on hostile layouts (a link out, a link that stays inside, a missing file, a directory
link out with a missing file behind it, a FIFO), and keeps reading the directory it opened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reprobridge_sdk.io import safefs


def _outcome(path: Path, root: Path | safefs.OpenRoot, allow_links: bool) -> str:
    try:
        data = safefs.read_bytes(path, root=root, max_bytes=64, allow_links=allow_links)
    except safefs.UnsafeFileError as exc:
        return exc.reason
    except FileNotFoundError:
        return "missing"
    return data.decode()


@pytest.mark.parametrize("allow_links", [True, False])
def test_the_answers_of_the_root_as_a_path(tmp_path: Path, allow_links: bool) -> None:
    root = tmp_path / "run"
    (root / "d").mkdir(parents=True)
    (root / "f.txt").write_bytes(b"inside")
    (root / "d" / "g.txt").write_bytes(b"deeper")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"SECRET")
    (root / "out.txt").symlink_to(outside / "f.txt")
    (root / "in.txt").symlink_to(root / "f.txt")
    (root / "away").symlink_to(outside)
    (root / "alias").symlink_to(root / "d")
    os.mkfifo(root / "fifo")
    names = [
        "f.txt",
        "d/g.txt",
        "out.txt",
        "in.txt",
        "away/f.txt",
        "away/missing.txt",
        "alias/g.txt",
        "missing.txt",
        "fifo",
        "d",
    ]
    with safefs.OpenRoot(root) as opened:
        got = {n: _outcome(root / n, opened, allow_links) for n in names}
        assert opened.fd >= 0 and os.fstat(opened.fd)  # the reads never closed it
    assert got == {n: _outcome(root / n, root, allow_links) for n in names}
    assert "SECRET" not in got.values()
    assert got["f.txt"] == "inside" and got["away/f.txt"] == "escapes"
    # the same answers from the root opened below its parent (a run below its attempt)
    with safefs.OpenRoot(tmp_path) as parent, parent.below("run", root) as below:
        assert (below.path, below.base) == (os.fspath(root), os.path.realpath(root))
        assert {n: _outcome(root / n, below, allow_links) for n in names} == got


def test_the_opened_directory_is_read_after_its_path_is_replaced(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    (root / "f.txt").write_bytes(b"first")
    with safefs.OpenRoot(root) as opened:
        root.rename(tmp_path / "moved")
        root.mkdir()
        (root / "f.txt").write_bytes(b"other")
        assert safefs.read_bytes(root / "f.txt", root=opened) == b"first"
    assert opened.fd == -1  # closed on leaving


def test_a_root_that_cannot_be_opened_raises_like_a_read(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        safefs.OpenRoot(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises((safefs.UnsafeFileError, FileNotFoundError)):
        safefs.OpenRoot(tmp_path / "file")


@pytest.mark.parametrize("name", ["d/x.txt", "d//x.txt", "./d/x.txt", "d/./x.txt", "link"])
def test_a_refusal_names_the_file_as_the_path_does(tmp_path: Path, name: str) -> None:
    root = tmp_path / "run"
    (root / "d").mkdir(parents=True)
    (root / "d" / "x.txt").write_bytes(b"x" * 100)
    (root / "link").symlink_to(root / "d" / "x.txt")
    spelled = os.path.join(os.fspath(root), name)
    messages = []
    for spelling in (spelled, Path(spelled)):
        for opened in (root, safefs.OpenRoot(root)):
            with pytest.raises(safefs.UnsafeFileError) as caught:
                safefs.open_regular(spelling, root=opened, max_bytes=10, allow_links=False)
            messages.append((caught.value.reason, caught.value.path, caught.value.message))
            if isinstance(opened, safefs.OpenRoot):
                opened.close()
    assert len(set(messages)) == 1, messages


def test_a_directory_below_is_opened_without_following_a_link(tmp_path: Path) -> None:
    """``OpenRoot.below``: each name opened from the one before, a link never followed (a run
    directory swapped for a link after it was found is not its root), nested names too."""
    attempt = tmp_path / "runs"
    (attempt / "a" / "b").mkdir(parents=True)
    (attempt / "a" / "b" / "f.txt").write_bytes(b"nested")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"SECRET")
    (attempt / "link").symlink_to(outside)
    (attempt / "a" / "inner").symlink_to(outside)
    (attempt / "file").write_text("x")
    with safefs.OpenRoot(attempt) as parent:
        with (
            parent.below("a/b", attempt / "a" / "b") as nested,
            safefs.OpenRoot(attempt / "a" / "b") as direct,
        ):
            assert safefs.read_bytes(attempt / "a/b/f.txt", root=nested) == b"nested"
            spellings = ("path", "base", "parts")
            assert [getattr(nested, a) for a in spellings] == [
                getattr(direct, a) for a in spellings
            ]
        for relative in ("link", "a/inner", "missing", "a/missing", "file"):
            with pytest.raises((FileNotFoundError, safefs.UnsafeFileError)):
                parent.below(relative, attempt / relative)
        for relative in ("", ".", "a/../a", "a//b"):
            with pytest.raises(ValueError, match="plain relative path"):
                parent.below(relative, attempt / relative)
        assert os.fstat(parent.fd)  # still open: below() never closes its parent


def test_a_write_beneath_an_opened_root_gets_its_own_descriptor(tmp_path: Path) -> None:
    """The walk borrows an opened root's descriptor: a directory asked for is a duplicate
    (its caller closes it), the root's own stays open."""
    root = tmp_path / "run"
    root.mkdir()
    with safefs.OpenRoot(root) as opened:
        fd = safefs._open_beneath(root, root, directory=True, opened=opened)
        assert fd != opened.fd
        os.close(fd)
        assert os.fstat(opened.fd)
    with pytest.raises(safefs.UnsafeFileError):  # a closed root: unreadable, as before
        safefs.open_regular(root / "x", root=opened)
