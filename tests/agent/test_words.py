"""An artifact whose words are true: landmarks every run reaches, one seed one value, and
generated documents that name only real commands and paths.

The fast tests work on a copy of the bundled example and on the Distiller's and the
Packager's functions; the Reproducer's same-seed check runs real smoke runs in the shared
fixture environment (slow). The end-to-end builds of the ``seed-line`` and ``hash-order``
fixtures are in ``test_build_e2e.py``, which shares one build per fixture.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from generated_docs import named_commands, named_paths, problems

from reprobridge_sdk.agent._determinism import SETTINGS
from reprobridge_sdk.agent.distiller import reached_by_all, stable_lines
from reprobridge_sdk.agent.packager import README_MARKER, finalize
from reprobridge_sdk.api import load
from reprobridge_sdk.model import Landmark
from reprobridge_sdk.model.build import ClaimPlan, Gate, PlanRecord
from reprobridge_sdk.validation import validate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
ZERO = "0" * 64


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "digits-logreg"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    return target


# ------------------------------------------------------------------------------ landmarks


SEED_1 = "loading digits\nearly stop: patience exhausted\ntest accuracy: 0.9778\n"
SEED_2 = "loading digits\ntest accuracy: 0.9422\n"


def test_a_line_some_runs_print_is_never_a_landmark() -> None:
    # the old choice, from the probe's log alone, took the line seed 2 never prints
    assert stable_lines([SEED_1]) == ["loading digits", "early stop: patience exhausted"]
    assert stable_lines([SEED_1, SEED_2, SEED_1]) == ["loading digits"]
    landmarks = [
        Landmark(id="line-1", pattern="^loading digits"),
        Landmark(id="line-2", pattern="^early stop: patience exhausted"),
        Landmark(id="result-1", pattern="^test accuracy: "),
    ]
    kept = reached_by_all(landmarks, [SEED_1, SEED_2])
    assert [lm.id for lm in kept] == ["line-1", "result-1"]


def test_a_landmark_is_searched_line_by_line_as_the_runner_does() -> None:
    # a stripped line anchored at ^ does not match its indented original: not kept
    indented = "  warming up\ntest accuracy: 0.9\n"
    assert reached_by_all([Landmark(id="line-1", pattern="^warming up")], [indented]) == []
    # a pattern outside the dialect is never kept (X004 is validation's)
    assert reached_by_all([Landmark(id="x", pattern="(?=a)a")], ["a\n"]) == []


def _scored_with_sample(art_dir: Path) -> int:
    art = load(art_dir)
    return next(i for i, item in enumerate(art.manifest.launchers) if item.samples)


def test_validate_strict_fails_on_a_landmark_no_sample_reaches(artifact: Path) -> None:
    index = _scored_with_sample(artifact)
    art = load(artifact)
    launcher = art.manifest.launchers[index]
    assert validate(artifact, strict=True).findings == []
    position = len(launcher.landmarks)
    launcher.landmarks = [
        *launcher.landmarks,
        Landmark(id="early-stop", pattern="^early stop: patience exhausted"),
    ]
    art.save()
    result = validate(artifact, strict=True)
    assert [(f.code, f.path) for f in result.findings] == [
        ("R034", f"/launchers/{index}/landmarks/{position}/pattern")
    ]
    assert not result.ok
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", "--strict", str(artifact)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "R034" in done.stdout + done.stderr
    # without --strict a warning does not fail validation
    lenient = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", str(artifact)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert lenient.returncode == 0


def test_a_landmark_a_sample_reaches_is_not_r034(artifact: Path) -> None:
    index = _scored_with_sample(artifact)
    art = load(artifact)
    launcher = art.manifest.launchers[index]
    sample = launcher.samples[0]
    assert sample.log is not None
    first = (artifact / sample.log).read_text("utf-8").splitlines()[0]
    launcher.landmarks = [Landmark(id="first-line", pattern=first[:10].replace("[", r"\["))]
    art.save()
    assert [f.code for f in validate(artifact, strict=True).findings] == []


def test_a_launcher_without_sample_logs_is_not_checked(artifact: Path) -> None:
    art = load(artifact)
    launcher = art.manifest.launchers[0]
    launcher.samples = []  # no shipped log: nothing to check the landmark against
    launcher.landmarks = [Landmark(id="never", pattern="^never printed")]
    art.save()
    assert "R034" not in {f.code for f in validate(artifact, strict=True).findings}


# ---------------------------------------------------------------------- generated documents


def test_the_readme_names_only_real_commands_and_existing_paths(artifact: Path) -> None:
    """The example's guide was written by a person: only the README section is generated
    here (the builds of test_build_e2e check the generated guide too)."""
    art = load(artifact)
    plan = PlanRecord(inputs_digest=ZERO, seconds=0, gate=Gate(passed=True))
    findings = finalize(art, plan, list(art.manifest.guide.discrepancies), [("a", "1", "1", "yes")])
    assert findings == []
    section = (artifact / "README.md").read_text("utf-8").split(README_MARKER, 1)[1]
    assert ("env", "create") in named_commands(section)
    assert ("env", "build") not in named_commands(section)
    # the example holds no patches/ folder: the README does not name one
    assert not (artifact / "patches").exists()
    assert "patches/" not in named_paths(section)
    assert problems(artifact, guide=False) == []


def test_a_patches_folder_is_named_when_the_artifact_has_one(artifact: Path) -> None:
    (artifact / "patches").mkdir()
    (artifact / "patches" / "0001-fix.patch").write_text("# a fix\n", "utf-8")
    art = load(artifact)
    plan = PlanRecord(inputs_digest=ZERO, seconds=0, gate=Gate(passed=True))
    finalize(art, plan, list(art.manifest.guide.discrepancies), [("a", "1", "1", "yes")])
    section = (artifact / "README.md").read_text("utf-8").split(README_MARKER, 1)[1]
    assert "patches/" in named_paths(section)
    assert problems(artifact, guide=False) == []


def test_the_docs_check_catches_a_missing_command_and_folder(artifact: Path) -> None:
    """Hostile: the words the old README used fail the check."""
    art = load(artifact)
    plan = PlanRecord(inputs_digest=ZERO, seconds=0, gate=Gate(passed=True))
    finalize(art, plan, list(art.manifest.guide.discrepancies), [("a", "1", "1", "yes")])
    readme = artifact / "README.md"
    readme.write_text(
        readme.read_text("utf-8")
        + "\nEvery change is a patch under `patches/`.\n\n```sh\nreprobridge env build .\n```\n",
        "utf-8",
    )
    assert sorted(problems(artifact, guide=False)) == [
        ("command", "reprobridge env build"),
        ("path", "patches/"),
    ]


def _endless_plan(launcher: str) -> PlanRecord:
    """A plan whose claim the Reproducer un-planned: its scored launcher never ends (B061)."""
    reason = (
        "train.py never ends on its own: its loop 'while True:' at train.py:6 has no break, "
        "return, raise or exit, and its smoke run was stopped at its budget after 3 s (B061)"
    )
    endless = ClaimPlan(
        claim="logreg-accuracy", status="unplanned", basis="none", scored=launcher, reason=reason
    )
    return PlanRecord(inputs_digest=ZERO, seconds=0, gate=Gate(passed=True), claims=[endless])


def _run_lines(artifact: Path) -> list[str]:
    section = (artifact / "README.md").read_text("utf-8").split(README_MARKER, 1)[1]
    return [line for line in section.splitlines() if line.startswith("reprobridge run")]


def test_a_launcher_that_never_ends_is_not_named_in_a_plain_scored_run(artifact: Path) -> None:
    """Hostile: the scored run of a script that never ends on its own would run to its
    timeout. The README runs the other scored launchers by name, and names the endless one
    with its timeout and what a reader does: stop it and read the last value of its log."""
    art = load(artifact)
    scored = next(item for item in art.manifest.launchers if item.id == "scored")
    art.manifest.launchers.append(scored.model_copy(update={"id": "train-scored"}))
    art.save()
    finalize(load(artifact), _endless_plan("train-scored"), [], [("a", "1", "-", "-")])
    lines = _run_lines(artifact)
    assert not any("--scope scored" in line for line in lines)
    assert [line.split("#")[0].split() for line in lines] == [
        ["reprobridge", "run", ".", "--scope", "smoke"],
        ["reprobridge", "run", ".", "scored"],
        ["reprobridge", "run", ".", "train-scored", "--timeout", "600"],
    ]
    section = (artifact / "README.md").read_text("utf-8").split(README_MARKER, 1)[1]
    assert "About `train-scored`: train.py never ends on its own" in section
    assert "train.py:6" in section
    assert "log.txt" in section
    assert problems(artifact, guide=False) == []
    # every command the README names parses as the CLI reads it
    for line in lines:
        words = line.split("#")[0].split()[1:]
        done = subprocess.run(
            [sys.executable, "-m", "reprobridge_sdk", *words, "--dry-run"],
            cwd=artifact,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode != 2, done.stderr  # a usage error is a command that is not true


def test_an_only_launcher_that_never_ends_has_no_plain_scored_run(artifact: Path) -> None:
    finalize(load(artifact), _endless_plan("scored"), [], [("a", "1", "-", "-")])
    assert [line.split("#")[0].split()[3:] for line in _run_lines(artifact)] == [
        ["--scope", "smoke"],
        ["scored", "--timeout", "600"],
    ]
    assert problems(artifact, guide=False) == []


# ------------------------------------------------------------------------------ same seed


def test_the_settings_tried_name_hash_randomisation_first() -> None:
    assert SETTINGS[0] == ("hash randomisation", {"PYTHONHASHSEED": "0"})
    assert SETTINGS[1][1]["OMP_NUM_THREADS"] == "1"


def _smoke(raw_repo, tmp_path: Path, python: Path, name: str):  # type: ignore[no-untyped-def]
    """The Reproducer on fixture ``name`` in the shared environment (real smoke runs)."""
    from reprobridge_sdk.agent.claims import load_claims
    from reprobridge_sdk.agent.intake import checkout, inventory
    from reprobridge_sdk.agent.planner import plan
    from reprobridge_sdk.agent.reproducer import reproduce

    repo, claims_file = raw_repo(name)
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)

    def record(*_args: object) -> str:
        raise AssertionError("no change to the code is recorded for a same-seed check")

    return reproduce(claims, planned, code, python, inputs_digest=ZERO, record=record)


def test_a_time_on_the_line_of_the_value_is_not_the_value(
    tmp_path: Path, fixture_python: Path
) -> None:
    """GCN prints ``accuracy= 0.71300 time= 0.01578``: two runs with one seed agree on the
    number after the label and differ in the time. That is no B046, and no setting is tried;
    a value that does differ after its label still is (the hostile half)."""
    from build_fixtures import FIXTURES, Fixture, write_repo

    base = FIXTURES["unseeded-generator"]
    for name, line, codes in (
        (
            "time-on-the-line",
            'print("test accuracy: %.6f time= %.6f" % (score, random.random()))\n',
            [],
        ),
        (
            "value-on-the-line",
            'print("test accuracy: %.6f time= 1.0" % (score + random.random()))\n',
            ["B046"],
        ),
    ):
        text = base.files["train.py"].split("jitter =")[0]
        text += "score = model.score(X_test / 16.0, y_test)\n" + line
        fixture = Fixture(name, {"train.py": text}, base.claims, base.defects, end_to_end=False)
        repo, claims_file = write_repo(tmp_path / name / "raw", fixture)
        result = _smoke(
            lambda _name, r=repo, c=claims_file: (r, c),
            tmp_path / name,
            fixture_python,
            name,
        )
        assert result.gate.passed
        assert [f.code for f in result.gate.findings] == codes, name
        assert len(result.attempts) == (2 if not codes else 2 + 2 * len(SETTINGS))


@pytest.mark.slow
def test_hash_order_is_found_and_fixed_by_pythonhashseed(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    from reprobridge_sdk.agent._determinism import same_seed_decision_id

    result = _smoke(raw_repo, tmp_path, fixture_python, "hash-order")
    assert result.gate.passed, result.gate.findings
    assert [f.code for f in result.gate.findings] == ["B045"]
    assert "hash randomisation" in result.gate.findings[0].message
    assert {item.env.get("PYTHONHASHSEED") for item in result.launchers} == {"0"}
    [decision] = result.decisions
    assert decision.id == same_seed_decision_id("train.py")
    assert decision.tasks == ["accuracy"]
    assert result.fixes == []  # an environment setting, not a patch
    # the smoke run, the run again that differed, then two runs that agreed
    assert [a.exit_status for a in result.attempts] == [0, 0, 0, 0]


@pytest.mark.slow
def test_an_unseeded_generator_is_b046_and_nothing_is_changed(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    result = _smoke(raw_repo, tmp_path, fixture_python, "unseeded-generator")
    assert result.gate.passed  # a warning: the references measure the noise
    assert [f.code for f in result.gate.findings] == ["B046"]
    assert result.decisions == []
    tried = {key for _, variables in SETTINGS for key in variables}
    assert all(not tried & set(item.env) for item in result.launchers)
    # the smoke run, the run again, then two runs per setting tried
    assert len(result.attempts) == 2 + 2 * len(SETTINGS)
