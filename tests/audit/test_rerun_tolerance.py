"""What a re-executed run is held to (audit.md#re-execution): a same-seed tolerance, never
wider than the interval's half-width, and, across the sample, no shift.

A forger who knows the tolerance adds a little less than it to every run: each run passes,
the sample does not (a paired t test on the differences, A070). The toy gives one value per
seed every time, so with nothing declared its tolerance is 0 (the spread of a run executed
twice, see test_rerun.py); here its authors declare a same-seed tolerance of 0.8, below the
half-width. Re-executions are real (the runner, in a subprocess, in the current interpreter,
unsandboxed: see test_rerun.py).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from evidence_support import consistent_edit, honest_runs
from rerun_support import edit_manifest, seeded_toy
from scipy.stats import ttest_1samp

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit._execute import progress_line
from reprobridge_sdk.audit.report import render
from reprobridge_sdk.audit.rerun import (
    SHIFT_LEVEL,
    SPREAD_MULTIPLE,
    Limits,
    RerunOutcome,
    _shifts,
    shift_test,
    tolerance,
)
from reprobridge_sdk.audit.verify import RunEvidence
from reprobridge_sdk.model.audit import AuditResult, RerunComparison

HALF_WIDTH = 0.901  # the toy's acc interval: the 1% floor of its mean 90.1
DECLARED = 0.8  # the toy's declared same-seed tolerance, below the half-width


@pytest.fixture(scope="module")
def five_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = seeded_toy(tmp_path_factory.mktemp("tolerance") / "toy", seeds=5)
    _declare(root, DECLARED)
    honest_runs(root, "scored", list(range(5)))
    (root / "runs" / "ledger.jsonl").unlink()  # the edits below would break it (its own tests)
    return root


@pytest.fixture
def toy(five_runs: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(five_runs, target)
    return target


def _run_dirs(toy: Path) -> list[Path]:
    return sorted(d for d in (toy / "runs").iterdir() if (d / "record.json").is_file())


def _recorded(run_dir: Path) -> float:
    record = json.loads((run_dir / "record.json").read_text())
    return float(record["measurements"][0]["value"])


def _rerun_all(toy: Path) -> AuditResult:
    return audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)


def _declare(toy: Path, value: float) -> None:
    def change(data: dict) -> None:
        data["tasks"][0]["same_seed_tolerance"] = value

    edit_manifest(toy, change)


def test_a_uniform_inflation_within_the_tolerance_is_a_shift(toy: Path) -> None:
    """Every recorded run raised by 0.5 points (each within the tolerance 0.8): no run
    mismatches, and the paired t test over the five runs finds the shift."""
    for run_dir in _run_dirs(toy):
        consistent_edit(run_dir, accuracy=_recorded(run_dir) + 0.5)
    result = _rerun_all(toy)
    attempt = result.attempts[0]
    assert attempt.rerun_mismatches == 0
    assert all(row.held for run in attempt.runs for row in run.rerun)
    (test,) = attempt.shift_tests
    assert (test.task, test.n, test.shifted, test.level) == ("acc", 5, True, SHIFT_LEVEL)
    assert test.mean_difference == pytest.approx(0.5)
    assert test.p < SHIFT_LEVEL
    (shift,) = [f for f in attempt.findings if f.code == "A070"]
    assert shift.severity == "error"
    assert shift.path == "/tasks/0"
    assert "above" in shift.message
    assert result.tasks[0].attempts[0].verdict == "invalid-evidence"
    assert [r.code for r in result.badges.reasons["reproduced"]] == ["A070"]
    assert not result.passed


def test_honest_runs_show_no_shift(toy: Path) -> None:
    result = _rerun_all(toy)
    (test,) = result.attempts[0].shift_tests
    assert (test.n, test.shifted, test.p, test.mean_difference) == (5, False, 1.0, 0.0)
    assert result.passed


def test_no_shift_test_under_four_runs(toy: Path) -> None:
    for run_dir in _run_dirs(toy):
        consistent_edit(run_dir, accuracy=_recorded(run_dir) + 0.5)
    result = audit(toy, rerun=3, rerun_seed=1, rerun_env="current", rerun_sandbox=False)
    assert result.attempts[0].reran == 3
    assert result.attempts[0].shift_tests == []  # stated in the spec: n >= 4 only
    assert [s.n for s in result.attempts[0].shift_skipped] == [3]  # and the report says so
    assert result.passed  # three runs within the tolerance: nothing to test them by


def test_a_sample_under_four_states_that_the_shift_test_was_not_run(toy: Path) -> None:
    """``--rerun 2`` on five recorded runs: no shift test, and the report says why, in JSON
    and in one line of text, through the command line as a committee runs it."""
    options = ["--rerun-seed", "1", "--rerun-env", "current", "--no-sandbox", "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "audit", str(toy), "--rerun", "2", *options],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    attempt = json.loads(done.stdout)["attempts"][0]
    assert (attempt["reran"], attempt["shift_tests"]) == (2, [])
    (skipped,) = attempt["shift_skipped"]
    assert (skipped["task"], skipped["n"], skipped["recorded"]) == ("acc", 2, 5)
    assert "needs 4" in skipped["reason"]
    result = AuditResult.model_validate(json.loads(done.stdout))
    (line,) = [x for x in render(result, "text").splitlines() if "shift test not run" in x]
    assert line.strip() == (
        "shift acc: shift test not run: 2 re-executed run(s) with a value, it needs 4 "
        "(the attempt records 5)"
    )
    html = render(result, "html")  # the HTML report's re-execution table says so too
    assert '<tr class="shift-skipped" data-task="acc" data-n="2">' in html
    assert "shift of acc not tested: shift test not run: 2 re-executed" in html
    junit = ET.fromstring(render(result, "junit"))
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["rerun"] == "2 re-executed, 2 held, 0 did not, largest difference 0"
    assert props["shift"].startswith("not run: shift test not run: 2 re-executed")


def test_a_sample_of_four_or_more_skips_nothing(toy: Path) -> None:
    result = _rerun_all(toy)
    assert result.attempts[0].shift_skipped == []
    assert len(result.attempts[0].shift_tests) == 1


def test_a_declared_same_seed_tolerance_is_what_a_run_is_held_to(toy: Path) -> None:
    target = _run_dirs(toy)[1]
    consistent_edit(target, accuracy=_recorded(target) + 0.05)  # well within the half-width
    assert _rerun_all(toy).passed  # within the declared 0.8
    _declare(toy, 0.01)
    result = _rerun_all(toy)
    run = next(r for r in result.attempts[0].runs if r.run == target.name)
    (row,) = run.rerun
    assert (row.basis, row.tolerance, row.held) == ("declared", 0.01, False)
    assert [f.code for f in run.findings] == ["A058"]
    assert "within 0.01 (declared)" in run.findings[0].message
    assert not result.passed


def test_a_tolerance_not_below_the_half_width_is_capped_and_reported(toy: Path) -> None:
    target = _run_dirs(toy)[0]
    consistent_edit(target, accuracy=_recorded(target) + 1.5)  # beyond the half-width
    _declare(toy, 5.0)
    result = _rerun_all(toy)
    (wide,) = [f for f in result.findings if f.code == "A071"]
    assert wide.path == "/tasks/0/same_seed_tolerance"
    assert wide.severity == "warning"
    run = next(r for r in result.attempts[0].runs if r.run == target.name)
    assert run.rerun[0].tolerance == pytest.approx(HALF_WIDTH, abs=1e-3)
    assert [f.code for f in run.findings] == ["A058"]


@pytest.mark.parametrize("bad", [-0.1, "0.1", [0.1]])
def test_a_malformed_tolerance_is_refused(toy: Path, bad: object) -> None:
    _declare(toy, bad)  # type: ignore[arg-type]
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", str(toy)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "same_seed_tolerance" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_the_report_shows_recorded_and_re_executed_values(toy: Path) -> None:
    target = _run_dirs(toy)[2]
    consistent_edit(target, accuracy=_recorded(target) + 0.25)
    result = _rerun_all(toy)
    run = next(r for r in result.attempts[0].runs if r.run == target.name)
    (row,) = run.rerun
    assert row.recorded == pytest.approx(90.45)
    assert row.rerun == pytest.approx(90.2)
    assert row.difference == pytest.approx(0.25)
    assert (row.basis, row.tolerance, row.held) == ("declared", DECLARED, True)
    as_json = json.loads(render(result, "json"))
    fields = as_json["attempts"][0]["runs"][2]["rerun"][0]
    assert set(fields) >= {"recorded", "rerun", "difference", "tolerance", "basis", "held"}
    text = render(result, "text")
    assert f"re-executed {target.name} acc: recorded 90.45, re-executed 90.2, difference 0.25" in (
        text
    )
    assert "shift acc: mean difference 0.05 over 5 runs" in text
    html = render(result, "html")
    row = html.split(f'<tr class="rerun" data-run="{target.name}" data-task="acc" ')[1]
    cells = row.split("</tr>")[0]
    assert "<td>90.45</td><td>90.2</td><td>0.25</td>" in cells
    assert "(declared)</td><td>yes</td>" in cells
    assert f'data-seed="{result.options.rerun_seed}"' in html


def test_tolerance_rules() -> None:
    assert tolerance(True, 0.5, 1.0) == (0.0, "deterministic")
    assert tolerance(False, 0.5, None) == (0.0, "no-interval")
    assert tolerance(False, 0.5, math.inf) == (0.0, "no-interval")
    assert tolerance(False, 0.5, 1.0) == (0.5, "declared")
    assert tolerance(False, 2.0, 1.0) == (1.0, "declared")  # never wider than the half-width
    assert tolerance(False, None, 1.0) == (1.0, "half-width")  # no spread measured
    # the spread of a run executed twice, times SPREAD_MULTIPLE, capped at the half-width
    assert tolerance(False, None, 1.0, 0.0) == (0.0, "spread")
    assert tolerance(False, None, 1.0, 0.001) == (pytest.approx(0.001 * SPREAD_MULTIPLE), "spread")
    assert tolerance(False, None, 1.0, 0.5) == (1.0, "spread")
    assert tolerance(False, 0.5, 1.0, 0.0) == (0.5, "declared")  # a declaration comes first
    assert tolerance(True, None, 1.0, 0.5) == (0.0, "deterministic")


def test_shift_test_agrees_with_scipy() -> None:
    differences = [0.12, -0.03, 0.08, 0.15, 0.02, 0.07]
    test = shift_test("acc", differences)
    assert test is not None
    oracle = ttest_1samp(differences, 0.0)
    assert test.t == pytest.approx(oracle.statistic, rel=1e-12)
    assert test.p == pytest.approx(oracle.pvalue, rel=1e-9)
    assert shift_test("acc", differences[:3]) is None
    assert shift_test("acc", [0.1, 0.1, 0.1, math.nan]) is None  # three finite only
    constant = shift_test("acc", [0.1] * 4)
    assert constant is not None and constant.p == 0.0 and constant.t is None
    assert constant.shifted


def test_review_prints_its_progress_on_stderr(toy: Path) -> None:
    """``review`` re-executes as ``audit --rerun`` does, and says how far it is on stderr."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "review",
            str(toy),
            "--rerun",
            "3",
            "--rerun-env",
            "current",
            "--no-sandbox",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    head = f"{toy}: re-executing toy-study: "  # the artifact's path first, then its id
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith(head)]
    assert [ln.removeprefix(head).split(" runs")[0] for ln in lines] == ["0/3", "1/3", "2/3", "3/3"]
    assert "about" in lines[1] and "left" in lines[1]
    assert json.loads(done.stdout)["attempts"][0]["reran"] == 3  # stdout holds the report only


def _comparison(task: str, difference: float) -> RerunComparison:
    return RerunComparison(
        task=task,
        recorded=97.0 + difference,
        rerun=97.0,
        difference=difference,
        tolerance=0.97,
        basis="half-width",
        held=True,
    )


def test_an_honest_smoke_run_does_not_dilute_a_shift_of_the_scored_runs() -> None:
    """The bundled example's default sample: its one smoke run, honest (difference 0), and
    four scored runs each inflated by 0.95 points, within the half-width 0.97. Pooled, the
    five differences give p = 0.016, no shift at 0.01; the scored runs tested apart, as the
    sample is drawn, are shifted (found by the committee's batch)."""
    outcome = RerunOutcome()
    launchers = {"smoke-s0": "smoke"}
    outcome.comparisons["smoke-s0"] = [_comparison("acc", 0.0)]
    for seed in range(4):
        launchers[f"scored-s{seed}"] = "scored"
        outcome.comparisons[f"scored-s{seed}"] = [_comparison("acc", 0.95)]
    _shifts(outcome, launchers, Limits(positions={"acc": 0}), {"acc": 6})
    pooled, scored = outcome.shifts
    assert (pooled.launcher, pooled.n, pooled.shifted) == (None, 5, False)
    assert pooled.p == pytest.approx(0.0161, abs=1e-3)
    assert (scored.launcher, scored.n, scored.shifted) == ("scored", 4, True)
    [(finding, tainted)] = outcome.shift_findings
    assert (finding.code, finding.path, tainted) == ("A070", "/tasks/0", {"scored"})
    assert "launcher scored" in finding.message


def test_one_launcher_is_tested_once() -> None:
    """Every run of one launcher: the task's test alone, its shift tainting that launcher."""
    outcome = RerunOutcome()
    outcome.comparisons = {f"scored-s{s}": [_comparison("acc", 0.5)] for s in range(4)}
    launchers = dict.fromkeys(outcome.comparisons, "scored")
    _shifts(outcome, launchers, Limits(), {"acc": 4})
    [test] = outcome.shifts
    assert (test.launcher, test.n, test.shifted) == (None, 4, True)
    [(_finding, tainted)] = outcome.shift_findings
    assert tainted == {"scored"}


def test_a_progress_line_shows_a_hostile_row_and_run_name_as_text() -> None:
    """The row (a submission's id or path) and the run's folder come from strangers: their
    control characters are shown, never sent to the terminal."""
    run = RunEvidence(path=Path("x"), rel="runs/\x1b]52;c;cHdu\x07s1", record=None)
    line = progress_line("row\x1b[2J: re-executing toy", run, (1, 4), 3.0)
    assert "\x1b" not in line and "\x07" not in line
    assert line.startswith("row") and ": re-executing toy: 1/4 runs (last runs/" in line
    assert line.endswith(", 3s so far, about 9s left")
