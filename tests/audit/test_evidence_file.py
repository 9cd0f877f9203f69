"""The open of a run's log and outputs (``verify._open_evidence``: one open through the safe
file layer, every component resolved from the run directory's descriptor) answers as the
link check it replaced did, on hostile layouts made on disk: links out and in, directories,
missing files behind links, a run directory reached through a link, a file swapped for a link
between two opens."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit.verify import _open_evidence, _safe_join


@pytest.fixture
def run(tmp_path: Path) -> Path:
    run = tmp_path / "runs" / "r1"
    (run / "outputs" / "m").mkdir(parents=True)
    (run / "log.txt").write_text("acc=0.5\n")
    (run / "outputs" / "m" / "metrics.json").write_text("{}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "log.txt").write_text("acc=0.9\n")
    return run


def _both(base: Path, relative: str) -> tuple[Path | None, bool]:
    """The path opened (``base`` joined with ``relative``) or ``None``, and "linked"."""
    handle, linked = _open_evidence(base, relative)
    if handle is None:
        return None, linked
    handle.close()
    return base.joinpath(*relative.split("/")), False


def test_regular_files_inside_are_found(run: Path) -> None:
    assert _both(run, "log.txt") == (run / "log.txt", False)
    assert _both(run, "outputs/m/metrics.json") == (run / "outputs" / "m" / "metrics.json", False)


def test_a_missing_file_is_missing_not_linked(run: Path) -> None:
    assert _both(run, "nothing.txt") == (None, False)
    assert _both(run, "no/such/dir.txt") == (None, False)


def test_escaping_and_absolute_paths_are_not_joined(run: Path) -> None:
    assert _both(run, "../r1/log.txt") == (None, False)
    assert _both(run, "/etc/passwd") == (None, False)
    assert _both(run, "") == (None, False)


def test_a_link_or_a_directory_is_linked(run: Path, tmp_path: Path) -> None:
    (run / "out.txt").symlink_to(tmp_path / "outside" / "log.txt")
    (run / "in.txt").symlink_to(run / "log.txt")
    (run / "adir").mkdir()
    assert _both(run, "out.txt") == (None, True)
    assert _both(run, "in.txt") == (None, True)
    assert _both(run, "adir") == (None, True)


def test_behind_a_directory_link_out_even_a_missing_file_is_linked(
    run: Path, tmp_path: Path
) -> None:
    (run / "away").symlink_to(tmp_path / "outside")
    assert _both(run, "away/log.txt") == (None, True)
    assert _both(run, "away/missing.txt") == (None, True)


def test_a_directory_link_that_stays_inside_is_followed(run: Path) -> None:
    (run / "alias").symlink_to(run / "outputs")
    assert _both(run, "alias/m/metrics.json") == (run / "alias" / "m" / "metrics.json", False)


def test_a_run_directory_reached_through_a_link_holds_its_files(run: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked-run"
    linked.symlink_to(run)
    assert _both(linked, "log.txt") == (linked / "log.txt", False)


def test_a_file_swapped_for_a_link_after_the_directory_was_resolved_is_seen(
    run: Path, tmp_path: Path
) -> None:
    assert _both(run, "log.txt") == (run / "log.txt", False)
    (run / "log.txt").unlink()
    (run / "log.txt").symlink_to(tmp_path / "outside" / "log.txt")
    assert _both(run, "log.txt") == (None, True)
    (run / "outputs").rename(run / "outputs-real")
    (run / "outputs").symlink_to(tmp_path / "outside")
    assert _both(run, "outputs/m/metrics.json") == (None, True)


@settings(max_examples=300)
@given(relative=st.text(alphabet="a./", max_size=8))
@example(relative="a//b")
@example(relative="./a")
@example(relative="a/.")
@pytest.mark.parametrize("base", [Path("runs/r1"), Path("."), Path("/"), Path("/tmp/r")])
def test_a_run_s_file_is_named_as_the_joined_path_prints(base: Path, relative: str) -> None:
    """The run loop names a log or output by a string: the one the joined path prints."""
    joined = _safe_join(base, relative)
    parts = relative.split("/")
    if not relative or relative.startswith("/") or ".." in parts:
        assert joined is None
    else:
        assert joined == str(base.joinpath(*parts))
