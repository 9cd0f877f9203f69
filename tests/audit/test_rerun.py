"""Re-execution of recorded runs: the only defense against fabricated logs (audit.md).

The re-executions are real: the runner starts the launcher again in a subprocess, in the
current interpreter (``rerun_env="current"``; the lock-built environment is exercised by the
runner's own slow tests). The toy writes its metrics into the artifact, which the sandbox
(the default of re-execution) keeps read-only: these tests re-execute it unsandboxed
(``rerun_sandbox=False``, ``--no-sandbox``); ``test_re_execution_under_the_sandbox`` runs a
variant that writes under ``/tmp`` in the sandbox.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from audit_support import make_artifact
from evidence_support import consistent_edit, fabricate, honest_runs, ledger_lines

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.rerun import choose
from reprobridge_sdk.model.audit import AuditResult


@pytest.fixture(scope="module")
def rerun_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_artifact(tmp_path_factory.mktemp("rerun") / "toy")
    honest_runs(root, "scored", [0, 1, 2])
    return root


@pytest.fixture
def toy(rerun_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(rerun_template, target)
    return target


def _codes(result: AuditResult) -> dict[str, set[str]]:
    return {r.run: {f.code for f in r.findings} for r in result.attempts[0].runs}


def _run_dirs(toy: Path) -> list[Path]:
    return [toy / "runs" / e["run_id"] for e in ledger_lines(toy / "runs")]


def _set_deterministic(toy: Path, flag: bool) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["rra_version"] = "1.1"
    for launcher in data["launchers"]:
        launcher["deterministic"] = flag
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_honest_runs_hold_up_when_all_are_re_executed(toy: Path) -> None:
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    attempt = result.attempts[0]
    assert (attempt.reran, attempt.rerun_mismatches) == (3, 0)
    assert all(r.reran and not r.findings for r in attempt.runs)
    assert result.passed
    assert result.options.rerun == "all"


def test_a_consistent_edit_is_caught_by_re_execution(toy: Path) -> None:
    """The log edited and its digest recomputed, the ledger hidden: only re-execution sees it."""
    target = _run_dirs(toy)[1]
    consistent_edit(target, accuracy=95.0)
    (toy / "runs" / "ledger.jsonl").unlink()
    assert _codes(audit(toy))[target.name] == set()  # every digest agrees
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert _codes(result)[target.name] == {"A058"}
    mismatch = (
        result.attempts[0]
        .runs[[r.run for r in result.attempts[0].runs].index(target.name)]
        .findings[0]
    )
    assert mismatch.path == "/measurements/0/value"
    assert target.name in mismatch.message
    assert result.attempts[0].rerun_mismatches == 1
    assert result.tasks[0].attempts[0].verdict == "invalid-evidence"
    assert not result.passed


def test_a_fabricated_run_directory_is_caught_by_re_execution(toy: Path) -> None:
    forged = fabricate(_run_dirs(toy)[0], toy / "runs" / "scored-s0-forged", accuracy=95.0)
    (toy / "runs" / "ledger.jsonl").unlink()
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert _codes(result)[forged.name] == {"A058"}
    assert not result.passed


def test_the_sample_is_seeded_and_stated(toy: Path) -> None:
    result = audit(toy, rerun=1, rerun_seed=7, rerun_env="current", rerun_sandbox=False)
    attempt = result.attempts[0]
    assert attempt.reran == 1
    reran = [r.run for r in attempt.runs if r.reran]
    assert len(reran) == 1
    assert (result.options.rerun, result.options.rerun_seed) == (1, 7)
    again = audit(toy, rerun=1, rerun_seed=7, rerun_env="current", rerun_sandbox=False)
    assert [r.run for r in again.attempts[0].runs if r.reran] == reran


def test_choice_is_a_function_of_the_seed(toy: Path) -> None:
    from reprobridge_sdk.audit.verify import RunEvidence
    from reprobridge_sdk.run import load_record

    runs = [RunEvidence(d, d.name, load_record(d)) for d in _run_dirs(toy)]
    picks = {tuple(r.rel for r in choose(runs, 2, seed)) for seed in range(20)}
    assert len(picks) > 1  # different seeds pick different samples
    assert choose(runs, 2, 3) == choose(runs, 2, 3)
    assert len(choose(runs, None, 0)) == 3


def test_a_run_is_held_to_the_spread_of_its_repeat_unless_declared(toy: Path) -> None:
    """The toy gives one value per seed every time. With nothing declared, its first sampled
    run executed twice shows a spread of 0, so a value 0.01 off (well within the half-width,
    about 0.196) does not hold; a declared tolerance of 0.05 holds it; a deterministic
    launcher must match exactly."""
    target = _run_dirs(toy)[0]
    consistent_edit(target, accuracy=90.01)  # honest value 90.0
    (toy / "runs" / "ledger.jsonl").unlink()
    _set_deterministic(toy, False)
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert _codes(result)[target.name] == {"A058"}
    rows = [row for run in result.attempts[0].runs for row in run.rerun]
    assert {(row.task, row.basis, row.tolerance, row.spread) for row in rows} == {
        ("acc", "spread", 0.0, 0.0),
        ("f1", "spread", 0.0, 0.0),
    }
    assert result.attempts[0].reran == 3  # the repeat is no run of the sample

    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["tasks"][0]["same_seed_tolerance"] = 0.05
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    declared = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert _codes(declared)[target.name] == set()
    run = next(r for r in declared.attempts[0].runs if r.run == target.name)
    assert {(row.task, row.basis, row.spread) for row in run.rerun} == {
        ("acc", "declared", None),
        ("f1", "spread", 0.0),  # the task that declares nothing
    }
    _set_deterministic(toy, True)
    assert _codes(audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False))[
        target.name
    ] == {"A058"}


def _record_on_another_cpu(run_dir: Path) -> None:
    """Make ``run_dir``'s record name a machine with another CPU (its snapshot rewritten, the
    record pointed at it), as a run recorded by the authors elsewhere would."""
    from reprobridge_sdk.model import EvidenceRecord
    from reprobridge_sdk.run import read_snapshot
    from reprobridge_sdk.run.evidence import write_snapshot

    path = run_dir / "record.json"
    data = json.loads(path.read_text())
    snapshot = read_snapshot(run_dir, EvidenceRecord.model_validate(data))
    assert snapshot is not None
    elsewhere = snapshot.model_copy(update={"cpu": "Another CPU of the authors' lab"})
    if data.get("environment_sha256"):
        data["environment_sha256"] = write_snapshot(run_dir.parent, elsewhere)
    else:
        data["environment"] = elsewhere.model_dump(mode="json", exclude_none=True)
    path.write_text(json.dumps(data, indent=2))


def test_the_spread_bounds_only_a_recording_of_the_same_machine(toy: Path) -> None:
    """The repeat's spread is the auditor's machine's: a run recorded on another CPU (whose
    BLAS kernels may change the last bits of an honest value) is held to the half-width,
    not to that spread; a recording of the same machine is held to the spread."""
    runs = _run_dirs(toy)
    consistent_edit(runs[0], accuracy=90.01)  # honest value 90.0, within h (about 0.196)
    consistent_edit(runs[1], accuracy=90.02)
    _record_on_another_cpu(runs[0])
    (toy / "runs" / "ledger.jsonl").unlink()
    _set_deterministic(toy, False)
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    codes = _codes(result)
    assert codes[runs[0].name] == set()  # elsewhere: within the half-width
    assert codes[runs[1].name] == {"A058"}  # here: the spread, 0
    assert codes[runs[2].name] == set()  # here, and exact
    by_run = {run.run: run.rerun for run in result.attempts[0].runs}
    assert {row.basis for row in by_run[runs[0].name]} == {"half-width"}
    assert {row.basis for row in by_run[runs[1].name]} == {"spread"}


def test_same_machine_needs_the_same_platform_cpu_and_distributions() -> None:
    from reprobridge_sdk.audit._execute import same_machine
    from reprobridge_sdk.model import EnvironmentSnapshot

    base = EnvironmentSnapshot.model_validate(
        {
            "captured_at": "2026-12-04T00:00:00Z",
            "python": "3.11.7",
            "implementation": "CPython",
            "executable": "/a/bin/python",
            "platform": "Linux-6.1-x86_64",
            "machine": "x86_64",
            "cpu": "Some CPU",
            "distributions": [
                {"name": "numpy", "version": "2.1.0"},
                {"name": "scipy", "version": "1.14.0"},
            ],
        }
    )
    moved = base.model_copy(
        update={
            "captured_at": "2026-12-05T00:00:00Z",
            "executable": "/b/bin/python",  # another venv of the same lock: the same machine
            "distributions": list(reversed(base.distributions)),
        }
    )
    assert same_machine(base, moved)
    assert not same_machine(base, base.model_copy(update={"cpu": "Another CPU"}))
    assert not same_machine(base, base.model_copy(update={"machine": "aarch64"}))
    assert not same_machine(base, base.model_copy(update={"distributions": base.distributions[:1]}))
    assert not same_machine(base, None) and not same_machine(None, None)


def _review(toy: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "review", str(toy), *options],
        capture_output=True,
        text=True,
        check=False,
    )


def test_review_command_re_executes_everything(toy: Path) -> None:
    """review takes audit's re-execution options; its default sample (4 per launcher and
    task) is every run of the toy's three."""
    done = _review(toy, "--rerun-env", "current", "--no-sandbox", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["attempts"][0]["reran"] == 3
    assert report["options"]["rerun"] == 4
    assert report["options"]["rerun_seed_drawn"] is True
    done = _review(
        toy,
        "--rerun",
        "1",
        "--rerun-seed",
        "5",
        "--rerun-env",
        "current",
        "--no-sandbox",
        "--format",
        "json",
    )
    options = json.loads(done.stdout)["options"]
    assert (options["rerun"], options["rerun_seed"], options["rerun_seed_drawn"]) == (1, 5, False)


def test_review_old_option_spellings_still_work_with_a_warning(toy: Path) -> None:
    done = _review(
        toy, "--sample", "1", "--seed", "5", "--env", "current", "--no-sandbox", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    options = json.loads(done.stdout)["options"]
    assert (options["rerun"], options["rerun_seed"]) == (1, 5)
    for old, new in (("--sample", "--rerun"), ("--seed", "--rerun-seed"), ("--env", "--rerun-env")):
        assert f"warning: {old} is deprecated and will be removed; use {new}" in done.stderr


def test_audit_and_review_spell_their_re_execution_options_alike() -> None:
    """Every spelling of a re-execution option of ``audit`` is ``review``'s too (and means the
    same parameter), so a committee's command line works with either."""
    from reprobridge_sdk.cli._audit import audit as audit_command
    from reprobridge_sdk.cli._review import review as review_command

    def spellings(command: click.Command) -> dict[str, str | None]:
        return {
            opt: param.name
            for param in command.params
            if isinstance(param, click.Option) and "rerun" in (param.name or "")
            for opt in [*param.opts, *param.secondary_opts]
        }

    shared = spellings(audit_command)
    assert set(shared) == {
        "--rerun",
        "--rerun-seed",
        "--rerun-env",
        "--sandbox",
        "--no-sandbox",
        "--rerun-sandbox",
        "--no-rerun-sandbox",
    }
    assert spellings(review_command) == shared


def test_bad_rerun_count_is_a_usage_error(toy: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "audit", str(toy), "--rerun", "zero"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2


def _log_only(root: Path) -> Path:
    """The toy reduced to its log-measured task, writing its metrics under /tmp: it runs the
    same inside the sandbox (read-only but the run directory and a private /tmp)."""
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["tasks"] = [t for t in data["tasks"] if t["id"] == "acc"]
    for launcher in data["launchers"]:
        launcher["argv"] = [a.replace("results/", "/tmp/") for a in launcher["argv"]]
        launcher["outputs"] = []
        launcher["measurements"] = [m for m in launcher["measurements"] if m["task"] == "acc"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_re_execution_under_the_sandbox(tmp_path: Path) -> None:
    from reprobridge_sdk.run.sandbox import check_sandbox

    if check_sandbox() is not None:
        pytest.skip(f"the sandbox cannot run here: {check_sandbox()}")
    root = _log_only(make_artifact(tmp_path / "toy"))
    runs = honest_runs(root, "scored", [0, 1, 2])
    consistent_edit(runs[2], accuracy=95.0)
    (root / "runs" / "ledger.jsonl").unlink()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "review",
            str(root),
            "--env",
            "current",
            "--sandbox",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    attempt = report["attempts"][0]
    assert (attempt["reran"], attempt["rerun_mismatches"]) == (3, 1)
    codes = {r["run"]: [f["code"] for f in r["findings"]] for r in attempt["runs"]}
    assert codes == {runs[0].name: [], runs[1].name: [], runs[2].name: ["A058"]}


@pytest.mark.slow
def test_re_execution_in_the_environment_built_from_the_lock(
    toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default: every sampled run again, in a fresh virtual environment built from the
    artifact's lock (the toy's lock pins nothing: the environment is the bare interpreter)."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))
    target = _run_dirs(toy)[1]
    consistent_edit(target, accuracy=95.0)
    (toy / "runs" / "ledger.jsonl").unlink()
    result = audit(toy, rerun=2, rerun_seed=1, rerun_sandbox=False)
    attempt = result.attempts[0]
    assert attempt.reran == 2
    assert (tmp_path / "cache").is_dir()  # the environment was built, not borrowed
    reran = {r.run for r in attempt.runs if r.reran}
    assert _codes(result)[target.name] == ({"A058"} if target.name in reran else set())
    assert all(_codes(result)[run] == set() for run in reran - {target.name})
