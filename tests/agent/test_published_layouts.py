"""Repositories as they are published: a README that cds into a folder, a side script
with an uninstallable import, the repository's own package, a build tool only setup.py
imports. Each fixture stopped the agent before; here each phase that stopped is checked,
and test_build_e2e builds each into a valid artifact."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_fixtures import UNINSTALLABLE
from sandbox_support import SANDBOX_PROBLEM, SKIP_SANDBOX

from reprobridge_sdk.agent._smoke import run_launcher
from reprobridge_sdk.agent.builder import declared_requirements
from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.packager import manifest_launcher
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.model import Launcher
from reprobridge_sdk.model.build import IntakeRecord, LauncherPlan, PlanRecord

ZERO = "0" * 64
SHARED = ["matplotlib", "numpy", "scikit-learn", "scipy"]


def _phases(raw_repo, tmp_path: Path, name: str) -> tuple[IntakeRecord, PlanRecord, Path]:  # type: ignore[no-untyped-def]
    repo, claims_file = raw_repo(name)
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    intake = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    return intake, plan(claims, intake, root=dest, inputs_digest=ZERO), dest


def test_a_hint_into_the_folder_the_readme_cds_into(raw_repo, tmp_path: Path) -> None:
    intake, planned, _ = _phases(raw_repo, tmp_path, "cd-subfolder")
    assert intake.gate.passed and intake.gate.findings == []
    [readme] = intake.commands
    assert (readme.source, readme.workdir, readme.script) == ("README.md", "gcn", "gcn/train.py")
    smoke, scored = planned.launchers
    assert smoke.argv == ["python", "train.py", "--seed", "{seed}", "--max-iter", "5"]
    assert (scored.workdir, scored.script) == ("gcn", "gcn/train.py")
    assert scored.argv == ["python", "train.py", "--seed", "{seed}"]
    assert planned.claims[0].basis == "hint: command (the README runs it in gcn/)"
    assert planned.gate.passed


def test_a_hint_that_activates_and_installs_first_runs_the_script_alone(
    raw_repo, tmp_path: Path
) -> None:
    intake, planned, _ = _phases(raw_repo, tmp_path, "setup-hint")
    assert intake.gate.passed and intake.gate.findings == []
    assert [(c.source, c.shell, c.argv) for c in intake.commands] == [
        ("README.md", False, ["python", "train.py"])
    ]
    _, scored = planned.launchers
    assert (scored.workdir, scored.script, scored.shell) == (".", "train.py", False)
    assert scored.argv == ["python", "train.py", "--seed", "{seed}"]
    assert planned.gate.passed


def test_a_hint_that_loops_over_seeds_is_one_launcher_with_the_builds_seeds(
    raw_repo, tmp_path: Path
) -> None:
    intake, planned, _ = _phases(raw_repo, tmp_path, "seed-loop")
    assert intake.gate.passed and intake.gate.findings == []
    assert [(c.source, c.shell, c.argv) for c in intake.commands] == [
        ("README.md", False, ["python", "train.py", "--seed", "0"])
    ]
    _, scored = planned.launchers
    assert (scored.script, scored.shell) == ("train.py", False)
    assert scored.argv == ["python", "train.py", "--seed", "{seed}"]
    assert scored.seed_flag == "--seed"
    assert planned.gate.passed


def test_an_unusable_hint_is_a_warning_and_the_claim_is_planned_without_it(
    raw_repo, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("cd-subfolder")
    text = claims_file.read_text("utf-8").replace("python train.py", "cd /tmp && python x.py")
    claims_file.write_text(text, "utf-8")
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    intake = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    assert intake.gate.passed
    assert [(f.code, f.severity, f.path) for f in intake.gate.findings] == [
        ("B022", "warning", "/claims/0/hints/command")
    ]
    planned = plan(claims, intake, root=dest, inputs_digest=ZERO)
    assert [(c.status, c.basis) for c in planned.claims] == [
        ("planned", "printed text matches the claim's label")
    ]
    assert planned.launchers[1].workdir == "gcn"  # the README's folder


def test_a_side_scripts_uninstallable_import_is_no_requirement(raw_repo, tmp_path: Path) -> None:
    intake, planned, _ = _phases(raw_repo, tmp_path, "side-script")
    assert UNINSTALLABLE in {use.module for use in intake.imports}  # the inventory sees it
    assert [use.module for use in planned.imports] == ["matplotlib", "numpy", "scipy", "sklearn"]
    declared = declared_requirements(intake, planned)
    assert declared.requirements == SHARED
    assert UNINSTALLABLE not in " ".join(r.why for r in declared.replaced)


def test_the_repositorys_own_package_is_put_on_pythonpath_as_a_convenience(
    raw_repo, tmp_path: Path
) -> None:
    _, planned, _ = _phases(raw_repo, tmp_path, "own-package")
    for launcher in planned.launchers:
        assert (launcher.workdir, launcher.script) == (".", "scripts/train.py")
        assert launcher.env == {"MPLBACKEND": "Agg", "PYTHONPATH": "."}
    [change] = planned.conveniences
    assert (change.kind, change.files, change.patch, change.tasks) == (
        "convenience",
        [],
        None,
        ["accuracy"],
    )
    assert "digitlib" in change.rationale
    assert {use.module for use in planned.imports} == {"matplotlib", "numpy", "scipy", "sklearn"}


@pytest.mark.slow
def test_the_own_package_launcher_runs_in_a_subfolder_too(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    _, planned, dest = _phases(raw_repo, tmp_path, "own-package")
    smoke = planned.launchers[0]
    outcome = run_launcher(smoke, dest, fixture_python, seed=0)
    assert outcome.exit_status == 0, outcome.stderr
    assert "test accuracy: " in outcome.stdout
    # the same script run from its own folder: the root is '..' from there
    moved = smoke.model_copy(
        update={"workdir": "scripts", "argv": ["python", "train.py", "--seed", "{seed}"]}
    )
    bare = run_launcher(moved, dest, fixture_python, seed=0)
    assert bare.exit_status != 0 and "ModuleNotFoundError" in bare.stderr


def test_a_build_tool_only_setup_py_imports_is_no_requirement(raw_repo, tmp_path: Path) -> None:
    intake, planned, _ = _phases(raw_repo, tmp_path, "setup-py")
    assert "setuptools" in {use.module for use in intake.imports}  # setup.py imports it
    [setup] = [f for f in intake.dependency_files if f.kind == "setup.py"]
    assert setup.requirements == ["numpy", "scipy", "scikit-learn", "matplotlib"]
    declared = declared_requirements(intake, planned)
    assert declared.requirements == SHARED
    assert declared.replaced == []  # every line is setup.py's own
    # without a plan (every import of the repository) it is no requirement either
    assert declared_requirements(intake).requirements == SHARED


@pytest.mark.slow
def test_a_command_only_a_shell_can_run_is_a_shell_launcher_that_runs(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    repo, claims_file = raw_repo("no-deps")
    text = claims_file.read_text("utf-8").replace(
        "label: test accuracy",
        "label: test accuracy\n    command: python train.py | tee run.log | cat",
    )
    claims_file.write_text(text, "utf-8")
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    intake = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=dest, inputs_digest=ZERO)
    smoke, scored = planned.launchers
    for item in (smoke, scored):
        assert (item.shell, item.argv, item.workdir, item.seed_flag, item.seeds) == (
            True,
            ["python train.py | tee run.log | cat"],
            ".",
            None,
            [],
        )
        launcher = Launcher.model_validate(manifest_launcher(item))
        assert (launcher.shell, launcher.argv) == (True, ["python train.py | tee run.log | cat"])
    outcome = run_launcher(smoke, dest, fixture_python)
    assert outcome.exit_status == 0, outcome.stderr
    assert "test accuracy: " in outcome.stdout
    assert (dest / "run.log").read_text("utf-8") == outcome.stdout


@pytest.mark.parametrize("sandbox", [False, True])
def test_a_python_the_script_starts_itself_is_the_environments(
    tmp_path: Path, fixture_python: Path, sandbox: bool
) -> None:
    """A driver script that runs ``python train.py`` through ``os.system`` and ignores its
    status (GMNN's ``run_cora.py``) runs the environment's Python, as the runner does: with
    another ``python`` first on PATH the inner runs failed and the smoke run passed at once,
    then the clean-room check ran the real training past the build's time limit."""
    if sandbox and SKIP_SANDBOX:
        pytest.skip(f"the sandbox cannot run here: {SANDBOX_PROBLEM}")
    code = tmp_path / "code"
    code.mkdir()
    (code / "run_all.py").write_text("import os\nstatus = os.system('python inner.py')\n", "utf-8")
    (code / "inner.py").write_text("import sys\nprint('inner prefix:', sys.prefix)\n", "utf-8")
    launcher = LauncherPlan(
        id="all-smoke",
        scope="smoke",
        script="run_all.py",
        argv=["python", "run_all.py"],
        workdir=".",
    )
    outcome = run_launcher(launcher, code, fixture_python, sandbox=sandbox)
    assert outcome.exit_status == 0, outcome.stderr
    prefix = outcome.stdout.strip().removeprefix("inner prefix: ")
    assert Path(prefix) == fixture_python.parent.parent
