"""Byte-identical evidence across seeds: a seed without effect (A079) or a copy (A038).

Real runs of the toy study through the runner; the deterministic variant's script ignores its
seed and prints none, so its three seeds write byte-identical logs and outputs. Re-execution
runs unsandboxed (the toy writes into the artifact, which the sandbox keeps read-only; the
sandbox has its own tests in test_rerun.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from audit_support import edit_record, run_honestly
from rerun_support import edit_manifest
from toy_study import TRAIN, make_artifact

from reprobridge_sdk.audit import audit
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model.audit import AuditResult


def _codes(result: AuditResult) -> dict[str, set[str]]:
    (attempt,) = result.attempts
    return {r.run: {f.code for f in r.findings} for r in attempt.runs}


def _deterministic(root: Path) -> Path:
    """The toy whose accuracy is 90.0 for every seed; its log never names the seed."""
    make_artifact(root, tasks=("acc",), launchers=("scored",))
    script = TRAIN.replace("acc = 90.0 + (seed % 3) * 0.1", "acc = 90.0")
    assert script != TRAIN
    (root / "code" / "train.py").write_text(script)
    edit_manifest(root, lambda d: d["codebase"].update(tree_digest=tree_digest(root / "code")))
    run_honestly(root, "scored", [0, 1, 2])
    for name in ("ledger.jsonl", ".ledger.lock"):  # the runs were renamed (see conftest.py)
        (root / "runs" / name).unlink()
    return root


def test_a_deterministic_program_is_not_copied_evidence(tmp_path: Path) -> None:
    root = _deterministic(tmp_path / "det")
    logs = {(root / "runs" / f"scored-s{s}" / "log.txt").read_bytes() for s in (0, 1, 2)}
    assert len(logs) == 1  # the three seeds wrote the same bytes
    result = audit(root)
    codes = _codes(result)
    assert codes["scored-s0"] == set()
    assert codes["scored-s1"] == {"A079"} and codes["scored-s2"] == {"A079"}
    (attempt,) = result.attempts
    note = next(f for r in attempt.runs if r.run == "scored-s2" for f in r.findings)
    assert note.severity == "info"
    assert "scored-s2" in note.message and "scored-s0" in note.message
    assert all(r.valid for r in attempt.runs)
    (task,) = result.tasks
    assert task.attempts[0].verdict == "compatible"
    assert task.attempts[0].seeds == [0, 1, 2]  # every seed's value counts
    assert result.passed

    again = audit(root, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert again.attempts[0].reran == 3
    assert again.attempts[0].rerun_mismatches == 0
    assert _codes(again)["scored-s2"] == {"A079"}
    assert again.tasks[0].attempts[0].verdict == "compatible"
    assert again.counts["invalid-evidence"] == 0
    assert again.passed
    # re-executed by the committee, the seed-free runs earn "results reproduced"
    assert (again.badges.results, again.badges.reproduced) == ("reproduced", True)


def _copy_as_seed_2(root: Path, change: Any) -> None:
    """Replace the seed-2 run with a copy of the seed-0 run, relabelled as seed 2."""
    shutil.rmtree(root / "runs" / "scored-s2")
    shutil.copytree(root / "runs" / "scored-s0", root / "runs" / "scored-s2")

    def relabel(data: dict[str, Any]) -> None:
        data["seed"] = 2
        data["run_id"] = data["run_id"].replace("-s0-", "-s2-")
        data["argv"] = [
            "2" if a == "0" else a.replace("metrics-0.", "metrics-2.") for a in data["argv"]
        ]
        change(data)

    edit_record(root / "runs" / "scored-s2", relabel)


def test_a_copy_with_its_timestamps_is_copied_evidence(toy: Path) -> None:
    """A new run id, but the copied run's start and end times: A038."""
    _copy_as_seed_2(toy, lambda d: d.update(run_id=d["run_id"][:-8] + "feedf00d"))
    result = audit(toy)
    assert _codes(result)["scored-s2"] == {"A038"}
    assert "start time" in next(
        f.message for r in result.attempts[0].runs if r.run == "scored-s2" for f in r.findings
    )
    assert not result.passed


def test_a_copy_with_fresh_times_and_its_run_identity_is_copied_evidence(toy: Path) -> None:
    """New start and end times, but the copied run's identity (its run id once the seed part
    is removed): A038, with no re-execution."""

    def fresh_times(data: dict[str, Any]) -> None:
        data["started_at"] = data["started_at"].replace("Z", "").rstrip("0123456789") + "1Z"
        data["ended_at"] = data["ended_at"].replace("Z", "").rstrip("0123456789") + "2Z"

    _copy_as_seed_2(toy, fresh_times)
    result = audit(toy)
    assert _codes(result)["scored-s2"] == {"A038"}
    (copied,) = (f for r in result.attempts[0].runs if r.run == "scored-s2" for f in r.findings)
    assert "the same run identity" in copied.message
    assert "time" not in copied.message.split("both records have", 1)[1]
    assert not result.passed


def test_a_copy_with_a_fresh_identity_is_told_by_re_execution(toy: Path) -> None:
    """A copy given a new run id and new times looks like a seed without effect (A079) until
    both seeds are re-executed and differ: then A038, although the copied value lies within
    the run's own tolerance (90.0 recorded, 90.2 re-executed; the authors declare a
    same-seed tolerance of 0.22 for each task, below the half-width of about 0.24)."""

    def tolerant(data: dict[str, Any]) -> None:
        for task in data["tasks"]:
            task["same_seed_tolerance"] = 0.22

    edit_manifest(toy, tolerant)

    def fresh(data: dict[str, Any]) -> None:
        data["run_id"] = data["run_id"][:-8] + "feedf00d"
        data["started_at"] = data["started_at"].replace("Z", "").rstrip("0123456789") + "1Z"
        data["ended_at"] = data["ended_at"].replace("Z", "").rstrip("0123456789") + "2Z"

    _copy_as_seed_2(toy, fresh)
    before = audit(toy)
    assert _codes(before)["scored-s2"] == {"A079"}
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    codes = _codes(result)
    assert codes["scored-s2"] == {"A038"}
    (attempt,) = result.attempts
    check = next(r for r in attempt.runs if r.run == "scored-s2")
    assert all(row.held for row in check.rerun)  # within tolerance: only the pair shows it
    assert "the seed has an effect" in next(f.message for f in check.findings)
    assert result.tasks[0].attempts[0].verdict == "invalid-evidence"
    assert not result.passed


def test_re_execution_proposes_deterministic_where_runs_of_a_seed_agree(tmp_path: Path) -> None:
    """Each seed-free run re-executed gives its recorded value and bytes, and so does the
    repeat: C027 proposes 'deterministic: true', once, on the artifact (information only).
    Declared, or with one recorded log that differs from its re-execution, nothing."""
    root = _deterministic(tmp_path / "det")
    result = audit(root, rerun="all", rerun_env="current", rerun_sandbox=False)
    (note,) = [f for f in result.findings if f.code == "C027"]
    assert (note.severity, note.path, note.file) == (
        "info",
        "/launchers/0/deterministic",
        "rra.yaml",
    )
    assert "4 pair(s) of runs of one seed" in note.message  # three recordings and the repeat
    assert result.passed

    edit_manifest(root, lambda d: d["launchers"][0].update(deterministic=True))
    declared = audit(root, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert not [f for f in declared.findings if f.code == "C027"]

    edit_manifest(root, lambda d: d["launchers"][0].pop("deterministic"))
    log = root / "runs" / "scored-s1" / "log.txt"
    log.write_text(log.read_text() + "\n")  # a byte more than its re-execution writes
    edit_record(
        root / "runs" / "scored-s1",
        lambda d: d["log"].update(sha256=file_sha256(log), size=log.stat().st_size),
    )
    differs = audit(root, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert all(r.valid for r in differs.attempts[0].runs)  # the edit is consistent
    assert not [f for f in differs.findings if f.code == "C027"]
