"""In-toto statements of RRA runs, audits and checks.

Their subjects and predicates are spec/signing.md, "Signatures" (the predicate types' table).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.model.attestation import (
    AUDIT_PREDICATE,
    CHECK_PREDICATE,
    RUN_PREDICATE,
    STATEMENT_TYPE,
    AuditPredicate,
    CheckPredicate,
    LedgerLink,
    RunPredicate,
    Statement,
    Subject,
)
from reprobridge_sdk.model.evidence import RECORD_NAME, EvidenceRecord

__all__ = [
    "AUDIT_PREDICATE",
    "CHECK_PREDICATE",
    "ENVELOPE_NAME",
    "RUN_PREDICATE",
    "STATEMENT_TYPE",
    "audit_statement",
    "check_statement",
    "run_statement",
    "statement_bytes",
]

#: The envelope of a signed run, inside its run directory.
ENVELOPE_NAME = "record.dsse.json"


def _subject(name: str, path: Path) -> Subject:
    return Subject(name=name, digest={"sha256": file_sha256(path)})


def run_statement(run_dir: Path, record: EvidenceRecord, ledger: LedgerLink | None) -> Statement:
    """The statement of a finished run whose record is on disk in ``run_dir``."""
    subjects = [_subject(RECORD_NAME, run_dir / RECORD_NAME)]
    if record.log is not None:
        subjects.append(Subject(name=record.log.path, digest={"sha256": record.log.sha256}))
    subjects.extend(Subject(name=o.path, digest={"sha256": o.sha256}) for o in record.outputs)
    assert record.status != "running"
    predicate = RunPredicate(
        artifact=record.artifact,
        run_id=record.run_id,
        launcher=record.launcher,
        seed=record.seed,
        scope=record.scope,
        status=record.status,
        code_tree_digest=record.code_tree_digest,
        lock_digest=record.lock_digest,
        measurements={m.task: m.value for m in record.measurements},
        ledger=ledger,
    )
    return Statement.model_validate(
        {
            "_type": STATEMENT_TYPE,
            "subject": subjects,
            "predicateType": RUN_PREDICATE,
            "predicate": predicate,
        }
    )


def audit_statement(
    manifests: list[tuple[str, Path]],
    report: dict[str, Any],
    *,
    extra: dict[str, str] | None = None,
) -> Statement:
    """The statement of an audit: ``manifests`` are ``(name, path)`` of the audited rra.yaml;
    ``extra`` adds subjects by name and SHA-256."""
    subjects = [_subject(name, path) for name, path in manifests]
    subjects += [Subject(name=n, digest={"sha256": d}) for n, d in (extra or {}).items()]
    return Statement.model_validate(
        {
            "_type": STATEMENT_TYPE,
            "subject": subjects,
            "predicateType": AUDIT_PREDICATE,
            "predicate": AuditPredicate(passed=bool(report.get("passed")), report=report),
        }
    )


def check_statement(name: str, raw: bytes, record: dict[str, Any]) -> Statement:
    """The statement of a clean-room check's record: ``raw``, its bytes as written under
    ``name``, and ``record``, what they say."""
    digest = hashlib.sha256(raw).hexdigest()
    return Statement.model_validate(
        {
            "_type": STATEMENT_TYPE,
            "subject": [Subject(name=name, digest={"sha256": digest})],
            "predicateType": CHECK_PREDICATE,
            "predicate": CheckPredicate(passed=record.get("passed") is True, record=record),
        }
    )


def statement_bytes(statement: Statement) -> bytes:
    """The payload of the envelope: the statement's JSON (by alias, no extra spaces)."""
    data = statement.model_dump(mode="json", by_alias=True, exclude_none=False)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
