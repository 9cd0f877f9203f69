"""The fixture ``self-named`` phase by phase: its code imports the repository as
``digits`` (its authors' checkout folder), and its script ``training/example.py`` sits
beside ``training/training.py``, a module named like the package ``training/``.

The Planner puts the root on ``PYTHONPATH``; the smoke run stops with ``No module named
'digits'``; the fix rule ``self-import`` adds ``digits/__init__.py``, a package whose modules
are the root's, recorded as a convenience change; the script then runs as written, its code
untouched. (Not built end to end: test_build_e2e builds the fixtures whose phases have no
test of their own.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from build_fixtures import RepoFactory, git

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.agent.reproducer import reproduce
from reprobridge_sdk.model.build import PlanRecord
from reprobridge_sdk.model.claims import Claims

ZERO = "0" * 64


def _planned(raw_repo: RepoFactory, tmp_path: Path) -> tuple[Claims, PlanRecord, Path]:
    repo, claims_file = raw_repo("self-named")
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    return claims, plan(claims, intake, root=code, inputs_digest=ZERO), code


def test_the_planner_puts_the_root_on_pythonpath_and_digits_is_no_requirement(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    _, planned, _ = _planned(raw_repo, tmp_path)
    assert planned.gate.passed
    for launcher in planned.launchers:
        assert (launcher.workdir, launcher.script) == (".", "training/example.py")
        assert launcher.env["PYTHONPATH"] == "."
    assert {use.module for use in planned.imports} == {"matplotlib", "numpy", "scipy", "sklearn"}


@pytest.mark.slow
def test_the_reproducer_makes_the_repository_importable_under_its_name(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    claims, planned, code = _planned(raw_repo, tmp_path)
    before = {p.relative_to(code): p.read_bytes() for p in code.rglob("*.py")}
    recorded: list[tuple[str, str, str | None]] = []

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        git("add", "-A", cwd=code)
        git("commit", "-qm", fix.summary, cwd=code)
        recorded.append((fix.rule, fix.kind, failure.message if failure else None))
        return f"change-{len(recorded)}"

    result = reproduce(claims, planned, code, fixture_python, inputs_digest=ZERO, record=record)
    assert result.gate.passed, result.gate.findings
    assert recorded == [("self-import", "convenience", "No module named 'digits'")]
    assert [a.exit_status for a in result.attempts][:2] == [1, 0]
    assert git("show", "--name-only", "--format=", "HEAD", cwd=code) == "digits/__init__.py"
    assert all((code / rel).read_bytes() == text for rel, text in before.items())
