"""The clean-room check's record, ``runs/check.json`` (spec authoring.md#check-record):
written by ``reprobridge check --record``, read by the audit for the *reusable* badge, which
counts it only when it passed and the artifact's files are still those it checked.

Signed (``check --record --sign``), the record has its envelope beside it,
``runs/check.dsse.json``, as a signed run has: an audit checks that the record is the one
signed (K004), and under ``--trust`` that a trusted key signed it (K001-K003, K007).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.contents import RUNS_DIR, files_digest
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import reading, safefs
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.model.attestation import CHECK_PREDICATE, STATEMENT_TYPE
from reprobridge_sdk.model.audit import CheckSignature
from reprobridge_sdk.signing.dsse import parse_envelope, verify_envelope
from reprobridge_sdk.timestamps import utc_now

if TYPE_CHECKING:
    from reprobridge_sdk.signing.keys import SigningKey, TrustedKeys

__all__ = [
    "CHECK_ENVELOPE",
    "CHECK_RECORD",
    "CHECK_VERSION",
    "CleanRoom",
    "check_record",
    "clean_room",
    "no_check_record",
    "write_check_record",
]

#: The record's name in the runs directory.
CHECK_RECORD = "check.json"
#: The signed record's envelope, beside it.
CHECK_ENVELOPE = "check.dsse.json"
CHECK_VERSION = "1.0"
#: A record is a few hundred bytes; anything past this is not one.
_MAX_BYTES = 64 * 1024
#: Its envelope holds the record twice (subject digest and predicate), in base64.
_MAX_ENVELOPE_BYTES = 256 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}")
_WHERE = f"{RUNS_DIR}/{CHECK_RECORD}"
_SIGNED_WHERE = f"{RUNS_DIR}/{CHECK_ENVELOPE}"
_HINT = (
    "run 'reprobridge check --record' on the artifact as submitted and submit its "
    "runs/check.json with the runs"
)


def check_record(
    artifact: str,
    digest: str,
    steps: Sequence[tuple[str, bool]],
    *,
    scored: bool,
    archive_sha256: str | None,
) -> dict[str, Any]:
    """The record of one check: the artifact's id, its files' digest, each step's outcome."""
    return {
        "check_version": CHECK_VERSION,
        "artifact": artifact,
        "artifact_files_sha256": digest,
        "archive_sha256": archive_sha256,
        "scored": scored,
        "passed": bool(steps) and all(ok for _, ok in steps),
        "steps": [{"name": name, "ok": ok} for name, ok in steps],
        "finished": utc_now(),
    }


def write_check_record(root: Path, data: dict[str, Any], signer: SigningKey | None = None) -> Path:
    """Write ``data`` as ``runs/check.json`` into the artifact at ``root``, with no link in the
    way leading out, and, with ``signer``, its envelope ``runs/check.dsse.json`` beside it;
    an envelope of an earlier record is removed, never left to contradict this one."""
    from reprobridge_sdk.signing.dsse import sign_payload  # noqa: PLC0415 - only when signing
    from reprobridge_sdk.signing.statement import (  # noqa: PLC0415
        check_statement,
        statement_bytes,
    )

    target = root / RUNS_DIR / CHECK_RECORD
    envelope = root / RUNS_DIR / CHECK_ENVELOPE
    atomic_write_json(target, data, root=root)
    if signer is None:
        if os.path.lexists(envelope):
            envelope.unlink()
        return target
    raw = safefs.read_bytes(target, root=root, max_bytes=_MAX_BYTES, allow_links=False)
    statement = check_statement(CHECK_RECORD, raw, data)
    atomic_write_json(
        envelope, sign_payload(statement_bytes(statement), signer).to_json(), root=root
    )
    return target


def _read(root: Path) -> tuple[bytes, dict[str, Any] | None, str | None]:
    """The record's bytes and its JSON object, or why it cannot be read."""
    try:
        raw = safefs.read_bytes(
            root / RUNS_DIR / CHECK_RECORD, root=root, max_bytes=_MAX_BYTES, allow_links=False
        )
        data = reading.parse_json(raw, name=_WHERE, max_depth=8)
    except FileNotFoundError:
        return b"", None, f"no clean-room check on record ({_WHERE})"
    except (OSError, ValueError, ReproBridgeError) as exc:
        return b"", None, f"the clean-room check record {_WHERE} cannot be read: {exc}"
    if not isinstance(data, dict):
        return raw, None, f"the clean-room check record {_WHERE} is not a JSON object"
    return raw, data, None


def no_check_record(problem: str = f"no clean-room check on record ({_WHERE})") -> Finding:
    """The A086 finding of a record that does not count, saying why."""
    return finding("A086", problem, file=_WHERE, hint=_HINT)


@dataclass(frozen=True)
class CleanRoom:
    """What the audit reads from the check record (spec audit.md#badges)."""

    #: Why no passing check of the files as they are is on record, or why its signed record
    #: cannot be believed; ``None``: one is.
    finding: Finding | None
    #: Who signed the record; ``None``: no record that can be read.
    signature: CheckSignature | None
    #: The check on record passed its scored steps (``check --scored``): it re-executed the
    #: scored launchers and found every measured task compatible.
    scored: bool = False

    @property
    def by_committee(self) -> bool:
        """A passing scored check of the files as they are, signed by a trusted key the
        KEYS file marks ``committee``: the committee's re-execution of every measured task."""
        sig = self.signature
        return (
            self.finding is None
            and self.scored
            and sig is not None
            and sig.state == "signed"
            and sig.role == "committee"
        )


def clean_room(root: Path, keys: TrustedKeys | None = None) -> CleanRoom:
    """The check record of the artifact at ``root``: why it has no passing clean-room check
    on record (A086), or why its signed record cannot be believed (K001-K004, K007: ``keys``,
    under ``--trust``, must have signed it); who signed it; whether it passed scored."""
    raw, data, problem = _read(root)
    if data is None:
        return CleanRoom(no_check_record(problem or ""), None)
    signed, signature = _signature(root, raw, keys)
    if signed is not None:
        return CleanRoom(signed, signature)
    problem = _record_problem(data) or _changed(root, data["artifact_files_sha256"])
    if problem:
        return CleanRoom(no_check_record(problem), signature)
    steps = {step.get("name") for step in data["steps"]}
    scored = data.get("scored") is True and {"scored", "audit-scored"} <= steps
    return CleanRoom(None, signature, scored)


def _signature(
    root: Path, raw: bytes, keys: TrustedKeys | None
) -> tuple[Finding | None, CheckSignature]:
    """Why the record's envelope does not vouch for it, and who signed it: none under
    ``keys`` (K001), not an envelope (K007), a signature that fails or a stranger's (K002,
    K003, with ``keys`` only), or a statement about other bytes (K004). Without ``keys`` and
    without an envelope, nothing is asked."""
    path = root / RUNS_DIR / CHECK_ENVELOPE
    if not os.path.lexists(path):
        unsigned = CheckSignature(state="unsigned", code="K001" if keys is not None else None)
        if keys is None:
            return None, unsigned
        return finding(
            "K001",
            f"the clean-room check record {_WHERE} is not signed",
            file=_WHERE,
            hint="sign it with 'reprobridge check --record --sign' and a key the KEYS file trusts",
        ), unsigned
    try:  # beside the record: a regular file, no link, bounded
        envelope = reading.read_json(
            path, root=path.parent, allow_links=False, max_bytes=_MAX_ENVELOPE_BYTES
        )
    except reading.Unreadable:
        envelope = None
    parsed = parse_envelope(envelope)
    if parsed is None:
        return finding("K007", "not a DSSE envelope", file=_SIGNED_WHERE), CheckSignature(
            state="tampered", code="K007"
        )
    # the envelope's own key id, shown only as what a key id is (hex), never its free text
    key_id = next((kid[:16] for kid, _ in parsed.signatures if _SHA256.fullmatch(kid)), None)
    name = role = None
    statement: object = None
    if keys is not None:
        verified, problems = verify_envelope(envelope, keys, where=_SIGNED_WHERE)
        if verified is None:
            state = "untrusted" if problems[0].code == "K003" else "tampered"
            return problems[0], CheckSignature(state=state, code=problems[0].code, key_id=key_id)
        trusted = keys.get(verified.keyid)
        name, key_id = verified.signer, verified.keyid[:16]
        role = trusted.role if trusted is not None else None
        statement = verified.statement
    else:  # no keys to trust: the envelope is still read, and must be about this record
        try:
            statement = json.loads(parsed.payload)
        except (ValueError, RecursionError):
            statement = None
    problem = _statement_finding(statement, raw)
    return problem, CheckSignature(
        state="tampered" if problem else "signed" if keys is not None else "unverified",
        signer=name,
        key_id=key_id,
        role=role,
        code=problem.code if problem is not None else None,
    )


def _statement_finding(statement: object, raw: bytes) -> Finding | None:
    """K004 when the statement is not a check statement whose subject is these bytes."""
    if not isinstance(statement, dict):
        return finding("K007", "the signed payload is not an in-toto statement", file=_SIGNED_WHERE)
    subjects = statement.get("subject")
    digests = [
        item.get("digest", {}).get("sha256") if isinstance(item.get("digest"), dict) else None
        for item in (subjects if isinstance(subjects, list) else [])
        if isinstance(item, dict) and item.get("name") == CHECK_RECORD
    ]
    if statement.get("_type") != STATEMENT_TYPE or statement.get("predicateType") != (
        CHECK_PREDICATE
    ):
        message = "the signed statement is not a clean-room check statement"
    elif not digests:
        message = f"the signed statement does not cover {CHECK_RECORD}"
    elif hashlib.sha256(raw).hexdigest() not in digests:
        message = f"{_WHERE} is not the record that was signed: it was changed after signing"
    else:
        return None
    return finding(
        "K004",
        message,
        file=_SIGNED_WHERE,
        hint="submit the check record exactly as it was signed, or run the check again",
    )


def _record_problem(data: dict[str, Any]) -> str | None:
    """Why the record itself does not count: another version, a step that failed, no digest."""
    if data.get("check_version") != CHECK_VERSION:
        return f"the clean-room check record {_WHERE} is not of version {CHECK_VERSION}"
    steps = data.get("steps")
    if (
        data.get("passed") is not True
        or not isinstance(steps, list)
        or not steps
        or not all(isinstance(s, dict) and s.get("ok") is True for s in steps)
    ):
        return f"the clean-room check on record ({_WHERE}) did not pass"
    digest = data.get("artifact_files_sha256")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        return f"the clean-room check record {_WHERE} names no artifact files digest"
    return None


def _changed(root: Path, digest: str) -> str | None:
    """Why the artifact's files are not those the check ran, if they are not."""
    from reprobridge_sdk.api import load  # noqa: PLC0415 - a lower layer, only with a record

    try:
        current = files_digest(root, load(root).manifest)
    except (ReproBridgeError, OSError) as exc:
        return f"the artifact's files cannot be listed to compare with {_WHERE}: {exc}"
    if current != digest:
        return (
            f"the clean-room check on record ({_WHERE}) checked other files: the artifact "
            "changed since"
        )
    return None
