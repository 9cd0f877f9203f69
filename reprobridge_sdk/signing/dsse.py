"""DSSE envelopes (Dead Simple Signing Envelope, version 1), written from its specification.

The signature covers ``PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``,
never the envelope's JSON. Verification outcomes: K007 not an envelope, K002 a trusted key's
signature fails, K003 no trusted key signed. Spec: ``spec/signing.md#signatures``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from reprobridge_sdk.findings import Finding, finding

from .keys import SigningKey, TrustedKeys, _crypto

__all__ = ["PAYLOAD_TYPE", "Envelope", "Verified", "pae", "sign_payload", "verify_envelope"]

#: The payload type of an in-toto statement.
PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, body: bytes) -> bytes:
    """The pre-authentication encoding of DSSE v1."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(body), body)


@dataclass(frozen=True)
class Envelope:
    """A parsed envelope: the payload bytes and ``(keyid, signature)`` pairs."""

    payload_type: str
    payload: bytes
    signatures: tuple[tuple[str, bytes], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "payloadType": self.payload_type,
            "signatures": [
                {"keyid": kid, "sig": base64.b64encode(sig).decode("ascii")}
                for kid, sig in self.signatures
            ],
        }


def sign_payload(payload: bytes, key: SigningKey, payload_type: str = PAYLOAD_TYPE) -> Envelope:
    """Sign ``payload`` with ``key`` into a one-signature envelope."""
    return Envelope(payload_type, payload, ((key.keyid, key.sign(pae(payload_type, payload))),))


def _b64(value: object) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_envelope(data: object) -> Envelope | None:
    """An :class:`Envelope` from its JSON value, or ``None`` if it is not one."""
    if not isinstance(data, dict):
        return None
    payload = _b64(data.get("payload"))
    kind = data.get("payloadType")
    sigs = data.get("signatures")
    if payload is None or not isinstance(kind, str) or not isinstance(sigs, list) or not sigs:
        return None
    pairs: list[tuple[str, bytes]] = []
    for item in sigs:
        sig = _b64(item.get("sig")) if isinstance(item, dict) else None
        kid = item.get("keyid", "") if isinstance(item, dict) else None
        if sig is None or not isinstance(kid, str):
            return None
        pairs.append((kid, sig))
    return Envelope(kind, payload, tuple(pairs))


@dataclass(frozen=True)
class Verified:
    """A verified envelope: the decoded statement and the signer's name."""

    statement: dict[str, Any]
    signer: str
    keyid: str


def verify_envelope(
    data: object, trusted: TrustedKeys, *, where: str = ""
) -> tuple[Verified | None, list[Finding]]:
    """Verify a parsed JSON envelope against ``trusted``; findings say why it fails."""
    envelope = parse_envelope(data)
    if envelope is None:
        return None, [finding("K007", "not a DSSE envelope", file=where)]
    ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415

    message = pae(envelope.payload_type, envelope.payload)
    known = False
    for kid, sig in envelope.signatures:
        key = trusted.get(kid)
        if key is None:
            continue
        known = True
        try:
            ed25519.Ed25519PublicKey.from_public_bytes(key.public_raw).verify(sig, message)
        except InvalidSignature:
            continue
        try:
            statement = json.loads(envelope.payload)
        except (ValueError, RecursionError):
            statement = None
        if envelope.payload_type != PAYLOAD_TYPE or not isinstance(statement, dict):
            return None, [
                finding("K007", "the signed payload is not an in-toto statement", file=where)
            ]
        return Verified(statement, key.name, kid), []
    if known:
        return None, [
            finding(
                "K002",
                "the signature does not verify: the envelope was changed after signing",
                file=where,
            )
        ]
    kids = ", ".join(kid[:16] or "(none)" for kid, _ in envelope.signatures)
    return None, [
        finding(
            "K003",
            f"signed by a key that is not trusted (key id {kids})",
            file=where,
            hint="add the signer's public key to the KEYS file only if you trust its holder",
        )
    ]
