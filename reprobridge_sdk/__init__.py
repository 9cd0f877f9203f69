"""ReproBridge SDK: read, write, validate, run and audit Refined Reproducible Artifacts.

The public names below are imported lazily (PEP 562) so that importing the package, and
running the command line, stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _forward

if TYPE_CHECKING:
    from ._forward import DocumentView
    from .api import ArtifactDir, create, load
    from .errors import ArtifactError, ReproBridgeError, UsageError
    from .findings import Finding, Severity
    from .model import EvidenceRecord, Manifest
    from .validation import ValidationResult, validate

#: The distribution's name on the package index (``pip install reprobridge``); the import
#: package is ``reprobridge_sdk``. Defined here, not in a submodule, so that ``--version``
#: costs no import.
DISTRIBUTION = "reprobridge"

__all__ = [
    "DISTRIBUTION",
    "ArtifactDir",
    "ArtifactError",
    "EvidenceRecord",
    "Finding",
    "Manifest",
    "ReproBridgeError",
    "Severity",
    "UsageError",
    "ValidationResult",
    "create",
    "load",
    "validate",
]

_LAZY = {
    "ArtifactDir": ".api",
    "create": ".api",
    "load": ".api",
    "ArtifactError": ".errors",
    "ReproBridgeError": ".errors",
    "UsageError": ".errors",
    "Finding": ".findings",
    "Severity": ".findings",
    "EvidenceRecord": ".model",
    "Manifest": ".model",
    "ValidationResult": ".validation",
    "validate": ".validation",
}


def _consumer_view(data: Any) -> tuple[Any, DocumentView | None]:
    """The forward-compatibility reader of the layers below the API (see :mod:`._forward`):
    the API's own, imported by name when a newer-minor document is first read (as the public
    names are, by :func:`__getattr__`)."""
    view: tuple[Any, DocumentView | None] = importlib.import_module(".api", __name__).consumer_view(
        data
    )
    return view


_forward.register(_consumer_view)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
