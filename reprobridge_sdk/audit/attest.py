"""A signed audit report: the JSON report as the predicate of an in-toto statement.

The statement's subjects are the audited manifests (``<artifact path>/rra.yaml`` with their
SHA-256); its predicate type is ``https://reprobridge.org/predicates/rra-audit/v1`` and its
predicate ``{"passed": ..., "report": <the JSON report>}``. See spec ``signing.md``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.model.audit import AuditResult, AuditTable
from reprobridge_sdk.signing.dsse import sign_payload
from reprobridge_sdk.signing.keys import SigningKey
from reprobridge_sdk.signing.statement import audit_statement, statement_bytes

__all__ = ["attest_audit"]


def attest_audit(result: AuditResult | AuditTable, key: SigningKey) -> dict[str, Any]:
    """The DSSE envelope (as JSON) of ``result`` signed with ``key``."""
    items = result.artifacts if isinstance(result, AuditTable) else [result]
    manifests = []
    for item in items:
        path = Path(item.path)
        manifest = path if path.name == MANIFEST_NAME else path / MANIFEST_NAME
        if manifest.is_file():
            manifests.append((manifest.as_posix(), manifest))
    report = json.loads(result.model_dump_json())
    if not manifests:  # nothing could be loaded: the statement is about the report alone
        digest = hashlib.sha256(result.model_dump_json().encode()).hexdigest()
        statement = audit_statement([], report, extra={"report.json": digest})
        return sign_payload(statement_bytes(statement), key).to_json()
    statement = audit_statement(manifests, report)
    return sign_payload(statement_bytes(statement), key).to_json()
