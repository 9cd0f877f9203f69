"""The fixture ``own-metadata`` phase by phase: its package reads its own distribution's
metadata on import, which a package on ``PYTHONPATH`` does not have.

The Planner puts the root on ``PYTHONPATH``; the smoke run stops with
``PackageNotFoundError``; the fix rule ``own-distribution-metadata`` writes the metadata-only
``.dist-info`` beside the package, recorded as a convenience change; the script then runs
under the shared environment's real interpreter, and ``importlib.metadata`` finds the
distribution. (Not built end to end: test_build_e2e builds the fixtures whose phases have no
test of their own.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from build_fixtures import RepoFactory, git

from reprobridge_sdk.agent._smoke import run_launcher
from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.fixes import Failure, Fix, classify, propose
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.own_distribution import own_distribution
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.agent.reproducer import _apply, _undo, reproduce
from reprobridge_sdk.io.safefs import UnsafeFileError
from reprobridge_sdk.model.build import BuildFinding, PlanRecord
from reprobridge_sdk.model.claims import Claims

ZERO = "0" * 64
DIST_INFO = "digitlib-0.3.1.dist-info"
METADATA = "Metadata-Version: 2.1\nName: digitlib\nVersion: 0.3.1\n"


def _planned(raw_repo: RepoFactory, tmp_path: Path) -> tuple[Claims, PlanRecord, Path]:
    repo, claims_file = raw_repo("own-metadata")
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    return claims, plan(claims, intake, root=code, inputs_digest=ZERO), code


def test_the_planner_puts_the_package_on_pythonpath_and_the_metadata_is_read(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    _, planned, code = _planned(raw_repo, tmp_path)
    assert planned.gate.passed
    for launcher in planned.launchers:
        assert (launcher.workdir, launcher.env["PYTHONPATH"]) == (".", ".")
    [change] = planned.conveniences  # the PYTHONPATH convenience, without a patch
    assert (change.kind, change.patch) == ("convenience", None)
    distribution, findings = own_distribution(code)
    assert findings == []
    assert distribution is not None
    assert (distribution.name, distribution.version, distribution.version_source) == (
        "digitlib",
        "0.3.1",
        "pyproject.toml [project] version",
    )
    assert not (code / DIST_INFO).exists()  # nothing is written before a run calls for it


def test_a_new_file_of_a_fix_is_undone_with_the_folders_it_made(tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "pkg").mkdir(parents=True)
    fix = Fix("r", "convenience", "s", files={f"pkg/{DIST_INFO}/METADATA": METADATA})
    before = _apply(fix, code)
    assert before.texts == {f"pkg/{DIST_INFO}/METADATA": None}
    assert before.folders == [f"pkg/{DIST_INFO}"]  # pkg/ was there
    assert (code / "pkg" / DIST_INFO / "METADATA").read_text("utf-8") == METADATA
    _undo(before, code)
    assert sorted(p.name for p in code.rglob("*")) == ["pkg"]


def test_a_new_file_of_a_fix_is_never_written_through_a_link_out(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (code / "src").symlink_to(outside)
    fix = Fix("r", "convenience", "s", files={f"src/{DIST_INFO}/METADATA": METADATA})
    with pytest.raises(UnsafeFileError):
        _apply(fix, code)
    assert list(outside.iterdir()) == []


@pytest.mark.slow
def test_the_smoke_failure_maps_to_the_fix_and_the_script_then_runs(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    _, planned, code = _planned(raw_repo, tmp_path)
    smoke = planned.launchers[0]
    before = run_launcher(smoke, code, fixture_python, seed=0)
    assert before.exit_status == 1
    failure = classify(before.stderr, code)
    assert failure is not None
    assert (failure.type, failure.message, failure.file) == (
        "PackageNotFoundError",
        "No package metadata was found for digitlib",
        "digitlib/__init__.py",
    )
    fix = propose(failure, code, smoke.script)
    assert fix is not None
    assert (fix.rule, fix.kind, fix.files) == (
        "own-distribution-metadata",
        "convenience",
        {f"{DIST_INFO}/METADATA": METADATA},
    )
    _apply(fix, code)
    after = run_launcher(planned.launchers[1], code, fixture_python, seed=0)
    assert after.exit_status == 0, after.stderr
    assert after.stdout.splitlines()[0] == "digitlib 0.3.1"
    assert "test accuracy: " in after.stdout
    # importlib.metadata sees a distribution, not only a version
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    probe = subprocess.run(
        [
            str(fixture_python),
            "-c",
            "import importlib.metadata as m; d = m.distribution('digitlib'); "
            "print(d.version, d.metadata['Name'], m.version('DigitLib'))",
        ],
        cwd=code,
        env={**env, "PYTHONPATH": "."},
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.stdout.split() == ["0.3.1", "digitlib", "0.3.1"], probe.stderr


@pytest.mark.slow
def test_the_reproducer_keeps_and_records_the_fix(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    claims, planned, code = _planned(raw_repo, tmp_path)
    recorded: list[tuple[str, str, str | None, list[str]]] = []

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        git("add", "-A", cwd=code)
        git("commit", "-qm", fix.summary, cwd=code)
        recorded.append((fix.rule, fix.kind, failure.type if failure else None, tasks))
        return f"change-{len(recorded)}"

    result = reproduce(claims, planned, code, fixture_python, inputs_digest=ZERO, record=record)
    assert result.gate.passed, result.gate.findings
    assert recorded == [
        ("own-distribution-metadata", "convenience", "PackageNotFoundError", ["accuracy"])
    ]
    [fixed] = result.fixes
    assert (fixed.rule, fixed.kind, fixed.files, fixed.change) == (
        "own-distribution-metadata",
        "convenience",
        [f"{DIST_INFO}/METADATA"],
        "change-1",
    )
    assert "version from pyproject.toml [project] version" in fixed.summary
    assert [a.exit_status for a in result.attempts][:2] == [1, 0]
    # the recorded change holds the metadata file and nothing else
    assert git("show", "--name-only", "--format=", "HEAD", cwd=code) == f"{DIST_INFO}/METADATA"
    assert (code / DIST_INFO / "METADATA").read_text("utf-8") == METADATA


@pytest.mark.slow
def test_a_place_git_would_not_record_is_b053_and_the_smoke_run_stays_failed(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    claims, planned, code = _planned(raw_repo, tmp_path)
    (code / ".gitignore").write_text("*.dist-info/\n", "utf-8")
    git("add", "-A", cwd=code)
    git("commit", "-qm", "ignore installed metadata", cwd=code)

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        raise AssertionError(f"nothing is recorded, yet {fix.rule} was")

    result = reproduce(claims, planned, code, fixture_python, inputs_digest=ZERO, record=record)
    assert not result.gate.passed
    assert [(f.code, f.severity) for f in result.gate.findings] == [
        ("B053", "warning"),
        ("B007", "error"),
    ]
    assert result.gate.findings[0].message.startswith(f"{DIST_INFO} is not written: ")
    assert result.fixes == [] and not (code / DIST_INFO).exists()


@pytest.mark.slow
def test_a_refused_own_metadata_fix_rebuilds_no_era_environment(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    # The era environments are built by the pipeline's callback (a real build resolves and
    # installs from the index, minutes per environment); here the callback counts the calls
    # the Reproducer makes, which is what this rule is about.
    claims, planned, code = _planned(raw_repo, tmp_path)
    (code / ".gitignore").write_text("*.dist-info/\n", "utf-8")
    git("add", "-A", cwd=code)
    git("commit", "-qm", "ignore installed metadata", cwd=code)
    asked: list[str] = []

    def rebuild(failure: Failure) -> tuple[Path | None, list[BuildFinding]]:
        asked.append(failure.signature)
        return None, []

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        raise AssertionError(f"nothing is recorded, yet {fix.rule} was")

    result = reproduce(
        claims, planned, code, fixture_python, inputs_digest=ZERO, record=record, rebuild=rebuild
    )
    assert asked == []
    assert [f.code for f in result.gate.findings] == ["B053", "B007"]


@pytest.mark.slow
def test_another_distribution_missing_still_tries_the_era_environment(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    # Hostile: the same error for a distribution that is not the repository's (no refusal,
    # B052 or B053, is about it), so an environment of another era may well provide it.
    claims, planned, code = _planned(raw_repo, tmp_path)
    init = code / "digitlib" / "__init__.py"
    text = init.read_text("utf-8")
    assert "version(__name__)" in text
    init.write_text(text.replace("version(__name__)", 'version("not-this-repo")'), "utf-8")
    git("commit", "-qam", "read another distribution", cwd=code)
    asked: list[str] = []

    def rebuild(failure: Failure) -> tuple[Path | None, list[BuildFinding]]:
        asked.append(failure.type)
        return None, []

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        raise AssertionError(f"nothing is recorded, yet {fix.rule} was")

    result = reproduce(
        claims, planned, code, fixture_python, inputs_digest=ZERO, record=record, rebuild=rebuild
    )
    assert asked == ["PackageNotFoundError"]
    assert [f.code for f in result.gate.findings] == ["B007"]
