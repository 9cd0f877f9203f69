"""The exception hierarchy of the public API.

Every exception that crosses the public API derives from :class:`ReproBridgeError` and
carries the findings that explain it; a user's bad input never surfaces as a traceback.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

from reprobridge_sdk import DISTRIBUTION

if TYPE_CHECKING:
    from .findings import Finding

__all__ = [
    "ArtifactError",
    "MissingExtraError",
    "ReproBridgeError",
    "UsageError",
    "require_extra",
]


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


class MissingExtraError(UsageError):
    """A feature needs an optional extra of the distribution that is not installed (E015)."""

    def __init__(self, message: str, findings: Iterable[Finding], *, extra: str) -> None:
        super().__init__(message, findings)
        self.extra = extra


def install_command(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'reprobridge[EXTRA]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require_extra(module: str, extra: str, *, feature: str | None = None) -> ModuleType:
    """Import ``module``, a dependency of the optional ``extra``, or raise MissingExtraError.

    The one place that turns "No module named X" into E015, whose hint installs the extra.
    ``feature`` names what needs it (default: the extra). An import error raised from inside an
    installed module is that module's bug and propagates unchanged.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing is not None and module != missing and not module.startswith(f"{missing}."):
            raise
        from .findings import finding  # noqa: PLC0415 - the findings registry loads lazily

        what = feature or extra
        message = f"{what} needs the optional extra {extra!r} ({module} is not installed)"
        item = finding("E015", message, path=f"/extras/{extra}", hint=install_command(extra))
        raise MissingExtraError(message, [item], extra=extra) from None
