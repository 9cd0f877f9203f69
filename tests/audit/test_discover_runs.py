"""``discover_runs`` (one directory listing per directory) finds the run directories that
``Path.rglob`` found, in the same order, on a layout with hidden, nested and linked entries."""

from __future__ import annotations

import os
from pathlib import Path

from reprobridge_sdk.audit.verify import discover_runs
from reprobridge_sdk.model import RECORD_NAME


def _by_rglob(attempt: Path) -> list[Path]:
    """The previous implementation, kept here as the reference."""
    if (attempt / RECORD_NAME).is_file():
        return [attempt]
    runs = {p.parent for p in attempt.rglob(RECORD_NAME) if p.is_file()}
    return sorted(runs, key=lambda p: p.relative_to(attempt).as_posix())


def test_the_same_runs_in_the_same_order(tmp_path: Path) -> None:
    attempt = tmp_path / "runs"
    for name in ("r1", "r2/sub", ".hidden", "x/y/z", "dirrec", "b-1", "b/c", "empty"):
        (attempt / name).mkdir(parents=True, exist_ok=True)
    for name in ("r1", "r2/sub", "r2", ".hidden", "x/y/z", "b-1", "b/c"):
        (attempt / name / RECORD_NAME).write_text("{}")
    (attempt / "dirrec" / RECORD_NAME).mkdir()  # a directory named record.json: no run
    (attempt / "linkdir").symlink_to(attempt / "r1")  # a linked directory is not entered
    (attempt / "l").mkdir()
    (attempt / "l" / RECORD_NAME).symlink_to(attempt / "r1" / RECORD_NAME)  # counted
    (attempt / "broken").mkdir()
    (attempt / "broken" / RECORD_NAME).symlink_to(attempt / "nothing")  # not counted
    outside = tmp_path / "outside"
    (outside / "o").mkdir(parents=True)
    (outside / "o" / RECORD_NAME).write_text("{}")
    (attempt / "out").symlink_to(outside)  # a link out is not entered
    found = discover_runs(attempt)
    assert found == _by_rglob(attempt)
    assert [p.relative_to(attempt).as_posix() for p in found] == [
        ".hidden",
        "b-1",
        "b/c",
        "l",
        "r1",
        "r2",
        "r2/sub",
        "x/y/z",
    ]


def test_an_attempt_that_is_a_run_and_a_missing_attempt(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RECORD_NAME).write_text("{}")
    assert discover_runs(tmp_path / "run") == [tmp_path / "run"]
    assert discover_runs(tmp_path / "missing") == []
    os.mkfifo(tmp_path / "fifo")
    assert discover_runs(tmp_path / "fifo") == _by_rglob(tmp_path / "fifo") == []
