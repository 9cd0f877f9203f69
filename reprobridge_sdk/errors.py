"""The exception hierarchy of the public API.

Every exception that crosses the public API derives from :class:`ReproBridgeError` and
carries the findings that explain it; a user's bad input never surfaces as a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .findings import Finding

__all__ = ["ArtifactError", "ReproBridgeError", "UsageError"]


class ReproBridgeError(Exception):
    """Base of all errors raised by the SDK; ``findings`` tells what went wrong and where."""

    def __init__(self, message: str, findings: Iterable[Finding] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.findings: tuple[Finding, ...] = tuple(findings)


class ArtifactError(ReproBridgeError):
    """An artifact could not be read, written or used as asked."""


class UsageError(ReproBridgeError):
    """The caller asked for something that cannot be done (bad option, unknown id)."""
