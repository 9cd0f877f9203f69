"""Ed25519 signing keys and the KEYS file of trusted public keys (``spec/signing.md#keys``).

A signing key is an unencrypted PKCS#8 PEM, from a file or :data:`KEY_ENV`; a key id is the
hex SHA-256 of the raw public key. A bad key is K006 and a bad KEYS line K005, never a
traceback.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.errors import UsageError, require_extra
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import reading, safefs

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "KEY_ENV",
    "ROLES",
    "SigningKey",
    "TrustedKey",
    "TrustedKeys",
    "generate_key",
    "keyid_of",
    "load_signing_key",
    "load_trusted_keys",
    "parse_trusted_keys",
    "public_line",
]

#: The environment variable that may hold the signing key's PEM text.
KEY_ENV = "REPROBRIDGE_SIGNING_KEY"
_NAME_RE = re.compile(r"^[A-Za-z0-9._@+-]{1,64}$")
#: The roles a KEYS line may give its key; a line without one is an author's.
ROLES = ("author", "committee")


def _crypto() -> Any:
    """The ``cryptography`` ed25519 module, or E015 naming the extra ``signing``.

    Every entry point of this package calls it before any other import of ``cryptography``,
    so a missing extra is E015 (:func:`~reprobridge_sdk.errors.require_extra`), not an
    import error."""
    return require_extra(
        "cryptography.hazmat.primitives.asymmetric.ed25519", "signing", feature="signing"
    )


def keyid_of(public_raw: bytes) -> str:
    """The key id of a raw ed25519 public key."""
    return hashlib.sha256(public_raw).hexdigest()


@dataclass(frozen=True)
class SigningKey:
    """A private key ready to sign, with its public half and key id."""

    private: Ed25519PrivateKey = field(repr=False)
    public_raw: bytes
    keyid: str

    def sign(self, message: bytes) -> bytes:
        return bytes(self.private.sign(message))


def _raw_public(private: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    return bytes(
        private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
    )


def generate_key() -> tuple[bytes, SigningKey]:
    """A new key: ``(PEM of the private key, the signing key)``."""
    ed25519 = _crypto()  # first: E015 when the extra is missing
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    private = ed25519.Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    raw = _raw_public(private)
    return bytes(pem), SigningKey(private=private, public_raw=raw, keyid=keyid_of(raw))


def public_line(name: str, key: SigningKey, role: str | None = None) -> str:
    """The KEYS line that trusts ``key`` under ``name`` (with ``role``, when given)."""
    line = f"{name} ed25519 {base64.b64encode(key.public_raw).decode('ascii')}"
    return f"{line} {role}" if role else line


def load_signing_key(
    path: str | os.PathLike[str] | None = None, *, environ: dict[str, str] | None = None
) -> SigningKey:
    """The signing key from ``path``, else from :data:`KEY_ENV`; K006 when neither works."""
    env = os.environ if environ is None else environ
    source: str
    if path is not None:
        source = os.fspath(path)
        try:
            pem = Path(path).read_bytes()
        except OSError as exc:
            raise _key_error(f"cannot read the signing key {source}: {exc.strerror}") from None
    elif env.get(KEY_ENV):
        source = f"${KEY_ENV}"
        pem = env[KEY_ENV].encode("utf-8")
    else:
        raise _key_error(f"no signing key: give a key file or set {KEY_ENV}")
    ed25519 = _crypto()
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    try:
        private = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise _key_error(f"{source} is not an unencrypted PEM private key") from None
    if not isinstance(private, ed25519.Ed25519PrivateKey):
        raise _key_error(f"{source} is not an ed25519 key")
    raw = _raw_public(private)
    return SigningKey(private=private, public_raw=raw, keyid=keyid_of(raw))


def _key_error(message: str) -> UsageError:
    return UsageError(
        message,
        [finding("K006", message, hint="create one with 'reprobridge keys generate'")],
    )


@dataclass(frozen=True)
class TrustedKey:
    """A public key the verifier trusts, and the name of its holder."""

    name: str
    public_raw: bytes
    keyid: str
    #: ``author`` (the default) or ``committee``: see :data:`ROLES`.
    role: str = "author"


@dataclass(frozen=True)
class TrustedKeys:
    """The keys of a KEYS file by key id."""

    keys: dict[str, TrustedKey]
    source: str = ""

    def get(self, keyid: str) -> TrustedKey | None:
        return self.keys.get(keyid)

    def committee(self) -> frozenset[str]:
        """The names of the signers whose keys the KEYS file marks as the committee's."""
        return frozenset(k.name for k in self.keys.values() if k.role == "committee")


def _line_problem(parts: list[str]) -> str | None:
    """What is wrong with one KEYS line's fields, or ``None``."""
    if len(parts) not in (3, 4):
        return "expected 'NAME ed25519 PUBLIC-KEY [ROLE]'"
    if not _NAME_RE.match(parts[0]):
        return f"{parts[0]!r} is not a signer name"
    if parts[1] != "ed25519":
        return f"unknown algorithm {parts[1]!r}: only ed25519"
    try:
        raw = base64.b64decode(parts[2], validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        return "the key is not the base64 of 32 raw ed25519 public key bytes"
    if len(parts) == 4 and parts[3] not in ROLES:
        return f"unknown role {parts[3]!r}: one of {', '.join(ROLES)}"
    return None


def parse_trusted_keys(text: str, source: str = "KEYS") -> TrustedKeys:
    """Parse a KEYS file's text; :class:`UsageError` (K005, located) when it is malformed."""
    keys: dict[str, TrustedKey] = {}
    names: set[str] = set()
    problems = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        problem = _line_problem(parts)
        if problem is None:
            raw = base64.b64decode(parts[2], validate=True)
            kid = keyid_of(raw)
            if kid in keys or parts[0] in names:
                problem = "the key or the name is listed twice"
            else:
                role = parts[3] if len(parts) == 4 else "author"
                keys[kid] = TrustedKey(parts[0], raw, kid, role)
                names.add(parts[0])
                continue
        problems.append(finding("K005", problem, file=source, line=number, col=1))
    if problems:
        msg = f"{source}: {len(problems)} malformed line(s)"
        raise UsageError(msg, problems)
    return TrustedKeys(keys, source)


def load_trusted_keys(path: str | os.PathLike[str]) -> TrustedKeys:
    """Read a KEYS file (K005 when it cannot be read or parsed)."""
    source = os.fspath(path)
    try:
        text = reading.decode(reading.read_bytes(path, max_bytes=safefs.MAX_TEXT_BYTES))
    except reading.Unreadable as exc:
        msg = f"cannot read the KEYS file {source}: {exc.message}"
        item = finding("K005", msg, file=source, line=exc.line, col=exc.col)
        raise UsageError(msg, [item]) from None
    return parse_trusted_keys(text, source)
