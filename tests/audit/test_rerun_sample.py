"""The re-execution sample cannot be aimed at (audit.md#re-execution).

A forger who knows which runs the audit re-executes fabricates all the others. These tests
play that forger against the sample: the seed is drawn from the OS's entropy at each audit
(stated in the report afterwards), the draw is uniform over runs, and every launcher and
every task its runs measure is sampled. Re-executions are real (the runner, in a subprocess,
in the current interpreter, unsandboxed: the toy writes into the artifact, see test_rerun.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from audit_support import edit_record
from evidence_support import consistent_edit, honest_runs
from rerun_support import edit_manifest, run_evidence, seeded_toy
from scipy.stats import chisquare

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.rerun import DEFAULT_SAMPLE, choose, draw_seed

RUNS = 8


@pytest.fixture(scope="module")
def eight_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded toy, deterministic (a re-execution must match exactly), with 8 honest runs."""
    root = seeded_toy(tmp_path_factory.mktemp("sample") / "toy")

    def deterministic(data: dict) -> None:
        data["launchers"][0]["deterministic"] = True

    edit_manifest(root, deterministic)
    honest_runs(root, "scored", list(range(RUNS)))
    # the forgeries below rewrite records: the ledger would report each (its own tests)
    (root / "runs" / "ledger.jsonl").unlink()
    return root


@pytest.fixture
def toy(eight_runs: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(eight_runs, target)
    return target


def test_sample_dodging_fabrication_is_caught_with_the_default_sample(toy: Path) -> None:
    """Every run fabricated but the two that a seed-0 sample of two picks (yesterday's
    `--rerun 2`): that sample passes; the default, secret sample does not."""
    runs = run_evidence(toy)
    spared = {r.rel for r in choose(runs, 2, 0)}
    forged = [r for r in runs if r.rel not in spared]
    assert len(forged) == RUNS - 2
    for run in forged:
        record = run.record
        assert record is not None
        consistent_edit(run.path, accuracy=record.measurements[0].value + 0.03)

    dodged = audit(toy, rerun=2, rerun_seed=0, rerun_env="current", rerun_sandbox=False)
    assert dodged.passed  # the forger aimed at this sample
    # re-executed runs cover every task: the committee made them, the badge holds
    assert (dodged.badges.functional, dodged.badges.reproduced) == (True, True)
    assert {r.run for r in dodged.attempts[0].runs if r.reran} == spared

    result = audit(toy, rerun=DEFAULT_SAMPLE, rerun_env="current", rerun_sandbox=False)
    attempt = result.attempts[0]
    assert result.options.rerun_seed_drawn
    assert attempt.reran == DEFAULT_SAMPLE
    caught = {r.run for r in attempt.runs if any(f.code == "A058" for f in r.findings)}
    # at most two of the four sampled runs are honest: at least two forgeries are caught
    assert len(caught) >= DEFAULT_SAMPLE - 2
    assert caught <= {r.rel for r in forged}
    assert result.tasks[0].attempts[0].verdict == "invalid-evidence"
    assert not result.badges.reproduced
    assert not result.passed


def test_the_draw_is_uniform_over_runs(toy: Path) -> None:
    """200 draws of two runs from the OS's entropy: each run is picked about 50 times."""
    runs = run_evidence(toy)
    counts = Counter(r.rel for _ in range(200) for r in choose(runs, 2, draw_seed()))
    assert set(counts) == {r.rel for r in runs}
    observed = [counts[r.rel] for r in runs]
    assert sum(observed) == 400
    assert chisquare(observed).pvalue > 1e-4  # a uniform draw fails this once in 10,000


def test_seeds_are_secret_and_two_audits_in_a_row_draw_differently(toy: Path) -> None:
    first = audit(toy, rerun=1, rerun_env="current", rerun_sandbox=False)
    second = audit(toy, rerun=1, rerun_env="current", rerun_sandbox=False)
    assert first.options.rerun_seed_drawn and second.options.rerun_seed_drawn
    assert first.options.rerun_seed != second.options.rerun_seed  # 63 bits each
    assert len({draw_seed() for _ in range(50)}) == 50
    # a stated seed draws the stated sample again (to reproduce an audit)
    again = audit(
        toy, rerun=1, rerun_seed=first.options.rerun_seed, rerun_env="current", rerun_sandbox=False
    )
    assert not again.options.rerun_seed_drawn
    assert [r.run for r in again.attempts[0].runs if r.reran] == [
        r.run for r in first.attempts[0].runs if r.reran
    ]


def test_the_report_states_the_seed_afterwards(toy: Path) -> None:
    command = [sys.executable, "-m", "reprobridge_sdk", "audit", str(toy), "--rerun", "1"]
    command += ["--rerun-env", "current", "--no-sandbox"]
    as_json = [*command, "--format", "json"]
    done = subprocess.run(as_json, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    options = json.loads(done.stdout)["options"]
    assert options["rerun_seed_drawn"] is True
    assert isinstance(options["rerun_seed"], int)
    text = subprocess.run(command, capture_output=True, text=True, check=False)
    assert text.returncode == 0, text.stderr
    assert "(drawn at the audit; --rerun-seed" in text.stdout
    seed = int(text.stdout.split("sample seed ")[1].split()[0])
    assert seed != options["rerun_seed"]


def test_every_launcher_and_every_task_is_sampled(honest_template: Path, tmp_path: Path) -> None:
    """One run per stratum: the smoke and the scored launcher each, and the one scored run that
    records f1 (a forger who leaves f1 out of the other runs cannot keep it from the sample)."""
    root = tmp_path / "toy"
    shutil.copytree(honest_template, root)
    scored = sorted(d for d in (root / "runs").iterdir() if d.name.startswith("scored-"))

    def drop_f1(data: dict) -> None:
        for item in data["measurements"]:
            if item["task"] == "f1":
                item["value"] = None

    for run_dir in scored[:2]:
        edit_record(run_dir, drop_f1)
    runs = run_evidence(root)
    for _ in range(30):
        picked = choose(runs, 1, draw_seed())
        launchers = sorted(r.record.launcher for r in picked if r.record is not None)
        assert set(launchers) == {"scored", "smoke"}
        assert len(picked) <= 3  # the launcher's draw, topped up for f1 when it missed it
        assert scored[2].name in {r.rel for r in picked}
    assert len(choose(runs, 5, 0)) == len(runs)  # fewer runs than K: all of them


def test_a_table_draws_one_secret_seed_and_states_it(toy: Path, tmp_path: Path) -> None:
    from reprobridge_sdk.audit import audit_table
    from reprobridge_sdk.audit.report import render

    other = tmp_path / "other"
    shutil.copytree(toy, other)
    table = audit_table([toy, other], rerun=1, rerun_env="current", rerun_sandbox=False)
    assert table.options.rerun_seed_drawn
    assert [a.options.rerun_seed for a in table.artifacts] == [table.options.rerun_seed] * 2
    assert all(a.attempts[0].reran == 1 for a in table.artifacts)
    assert f"sample seed {table.options.rerun_seed} (drawn at the audit" in render(table, "text")
