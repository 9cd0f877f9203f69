"""``safefs.OpenRoot``: a root opened once for several reads gives the answers of the root as
a path on hostile layouts (a link out, a link that stays inside, a missing file, a directory
link out with a missing file behind it, a FIFO), and keeps reading the directory it opened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.safefs import _as_named


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
    assert got == {n: _outcome(root / n, root, allow_links) for n in names}
    assert "SECRET" not in got.values()
    assert got["f.txt"] == "inside" and got["away/f.txt"] == "escapes"


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


@settings(max_examples=300)
@given(name=st.text(alphabet="a./", max_size=8))
@example(name="")
@example(name=".")
@example(name="//a")
@example(name="a/")
@example(name="a/.")
def test_a_read_names_a_string_as_its_path_prints(name: str) -> None:
    """A string is used as it is only when it is spelled as its path prints (the run loops'
    names, no object per open); any other spelling is named through the path, as before."""
    assert os.fspath(_as_named(name)) == str(Path(name))


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
