"""The run ledger: written by the real runner, checked by the auditor (spec runner.md#ledger)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from audit_support import make_artifact
from evidence_support import (
    consistent_edit,
    fabricate,
    honest_runs,
    ledger_lines,
    write_ledger,
)

from reprobridge_sdk.audit import audit
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run.ledger import (
    GENESIS,
    LEDGER_NAME,
    append_run,
    entry_hash,
    ledger_head,
    read_ledger,
)


@pytest.fixture(scope="module")
def ledgered_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy artifact with two batches of scored runs (seeds 0-2 twice) and a smoke run."""
    root = make_artifact(tmp_path_factory.mktemp("ledgered") / "toy")
    honest_runs(root, "scored", [0, 1, 2])
    honest_runs(root, "scored", [0, 1, 2])
    honest_runs(root, "smoke", [0])
    return root


@pytest.fixture
def toy(ledgered_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(ledgered_template, target)
    return target


def _attempt_codes(result: AuditResult) -> list[str]:
    return [f.code for f in result.attempts[0].findings]


def _run_codes(result: AuditResult) -> dict[str, set[str]]:
    return {r.run: {f.code for f in r.findings} for r in result.attempts[0].runs}


def _run_dirs(toy: Path) -> list[Path]:
    """Run directories in ledger order."""
    runs = toy / "runs"
    return [runs / e["run_id"] for e in ledger_lines(runs)]


def test_honest_runs_pass_with_no_ledger_finding(toy: Path) -> None:
    head = ledger_head(toy / "runs")
    result = audit(toy, expect_head=head)
    assert _attempt_codes(result) == []
    assert all(not codes for codes in _run_codes(result).values())
    assert result.attempts[0].ledger_head == head
    assert result.passed
    entries = ledger_lines(toy / "runs")
    assert [e["seq"] for e in entries] == list(range(1, 8))
    assert entries[0]["prev"] == GENESIS
    assert all(e["hash"] == entry_hash(e) for e in entries)


def test_deleting_the_first_batch_after_rerunning_the_same_seeds_is_caught(toy: Path) -> None:
    first_batch = _run_dirs(toy)[:3]
    for run_dir in first_batch:
        shutil.rmtree(run_dir)
    result = audit(toy)
    deleted = [f for f in result.attempts[0].findings if f.code == "A052"]
    assert sorted(f.message.split()[1] for f in deleted) == sorted(d.name for d in first_batch)
    acc = result.tasks[0].attempts[0]
    assert acc.verdict == "invalid-evidence"
    assert "A052" in {r.code for r in acc.reasons}
    assert not result.passed


def test_cutting_the_deleted_runs_out_of_the_ledger_breaks_the_chain(toy: Path) -> None:
    runs = toy / "runs"
    entries = ledger_lines(runs)
    for entry in entries[:3]:
        shutil.rmtree(runs / entry["run_id"])
    write_ledger(runs, entries[3:], rechain=False)
    assert "A051" in _attempt_codes(audit(toy))


def test_a_rewritten_chain_is_caught_only_against_the_submitted_head(toy: Path) -> None:
    runs = toy / "runs"
    submitted = ledger_head(runs)
    entries = ledger_lines(runs)
    for entry in entries[:3]:
        shutil.rmtree(runs / entry["run_id"])
    write_ledger(runs, entries[3:], rechain=True)
    assert _attempt_codes(audit(toy)) == []  # a consistent rewrite: nothing to see
    result = audit(toy, expect_head=submitted)
    assert _attempt_codes(result) == ["A057"]
    assert {a.verdict for t in result.tasks for a in t.attempts} == {"invalid-evidence"}
    assert not result.passed


def test_deleting_the_last_run_and_its_entry_needs_the_head(toy: Path) -> None:
    runs = toy / "runs"
    submitted = ledger_head(runs)
    entries = ledger_lines(runs)
    shutil.rmtree(runs / entries[-1]["run_id"])
    write_ledger(runs, entries[:-1], rechain=False)
    assert _attempt_codes(audit(toy)) == []
    assert _attempt_codes(audit(toy, expect_head=submitted)) == ["A057"]


def test_reordered_entries(toy: Path) -> None:
    runs = toy / "runs"
    entries = ledger_lines(runs)
    entries[1], entries[2] = entries[2], entries[1]
    write_ledger(runs, entries, rechain=False)
    assert _attempt_codes(audit(toy)) == ["A054"]


def test_edited_entry_and_garbage_line(toy: Path) -> None:
    runs = toy / "runs"
    entries = ledger_lines(runs)
    entries[2]["seed"] = 7
    write_ledger(runs, entries, rechain=False)
    with (runs / LEDGER_NAME).open("a") as handle:
        handle.write("not json\n")
    found = [f for f in audit(toy).attempts[0].findings if f.code == "A051"]
    assert {3, 8} <= {f.line for f in found}


def test_duplicated_entry_and_duplicated_run_directory(toy: Path) -> None:
    runs = toy / "runs"
    entries = ledger_lines(runs)
    write_ledger(runs, [*entries, entries[-1]], rechain=False)
    assert "A053" in _attempt_codes(audit(toy))
    write_ledger(runs, entries, rechain=False)
    original = runs / entries[0]["run_id"]
    shutil.copytree(original, runs / "copy")
    codes = _run_codes(audit(toy))
    assert codes["copy"] == {"A053"}


def test_a_hand_written_run_directory_is_not_in_the_ledger(toy: Path) -> None:
    fabricate(_run_dirs(toy)[3], toy / "runs" / "scored-s0-forged", accuracy=95.0)
    result = audit(toy)
    assert _run_codes(result)["scored-s0-forged"] == {"A055"}
    assert result.tasks[0].attempts[0].verdict == "invalid-evidence"


def test_a_consistent_edit_is_not_the_ledgered_record(toy: Path) -> None:
    target = _run_dirs(toy)[4]
    consistent_edit(target, accuracy=95.0)
    result = audit(toy)
    assert _run_codes(result)[target.name] == {"A056"}  # digests and value all agree
    assert not result.passed


def test_runs_without_a_ledger_are_a_warning(toy: Path) -> None:
    (toy / "runs" / LEDGER_NAME).unlink()
    result = audit(toy)
    assert _attempt_codes(result) == ["A050"]
    assert result.attempts[0].findings[0].severity == "warning"
    assert result.passed
    assert _attempt_codes(audit(toy, expect_head=GENESIS)) == ["A057"]


def _append_many(runs_dir: str, tag: str, count: int) -> None:
    for i in range(count):
        append_run(
            runs_dir,
            run_id=f"{tag}-{i}",
            launcher="scored",
            seed=i,
            scope="scored",
            status="succeeded",
            record_sha256="0" * 64,
        )


def test_concurrent_appends_from_processes_keep_one_chain(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(tmp_path), tag, 15)) for tag in "abc"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    state = read_ledger(tmp_path)
    assert state.findings == ()
    assert len(state.entries) == 45
    assert len({e.run_id for e in state.entries}) == 45


def test_parallel_runs_of_one_runner_are_each_ledgered(tmp_path: Path) -> None:
    from reprobridge_sdk.run import run

    root = make_artifact(tmp_path / "toy")
    summary = run(root, ["scored"], env_mode="current", jobs=3)
    state = read_ledger(root / "runs")
    assert state.findings == ()
    assert {e.run_id for e in state.entries} == {r.run_id for r in summary.results}
    assert summary.ledger_head == state.head


def test_run_prints_the_head_and_audit_checks_it(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "toy")
    cli = [sys.executable, "-m", "reprobridge_sdk"]
    done = subprocess.run(
        [*cli, "run", str(root), "scored", "--env", "current"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    head = ledger_head(root / "runs")
    assert f"ledger head: {head}" in done.stderr.splitlines()
    good = subprocess.run(
        [*cli, "audit", str(root), "--expect-head", head, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0, good.stderr
    bad = subprocess.run(
        [*cli, "audit", str(root), "--expect-head", "f" * 64, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    assert [f["code"] for f in report["attempts"][0]["findings"]] == ["A057"]


def test_hostile_ledgers_are_findings_never_crashes(toy: Path) -> None:
    runs = toy / "runs"
    good = (runs / LEDGER_NAME).read_text()
    for hostile in (
        "[" * 100_000 + "]" * 100_000 + "\n",  # nested beyond the parser's depth
        '{"seq": 1}' + " " * 70_000 + "\n",  # a line longer than the bound
        "\udcff not utf-8\n",
    ):
        (runs / LEDGER_NAME).write_text(good + hostile, errors="surrogateescape")
        assert "A051" in _attempt_codes(audit(toy))
    with (runs / LEDGER_NAME).open("wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: larger than the bound
    found = audit(toy).attempts[0].findings
    assert [f.code for f in found if f.code == "A051"] == ["A051"]
