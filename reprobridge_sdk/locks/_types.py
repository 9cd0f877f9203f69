"""The values both lock readers share, so neither imports the other at module level, and
:func:`is_local_location`, the one definition of a machine-local location.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from packaging.version import Version

from reprobridge_sdk.errors import ArtifactError

__all__ = [
    "PYLOCK_VERSION",
    "Lock",
    "LockEntry",
    "LockError",
    "LockFormat",
    "is_local_location",
]

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", ""})  # noqa: S104 - a host name compared, not bound

LockFormat = Literal["requirements", "pylock"]
#: The PEP 751 ``lock-version`` this module fully understands.
PYLOCK_VERSION = Version("1.0")


class LockError(ArtifactError):
    """A lock file cannot be read or parsed; ``findings`` locate the problems."""


@dataclass(frozen=True)
class LockEntry:
    """One pinned distribution of a lock."""

    name: str
    version: str | None
    hashes: tuple[str, ...] = ()
    markers: str | None = None
    url: str | None = None
    line: int = 0

    @property
    def requirement(self) -> str:
        """``name==version`` (or ``name @ url``), with markers when there are any."""
        spec = f"{self.name} @ {self.url}" if self.url else f"{self.name}=={self.version}"
        return f"{spec} ; {self.markers}" if self.markers else spec


@dataclass(frozen=True)
class Lock:
    """A parsed lock: its format and its entries in file order."""

    format: LockFormat
    entries: tuple[LockEntry, ...] = ()
    requires_python: str | None = None
    created_by: str | None = None


def is_local_location(location: str) -> bool:
    """True for a ``file:`` URL, a filesystem path, or a URL on a loopback host."""
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return True
    if scheme in {"http", "https"}:
        return (parts.hostname or "").lower() in _LOCAL_HOSTS or (parts.hostname or "").startswith(
            "127."
        )
    if len(scheme) == 1:  # a Windows drive letter, "C:\\wheels"
        return True
    return not scheme  # no scheme: a relative or absolute path
