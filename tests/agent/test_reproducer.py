"""Reproducer: smoke runs of real fixtures in the shared environment, fixes kept or undone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from build_fixtures import EPOCH_SECONDS, FIXTURES, Fixture, git, write_repo

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.planner import (
    fixed_seed_pitfall_id,
    plan,
    seeds_decision_id,
    unseeded_pitfall_id,
)
from reprobridge_sdk.agent.reproducer import reproduce
from reprobridge_sdk.model.build import LauncherPlan, ReproducerRecord

ZERO = "0" * 64

pytestmark = pytest.mark.slow


def _reproduce(
    raw_repo,
    tmp_path: Path,
    python: Path,
    name: str,
    *,
    advise=None,
    timeout: float = 600.0,
    tasks_of: dict[str, list[str]] | None = None,
) -> tuple[ReproducerRecord, Path, list[tuple[str, str | None]]]:
    """Reproduce fixture ``name``: the record, the code, each recorded change's (rule, error
    type); ``tasks_of`` receives each recorded change's tasks by rule."""
    repo, claims_file = raw_repo(name)
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    recorded: list[tuple[str, str | None]] = []

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        git("commit", "-qam", fix.summary, cwd=code)
        recorded.append((fix.rule, failure.type if failure else None))
        if tasks_of is not None:
            tasks_of[fix.rule] = tasks
        if failure is None:  # a convenience change says why in its evidence
            assert fix.kind == "convenience" and fix.evidence
        return f"fix-{len(recorded)}"

    result = reproduce(
        claims,
        planned,
        code,
        python,
        inputs_digest=ZERO,
        record=record,
        advise=advise,
        timeout=timeout,
    )
    return result, code, recorded


def test_python2_prints_integer_division_and_text_pickles_are_fixed_and_recorded(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    result, code, recorded = _reproduce(raw_repo, tmp_path, fixture_python, "python2")
    assert result.gate.passed, result.gate.findings
    assert recorded == [
        ("python2", "SyntaxError"),
        ("integer-division", "TypeError"),
        ("python2-pickle-write", "TypeError"),
        ("python2-pickle", "UnicodeDecodeError"),
    ]
    assert [f.change for f in result.fixes] == ["fix-1", "fix-2", "fix-3", "fix-4"]
    assert [a.exit_status for a in result.attempts] == [1, 1, 1, 1, 0]
    fixed = (code / "main.py").read_text("utf-8")
    assert "half = len(X) // 2" in fixed
    assert "fout = open('model.pkl', 'wb')" in fixed
    assert 'pickle.load(fin, encoding="latin1")' in fixed
    # what the record says about the errors names no path of this machine
    written = result.model_dump_json()
    assert str(tmp_path) not in written and str(tmp_path.resolve()) not in written
    assert 'File "code/main.py", line' in result.fixes[1].traceback


@pytest.mark.parametrize(
    ("name", "rule"),
    [("scipy-misc", "removed-api"), ("gui-show", "gui-backend"), ("cuda-device", "cuda-device")],
)
def test_each_defect_gets_its_fix(
    raw_repo, tmp_path: Path, fixture_python: Path, name: str, rule: str
) -> None:
    result, _, recorded = _reproduce(raw_repo, tmp_path, fixture_python, name)
    assert result.gate.passed, result.gate.findings
    assert [r for r, _ in recorded] == [rule]
    assert result.fixes[0].traceback  # the error it fixed is the evidence


def test_a_fix_that_does_not_remove_the_error_is_undone(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    def wrong(failure: Failure, launcher: LauncherPlan) -> Fix:
        return Fix(
            rule="advisor",
            kind="execution-fix",
            summary="a comment that fixes nothing",
            files={"score.py": "# touched\n" + (tmp_path / "code" / "score.py").read_text()},
        )

    repo, claims_file = raw_repo("scipy-misc")
    # Make the known rule miss: import through an alias the rule does not know.
    text = (repo / "score.py").read_text("utf-8")
    (repo / "score.py").write_text(
        text.replace(
            "from scipy.misc import logsumexp", "import scipy.misc as sm\nlogsumexp = sm.logsumexp"
        ),
        "utf-8",
    )
    git("commit", "-qam", "alias", cwd=repo)
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, "scipy-misc", advise=wrong
    )
    assert recorded == []
    assert [f.rule for f in result.rejected] == ["advisor"]
    assert [f.source for f in result.rejected] == ["advisor"]
    assert sorted(f.code for f in result.gate.findings) == ["B007", "B008"]
    assert not (code / "score.py").read_text("utf-8").startswith("# touched")


def _over_seeds(base: Fixture, name: str, files: dict[str, str] | None = None) -> Fixture:
    """``base`` with its claim made the mean over seeds 1 and 2."""
    [claim] = base.claims
    hints = {**claim["hints"], "seeds": [1, 2], "statistic": "mean"}  # type: ignore[dict-item]
    return Fixture(name, files or base.files, [{**claim, "hints": hints}], base.defects)


def test_a_claim_over_seeds_gives_its_unseeded_script_a_seed_option_and_is_replanned(
    tmp_path: Path, fixture_python: Path
) -> None:
    """The claim is the mean over seeds 1 and 2 of a script that takes no seed: the Planner
    keeps both seeds on the scored launcher without a statistic (no B018 yet); the seed option
    passes its gate, so the Reproducer re-plans: the scored launcher passes --seed over both
    seeds, the claim's plan gets the statistic, and a decision records why."""
    fixture = _over_seeds(FIXTURES["seed-flag"], "seed-flag-over-seeds")
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, fixture.name
    )
    assert result.gate.passed, result.gate.findings
    assert result.gate.findings == []  # no B018: the seed option was added
    assert recorded == [("seed-option", None)]
    [fix] = result.fixes
    assert (fix.kind, fix.files, fix.error, fix.change) == (
        "convenience",
        ["experiment.py"],
        "",
        "fix-1",
    )
    assert fix.evidence
    # the smoke run, then two seeded runs that print the same value
    assert [a.exit_status for a in result.attempts] == [0, 0, 0]
    assert [a.argv[-2:] for a in result.attempts[1:]] == [["--seed", "{seed}"]] * 2
    assert [(item.scope, item.seed_flag, item.seeds) for item in result.launchers] == [
        ("smoke", "--seed", [1]),
        ("scored", "--seed", [1, 2]),
    ]
    for launcher in result.launchers:
        assert launcher.argv[-2:] == ["--seed", "{seed}"]
    assert result.resolved_pitfalls == [unseeded_pitfall_id("experiment-scored")]
    assert [(c.claim, c.scored, c.statistic) for c in result.replanned] == [
        ("accuracy", "experiment-scored", "mean")
    ]
    assert [(d.id, d.tasks) for d in result.decisions] == [
        (seeds_decision_id("accuracy"), ["accuracy"])
    ]
    assert "def _repro_seed(value):" in (code / "experiment.py").read_text("utf-8")


def test_a_script_that_fixes_its_seed_reads_the_launchers_seed_and_is_replanned(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    """GCN's ``seed = 123; np.random.seed(seed)``, a claim without seeds: the Planner chose
    seeds 123 to 127 pending a seed option; the option turns the constant into a read of the
    launcher's seed (a seed given before the script's own seeding would be overridden), so
    the scored launcher runs five different seeds and the claim is their mean."""
    result, code, recorded = _reproduce(raw_repo, tmp_path, fixture_python, "fixed-seed")
    assert result.gate.passed, result.gate.findings
    assert result.gate.findings == []
    assert recorded == [("seed-option", None)]
    [fix] = result.fixes
    assert (fix.rule, fix.kind, fix.files) == ("seed-option", "convenience", ["run.py"])
    assert "constant 123" in fix.summary and "overridden" in (fix.evidence or "")
    assert [(i.scope, i.seed_flag, i.seeds, i.env.get("REPRO_SEED")) for i in result.launchers] == [
        ("smoke", "REPRO_SEED", [123], "{seed}"),
        ("scored", "REPRO_SEED", [123, 124, 125, 126, 127], "{seed}"),
    ]
    assert result.resolved_pitfalls == [fixed_seed_pitfall_id("run-scored")]
    assert [(c.claim, c.statistic) for c in result.replanned] == [("accuracy", "mean")]
    [decision] = result.decisions
    assert decision.id == seeds_decision_id("accuracy") and "constant 123" in decision.gap
    # the seed now varies the value; without one, the script is the published command
    values = {
        seed: subprocess.run(
            [str(fixture_python), "run.py"],
            cwd=code,
            env={**os.environ, **({"REPRO_SEED": str(seed)} if seed is not None else {})},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()[-1]
        for seed in (None, 123, 124)
    }
    assert values[None] == values[123] == "test accuracy: 0.8348"
    assert values[124] != values[123]


def test_a_change_to_a_script_that_two_claims_run_is_recorded_for_both(
    tmp_path: Path, fixture_python: Path
) -> None:
    """GCN's two claims run one script (``python train.py`` on Cora, ``--dataset citeseer``
    on Citeseer), each with its own launchers. The seed change made at the first claim's
    smoke run changes the code the second one runs too: the change record names both tasks,
    not only the first's."""
    base = FIXTURES["fixed-seed"]
    shared = Fixture(
        "fixed-seed-two-claims",
        {
            "run.py": base.files["run.py"].replace(
                "seed = 123\n",
                "import argparse\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument('--dataset', default='a')\nargs = parser.parse_args()\n"
                "seed = 123\n",
            )
        },
        [
            {
                **base.claims[0],
                "id": "a-accuracy",
                "hints": {"command": "python run.py", "label": "test accuracy"},
            },
            {
                **base.claims[0],
                "id": "b-accuracy",
                "hints": {"command": "python run.py --dataset b", "label": "test accuracy"},
            },
        ],
        base.defects,
    )
    repo, claims_file = write_repo(tmp_path / "raw", shared)
    tasks_of: dict[str, list[str]] = {}
    result, _code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, shared.name, tasks_of=tasks_of
    )
    assert result.gate.passed, result.gate.findings
    assert recorded == [("seed-option", None)]
    assert tasks_of == {"seed-option": ["a-accuracy", "b-accuracy"]}
    # every launcher of the script passes the seed
    assert {i.seed_flag for i in result.launchers} == {"REPRO_SEED"}


def test_a_script_that_fixes_its_seed_and_still_varies_keeps_the_seed_option(
    tmp_path: Path, fixture_python: Path
) -> None:
    """GCN on TensorFlow 1: ``seed = 123`` seeds the generators, yet two runs print different
    values (threaded CPU kernels). The published command varies as much, so the option that
    makes the constant read the launcher's seed is kept, its evidence says the runs differ,
    and the references are taken over five seeds (not five runs of one initialisation)."""
    base = FIXTURES["fixed-seed"]
    varying = Fixture(
        "fixed-seed-varying",
        {
            "run.py": base.files["run.py"]
            .replace(
                "0.05 * np.random.rand()",
                "0.05 * np.random.rand() + int.from_bytes(os.urandom(2), 'big') / 1e7",
            )
            .replace("seed = 123\n", "import os\nseed = 123\n")
        },
        base.claims,
        base.defects,
    )
    repo, claims_file = write_repo(tmp_path / "raw", varying)
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, varying.name
    )
    assert result.gate.passed and result.gate.findings == [], result.gate.findings
    assert recorded == [("seed-option", None)] and result.rejected == []
    [fix] = result.fixes
    assert "printed different values" in (fix.evidence or "")
    assert [(i.scope, i.seeds) for i in result.launchers] == [
        ("smoke", [123]),
        ("scored", [123, 124, 125, 126, 127]),
    ]
    assert [(c.claim, c.statistic) for c in result.replanned] == [("accuracy", "mean")]
    assert "_repro_seed_or(123)" in (code / "run.py").read_text("utf-8")


def test_a_seed_option_whose_runs_still_differ_is_undone_with_b020_and_b018(
    tmp_path: Path, fixture_python: Path
) -> None:
    """Hostile: a script seeded from the operating system, whatever the seed. The seed option
    is undone (B020); the claim over seeds 1 and 2 stays planned over its first seed (B018,
    at its hint) and its runs are repeated unseeded."""
    noisy = _over_seeds(
        FIXTURES["seed-flag"],
        "seed-noisy",
        {"run.py": 'import os\nprint("test accuracy: %d" % int.from_bytes(os.urandom(4)))\n'},
    )
    repo, claims_file = write_repo(tmp_path / "raw", noisy)
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, "seed-noisy"
    )
    assert result.gate.passed  # warnings: the runs are repeated unseeded, as planned
    assert [(f.code, f.path) for f in result.gate.findings] == [
        ("B020", ""),
        ("B018", "/claims/0/hints/seeds"),
    ]
    assert recorded == [] and result.fixes == []
    assert [(f.rule, f.kind) for f in result.rejected] == [("seed-option", "convenience")]
    assert (code / "run.py").read_text("utf-8") == noisy.files["run.py"]
    assert [(item.seed_flag, item.seeds) for item in result.launchers] == [(None, [1])] * 2
    assert result.resolved_pitfalls == []
    assert [(c.claim, c.statistic) for c in result.replanned] == [("accuracy", None)]
    assert result.decisions == []


@pytest.mark.parametrize(
    "case",
    [
        ("long-smoke", True, {"env": {"MPLBACKEND": "Agg", "REPRO_EPOCHS": "1"}}),
        ("long-smoke-option", False, {"argv": ["python", "train.py", "--rounds", "5"]}),
    ],
)
def test_a_smoke_run_past_its_budget_is_made_short(
    raw_repo, tmp_path: Path, fixture_python: Path, case: tuple[str, bool, dict[str, object]]
) -> None:
    name, patched, smoke_change = case
    # The full run takes 80 epochs (20 s of sleep: never within the budget, however fast the
    # machine), the short one 1 or 5 plus the start of Python, which a loaded machine makes
    # seconds long: half the full run leaves both sides a wide margin.
    budget = 40 * EPOCH_SECONDS
    result, code, recorded = _reproduce(raw_repo, tmp_path, fixture_python, name, timeout=budget)
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [None, 0]
    [fix] = result.fixes
    assert (fix.rule, fix.kind, fix.launcher) == ("smoke-scope", "convenience", "train-smoke")
    assert fix.error and fix.evidence
    assert recorded == ([("smoke-scope", None)] if patched else [])
    assert fix.files == (["train.py"] if patched else [])
    launchers = {item.id: item for item in result.launchers}
    for key, value in smoke_change.items():
        assert getattr(launchers["train-smoke"], key) == value
    # the scored launcher runs the full scope, unchanged
    assert launchers["train-scored"].argv == ["python", "train.py"]
    assert launchers["train-scored"].env == {"MPLBACKEND": "Agg"}
    assert ("_repro_knob" in (code / "train.py").read_text("utf-8")) is patched


def test_a_smoke_run_is_made_short_by_the_training_length_of_an_imported_module(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    """Not the script's ``niter`` (a setting of the model): the ``max_epochs`` of the
    early-stopping dictionary the script imports, patched in that module."""
    budget = 40 * EPOCH_SECONDS
    result, code, recorded = _reproduce(
        raw_repo, tmp_path, fixture_python, "long-smoke-module", timeout=budget
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [None, 0]
    [fix] = result.fixes
    assert (fix.rule, fix.files) == ("smoke-scope", ["training/stopping.py"])
    assert recorded == [("smoke-scope", None)]
    launchers = {item.id: item for item in result.launchers}
    assert launchers["train-smoke"].env == {"MPLBACKEND": "Agg", "REPRO_MAX_EPOCHS": "1"}
    assert launchers["train-scored"].env == {"MPLBACKEND": "Agg"}
    assert "_repro_knob" in (code / "training/stopping.py").read_text("utf-8")
    assert "_repro_knob" not in (code / "train.py").read_text("utf-8")


def test_a_smoke_run_is_made_one_split_of_an_experiment_repeated_over_splits(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    """No count of epochs, a loop over a count of splits read from a file: the smoke run is
    one split; the scored launcher still runs them all."""
    budget = 40 * EPOCH_SECONDS
    result, code, recorded = _reproduce(
        raw_repo, tmp_path, fixture_python, "long-smoke-splits", timeout=budget
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [None, 0]
    [fix] = result.fixes
    assert (fix.rule, fix.files) == ("smoke-scope", ["experiment.py"])
    assert recorded == [("smoke-scope", None)]
    launchers = {item.id: item for item in result.launchers}
    smoke, scored = launchers["experiment-smoke"], launchers["experiment-scored"]
    assert smoke.env == {"MPLBACKEND": "Agg", "REPRO_N_SPLITS": "1"}
    assert scored.env == {"MPLBACKEND": "Agg"}
    text = (code / "experiment.py").read_text("utf-8")
    assert 'range(_repro_knob("REPRO_N_SPLITS", int(n_splits)))' in text


def test_a_smoke_run_past_its_budget_without_an_iteration_count_is_b021(
    tmp_path: Path, fixture_python: Path
) -> None:
    # it hangs without a loop: nothing says it never ends on its own (B061 is the loop's)
    endless = Fixture(
        "endless",
        {"serve.py": "import time\ntime.sleep(3600)\nprint('test accuracy: 1')\n"},
        FIXTURES["long-smoke"].claims,
        ("runs until it is stopped",),
    )
    repo, claims_file = write_repo(tmp_path / "raw", endless)
    result, _, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, "endless", timeout=2.0
    )
    assert not result.gate.passed
    assert [f.code for f in result.gate.findings] == ["B021"]
    assert recorded == [] and result.fixes == []


#: The Planetoid class: it trains in ``while True:``, printing the accuracy at every step.
_ENDLESS = (
    "import time\n\n\n"
    "def main():\n"
    "    step = 0\n"
    "    while True:\n"
    "        time.sleep(0.05)\n"
    "        step += 1\n"
    '        print("step %d accuracy 0.71" % step, flush=True)\n\n\n'
    'if __name__ == "__main__":\n'
    "    main()\n"
)
_ACCURACY = [
    {
        "id": "accuracy",
        "measured": "accuracy",
        "value": 0.71,
        "direction": "higher",
        "hints": {"label": "accuracy", "script": "train.py"},
    }
]


def _endless(tmp_path: Path, python: Path, script: str) -> ReproducerRecord:
    fixture = Fixture("loops", {"train.py": script}, _ACCURACY, ("runs until it is stopped",))
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    result, _, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, python, "loops", timeout=2.0
    )
    assert recorded == [] and result.fixes == []
    return result


def test_a_script_that_never_ends_on_its_own_has_its_claims_unplanned_b061(
    tmp_path: Path, fixture_python: Path
) -> None:
    """Past its budget with no knob, and its loop has no way out: the claim is un-planned with
    the loop's place and the time the run was stopped after (B061, a warning), its smoke
    launcher is not shipped, and the phase passes."""
    result = _endless(tmp_path, fixture_python, _ENDLESS)
    assert result.gate.passed, result.gate.findings
    [b061] = result.gate.findings
    assert (b061.code, b061.severity) == ("B061", "warning")
    assert "train.py:6" in b061.message and "while True:" in b061.message
    assert b061.hint is not None and "code record --kind execution-fix" in b061.hint
    [claim] = result.replanned
    assert (claim.claim, claim.status, claim.scored) == ("accuracy", "unplanned", "train-scored")
    assert claim.reason is not None and "train.py:6" in claim.reason and "(B061)" in claim.reason
    assert [item.id for item in result.launchers] == ["train-scored"]


def test_an_endless_loop_in_a_module_the_script_calls_is_b061_at_its_place(
    tmp_path: Path, fixture_python: Path
) -> None:
    """The training loop is a method of a class another module of the repository defines:
    the B061 finding and the claim's reason name the loop in that module."""
    files = {
        "train.py": "from models.trainer import Trainer\n\n"
        "if __name__ == '__main__':\n    t = Trainer()\n    t.train()\n",
        "models/__init__.py": "",
        "models/trainer.py": "class Trainer:\n    def train(self):\n        step = 0\n"
        "        while True:\n            step += 1\n"
        "            print('step %d accuracy 0.71' % step, flush=True)\n",
    }
    fixture = Fixture("loops", files, _ACCURACY, ("runs until it is stopped",))
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    result, _, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, "loops", timeout=2.0
    )
    assert result.gate.passed, result.gate.findings
    assert recorded == [] and result.fixes == []
    [b061] = result.gate.findings
    assert b061.code == "B061" and "models/trainer.py:4" in b061.message
    assert b061.hint is not None and "models/trainer.py:4" in b061.hint
    [claim] = result.replanned
    assert claim.reason is not None and "models/trainer.py:4" in claim.reason


@pytest.mark.parametrize(
    "script",
    [
        # a break behind a condition that does not hold within the budget
        "import time\nacc = 0.0\nwhile True:\n    time.sleep(0.05)\n    acc += 1e-9\n"
        "    if acc > 0.7:\n        break\nprint('accuracy %.2f' % acc)\n",
        # an endless loop in a function never called; the script hangs elsewhere
        "import time\n\ndef serve():\n    while True:\n        pass\n\n"
        "time.sleep(3600)\nprint('accuracy 0.71')\n",
        # a loop that ends by raise, later than the budget
        "import time\nwhile True:\n    time.sleep(0.05)\n    if time.time() > 4e9:\n"
        "        raise SystemExit('accuracy 0.71')\n",
    ],
    ids=["break-behind-a-condition", "loop-never-called", "ends-by-raise"],
)
def test_a_long_run_whose_script_may_end_stays_b021(
    tmp_path: Path, fixture_python: Path, script: str
) -> None:
    """The agent says a script never ends only where its code shows it: these may end, so the
    run past its budget is B021 and the phase stops."""
    result = _endless(tmp_path, fixture_python, script)
    assert not result.gate.passed
    assert [f.code for f in result.gate.findings] == ["B021"]
    assert result.replanned == []


def _slow(name: str, script: str) -> Fixture:
    return Fixture(name, {"train.py": script}, FIXTURES["long-smoke"].claims, ("slow",))


_HUGE_OPTION = (
    FIXTURES["long-smoke-option"].files["train.py"].replace("default=80", "default=100000")
)


@pytest.mark.parametrize(
    ("fixture", "patched", "smoke_change"),
    [
        (FIXTURES["huge-epochs"], True, {"env": {"MPLBACKEND": "Agg", "REPRO_EPOCHS": "1"}}),
        (
            _slow("huge-option", _HUGE_OPTION),
            False,
            {"argv": ["python", "train.py", "--rounds", "5"]},
        ),
        (FIXTURES["huge-loop"], True, {"env": {"MPLBACKEND": "Agg", "REPRO_ITERATIONS": "5"}}),
    ],
    ids=["constant", "option", "loop"],
)
def test_a_huge_count_in_the_code_makes_the_first_smoke_run_short(
    tmp_path: Path,
    fixture_python: Path,
    fixture: Fixture,
    patched: bool,
    smoke_change: dict[str, object],
) -> None:
    """GAT's ``nb_epochs = 100000`` (and a loop over ``range(100000)``): the code shows the
    count before any run, so the first smoke run is already short; no run is spent reaching
    the budget. The change is the after-timeout one, its evidence the count read from the
    code; the scored launcher is unchanged."""
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file),
        tmp_path,
        fixture_python,
        fixture.name,
        timeout=40 * EPOCH_SECONDS,
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [0]  # no run to the budget first
    [fix] = result.fixes
    assert (fix.rule, fix.kind, fix.launcher) == ("smoke-scope", "convenience", "train-smoke")
    assert "100000" in fix.error and "100000" in fix.evidence
    assert "train.py:" in fix.evidence and "stopped at its budget" not in fix.evidence
    assert "Shortened, it ended successfully in " in fix.evidence
    assert recorded == ([("smoke-scope", None)] if patched else [])
    launchers = {item.id: item for item in result.launchers}
    for key, value in smoke_change.items():
        assert getattr(launchers["train-smoke"], key) == value
    assert launchers["train-scored"].argv == ["python", "train.py"]
    assert launchers["train-scored"].env == {"MPLBACKEND": "Agg"}
    assert ("_repro_knob" in (code / "train.py").read_text("utf-8")) is patched


def test_a_shortened_smoke_run_that_fails_otherwise_is_not_said_to_have_ended(
    tmp_path: Path, fixture_python: Path
) -> None:
    """The short run fails on an error of its own within the budget: the change's evidence
    gives its exit status, not an ending, and leaves the error to the next attempt."""
    script = FIXTURES["huge-loop"].files["train.py"] + 'raise RuntimeError("evaluation failed")\n'
    repo, claims_file = write_repo(tmp_path / "raw", _slow("huge-loop-fails", script))
    result, _, _ = _reproduce(
        lambda _name: (repo, claims_file),
        tmp_path,
        fixture_python,
        "huge-loop-fails",
        timeout=40 * EPOCH_SECONDS,
    )
    assert result.attempts[0].exit_status == 1
    scope = [fix for fix in result.fixes if fix.rule == "smoke-scope"]
    assert len(scope) == 1
    assert "with exit status 1: its error is the next attempt's" in scope[0].evidence
    assert "ended" not in scope[0].evidence


def test_a_loop_below_the_large_count_is_made_short_only_after_a_timeout(
    tmp_path: Path, fixture_python: Path
) -> None:
    """``for epoch in range(800)``: a count below the large one, so the first smoke run is as
    written, runs to the budget, and then the after-timeout rule makes it short."""
    script = FIXTURES["huge-loop"].files["train.py"].replace("range(100000)", "range(800)")
    repo, claims_file = write_repo(tmp_path / "raw", _slow("long-loop", script))
    result, _, recorded = _reproduce(
        lambda _name: (repo, claims_file),
        tmp_path,
        fixture_python,
        "long-loop",
        timeout=40 * EPOCH_SECONDS,
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [None, 0]
    [fix] = result.fixes
    assert fix.rule == "smoke-scope" and "stopped at its budget" in fix.evidence
    assert recorded == [("smoke-scope", None)]
    smoke = {item.id: item for item in result.launchers}["train-smoke"]
    assert smoke.env == {"MPLBACKEND": "Agg", "REPRO_ITERATIONS": "5"}


#: openai/grok's shape: the script parses a parser its package builds, whose count of
#: steps (100000) is listed after a schedule's length and an override without a default, and
#: the trainer's logging period is a keyword that bounds nothing.
_PACKAGE_PARSER = (
    "import argparse\n"
    "import time\n\n\n"
    "def add_args():\n"
    "    parser = argparse.ArgumentParser()\n"
    '    parser.add_argument("--anneal_lr_steps", type=int, default=100000)\n'
    '    parser.add_argument("--max_epochs", type=int, default=None)\n'
    '    parser.add_argument("--max_steps", type=int, default=100000)\n'
    "    return parser\n\n\n"
    "def fit(max_steps, flush_logs_every_n_steps):\n"
    "    accuracy = 0.0\n"
    "    for step in range(max_steps):\n"
    f"        time.sleep({EPOCH_SECONDS})\n"
    "        accuracy = 0.95 + 0.04 * (1 - 0.5 ** (step + 1))\n"
    "    return accuracy\n\n\n"
    "def train(hparams):\n"
    "    return fit(hparams.max_steps, flush_logs_every_n_steps=1000)\n"
)
_PACKAGE_SCRIPT = (
    "import pkg.training\n\n"
    "parser = pkg.training.add_args()\n"
    "hparams = parser.parse_args()\n"
    'print("test accuracy: %.4f" % pkg.training.train(hparams))\n'
)
#: ironjr/grokfast's shape: the epochs are an option's budget of steps over the steps per
#: epoch, in a progress bar; the option's name is no count of the work.
_BUDGET_LOOP = (
    "import argparse\n"
    "import time\n\n\n"
    "def progress(items):\n"
    "    return items\n\n\n"
    "def main(args):\n"
    "    accuracy = 0.0\n"
    "    for epoch in progress(range(int(args.budget) // 4)):\n"
    f"        time.sleep({EPOCH_SECONDS})\n"
    "        accuracy = 0.95 + 0.04 * (1 - 0.5 ** (epoch + 1))\n"
    '    print("test accuracy: %.4f" % accuracy)\n\n\n'
    "parser = argparse.ArgumentParser()\n"
    'parser.add_argument("--budget", type=int, default=3e5)\n'
    "main(parser.parse_args())\n"
)


def test_a_count_of_a_parser_the_package_builds_makes_the_first_smoke_run_short(
    tmp_path: Path, fixture_python: Path
) -> None:
    """Neither the logging period nor the schedule's length nor the override without a
    default: the package's --max_steps, passed small before the first run, no file changed."""
    fixture = Fixture(
        "package-parser",
        {"pkg/__init__.py": "", "pkg/training.py": _PACKAGE_PARSER, "train.py": _PACKAGE_SCRIPT},
        FIXTURES["long-smoke"].claims,
        ("slow",),
    )
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file),
        tmp_path,
        fixture_python,
        fixture.name,
        timeout=40 * EPOCH_SECONDS,
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [0]  # no run to the budget first
    [fix] = result.fixes
    assert fix.rule == "smoke-scope" and "pkg/training.py:" in fix.evidence
    assert recorded == []
    launchers = {item.id: item for item in result.launchers}
    assert launchers["train-smoke"].argv == ["python", "train.py", "--max_steps", "5"]
    assert launchers["train-scored"].argv == ["python", "train.py"]
    assert "_repro_knob" not in (code / "pkg/training.py").read_text("utf-8")


@pytest.mark.parametrize("default", ["3e5", "800"])
def test_a_loop_bounded_through_an_option_is_made_short(
    tmp_path: Path, fixture_python: Path, default: str
) -> None:
    """``range(int(args.budget) // 4)`` (the option is no count name): with the option's
    default of 300000 (ironjr/grokfast's), at least the large count, the first smoke run is
    already short; with 800 it reaches the budget first. Either way the loop then reads the
    smoke launcher's count of iterations."""
    script = _BUDGET_LOOP.replace("default=3e5", f"default={default}")
    repo, claims_file = write_repo(tmp_path / "raw", _slow("budget-loop", script))
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file),
        tmp_path,
        fixture_python,
        "budget-loop",
        timeout=40 * EPOCH_SECONDS,
    )
    assert result.gate.passed, result.gate.findings
    upfront = default == "3e5"
    assert [a.exit_status for a in result.attempts] == ([0] if upfront else [None, 0])
    [fix] = result.fixes
    assert fix.rule == "smoke-scope" and "int(args.budget) // 4" in fix.summary
    if upfront:
        assert "reads --budget, 300000 by default" in fix.evidence
        assert "stopped at its budget" not in fix.evidence
    else:
        assert "stopped at its budget" in fix.evidence
    assert recorded == [("smoke-scope", None)]
    launchers = {item.id: item for item in result.launchers}
    assert launchers["train-smoke"].env == {"MPLBACKEND": "Agg", "REPRO_ITERATIONS": "5"}
    assert launchers["train-scored"].env == {"MPLBACKEND": "Agg"}
    assert "_repro_knob" in (code / "train.py").read_text("utf-8")


_HUGE = FIXTURES["huge-epochs"].files["train.py"]


def test_a_short_first_smoke_run_that_fails_gets_the_fix_rules(
    tmp_path: Path, fixture_python: Path
) -> None:
    """The short scope is recorded first; the short run's own error (a Python 2 division
    used as a slice bound, after the training) goes to the fix rules as any failure does,
    and the fixed run is short too."""
    script = _HUGE.replace(
        'print("test accuracy: %.4f" % train(EPOCHS))\n',
        "scores = [train(EPOCHS)] * 4\nhalf = len(scores) / 2\n"
        'print("test accuracy: %.4f" % scores[:half][0])\n',
    )
    repo, claims_file = write_repo(tmp_path / "raw", _slow("huge-then-fails", script))
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file),
        tmp_path,
        fixture_python,
        "huge-then-fails",
        timeout=40 * EPOCH_SECONDS,
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [1, 0]
    assert recorded == [("smoke-scope", None), ("integer-division", "TypeError")]
    text = (code / "train.py").read_text("utf-8")
    assert "_repro_knob" in text and "len(scores) // 2" in text


def test_a_short_first_smoke_run_without_the_claims_label_is_undone(
    tmp_path: Path, fixture_python: Path
) -> None:
    """A script that prints its number only at its last epoch: the short run ends without
    the label, so the change is undone and the launcher runs as written (here within the
    budget); the code is as published."""
    script = (
        "EPOCHS = 5000\n\n"
        'if __name__ == "__main__":\n'
        "    for epoch in range(EPOCHS):\n"
        "        if epoch == 4999:\n"
        '            print("test accuracy: 0.9900")\n'
    )
    repo, claims_file = write_repo(tmp_path / "raw", _slow("label-at-the-end", script))
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, "label-at-the-end"
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [0, 0]
    assert recorded == [] and result.fixes == []
    assert [(f.rule, f.kind) for f in result.rejected] == [("smoke-scope", "convenience")]
    assert (code / "train.py").read_text("utf-8") == script
    smoke = {item.id: item for item in result.launchers}["train-smoke"]
    assert "REPRO_EPOCHS" not in smoke.env


def test_a_short_first_smoke_run_still_past_its_budget_is_undone_and_b021(
    tmp_path: Path, fixture_python: Path
) -> None:
    """Short or not, the script hangs before its training: one run to the budget, the change
    undone, B021; no second run as written."""
    script = _HUGE.replace("import time\n", "import time\ntime.sleep(3600)\n", 1)
    repo, claims_file = write_repo(tmp_path / "raw", _slow("hangs-first", script))
    result, code, recorded = _reproduce(
        lambda _name: (repo, claims_file), tmp_path, fixture_python, "hangs-first", timeout=2.0
    )
    assert not result.gate.passed
    assert [f.code for f in result.gate.findings] == ["B021"]
    assert [a.exit_status for a in result.attempts] == [None]
    assert recorded == [] and result.fixes == []
    assert [f.rule for f in result.rejected] == ["smoke-scope"]
    assert (code / "train.py").read_text("utf-8") == script
