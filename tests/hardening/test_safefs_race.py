"""Hostile: a directory swapped for a link to the outside while the safe file layer reads (or
writes) below it.

A second process (real concurrency: the swapper runs on its own core, not between two
bytecodes of ours) renames a directory of the root away and plants a symbolic link to an
outside directory in its place, then puts it back, in a tight loop. Meanwhile the layer reads
the file below that directory, again and again. Every read gives the inside content or a
refusal (F003: the link leads out; a missing file while the directory is away); the outside
file, which holds another content, is never read. The layer resolves each component with a
directory descriptor (``O_NOFOLLOW``) so that no check-then-open window exists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprobridge_sdk.io import safefs

SWAPPER = """
import os, sys
root, outside = sys.argv[1], sys.argv[2]
real, away = os.path.join(root, "d"), os.path.join(root, "d.away")
print("ready", flush=True)
while True:
    os.rename(real, away)
    os.symlink(outside, real)
    os.unlink(real)
    os.rename(away, real)
"""

#: Reads attempted while the swapper runs (each is a few system calls: well under a second).
READS = 20_000


def test_a_directory_swapped_for_a_link_never_leads_a_read_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_bytes(b"inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"SECRET")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(outside)],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: dict[str, int] = {}
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        # At least READS reads, and on until both states were seen (a loaded machine may not
        # schedule the swapper at once), for 60 s at most.
        deadline = time.monotonic() + 60
        reads = 0
        while True:
            reads += 1
            try:
                data = safefs.read_bytes(root / "d" / "f.txt", root=root, max_bytes=64)
            except safefs.UnsafeFileError as exc:
                outcome = exc.findings[0].code
            except FileNotFoundError:
                outcome = "missing"
            else:
                outcome = data.decode()
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            swapped = outcomes.get("F003", 0) + outcomes.get("missing", 0)
            if reads >= READS and outcomes.get("inside", 0) and swapped:
                break
            if time.monotonic() > deadline:
                break
        assert swapper.poll() is None, "the swapper stopped: the race was not exercised"
    finally:
        swapper.kill()
        swapper.wait()
        if swapper.stdout is not None:
            swapper.stdout.close()
    assert "SECRET" not in outcomes, outcomes
    assert set(outcomes) <= {"inside", "F003", "missing"}, outcomes
    # the race was real: the layer saw the directory both in place and swapped
    assert outcomes.get("inside", 0) > 0, outcomes
    assert outcomes.get("F003", 0) + outcomes.get("missing", 0) > 0, outcomes


#: The swapper for writes: a write under ``d`` while it is away makes a new ``d`` (writes make
#: their directories), which the swapper removes to carry on. Its recovery races the writer too
#: (a new ``d`` may appear between its check and its rename), so a failed recovery is left to
#: the next round instead of stopping the swapper.
WRITE_SWAPPER = """
import os, shutil, sys
root, outside = sys.argv[1], sys.argv[2]
real, away = os.path.join(root, "d"), os.path.join(root, "d.away")
print("ready", flush=True)
while True:
    try:
        os.rename(real, away)
        os.symlink(outside, real)
        os.unlink(real)
        os.rename(away, real)
    except OSError:
        try:
            if os.path.islink(real):
                os.unlink(real)
            elif os.path.isdir(real) and os.path.isdir(away):
                shutil.rmtree(real, ignore_errors=True)
            if os.path.isdir(away) and not os.path.lexists(real):
                os.rename(away, real)
        except OSError:
            pass  # the writer made a new d between the check and the rename: next round
"""


def test_a_directory_swapped_for_a_link_never_leads_a_write_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    swapper = subprocess.Popen(
        [sys.executable, "-c", WRITE_SWAPPER, str(root), str(outside)],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: dict[str, int] = {}
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        # At least READS // 4 writes, and on until both a write and a refusal were seen (a
        # loaded machine may not schedule the swapper at once: a fixed count of writes in a
        # fixed time saw no F003 there), for 60 s at most: a guard, not a measure.
        deadline = time.monotonic() + 60
        index = 0
        while True:
            index += 1
            try:
                if index % 2:
                    safefs.atomic_write_bytes(root / "d" / "out.txt", b"x", root=root)
                else:
                    os.close(safefs.create_exclusive(root / "d" / f"n{index}", root=root))
            except safefs.UnsafeFileError as exc:
                outcome = exc.findings[0].code
            except FileNotFoundError:  # the swapper removed the directory the writer made
                outcome = "gone"
            else:
                outcome = "written"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            exercised = outcomes.get("written", 0) and outcomes.get("F003", 0)
            if (index >= READS // 4 and exercised) or time.monotonic() > deadline:
                break
        assert swapper.poll() is None, "the swapper stopped: the race was not exercised"
    finally:
        swapper.kill()
        swapper.wait()
        if swapper.stdout is not None:
            swapper.stdout.close()
    assert sorted(path.name for path in outside.iterdir()) == [], outcomes
    assert set(outcomes) <= {"written", "F003", "gone"}, outcomes
    assert outcomes.get("written", 0) > 0, outcomes
    assert outcomes.get("F003", 0) > 0, outcomes


def _tree(tmp_path: Path) -> Path:
    """root/{a/b/f.txt, g.txt}, an outside secret, and a link from elsewhere to the root."""
    root = tmp_path / "art"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_bytes(b"f")
    (root / "g.txt").write_bytes(b"g")
    (tmp_path / "secret.txt").write_bytes(b"SECRET")
    (tmp_path / "alias").symlink_to(root, target_is_directory=True)
    return root


def test_links_that_stay_inside_are_followed_however_they_are_written(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "rel").symlink_to("a/b/f.txt")
    (root / "a" / "up").symlink_to("../g.txt")
    (root / "abs").symlink_to(root / "a" / "b" / "f.txt")  # absolute, inside
    (root / "dir").symlink_to("a/b", target_is_directory=True)
    (root / "a" / "round").symlink_to("../../art/g.txt")  # out by '..', back by the root's name
    (root / "chain").symlink_to("rel")
    read = {
        name: safefs.read_bytes(root / name, root=root)
        for name in ("rel", "a/up", "abs", "dir/f.txt", "a/round", "chain", "a/b/../../g.txt")
    }
    assert read == {
        "rel": b"f",
        "a/up": b"g",
        "abs": b"f",
        "dir/f.txt": b"f",
        "a/round": b"g",
        "chain": b"f",
        "a/b/../../g.txt": b"g",
    }
    # the root named through another link, and a relative path from inside it
    assert safefs.read_bytes(tmp_path / "alias" / "g.txt", root=tmp_path / "alias") == b"g"
    assert safefs.read_bytes(tmp_path / "alias" / "g.txt", root=root) == b"g"
    # a link in a directory is followed even when the file itself may not be a link
    assert safefs.read_bytes(root / "dir" / "f.txt", root=root, allow_links=False) == b"f"


def test_links_and_dots_that_leave_the_root_are_f003(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "out").symlink_to(tmp_path / "secret.txt")
    (root / "a" / "up2").symlink_to("../../secret.txt")
    (root / "a" / "away").symlink_to(tmp_path, target_is_directory=True)
    (root / "sideways").symlink_to("../alias/../secret.txt")
    for name in (
        "out",
        "a/up2",
        "a/away/secret.txt",
        "sideways",
        "../secret.txt",
        "a/../../art/../secret.txt",
    ):
        with pytest.raises(safefs.UnsafeFileError) as caught:
            safefs.read_bytes(root / name, root=root)
        assert (name, caught.value.findings[0].code) == (name, "F003")


def test_a_link_loop_a_directory_and_a_file_as_a_directory(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.read_bytes(root / "loop1", root=root)
    assert (caught.value.reason, caught.value.findings[0].code) == ("unreadable", "F009")
    for name in ("a", "a/b/..", "."):
        with pytest.raises(safefs.UnsafeFileError) as caught:
            safefs.read_bytes(root / name, root=root)
        assert (caught.value.reason, caught.value.findings[0].code) == ("not-regular", "F009")
    for name in ("g.txt/x", "missing/x", "a/missing.txt"):
        with pytest.raises(FileNotFoundError):
            safefs.read_bytes(root / name, root=root)
    (root / "a" / "leaf").symlink_to("b/f.txt")
    with pytest.raises(safefs.UnsafeFileError) as caught:
        safefs.read_bytes(root / "a" / "leaf", root=root, allow_links=False)
    assert (caught.value.reason, caught.value.findings[0].code) == ("link", "F003")
