"""Hostile evidence: links out of the run directory, deep records, live runs (hardening).

Each case starts from honest runs of the toy artifact (real subprocesses, real files) and
changes the evidence the way the hardening issue's attacker did.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from audit_support import edit_record

from reprobridge_sdk.audit import audit, audit_table
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run.evidence import OWNER_KEY


def _run_codes(result: AuditResult, run: str) -> set[str]:
    (attempt,) = result.attempts
    check = next(r for r in attempt.runs if r.run == run)
    return {f.code for f in check.findings}


def test_a_live_run_is_in_progress_not_interrupted(toy: Path) -> None:
    """A023: the record names this (live) process as its runner."""
    me = {"pid": os.getpid(), "boot_id": None, "start_ticks": None, "host": None}
    edit_record(toy / "runs" / "scored-s0", lambda d: d.update(status="running", **{OWNER_KEY: me}))
    result = audit(toy)
    assert _run_codes(result, "scored-s0") == {"A023"}


def test_a_log_linked_outside_is_not_followed(toy: Path, tmp_path: Path) -> None:
    run = toy / "runs" / "scored-s0"
    outside = tmp_path / "elsewhere.txt"
    outside.write_bytes((run / "log.txt").read_bytes())  # same bytes: the digest would match
    (run / "log.txt").unlink()
    (run / "log.txt").symlink_to(outside)
    result = audit(toy)
    assert "A003" in _run_codes(result, "scored-s0")
    assert not result.passed or result.tasks[0].attempts[0].seeds == [1, 2]


def test_an_output_linked_inside_is_refused_too(toy: Path) -> None:
    run = toy / "runs" / "scored-s0"
    (run / "results").mkdir(exist_ok=True)
    outputs = json.loads((run / "record.json").read_text())["outputs"]
    target = run / outputs[0]["path"]
    copy = run / "copy.json"
    copy.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(copy)
    result = audit(toy)
    assert "A005" in _run_codes(result, "scored-s0")


def test_a_deep_record_is_a_finding_and_the_table_goes_on(toy: Path, tmp_path: Path) -> None:
    (toy / "runs" / "scored-s0" / "record.json").write_text("[" * 200_000 + "]" * 200_000)
    result = audit(toy)
    assert _run_codes(result, "scored-s0") == {"A001"}
    table = audit_table([toy, toy])
    assert len(table.artifacts) == 2


def test_a_record_that_is_a_fifo_does_not_hang(toy: Path) -> None:
    record = toy / "runs" / "scored-s0" / "record.json"
    record.unlink()
    os.mkfifo(record)
    result = audit(toy)  # returns: the FIFO is not a record, the run is not one of the attempt
    (attempt,) = result.attempts
    assert "scored-s0" not in {r.run for r in attempt.runs}
    assert result.tasks[0].attempts[0].seeds == [1, 2]
