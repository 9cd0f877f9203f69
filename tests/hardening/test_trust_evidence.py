"""Hostile evidence under ``audit --trust``: a ledger deleted or replaced by a FIFO, a link or a
directory, and a signed subject replaced by a link.

Real runs signed with a real ed25519 key by the real runner, audited by the real auditor.
Under ``--trust`` the ledger is required: missing is A068 (an error, not the A050 warning);
present but not a regular file is A051 with or without ``--trust``. A signed subject must be
a regular file in the run folder: a link is K004, never followed.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from toy_study import make_artifact

from reprobridge_sdk.audit import audit
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run import run
from reprobridge_sdk.run.ledger import LEDGER_NAME
from reprobridge_sdk.signing import SigningKey, TrustedKeys, generate_key, parse_trusted_keys
from reprobridge_sdk.signing.keys import public_line


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key()[1]


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory, key: SigningKey) -> Path:
    root = make_artifact(tmp_path_factory.mktemp("signed") / "toy")
    summary = run(root, ["scored"], env_mode="current", seeds=[0, 1, 2], sign_key=key)
    assert all(r.record.status == "succeeded" for r in summary.results)
    return root


@pytest.fixture
def toy(signed: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(signed, target, symlinks=True)
    return target


def _trusted(key: SigningKey) -> TrustedKeys:
    return parse_trusted_keys(f"{public_line('alice', key)}\n")


def _attempt_codes(result: AuditResult) -> dict[str, str]:
    return {f.code: f.severity for f in result.attempts[0].findings}


def _run_codes(result: AuditResult) -> dict[str, set[str]]:
    return {r.run: {f.code for f in r.findings} for r in result.attempts[0].runs}


def test_the_signed_toy_is_trusted(toy: Path, key: SigningKey) -> None:
    result = audit(toy, trust=_trusted(key))
    assert _attempt_codes(result) == {}
    assert all(r.valid and r.signer == "alice" for r in result.attempts[0].runs)


def test_a_deleted_ledger_under_trust_is_an_error(toy: Path, key: SigningKey) -> None:
    (toy / "runs" / LEDGER_NAME).unlink()
    assert _attempt_codes(audit(toy)) == {"A050": "warning"}
    result = audit(toy, trust=_trusted(key))
    assert _attempt_codes(result) == {"A068": "error"}
    assert all(a.verdict != "compatible" for t in result.tasks for a in t.attempts)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _link_to_a_copy(path: Path) -> None:
    copy = path.parent.parent / "ledger-copy.jsonl"
    copy.write_bytes(b"")
    path.symlink_to(copy)


@pytest.mark.parametrize("plant", [_fifo, _directory, _link_to_a_copy])
@pytest.mark.parametrize("trusted", [False, True])
def test_a_ledger_that_is_not_a_regular_file_is_an_error(
    toy: Path, key: SigningKey, plant: Any, trusted: bool
) -> None:
    ledger = toy / "runs" / LEDGER_NAME
    ledger.rename(toy / "ledger.jsonl.away")
    plant(ledger)
    outcome: list[AuditResult] = []
    worker = threading.Thread(
        target=lambda: outcome.append(audit(toy, trust=_trusted(key) if trusted else None)),
        daemon=True,
    )
    started = time.monotonic()
    worker.start()
    worker.join(60)
    assert outcome, "the audit was still waiting on the ledger after 60 s"
    assert time.monotonic() - started < 60
    assert _attempt_codes(outcome[0]).get("A051") == "error"


def test_a_signed_subject_replaced_by_a_link_is_refused(
    toy: Path, key: SigningKey, tmp_path: Path
) -> None:
    """The link leads to a byte-identical copy: following it would verify the signature."""
    run_dir = sorted(p for p in (toy / "runs").iterdir() if p.is_dir() and p.name != ".env")[0]
    copy = tmp_path / "copy-of-log.txt"
    shutil.copy(run_dir / "log.txt", copy)
    (run_dir / "log.txt").unlink()
    (run_dir / "log.txt").symlink_to(copy)
    result = audit(toy, trust=_trusted(key))
    codes = _run_codes(result)[run_dir.name]
    assert "K004" in codes
    (checked,) = [r for r in result.attempts[0].runs if r.run == run_dir.name]
    k004 = [f for f in checked.findings if f.code == "K004"]
    assert [f.file for f in k004] == [f"{run_dir.name}/record.dsse.json"]
