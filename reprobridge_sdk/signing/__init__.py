"""Signed evidence: DSSE envelopes of in-toto statements, ed25519 keys and KEYS files.

It imports only the model, digests and findings, so the runner signs with it and the auditor
verifies with it. ``cryptography`` (the extra ``signing``) is imported only when a key is used.
"""

from __future__ import annotations

from .dsse import PAYLOAD_TYPE, Envelope, pae, sign_payload, verify_envelope
from .keys import (
    KEY_ENV,
    SigningKey,
    TrustedKeys,
    generate_key,
    keyid_of,
    load_signing_key,
    load_trusted_keys,
    parse_trusted_keys,
)
from .statement import (
    AUDIT_PREDICATE,
    ENVELOPE_NAME,
    RUN_PREDICATE,
    STATEMENT_TYPE,
    audit_statement,
    run_statement,
)

__all__ = [
    "AUDIT_PREDICATE",
    "ENVELOPE_NAME",
    "KEY_ENV",
    "PAYLOAD_TYPE",
    "RUN_PREDICATE",
    "STATEMENT_TYPE",
    "Envelope",
    "SigningKey",
    "TrustedKeys",
    "audit_statement",
    "generate_key",
    "keyid_of",
    "load_signing_key",
    "load_trusted_keys",
    "pae",
    "parse_trusted_keys",
    "run_statement",
    "sign_payload",
    "verify_envelope",
]
