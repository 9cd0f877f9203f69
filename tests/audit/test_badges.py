"""Badges with reasons: each withheld badge says why, each awarded one shows its evidence."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from audit_support import make_artifact
from evidence_support import consistent_edit, honest_runs, ledger_lines

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.badges import BADGE_CHECKS, RULES
from reprobridge_sdk.audit.report import render_text
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.signing import generate_key, parse_trusted_keys
from reprobridge_sdk.signing.keys import public_line


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_artifact(tmp_path_factory.mktemp("badges") / "toy")
    honest_runs(root, "scored", [0, 1, 2])
    honest_runs(root, "smoke", [0])
    return root


@pytest.fixture
def toy(template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(template, target)
    return target


def _withheld(result: AuditResult) -> dict[str, set[str]]:
    return {b: {r.code for r in items} for b, items in result.badges.reasons.items()}


def test_honest_artifact_earns_every_badge_with_its_evidence(toy: Path) -> None:
    result = audit(toy)
    badges = result.badges
    assert (badges.available, badges.functional, badges.reproduced) == (True, True, True)
    assert badges.reasons == {}
    run_ids = {e["run_id"] for e in ledger_lines(toy / "runs")}
    assert {e.split("/", 1)[1] for e in badges.evidence["functional"]} == run_ids
    scored = {e["run_id"] for e in ledger_lines(toy / "runs") if e["launcher"] == "scored"}
    assert {e.split("/", 1)[1] for e in badges.evidence["reproduced"]} == scored
    assert badges.checks == BADGE_CHECKS
    assert {badge for badge, _, _ in RULES} == {"available", "functional", "reproduced"}


def test_missing_references_withhold_reproduced(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["tasks"][1]["reference"]["observations"] = []
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = audit(toy)
    assert _withheld(result).get("reproduced", set()) >= {"A025"}
    reason = next(r for r in result.badges.reasons["reproduced"] if r.code == "A025")
    assert reason.path == "/tasks/1/reference"
    assert result.badges.evidence["reproduced"] == []


def test_unsigned_evidence_under_trust_withholds_reproduced(toy: Path) -> None:
    trusted = parse_trusted_keys(public_line("alice", generate_key()[1]))
    result = audit(toy, trust=trusted)
    withheld = _withheld(result)
    assert "K001" in withheld["reproduced"]
    assert "K001" in withheld["functional"]
    assert result.badges.available
    assert _withheld(audit(toy)) == {}  # without --trust nothing asks for signatures


def test_a_rerun_mismatch_withholds_reproduced(toy: Path) -> None:
    runs = toy / "runs"
    scored = [runs / e["run_id"] for e in ledger_lines(runs) if e["launcher"] == "scored"]
    consistent_edit(scored[0], accuracy=95.0)
    (runs / "ledger.jsonl").unlink()
    result = audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False)
    assert "A058" in _withheld(result)["reproduced"]
    text = render_text(result)
    assert any("A058" in line.split() and scored[0].name in line for line in text.splitlines())


def test_a_deleted_run_withholds_functional_and_reproduced(toy: Path) -> None:
    runs = toy / "runs"
    smoke = next(e["run_id"] for e in ledger_lines(runs) if e["launcher"] == "smoke")
    shutil.rmtree(runs / smoke)
    withheld = _withheld(audit(toy))
    assert "A052" in withheld["functional"]
    assert "A052" in withheld["reproduced"]


def test_a_placeholder_upstream_never_earns_a_badge_or_passes(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["codebase"]["upstream"]["commit"] = "0" * 40
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = audit(toy)
    # the all-zero commit is also a placeholder (P003): functional and reproduced are
    # withheld with A046
    assert _withheld(result) == {
        "available": {"P003"},
        "functional": {"A046"},
        "reproduced": {"A046"},
    }
    assert result.badges.reasons["available"][0].path == "/codebase/upstream/commit"
    assert not result.passed
