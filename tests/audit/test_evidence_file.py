"""The open of a run's log and outputs, through the auditor's public check of a run
(``verify.check_run``): one open through the safe file layer, every component resolved from
the run directory's descriptor. Hostile layouts made on disk over honest runs of the toy
artifact: links out and in, directories, missing files behind links, a run directory reached
through a link, a path leaving the run directory. A file swapped for a link while the auditor
reads is ``test_evidence_race.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from audit_support import edit_record
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit import load_artifact
from reprobridge_sdk.audit._evidence import _safe_join
from reprobridge_sdk.audit.verify import RunEvidence, check_run

RUN = "scored-s0"


def _check(toy: Path, run: Path | None = None) -> RunEvidence:
    return check_run(load_artifact(toy), run or toy / "runs" / RUN, RUN)


def _codes(toy: Path, run: Path | None = None) -> set[str]:
    return {f.code for f in _check(toy, run).findings}


def _output(run: Path) -> Path:
    """The run's first recorded output, by the path its record names."""
    outputs = json.loads((run / "record.json").read_text())["outputs"]
    return run / outputs[0]["path"]


def test_honest_files_inside_are_read(toy: Path) -> None:
    check = _check(toy)
    assert check.findings == [] and check.valid


def test_a_missing_log_is_missing_not_linked(toy: Path) -> None:
    (toy / "runs" / RUN / "log.txt").unlink()
    codes = _codes(toy)
    assert "A003" in codes and "A040" not in codes


def test_a_log_linked_inside_or_a_directory_is_refused(toy: Path) -> None:
    run = toy / "runs" / RUN
    (run / "copy.txt").write_bytes((run / "log.txt").read_bytes())
    (run / "log.txt").unlink()
    (run / "log.txt").symlink_to(run / "copy.txt")
    assert "A040" in _codes(toy)
    (run / "log.txt").unlink()
    (run / "log.txt").mkdir()
    assert "A040" in _codes(toy)


def test_behind_a_directory_link_out_even_a_missing_file_is_refused(
    toy: Path, tmp_path: Path
) -> None:
    run = toy / "runs" / RUN
    output = _output(run)
    folder = output.parent
    assert folder != run, "the toy's outputs lie in a folder of the run"
    outside = tmp_path / "outside"
    shutil.move(folder, outside)
    folder.symlink_to(outside)
    assert "A040" in _codes(toy)
    (outside / output.name).unlink()
    assert "A040" in _codes(toy)


def test_a_directory_link_that_stays_inside_is_followed(toy: Path) -> None:
    run = toy / "runs" / RUN
    honest = _check(toy).values
    folder = _output(run).parent
    folder.rename(run / "kept")
    folder.symlink_to(run / "kept")
    check = _check(toy)
    assert "A040" not in {f.code for f in check.findings} and check.values == honest


def test_a_run_directory_reached_through_a_link_holds_its_files(toy: Path) -> None:
    linked = toy / "runs" / "linked-run"
    linked.symlink_to(toy / "runs" / RUN)
    check = _check(toy, linked)
    assert check.findings == [] and check.valid


@pytest.mark.parametrize("path", ["../scored-s1/log.txt", "/etc/passwd"])
def test_a_log_path_leaving_the_run_directory_is_not_read(toy: Path, path: str) -> None:
    edit_record(toy / "runs" / RUN, lambda d: d["log"].update(path=path))
    check = _check(toy)
    assert not check.valid and "A040" not in {f.code for f in check.findings}


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
