"""Planner: a launcher per claim, ambiguities as guide records, seeds and smoke scope."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml
from build_fixtures import COMMIT_DATE, git

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.intake import checkout, code_date, inventory
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.model.build import PlanRecord

ZERO = "0" * 64


def _plan(repo: Path, claims_file: Path, tmp_path: Path) -> PlanRecord:
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    intake = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    return plan(claims, intake, root=dest, inputs_digest=ZERO)


def test_seeded_script_gets_its_seed_five_repeats_and_a_short_smoke_scope(
    raw_repo, tmp_path: Path
) -> None:
    record = _plan(*raw_repo("no-deps"), tmp_path)
    smoke, scored = record.launchers
    assert scored.argv == ["python", "train.py", "--seed", "{seed}"]
    assert (scored.seeds, scored.repeats) == ([0], 5)
    assert smoke.argv == ["python", "train.py", "--seed", "{seed}", "--max-iter", "5"]
    assert smoke.seeds == [0]
    assert record.claims[0].status == "planned"
    assert record.claims[0].scored == scored.id
    assert record.gate.passed


def test_every_option_that_bounds_the_work_is_made_small_in_the_smoke_run(
    raw_repo, tmp_path: Path
) -> None:
    """Names of research scripts: an epoch multiplier (``--epochx``), an abbreviated estimator
    count (``--n-est``) and repetitions over splits (``--n-splits``, ``--reps``)."""
    repo, claims_file = raw_repo("no-deps")
    text = (repo / "train.py").read_text("utf-8")
    text = text.replace(
        'parser.add_argument("--max-iter", type=int, default=200)\n',
        'parser.add_argument("--max-iter", type=int, default=200)\n'
        'parser.add_argument("--epochx", "-e", type=int, default=500)\n'
        'parser.add_argument("--n-est", type=int, default=2000)\n'
        'parser.add_argument("--n-splits", type=int, default=20)\n'
        'parser.add_argument("--reps", type=int, default=5)\n',
    )
    (repo / "train.py").write_text(text, "utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "options", cwd=repo)
    smoke, scored = _plan(repo, claims_file, tmp_path).launchers
    assert scored.argv == ["python", "train.py", "--seed", "{seed}"]
    assert smoke.argv[4:] == [
        "--max-iter", "5", "--epochx", "1", "--n-est", "5", "--n-splits", "2", "--reps", "1"
    ]  # fmt: skip


def test_an_unseeded_script_is_repeated_and_a_pitfall_says_so(raw_repo, tmp_path: Path) -> None:
    record = _plan(*raw_repo("unseeded"), tmp_path)
    scored = record.launchers[1]
    assert scored.seed_flag is None
    assert scored.repeats == 5
    assert [p.tasks for p in record.pitfalls] == [["accuracy"]]


def test_a_script_that_seeds_itself_with_a_constant_is_not_called_unseeded(
    raw_repo, tmp_path: Path
) -> None:
    """GCN's ``seed = 123; np.random.seed(seed)``: its runs repeat, so the pitfall says that
    they repeat one initialisation, not that they are not repeatable."""
    repo, claims_file = raw_repo("unseeded")
    text = (repo / "run.py").read_text("utf-8")
    (repo / "run.py").write_text("import numpy as np\nseed = 123\nnp.random.seed(seed)\n" + text)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "seed", cwd=repo)
    record = _plan(repo, claims_file, tmp_path)
    [pitfall] = record.pitfalls
    assert pitfall.id.endswith("fixed-seed")
    assert "the constant 123" in pitfall.summary
    assert "not repeatable" not in pitfall.summary
    assert pitfall.tasks == ["accuracy"]
    # the constant is read once and recorded; the references are planned over five seeds,
    # the constant first, pending the seed option (no statistic before it passes its gate)
    smoke, scored = record.launchers
    assert (smoke.fixed_seed, scored.fixed_seed) == (123, 123)
    assert (smoke.seed_flag, smoke.seeds) == (None, [123])
    assert (scored.seed_flag, scored.seeds) == (None, [123, 124, 125, 126, 127])
    assert [(c.claim, c.statistic) for c in record.claims] == [("accuracy", None)]
    assert [f.code for f in record.gate.findings] == []


def test_a_cwd_relative_data_path_moves_the_working_directory(raw_repo, tmp_path: Path) -> None:
    record = _plan(*raw_repo("cwd-data"), tmp_path)
    assert {(item.workdir, item.argv[1]) for item in record.launchers} == {("src", "train.py")}


def test_two_scripts_printing_the_label_are_an_ambiguity(raw_repo, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("no-deps")
    (repo / "eval.py").write_text((repo / "train.py").read_text("utf-8"), "utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "eval", cwd=repo)
    record = _plan(repo, claims_file, tmp_path)
    [ambiguity] = record.ambiguities
    assert ambiguity.sensitivity == "high"
    assert ambiguity.tasks == ["accuracy"]
    assert record.launchers[0].script == "eval.py"


def test_readme_and_argparse_defaults_that_disagree_are_an_ambiguity(
    raw_repo, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("no-deps")
    (repo / "README.md").write_text("    python train.py --max-iter 50\n", "utf-8")
    git("commit", "-qam", "readme", cwd=repo)
    record = _plan(repo, claims_file, tmp_path)
    assert [a.id for a in record.ambiguities] == ["accuracy-max-iter"]
    assert record.launchers[1].argv == [
        "python",
        "train.py",
        "--max-iter",
        "50",
        "--seed",
        "{seed}",
    ]


def test_a_claim_no_script_matches_is_unplanned_with_a_reason(raw_repo, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("no-deps")
    (repo / "other.py").write_text('if __name__ == "__main__":\n    print("hello")\n', "utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "other", cwd=repo)
    data = yaml.safe_load(claims_file.read_text("utf-8"))
    data["claims"].append(
        {"id": "bleu", "measured": "BLEU score", "value": 30.0, "direction": "higher"}
    )
    claims_file.write_text(yaml.safe_dump(data), "utf-8")
    record = _plan(repo, claims_file, tmp_path)
    statuses = {c.claim: (c.status, c.reason is not None) for c in record.claims}
    assert statuses == {"accuracy": ("planned", False), "bleu": ("unplanned", True)}
    assert [(f.code, f.path) for f in record.gate.findings] == [("B004", "/claims/1")]
    assert record.gate.passed  # an explicit reason is enough for the gate


def test_the_hinted_command_wins(raw_repo, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("no-deps")
    data = yaml.safe_load(claims_file.read_text("utf-8"))
    data["claims"][0]["hints"] = {"command": "python train.py --max-iter 300"}
    claims_file.write_text(yaml.safe_dump(data), "utf-8")
    record = _plan(repo, claims_file, tmp_path)
    assert record.claims[0].basis == "hint: command"
    assert record.launchers[1].argv == [
        "python",
        "train.py",
        "--max-iter",
        "300",
        "--seed",
        "{seed}",
    ]


def test_an_abbreviated_option_of_the_hint_is_made_small_once(raw_repo, tmp_path: Path) -> None:
    """``--max-it`` is argparse's abbreviation of the script's ``--max-iter``: the smoke run
    passes ``--max-iter 5`` instead of it, not beside it; the scored run keeps the hint."""
    repo, claims_file = raw_repo("no-deps")
    data = yaml.safe_load(claims_file.read_text("utf-8"))
    data["claims"][0]["hints"] = {"command": "python train.py --max-it 300"}
    claims_file.write_text(yaml.safe_dump(data), "utf-8")
    smoke, scored = _plan(repo, claims_file, tmp_path).launchers
    assert scored.argv == ["python", "train.py", "--max-it", "300", "--seed", "{seed}"]
    assert smoke.argv == ["python", "train.py", "--seed", "{seed}", "--max-iter", "5"]


def test_no_claim_planned_stops_the_build_at_the_planner(raw_repo, tmp_path: Path) -> None:
    """Every claim unplanned (each a B004 warning): the gate fails with B049 and the build
    ends at the Planner with a report, never in the Packager with an empty manifest."""
    repo, claims_file = raw_repo("no-deps")
    (repo / "other.py").write_text('if __name__ == "__main__":\n    print("hello")\n', "utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "other", cwd=repo)
    claims_file.write_text(
        yaml.safe_dump(
            {
                "claims_version": "1.0",
                "paper": {"title": "P"},
                "claims": [
                    {"id": "bleu", "measured": "BLEU score", "value": 30.0, "direction": "higher"}
                ],
            }
        ),
        "utf-8",
    )
    record = _plan(repo, claims_file, tmp_path)
    assert [c.status for c in record.claims] == ["unplanned"]
    assert [(f.code, f.severity) for f in record.gate.findings] == [
        ("B004", "warning"),
        ("B049", "error"),
    ]
    assert not record.gate.passed
    assert record.launchers == []


def _commit_at(repo: Path, date: str, message: str, *, written: str | None = None) -> None:
    """Commit at committer date ``date``, authored at ``written`` (else the same date)."""
    git("add", "-A", cwd=repo)
    subprocess.run(
        ["git", "commit", "-q", "-m", message],
        cwd=repo,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
            "GIT_AUTHOR_NAME": "Research Author",
            "GIT_AUTHOR_EMAIL": "author@example.org",
            "GIT_COMMITTER_NAME": "Research Author",
            "GIT_COMMITTER_EMAIL": "author@example.org",
            "GIT_AUTHOR_DATE": written or date,
            "GIT_COMMITTER_DATE": date,
        },
        check=True,
        capture_output=True,
    )


def test_the_codes_era_is_its_last_change_not_the_repositorys_last_commit(
    raw_repo, tmp_path: Path
) -> None:
    """Years after the code, a README edit is the last commit: the era is the code's."""
    repo, claims_file = raw_repo("no-deps")  # train.py committed at the fixtures' date
    (repo / "README.md").write_text("Cite us.\n", "utf-8")
    (repo / "notes.py").write_text("import json\n", "utf-8")  # reached by no launcher
    _commit_at(repo, "2026-03-01T09:00:00+00:00", "README: citation")
    record = _plan(repo, claims_file, tmp_path)
    assert record.code_date is not None
    assert record.code_date.startswith(COMMIT_DATE[:10])


def test_the_codes_era_is_when_it_was_written_not_when_it_was_published(
    raw_repo, tmp_path: Path
) -> None:
    """Code written in April and published in October as one squashed commit (or rebased):
    its libraries are April's, so the era is the author date, not the committer date; of
    several changes the newest written one counts, whatever order they were applied in."""
    repo, claims_file = raw_repo("no-deps")
    (repo / "train.py").write_text((repo / "train.py").read_text("utf-8") + "\n", "utf-8")
    _commit_at(
        repo, "2025-10-20T22:05:36-07:00", "Initial commit", written="2025-04-12T07:42:36-07:00"
    )
    (repo / "train.py").write_text((repo / "train.py").read_text("utf-8") + "\n", "utf-8")
    _commit_at(
        repo, "2025-10-21T00:00:00+00:00", "an old patch", written="2025-01-01T00:00:00+00:00"
    )
    (repo / "README.md").write_text("Cite us.\n", "utf-8")
    _commit_at(repo, "2026-03-01T09:00:00+00:00", "README: citation")
    record = _plan(repo, claims_file, tmp_path)
    assert record.code_date == "2025-04-12T07:42:36-07:00"


def test_pins_set_after_the_code_move_its_era_to_theirs(raw_repo, tmp_path: Path) -> None:
    """A requirements file pinned two years after the code (TensorFlow 1.15 beside 2018 code):
    an era bound at the code's date would exclude the repository's own pins, so the era is
    the newest change to the code or to a file that declares dependencies."""
    repo, claims_file = raw_repo("no-deps")  # train.py committed at the fixtures' date
    (repo / "requirements.txt").write_text("numpy==1.19.5\n", "utf-8")
    _commit_at(repo, "2026-02-01T09:00:00+00:00", "pin the requirements")
    (repo / "README.md").write_text("Cite us.\n", "utf-8")
    _commit_at(repo, "2026-03-01T09:00:00+00:00", "README: citation")
    record = _plan(repo, claims_file, tmp_path)
    assert record.code_date is not None
    assert record.code_date.startswith("2026-02-01")


def test_a_code_date_after_the_commit_is_the_commits_and_pathspec_magic_is_a_name(
    raw_repo, tmp_path: Path
) -> None:
    """Committer dates are the stranger's to write: one later than the checked-out commit's
    is capped by it; a file named like a git pathspec (``:(exclude)...``) is only a name."""
    repo, claims_file = raw_repo("no-deps")
    (repo / "train.py").write_text((repo / "train.py").read_text("utf-8") + "\n", "utf-8")
    _commit_at(repo, "2031-01-01T00:00:00+00:00", "touch from the future")
    (repo / "README.md").write_text("x\n", "utf-8")
    _commit_at(repo, "2025-01-01T00:00:00+00:00", "readme")
    record = _plan(repo, claims_file, tmp_path)
    assert record.code_date is not None
    assert record.code_date.startswith("2025-01-01")  # the commit's own date, not 2031
    root = tmp_path / "checkout"
    (root / ":(exclude)train.py").write_text("", "utf-8")
    assert code_date(root, [":(exclude)train.py"], "2025-01-01T00:00:00+00:00") is None
    assert code_date(tmp_path / "not-a-repository", ["train.py"], COMMIT_DATE) is None
    assert code_date(root, [], COMMIT_DATE) is None
