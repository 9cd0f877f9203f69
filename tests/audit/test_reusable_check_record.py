"""*Reusable* from checkable facts, the clean-room check included (spec audit.md#badges).

A real clean-room check (``check --record``, the toy builds offline) leaves ``runs/check.json``
in the artifact; an audit grants *reusable* when launchers are described, a licence is stated,
no placeholder is left and that record passed on the artifact's files as they are. Each
missing or hostile fact withholds it with A086, never a traceback. A signed record
(``check --record --sign``) is verified where the audit reads it: edited after signing, it
is K004 and the row's evidence is tampered; under ``--trust``, unsigned (K001), signed by a
stranger (K003) or with a broken signature (K002) it does not count either.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from audit_support import make_artifact
from evidence_support import forge_ledger_and_signatures, honest_runs

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.clean_room import write_check_record
from reprobridge_sdk.audit.csv_report import render_csv
from reprobridge_sdk.audit.html import render_html
from reprobridge_sdk.audit.report import render_json, render_text
from reprobridge_sdk.audit.table import evidence_state
from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.signing import SigningKey, TrustedKeys, generate_key, parse_trusted_keys
from reprobridge_sdk.signing.keys import public_line


def _documented(root: Path) -> None:
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    for launcher in data["launchers"]:
        launcher["description"] = f"runs the toy's {launcher['id']} step"
    data["artifact"]["license"] = "MIT"
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A documented toy with honest runs and a passing check on record."""
    base = tmp_path_factory.mktemp("reusable")
    root = make_artifact(base / "toy")
    _documented(root)
    honest_runs(root, "scored", [0, 1, 2])
    honest_runs(root, "smoke", [0])
    report = check(root, sandbox=False, record=True, work_dir=base)
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    assert report.record == str(root / "runs" / "check.json")
    return root


@pytest.fixture
def toy(checked: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(checked, target, symlinks=True)
    return target


def _reasons(root: Path) -> list[str]:
    result = audit(root)
    assert result.badges.functional  # what follows is about reusable alone
    return [f"{r.code} {r.message}" for r in result.badges.reasons.get("reusable", [])]


def test_a_passing_check_on_record_grants_reusable(toy: Path) -> None:
    record = json.loads((toy / "runs" / "check.json").read_text())
    assert record["check_version"] == "1.0"
    assert record["passed"] is True
    assert [s["name"] for s in record["steps"]] == ["copy", "validate", "smoke", "audit"]
    result = audit(toy)
    assert result.badges.reusable, result.badges.reasons.get("reusable")
    assert result.badges.evidence["reusable"] == ["rra.yaml", "runs/check.json"]
    # the record is no run: no evidence alarm about it
    assert all(f.file != "runs/check.json" for a in result.attempts for f in a.findings)
    assert result.passed


def test_no_record_withholds_reusable(toy: Path) -> None:
    (toy / "runs" / "check.json").unlink()
    [reason] = _reasons(toy)
    assert reason.startswith("A086 no clean-room check on record")


def test_a_record_of_other_files_withholds_reusable(toy: Path) -> None:
    (toy / "NOTES.md").write_text("added after the check\n")
    [reason] = _reasons(toy)
    assert "checked other files" in reason


def test_a_failed_check_withholds_reusable(toy: Path) -> None:
    path = toy / "runs" / "check.json"
    record = json.loads(path.read_text())
    record["steps"][-1]["ok"] = False  # a forger who flips only "passed" is caught as well
    path.write_text(json.dumps(record))
    [reason] = _reasons(toy)
    assert "did not pass" in reason


@pytest.mark.parametrize(
    "hostile",
    ["not json {", "[1, 2]", '{"check_version": "9.9"}', "[" * 100 + "]" * 100, "link", "big"],
)
def test_a_hostile_record_withholds_reusable_without_a_traceback(
    toy: Path, tmp_path: Path, hostile: str
) -> None:
    path = toy / "runs" / "check.json"
    good = path.read_text()
    path.unlink()
    if hostile == "link":
        (tmp_path / "elsewhere.json").write_text(good)
        path.symlink_to(tmp_path / "elsewhere.json")
    elif hostile == "big":
        path.write_text(good + " " * 100_000)
    else:
        path.write_text(hostile)
    [reason] = _reasons(toy)
    assert reason.startswith("A086 the clean-room check record runs/check.json"), reason


def test_undocumented_launchers_withhold_reusable_despite_the_record(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["launchers"][0]["description"] = " "
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    reasons = _reasons(toy)
    assert any("has no description" in r for r in reasons)
    assert any("checked other files" in r for r in reasons)  # rra.yaml changed too


def test_a_record_is_written_into_a_directory_only(tmp_path: Path) -> None:
    archive = tmp_path / "toy.tar"
    archive.write_bytes(b"")
    with pytest.raises(UsageError):
        check(archive, sandbox=False, record=True, work_dir=tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "check", str(archive), "--record"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "check the directory" in done.stdout + done.stderr


# --- the signed record (check --record --sign): verified where the audit reads it --------


@pytest.fixture(scope="module")
def alice() -> tuple[bytes, SigningKey]:
    return generate_key()


def _trusted(key: SigningKey, name: str = "alice") -> TrustedKeys:
    return parse_trusted_keys(public_line(name, key))


def _sign(root: Path, key: SigningKey) -> None:
    """Sign the record on disk as ``check --record --sign`` does."""
    write_check_record(root, json.loads((root / "runs" / "check.json").read_text()), key)


def _reusable(root: Path, trust: TrustedKeys | None = None) -> list[tuple[str, str | None]]:
    """The reasons about the check record (under ``trust`` the unsigned runs have theirs)."""
    result = audit(root, trust=trust)
    found = result.badges.reasons.get("reusable", [])
    return [(r.code, r.file) for r in found if (r.file or "").startswith("runs/check.")]


def test_check_signs_its_record_and_the_audit_verifies_it(
    toy: Path, tmp_path: Path, alice: tuple[bytes, SigningKey]
) -> None:
    pem, key = alice
    (tmp_path / "alice.pem").write_bytes(pem)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "reprobridge_sdk", "check", str(toy), "--record"),
            *("--sign", "--key", str(tmp_path / "alice.pem"), "--no-sandbox"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    envelope = json.loads((toy / "runs" / "check.dsse.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["predicateType"] == "https://reprobridge.org/predicates/rra-check/v1"
    assert [s["name"] for s in statement["subject"]] == ["check.json"]
    assert statement["predicate"]["record"] == json.loads((toy / "runs/check.json").read_text())
    assert _reusable(toy) == []
    assert _reusable(toy, _trusted(key)) == []
    # an unsigned check afterwards leaves no envelope behind to contradict its record
    report = check(toy, sandbox=False, record=True, work_dir=tmp_path)
    assert report.ok and not (toy / "runs" / "check.dsse.json").exists()


def test_sign_without_record_is_a_usage_error(toy: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "check", str(toy), "--sign", "--no-sandbox"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2 and "N004" in done.stdout, done.stdout + done.stderr
    assert not (toy / "runs" / "check.dsse.json").exists()


@pytest.mark.parametrize("trusted", [False, True])
def test_a_signed_record_edited_after_signing_is_k004(
    toy: Path, alice: tuple[bytes, SigningKey], trusted: bool
) -> None:
    """A forger who turns a failed check into a passing one, or only touches a byte of the
    record, is caught by its signature, with or without keys to trust."""
    _pem, key = alice
    path = toy / "runs" / "check.json"
    record = json.loads(path.read_text())
    record["passed"] = False
    record["steps"][-1]["ok"] = False
    path.write_text(json.dumps(record))
    _sign(toy, key)  # the authors' honest, failed check, signed
    record["passed"] = True
    record["steps"][-1]["ok"] = True
    path.write_text(json.dumps(record))  # ... made to pass afterwards
    trust = _trusted(key) if trusted else None
    assert _reusable(toy, trust) == [("K004", "runs/check.dsse.json")]
    result = audit(toy, trust=trust)
    [reason] = [r for r in result.badges.reasons["reusable"] if r.code == "K004"]
    assert reason.severity == "error" and "changed after signing" in reason.message
    assert evidence_state(result) == "tampered"  # the table's evidence column


@pytest.mark.parametrize(
    "case",
    [
        ("not json {", False, "K007"),
        ("not json {", True, "K007"),
        ('{"payload": 1}', False, "K007"),
        ("link", True, "K007"),
        ("big", True, "K007"),
        ("stranger", True, "K003"),
        ("edited-signature", True, "K002"),
        ("run-statement", False, "K004"),
        ("unsigned", True, "K001"),
    ],
)
def test_a_hostile_envelope_withholds_reusable_with_its_k_code(
    toy: Path, tmp_path: Path, alice: tuple[bytes, SigningKey], case: tuple[str, bool, str]
) -> None:
    hostile, trusted, code = case
    _pem, key = alice
    envelope = toy / "runs" / "check.dsse.json"
    _sign(toy, key)
    good = json.loads(envelope.read_text())
    if hostile == "link":
        (tmp_path / "elsewhere.json").write_text(json.dumps(good))
        envelope.unlink()
        envelope.symlink_to(tmp_path / "elsewhere.json")
    elif hostile == "big":
        envelope.write_text(json.dumps(good) + " " * 300_000)
    elif hostile == "stranger":
        _sign(toy, generate_key()[1])
    elif hostile == "edited-signature":
        sig = bytearray(base64.b64decode(good["signatures"][0]["sig"]))
        sig[0] ^= 1
        good["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
        envelope.write_text(json.dumps(good))
    elif hostile == "run-statement":  # a signed statement of another kind, moved here
        statement = json.loads(base64.b64decode(good["payload"]))
        statement["predicateType"] = "https://reprobridge.org/predicates/rra-run/v1"
        good["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
        envelope.write_text(json.dumps(good))
    elif hostile == "unsigned":
        envelope.unlink()
    else:
        envelope.write_text(hostile)
    reasons = _reusable(toy, _trusted(key) if trusted else None)
    assert [c for c, _ in reasons] == [code], reasons
    assert reasons[0][1] in {"runs/check.json", "runs/check.dsse.json"}


# --- who signed the record, in the badge evidence of every report -------------------------


def _forms(root: Path, trust: TrustedKeys | None) -> tuple[dict[str, object], str, str, str]:
    """The record's signature as the JSON report, the text, the HTML and the CSV give it."""
    result = audit(root, trust=trust)
    signature = json.loads(render_json(result))["badges"]["check_record"]
    [text] = [line for line in render_text(result).splitlines() if "check record:" in line]
    page = render_html(result)
    [item] = re.findall(r'<li class="check-signer" data-check-signer="([a-z]+)">([^<]*)</li>', page)
    [row] = csv.DictReader(io.StringIO(render_csv(result).lstrip("\ufeff")))
    shown = {form.split("check record: ", 1)[1] for form in (item[1], text)}
    assert shown == {row["check_record"]}
    return signature, item[0], text, row["check_record"]


@pytest.mark.parametrize("role", ["author", "committee"])
def test_a_signed_record_shows_its_signer_in_every_report(
    toy: Path, alice: tuple[bytes, SigningKey], role: str
) -> None:
    _pem, key = alice
    _sign(toy, key)
    trust = parse_trusted_keys(public_line("alice", key, None if role == "author" else role))
    signature, state, text, cell = _forms(toy, trust)
    assert signature == {
        "state": "signed",
        "signer": "alice",
        "key_id": key.keyid[:16],
        "role": role,
        "code": None,
    }
    assert state == "signed"
    assert text.endswith(f"signed by alice (key id {key.keyid[:16]}, {role})")
    assert cell == f"signed by alice (key id {key.keyid[:16]}, {role})"
    # without keys to trust, the envelope's key id is shown, said to be unverified
    signature, state, _text, cell = _forms(toy, None)
    assert (signature["state"], signature["signer"], signature["key_id"]) == (
        "unverified",
        None,
        key.keyid[:16],
    )
    assert state == "unverified" and "not verified" in cell


@pytest.mark.parametrize("trusted", [False, True])
def test_an_unsigned_record_shows_unsigned(
    toy: Path, alice: tuple[bytes, SigningKey], trusted: bool
) -> None:
    _pem, key = alice
    signature, state, _text, cell = _forms(toy, _trusted(key) if trusted else None)
    assert signature == {
        "state": "unsigned",
        "signer": None,
        "key_id": None,
        "role": None,
        "code": "K001" if trusted else None,
    }
    assert (state, cell) == ("unsigned", "unsigned")


def test_no_record_shows_none(toy: Path) -> None:
    (toy / "runs" / "check.json").unlink()
    signature, state, _text, cell = _forms(toy, None)
    assert (signature, state, cell) == (None, "none", "no record")


@pytest.mark.parametrize("trusted", [False, True])
def test_a_tampered_record_shows_tampered_and_who_signed_it(
    toy: Path, alice: tuple[bytes, SigningKey], trusted: bool
) -> None:
    _pem, key = alice
    _sign(toy, key)
    path = toy / "runs" / "check.json"
    path.write_text(path.read_text().replace('"scored": false', '"scored": true'))
    signature, state, _text, cell = _forms(toy, _trusted(key) if trusted else None)
    assert (signature["state"], signature["code"], signature["key_id"]) == (
        "tampered",
        "K004",
        key.keyid[:16],
    )
    assert signature["signer"] == ("alice" if trusted else None)
    assert state == "tampered" and cell.startswith("tampered (K004)")


@pytest.mark.parametrize(
    ("keyid", "shown"), [("<b>x</b>\x1b[31m", None), ("=cmd|' /C calc'!A0", None)]
)
def test_a_hostile_key_id_in_the_envelope_is_never_shown(
    toy: Path, alice: tuple[bytes, SigningKey], keyid: str, shown: str | None
) -> None:
    """The envelope's key id is the signer's text: only a hex key id is shown."""
    _pem, key = alice
    _sign(toy, key)
    envelope = toy / "runs" / "check.dsse.json"
    data = json.loads(envelope.read_text())
    data["signatures"][0]["keyid"] = keyid
    envelope.write_text(json.dumps(data))
    for trust in (None, _trusted(key)):
        signature, _state, text, cell = _forms(toy, trust)
        assert signature["key_id"] is shown
        assert keyid not in text and keyid not in cell
    assert signature["state"] == "untrusted" and signature["code"] == "K003"


# --- a scored check signed by a committee key: the committee's re-execution ---------------


@pytest.fixture(scope="module")
def committee_key() -> SigningKey:
    return generate_key()[1]


@pytest.fixture(scope="module")
def scored_checked(
    checked: Path,
    committee_key: SigningKey,
    alice: tuple[bytes, SigningKey],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """The toy with its runs signed by their author, alice, after a real
    ``check --scored --record --sign`` with the committee's key."""
    base = tmp_path_factory.mktemp("scored")
    root = base / "toy"
    shutil.copytree(checked, root, symlinks=True)
    forge_ledger_and_signatures(root / "runs", alice[1])  # honest runs, signed by alice
    report = check(root, scored=True, sandbox=False, record=True, work_dir=base, sign=committee_key)
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    steps = json.loads((root / "runs" / "check.json").read_text())["steps"]
    assert [s["name"] for s in steps][-2:] == ["scored", "audit-scored"]
    return root


def _committee_keys(committee: SigningKey, author: SigningKey) -> TrustedKeys:
    return parse_trusted_keys(
        public_line("chair", committee, "committee") + "\n" + public_line("alice", author)
    )


def test_a_scored_check_signed_by_a_committee_key_reproduces_the_results(
    scored_checked: Path, committee_key: SigningKey, alice: tuple[bytes, SigningKey]
) -> None:
    result = audit(scored_checked, trust=_committee_keys(committee_key, alice[1]))
    badges = result.badges
    assert badges.reasons.get("reproduced") is None
    assert (badges.reproduced, badges.results) == (True, "reproduced")
    assert badges.evidence["reproduced"][-1] == "runs/check.json"
    assert badges.check_record is not None
    assert (badges.check_record.state, badges.check_record.role) == ("signed", "committee")
    # the authors' signed runs alone: consistent, not reproduced
    alone = audit(scored_checked, trust=_committee_keys(generate_key()[1], alice[1]))
    assert (alone.badges.reproduced, alone.badges.results) == (False, "consistent")


@pytest.mark.parametrize("case", ["author-key", "no-trust", "not-scored", "tampered", "changed"])
def test_no_other_check_record_counts_as_the_committees_runs(
    scored_checked: Path,
    tmp_path: Path,
    committee_key: SigningKey,
    alice: tuple[bytes, SigningKey],
    case: str,
) -> None:
    """Results Reproduced is never granted on a check record the committee did not sign, did
    not score, or that no longer describes the files: each leaves A084 on every task."""
    root = tmp_path / "toy"
    shutil.copytree(scored_checked, root, symlinks=True)
    trust: TrustedKeys | None = _committee_keys(committee_key, alice[1])
    path = root / "runs" / "check.json"
    record = json.loads(path.read_text())
    if case == "author-key":
        _sign(root, alice[1])
    elif case == "no-trust":
        trust = None
    elif case == "not-scored":  # a smoke check, re-signed by the committee: not a re-execution
        record["scored"] = False
        record["steps"] = record["steps"][:-2]
        write_check_record(root, record, committee_key)
    elif case == "tampered":  # an author's failed scored check, edited to pass
        path.write_text(path.read_text().replace('"passed": true', '"passed": true '))
    else:
        (root / "NOTES.md").write_text("added after the check\n")
    result = audit(root, trust=trust)
    assert (result.badges.reproduced, result.badges.results) == (False, "consistent")
    assert {r.code for r in result.badges.reasons["reproduced"]} == {"A084"}
