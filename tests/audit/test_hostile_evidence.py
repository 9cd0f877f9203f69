"""Hostile evidence: links out of the run directory, deep records, live runs (hardening).

Each case starts from honest runs of the toy artifact (real subprocesses, real files) and
changes the evidence the way the hardening issue's attacker did.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from audit_support import edit_record

from reprobridge_sdk import load
from reprobridge_sdk.audit import audit, audit_table
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run import run
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
    assert _run_codes(result, "scored-s0") == {"A040", "A069"}  # A069: the folder's scan


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
    assert _run_codes(result, "scored-s0") == {"A040", "A069"}  # A069: the folder's scan


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


# ------------------------------------------------------------------------ seed games


def test_runs_of_undeclared_seeds_do_not_count(toy: Path) -> None:
    """Seeds 40-42 instead of the declared 0-2: real runs, every one A037."""
    import shutil

    shutil.rmtree(toy / "runs")
    summary = run(toy, ["scored"], env_mode="current", seeds=[40, 41, 42])
    assert all(r.record.status == "succeeded" for r in summary.results)
    result = audit(toy)
    (attempt,) = result.attempts
    assert {f.code for r in attempt.runs for f in r.findings} == {"A037"}
    assert not result.passed


def test_a_run_copied_under_another_seed_is_duplicated_evidence(toy: Path) -> None:
    import shutil

    shutil.rmtree(toy / "runs" / "scored-s2")
    shutil.copytree(toy / "runs" / "scored-s0", toy / "runs" / "scored-s2")

    def relabel(data: dict[str, Any]) -> None:
        data["seed"] = 2
        data["run_id"] = data["run_id"].replace("-s0-", "-s2-")
        data["argv"] = [
            "2" if a == "0" else a.replace("metrics-0.", "metrics-2.") for a in data["argv"]
        ]

    edit_record(toy / "runs" / "scored-s2", relabel)
    result = audit(toy)
    assert _run_codes(result, "scored-s2") == {"A038"}
    assert _run_codes(result, "scored-s0") == set()
    assert not result.passed


def test_a_smoke_run_relabelled_as_scored_is_caught(toy: Path) -> None:
    import shutil

    for seed in (0, 1, 2):
        shutil.rmtree(toy / "runs" / f"scored-s{seed}")
    scored = next(launcher for launcher in load(toy).manifest.launchers if launcher.id == "scored")

    def relabel(data: dict[str, Any]) -> None:
        data["launcher"] = "scored"
        data["scope"] = "scored"
        data["argv"] = [a.replace("{seed}", "0") for a in scored.argv]

    edit_record(toy / "runs" / "smoke-s0", relabel)
    result = audit(toy)
    assert "A039" in _run_codes(result, "smoke-s0")
    assert "A014" not in _run_codes(result, "smoke-s0")
    assert "A015" not in _run_codes(result, "smoke-s0")
    assert not result.passed


def test_an_output_integer_beyond_the_float_range_is_a_finding_not_a_crash(toy: Path) -> None:
    """A producer writes 10**400 where the score is and records a finite value: the auditor
    reads the integer as infinite (as the literal 1e400 reads), the values differ, and the
    run is invalid evidence; nothing raises."""
    run_dir = toy / "runs" / "scored-s0"
    output = run_dir / "outputs" / "metrics" / "metrics-0.json"
    data = json.loads(output.read_text())
    data["test"]["f1"] = 10**400
    output.write_text(json.dumps(data))
    raw = output.read_bytes()

    def change(record: dict[str, Any]) -> None:
        for item in record["outputs"]:
            item.update(sha256=hashlib.sha256(raw).hexdigest(), size=len(raw))
        for item in record["measurements"]:
            if item["task"] == "f1":
                item["value"] = 1e308

    edit_record(run_dir, change)
    result = audit(toy)
    assert "A007" in _run_codes(result, "scored-s0") or "A008" in _run_codes(result, "scored-s0")
    f1 = next(t for t in result.tasks if t.id == "f1")
    assert f1.attempts[0].verdict == "invalid-evidence"
