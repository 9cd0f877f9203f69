"""Badges with reasons: each withheld badge says why, each awarded one shows its evidence.

The badges mean what ACM's mean (spec audit.md#badges): *reproduced* needs runs the
committee made, *available* an archival identifier, *reusable* checkable documentation.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from audit_support import make_artifact
from evidence_support import consistent_edit, honest_runs, ledger_lines

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.badges import BADGE_CHECKS, BADGES, RULES
from reprobridge_sdk.audit.report import render_text
from reprobridge_sdk.errors import ArtifactError
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


def _with_doi(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["artifact"]["paper"]["doi"] = "10.5281/zenodo.1234567"
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _rerun_all(toy: Path, **options: object) -> AuditResult:
    return audit(toy, rerun="all", rerun_env="current", rerun_sandbox=False, **options)  # type: ignore[arg-type]


def test_authors_runs_alone_are_consistent_never_reproduced(toy: Path) -> None:
    result = audit(toy)
    badges = result.badges
    assert (badges.functional, badges.reproduced) == (True, False)
    assert badges.results == "consistent"
    # one reason per task, nothing else: the committee made no run
    assert [(r.code, r.path) for r in badges.reasons["reproduced"]] == [
        ("A084", "/tasks/0"),
        ("A084", "/tasks/1"),
    ]
    assert badges.evidence["reproduced"] == []
    assert result.passed  # the verdicts hold; only the badge waits for the committee
    text = render_text(result)
    assert "results reproduced no; results consistent (author evidence)" in text


def test_honest_artifact_earns_every_badge_with_its_evidence(toy: Path) -> None:
    _with_doi(toy)
    result = _rerun_all(toy)
    badges = result.badges
    assert (badges.available, badges.functional, badges.reproduced) == (True, True, True)
    assert badges.results == "reproduced"
    assert set(badges.reasons) == {"reusable"}  # no clean-room check on record
    assert badges.evidence["available"] == ["rra.yaml", "doi:10.5281/zenodo.1234567"]
    run_ids = {e["run_id"] for e in ledger_lines(toy / "runs")}
    assert {e.split("/", 1)[1] for e in badges.evidence["functional"]} == run_ids
    scored = {e["run_id"] for e in ledger_lines(toy / "runs") if e["launcher"] == "scored"}
    assert {e.split("/", 1)[1] for e in badges.evidence["reproduced"]} == scored
    assert badges.checks == BADGE_CHECKS
    assert {badge for badge, _, _ in RULES} == set(BADGES)


def test_available_needs_a_doi_or_the_archive_the_committee_holds(toy: Path) -> None:
    result = audit(toy)
    assert not result.badges.available
    assert [(r.code, r.path) for r in result.badges.reasons["available"]] == [
        ("A085", "/artifact/paper/doi")
    ]
    digest = "ab" * 32
    held = audit(toy, archive_sha256=digest)
    assert held.badges.available
    assert held.badges.evidence["available"] == ["rra.yaml", f"archive sha256:{digest}"]


def test_hostile_doi_is_a_validation_error_not_an_identifier(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["artifact"]["paper"]["doi"] = "see our website"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ArtifactError) as caught:
        audit(toy)
    assert [f.path for f in caught.value.findings] == ["/artifact/paper/doi"]


def test_reusable_is_granted_only_from_checkable_facts(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["launchers"][0]["description"] = "two epochs, to see that the code runs"
    data["artifact"]["license"] = "NOASSERTION"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = audit(toy)
    assert not result.badges.reusable
    reasons = [(r.code, r.path) for r in result.badges.reasons["reusable"]]
    # the scored launcher is undocumented, the licence states none, no check is on record
    assert ("A086", "/launchers/1/description") in reasons
    assert ("A086", "/launchers/0/description") not in reasons
    assert ("A086", "/artifact/license") in reasons
    assert any(
        r.code == "A086" and "clean-room" in r.message for r in result.badges.reasons["reusable"]
    )
    assert result.badges.evidence["reusable"] == []


def test_reusable_needs_functional(toy: Path) -> None:
    runs = toy / "runs"
    smoke = next(e["run_id"] for e in ledger_lines(runs) if e["launcher"] == "smoke")
    shutil.rmtree(runs / smoke)
    withheld = _withheld(audit(toy))
    assert "A052" in withheld["reusable"]


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
    assert withheld["available"] == {"A085"}
    # without --trust nothing asks for signatures
    assert not any(c.startswith("K") for codes in _withheld(audit(toy)).values() for c in codes)


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
    withheld = _withheld(result)
    assert withheld["available"] == {"P003", "A085"}
    assert withheld["functional"] == {"A046"}
    assert withheld["reproduced"] == {"A046", "A084"}
    assert "A046" in withheld["reusable"]
    assert result.badges.results == "not-reproduced"
    assert result.badges.reasons["available"][0].path == "/codebase/upstream/commit"
    assert not result.passed
