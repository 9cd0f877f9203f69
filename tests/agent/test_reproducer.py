"""Reproducer: smoke runs of real fixtures in the shared environment, fixes kept or undone."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_fixtures import git

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.agent.reproducer import reproduce
from reprobridge_sdk.model.build import LauncherPlan, ReproducerRecord

ZERO = "0" * 64

pytestmark = pytest.mark.slow


def _reproduce(
    raw_repo, tmp_path: Path, python: Path, name: str, advise=None
) -> tuple[ReproducerRecord, Path, list[tuple[str, str]]]:
    repo, claims_file = raw_repo(name)
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    recorded: list[tuple[str, str]] = []

    def record(fix: Fix, failure: Failure, tasks: list[str]) -> str:
        git("commit", "-qam", fix.summary, cwd=code)
        recorded.append((fix.rule, failure.type))
        return f"fix-{len(recorded)}"

    result = reproduce(
        claims, planned, code, python, inputs_digest=ZERO, record=record, advise=advise
    )
    return result, code, recorded


def test_python2_prints_and_integer_division_are_fixed_and_recorded(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    result, code, recorded = _reproduce(raw_repo, tmp_path, fixture_python, "python2")
    assert result.gate.passed, result.gate.findings
    assert recorded == [("python2", "SyntaxError"), ("integer-division", "TypeError")]
    assert [f.change for f in result.fixes] == ["fix-1", "fix-2"]
    assert [a.exit_status for a in result.attempts] == [1, 1, 0]
    assert "half = len(X) // 2" in (code / "main.py").read_text("utf-8")


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
