"""Results Reproduced needs runs the committee made (spec audit.md#badges, signing.md#keys).

The authors' runs, signed or not, give at most "results consistent (author evidence)": a key
holder can sign a fabrication. Runs re-executed in the audit, or signed by a key the KEYS
file marks ``committee``, earn the badge; every scored task must be covered by them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from audit_support import make_artifact
from evidence_support import (
    consistent_edit,
    forge_ledger_and_signatures,
    honest_runs,
    ledger_lines,
)

from reprobridge_sdk.audit import audit
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.signing import SigningKey, TrustedKeys, generate_key, parse_trusted_keys
from reprobridge_sdk.signing.keys import public_line

_KEYS = {name: generate_key()[1] for name in ("alice", "chair")}


def _keys_file(*, chair_role: str | None = "committee") -> TrustedKeys:
    return parse_trusted_keys(
        f"# the authors' key has no role: an author's\n{public_line('alice', _KEYS['alice'])}\n"
        f"{public_line('chair', _KEYS['chair'], chair_role)}\n"
    )


def _build(root: Path, scored: SigningKey, smoke: SigningKey) -> Path:
    make_artifact(root)
    honest_runs(root, "scored", [0, 1, 2], scored)
    honest_runs(root, "smoke", [0], smoke)
    return root


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("committee")
    return {
        "author": _build(base / "author" / "toy", _KEYS["alice"], _KEYS["alice"]),
        "committee": _build(base / "committee" / "toy", _KEYS["chair"], _KEYS["alice"]),
        "smoke-only": _build(base / "smoke-only" / "toy", _KEYS["alice"], _KEYS["chair"]),
    }


def _copy(templates: dict[str, Path], name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(templates[name], target)
    return target


def _reproduced(result: AuditResult) -> tuple[bool, str | None]:
    return result.badges.reproduced, result.badges.results


def _rerun(root: Path, trust: TrustedKeys) -> AuditResult:
    return audit(root, trust=trust, rerun="all", rerun_env="current", rerun_sandbox=False)


def test_fabricated_runs_signed_by_an_author_key_are_never_reproduced(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """Hostile: every scored run rewritten to a nicer value and signed again by its author."""
    root = _copy(templates, "author", tmp_path)
    runs = root / "runs"
    # seeds 0-2 give 90.0, 90.1, 90.2; the forged values have the same mean, a nicer spread
    forged = iter([89.05, 90.1, 91.15])
    for entry in ledger_lines(runs):
        if entry["launcher"] == "scored":
            consistent_edit(runs / entry["run_id"], accuracy=next(forged))
    # the forger rewrites the ledger and signs every run again
    forge_ledger_and_signatures(runs, _KEYS["alice"])
    trust = _keys_file()
    signed = audit(root, trust=trust)
    assert not any(
        f.code.startswith("K") for a in signed.attempts for r in a.runs for f in r.findings
    )
    assert signed.passed  # the forgery is not seen by any check of the files
    assert _reproduced(signed) == (False, "consistent")  # yet the badge is not granted
    reran = _rerun(root, trust)
    assert _reproduced(reran) == (False, "not-reproduced")
    assert "A058" in {r.code for r in reran.badges.reasons["reproduced"]}


def test_honest_author_signed_runs_are_consistent_until_re_executed(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = _copy(templates, "author", tmp_path)
    trust = _keys_file()
    assert _reproduced(audit(root, trust=trust)) == (False, "consistent")
    reran = _rerun(root, trust)
    assert _reproduced(reran) == (True, "reproduced")
    assert "reproduced" not in reran.badges.reasons


def test_a_committee_signed_run_set_is_reproduced_without_re_execution(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = _copy(templates, "committee", tmp_path)
    assert _reproduced(audit(root, trust=_keys_file())) == (True, "reproduced")
    # the same key without the committee role is an author's
    assert _reproduced(audit(root, trust=_keys_file(chair_role=None))) == (False, "consistent")
    assert _reproduced(audit(root, trust=_keys_file(chair_role="author"))) == (False, "consistent")
    # without --trust no signature is checked, so no signer is the committee
    assert _reproduced(audit(root)) == (False, "consistent")


def test_a_committee_signed_smoke_run_covers_no_scored_task(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = _copy(templates, "smoke-only", tmp_path)
    result = audit(root, trust=_keys_file())
    assert _reproduced(result) == (False, "consistent")
    assert [r.path for r in result.badges.reasons["reproduced"]] == ["/tasks/0", "/tasks/1"]


def test_a_committee_signature_that_does_not_hold_counts_for_nothing(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """Hostile: a committee-signed run edited afterwards (the signature no longer holds)."""
    root = _copy(templates, "committee", tmp_path)
    runs = root / "runs"
    first = next(e["run_id"] for e in ledger_lines(runs) if e["launcher"] == "scored")
    consistent_edit(runs / first, accuracy=90.1)
    result = audit(root, trust=_keys_file())
    assert result.badges.reproduced is False
    assert result.badges.results == "not-reproduced"
    codes = {r.code for r in result.badges.reasons["reproduced"]}
    assert any(c.startswith("K") for c in codes)


def test_keys_lines_take_an_optional_role() -> None:
    keys = _keys_file()
    roles = {k.name: k.role for k in keys.keys.values()}
    assert roles == {"alice": "author", "chair": "committee"}
    assert keys.committee() == frozenset({"chair"})


@pytest.mark.parametrize(
    "role",
    ["Committee", "chair", "committee extra", "role=committee", "committee#"],
)
def test_hostile_roles_are_k005_located(role: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_trusted_keys(
            f"{public_line('alice', _KEYS['alice'])}\n{public_line('x', _KEYS['chair'])} {role}\n"
        )
    assert [(f.code, f.line) for f in caught.value.findings] == [("K005", 2)]
