"""Signed evidence with real ed25519 keys: DSSE, in-toto statements, KEYS (spec signing.md)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from audit_support import make_artifact
from evidence_support import consistent_edit, fabricate, honest_runs, ledger_lines, write_ledger

from reprobridge_sdk.audit import audit
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.model.attestation import LedgerLink
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run import load_record
from reprobridge_sdk.run.ledger import read_ledger
from reprobridge_sdk.signing import (
    ENVELOPE_NAME,
    KEY_ENV,
    SigningKey,
    TrustedKeys,
    generate_key,
    load_signing_key,
    load_trusted_keys,
    pae,
    parse_trusted_keys,
    run_statement,
    sign_payload,
    verify_envelope,
)
from reprobridge_sdk.signing.keys import public_line
from reprobridge_sdk.signing.statement import statement_bytes

CLI = [sys.executable, "-m", "reprobridge_sdk"]


@pytest.fixture(scope="module")
def keys() -> dict[str, tuple[bytes, SigningKey]]:
    return {name: generate_key() for name in ("alice", "mallory")}


@pytest.fixture(scope="module")
def signed_template(
    tmp_path_factory: pytest.TempPathFactory, keys: dict[str, tuple[bytes, SigningKey]]
) -> Path:
    """Two batches of scored runs (seeds 0-2 twice) and a smoke run, signed by alice."""
    root = make_artifact(tmp_path_factory.mktemp("signed") / "toy")
    alice = keys["alice"][1]
    honest_runs(root, "scored", [0, 1, 2], alice)
    honest_runs(root, "scored", [0, 1, 2], alice)
    honest_runs(root, "smoke", [0], alice)
    (root.parent / "KEYS").write_text(f"# trusted\n{public_line('alice', alice)}\n")
    return root


@pytest.fixture
def toy(signed_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(signed_template, target)
    shutil.copy(signed_template.parent / "KEYS", tmp_path / "KEYS")
    return target


def _trusted(toy: Path) -> TrustedKeys:
    return parse_trusted_keys((toy.parent / "KEYS").read_text())


def _codes(result: AuditResult) -> dict[str, set[str]]:
    return {r.run: {f.code for f in r.findings} for r in result.attempts[0].runs}


def _run_dirs(toy: Path) -> list[Path]:
    return [toy / "runs" / e["run_id"] for e in ledger_lines(toy / "runs")]


def test_pae_is_the_dsse_encoding() -> None:
    # The example of the DSSE protocol document.
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae("t", b"") == b"DSSEv1 1 t 0 "
    assert pae("\u00e9", b"x") == "DSSEv1 2 \u00e9 1 x".encode()  # length in bytes


def test_honest_signed_runs_pass_under_trust(toy: Path) -> None:
    result = audit(toy, trust=_trusted(toy))
    assert result.passed
    assert all(not codes for codes in _codes(result).values())
    assert {r.signer for r in result.attempts[0].runs} == {"alice"}
    assert result.options.trusted == ["alice"]


def test_the_statement_names_the_record_the_log_the_outputs_and_the_ledger_entry(
    toy: Path,
) -> None:
    run_dir = _run_dirs(toy)[0]
    envelope = json.loads((run_dir / ENVELOPE_NAME).read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://reprobridge.org/predicates/rra-run/v1"
    names = [s["name"] for s in statement["subject"]]
    assert names[:2] == ["record.json", "log.txt"]
    assert names[2].startswith("outputs/metrics/")
    entry = read_ledger(toy / "runs").entries[0]
    assert statement["predicate"]["ledger"] == {"seq": 1, "entry": entry.hash}
    assert statement["predicate"]["run_id"] == run_dir.name


def test_unsigned_runs_fail_under_trust(toy: Path) -> None:
    for envelope in (toy / "runs").glob(f"*/{ENVELOPE_NAME}"):
        envelope.unlink()
    result = audit(toy, trust=_trusted(toy))
    assert set().union(*_codes(result).values()) == {"K001"}
    assert not result.passed
    assert audit(toy).passed  # without --trust signatures are not required


def test_a_tampered_envelope_does_not_verify(toy: Path) -> None:
    path = _run_dirs(toy)[3] / ENVELOPE_NAME
    envelope = json.loads(path.read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["measurements"]["acc"] = 95.0
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    path.write_text(json.dumps(envelope))
    result = audit(toy, trust=_trusted(toy))
    assert _codes(result)[path.parent.name] == {"K002"}
    assert not result.passed


def test_a_wrong_key_is_an_unknown_signer(
    toy: Path, keys: dict[str, tuple[bytes, SigningKey]]
) -> None:
    run_dir = _run_dirs(toy)[3]
    record = load_record(run_dir)
    entry = read_ledger(toy / "runs").entries[3]
    statement = run_statement(run_dir, record, LedgerLink(seq=entry.seq, entry=entry.hash))
    envelope = sign_payload(statement_bytes(statement), keys["mallory"][1])
    atomic_write_json(run_dir / ENVELOPE_NAME, envelope.to_json())
    result = audit(toy, trust=_trusted(toy))
    assert _codes(result)[run_dir.name] == {"K003"}


def test_a_consistent_edit_is_not_what_was_signed(toy: Path) -> None:
    target = _run_dirs(toy)[4]
    consistent_edit(target, accuracy=95.0)
    (toy / "runs" / "ledger.jsonl").unlink()  # the forger also hides the ledger
    result = audit(toy, trust=_trusted(toy))
    assert _codes(result)[target.name] == {"K004"}
    assert result.tasks[0].attempts[0].verdict == "invalid-evidence"


def test_a_fabricated_run_is_unsigned_or_signed_by_a_stranger(
    toy: Path, keys: dict[str, tuple[bytes, SigningKey]]
) -> None:
    forged = fabricate(_run_dirs(toy)[3], toy / "runs" / "scored-s0-forged", accuracy=95.0)
    assert "K001" in _codes(audit(toy, trust=_trusted(toy)))[forged.name]
    statement = run_statement(forged, load_record(forged), None)
    envelope = sign_payload(statement_bytes(statement), keys["mallory"][1])
    atomic_write_json(forged / ENVELOPE_NAME, envelope.to_json())
    assert "K003" in _codes(audit(toy, trust=_trusted(toy)))[forged.name]


def test_a_key_holder_can_sign_a_fabrication_only_rerun_catches_it(
    toy: Path, keys: dict[str, tuple[bytes, SigningKey]]
) -> None:
    """What a signature does not prove: the numbers came from running the experiment."""
    target = _run_dirs(toy)[4]
    consistent_edit(target, accuracy=95.0)
    statement = run_statement(target, load_record(target), None)
    envelope = sign_payload(statement_bytes(statement), keys["alice"][1])
    atomic_write_json(target / ENVELOPE_NAME, envelope.to_json())
    (toy / "runs" / "ledger.jsonl").unlink()
    signed = audit(toy, trust=_trusted(toy))
    assert not any(c.startswith("K") for c in _codes(signed)[target.name])
    reran = audit(toy, trust=_trusted(toy), rerun="all", rerun_env="current", rerun_sandbox=False)
    assert _codes(reran)[target.name] == {"A058"}
    assert not reran.passed


def test_a_rewritten_ledger_contradicts_the_signed_entries(toy: Path) -> None:
    runs = toy / "runs"
    entries = ledger_lines(runs)
    for entry in entries[:3]:
        shutil.rmtree(runs / entry["run_id"])
    write_ledger(runs, entries[3:], rechain=True)
    result = audit(toy, trust=_trusted(toy))
    assert all(codes == {"K004"} for codes in _codes(result).values())
    assert not result.passed


def test_keys_file_errors_are_located() -> None:
    alice = generate_key()[1]
    with pytest.raises(UsageError) as caught:
        parse_trusted_keys(
            f"{public_line('alice', alice)}\nbob rsa AAAA\ncarol ed25519 !!!\n"
            f"{public_line('alice', alice)}\n"
        )
    assert [(f.code, f.line) for f in caught.value.findings] == [
        ("K005", 2),
        ("K005", 3),
        ("K005", 4),
    ]


def test_a_keys_file_that_cannot_be_read_is_k005_at_its_bad_byte(tmp_path: Path) -> None:
    """A KEYS file is read by the one document reader: a byte that is not UTF-8, a missing
    file or a directory is K005, never a traceback."""
    alice = generate_key()[1]
    keys = tmp_path / "KEYS"
    keys.write_bytes(public_line("alice", alice).encode() + b"\nbob \xff\n")
    for path, where in ((keys, (2, 5)), (tmp_path / "missing", (0, 0)), (tmp_path, (0, 0))):
        with pytest.raises(UsageError) as caught:
            load_trusted_keys(path)
        assert [(f.code, f.line, f.col) for f in caught.value.findings] == [("K005", *where)]


def test_signing_key_from_a_file_or_the_environment(tmp_path: Path) -> None:
    pem, key = generate_key()
    (tmp_path / "a.key").write_bytes(pem)
    assert load_signing_key(tmp_path / "a.key").keyid == key.keyid
    assert load_signing_key(environ={KEY_ENV: pem.decode()}).keyid == key.keyid
    for bad in (tmp_path / "missing.key", None):
        with pytest.raises(UsageError) as caught:
            load_signing_key(bad, environ={})
        assert [f.code for f in caught.value.findings] == ["K006"]
    (tmp_path / "junk.key").write_text("not a key")
    with pytest.raises(UsageError) as caught:
        load_signing_key(tmp_path / "junk.key")
    assert [f.code for f in caught.value.findings] == ["K006"]


def test_verify_rejects_what_is_not_an_envelope() -> None:
    trusted = parse_trusted_keys("")
    for data in (None, {}, {"payload": "!", "payloadType": "x", "signatures": []}):
        verified, problems = verify_envelope(data, trusted)
        assert verified is None
        assert [p.code for p in problems] == ["K007"]


def test_keys_generate_run_sign_and_audit_trust_on_the_command_line(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "toy")
    made = subprocess.run(
        [*CLI, "keys", "generate", "alice", "-o", str(tmp_path / "alice.key")],
        capture_output=True,
        text=True,
        check=True,
    )
    line = made.stdout.strip()
    assert line.startswith("alice ed25519 ")
    assert stat.S_IMODE((tmp_path / "alice.key").stat().st_mode) == 0o600
    (tmp_path / "KEYS").write_text(line + "\n")
    env = {**os.environ, KEY_ENV: (tmp_path / "alice.key").read_text()}
    done = subprocess.run(
        [*CLI, "run", str(root), "scored", "--env", "current", "--sign"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    audited = subprocess.run(
        [
            *CLI,
            "audit",
            str(root),
            "--trust",
            str(tmp_path / "KEYS"),
            "--format",
            "json",
            "--attest",
            str(tmp_path / "audit.dsse.json"),
            "--key",
            str(tmp_path / "alice.key"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert audited.returncode == 0, audited.stderr
    report = json.loads(audited.stdout)
    assert {r["signer"] for r in report["attempts"][0]["runs"]} == {"alice"}
    verified, problems = verify_envelope(
        json.loads((tmp_path / "audit.dsse.json").read_text()),
        parse_trusted_keys(line),
    )
    assert problems == [] and verified is not None
    assert verified.statement["predicateType"] == (
        "https://reprobridge.org/predicates/rra-audit/v1"
    )
    assert verified.statement["predicate"]["report"] == report
    bad = subprocess.run(
        [*CLI, "audit", str(root), "--trust", str(tmp_path / "alice.key")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert "K005" in bad.stdout


def test_the_setting_sign_signs_runs_without_the_flag(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "toy")
    # the committee's own settings, in the directory it runs from (an artifact's own file
    # never applies to it: N030)
    (tmp_path / "reprobridge.toml").write_text("sign = true\n")
    pem, key = generate_key()
    env = {**os.environ, KEY_ENV: pem.decode()}
    env.pop("REPROBRIDGE_SIGN", None)
    done = subprocess.run(
        [*CLI, "run", str(root), "scored", "--env", "current"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    trusted = parse_trusted_keys(public_line("alice", key))
    result = audit(root, trust=trusted)
    assert {r.signer for r in result.attempts[0].runs} == {"alice"}
    unset = subprocess.run(
        [*CLI, "run", str(root), "scored", "--env", "current"],
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if k != KEY_ENV},
        check=False,
        cwd=tmp_path,
    )
    assert unset.returncode == 2
    assert "K006" in unset.stdout


def test_an_honest_signed_run_passes_every_check_with_no_false_alarm(
    toy: Path, keys: dict[str, tuple[bytes, SigningKey]]
) -> None:
    """Ledger with the submitted head, signatures, and every run re-executed."""
    head = read_ledger(toy / "runs").head
    result = audit(
        toy,
        trust=_trusted(toy),
        expect_head=head,
        rerun="all",
        rerun_env="current",
        rerun_sandbox=False,
    )
    assert result.passed
    assert all(not r.findings for r in result.attempts[0].runs)
    assert result.attempts[0].findings == []
    assert result.attempts[0].reran == 7
    # re-executed: reproduced; no DOI (A085) and no clean-room check on record (A086)
    assert set(result.badges.reasons) == {"available", "reusable"}
    assert (result.badges.functional, result.badges.reproduced) == (True, True)


def test_hostile_envelopes_are_k007(toy: Path) -> None:
    run_dir = _run_dirs(toy)[0]
    path = run_dir / ENVELOPE_NAME
    nested = "[" * 100_000 + "]" * 100_000
    deep_payload = base64.b64encode(nested.encode()).decode()
    for text in (
        nested,
        "not json",
        json.dumps({"payload": deep_payload, "payloadType": "x", "signatures": [{"sig": "AA=="}]}),
    ):
        path.write_text(text)
        assert _codes(audit(toy, trust=_trusted(toy)))[run_dir.name] in ({"K007"}, {"K003"})
    with path.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)
    assert _codes(audit(toy, trust=_trusted(toy)))[run_dir.name] == {"K007"}
