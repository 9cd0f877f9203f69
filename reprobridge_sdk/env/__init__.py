"""Environments: locks, cached venvs, checks, snapshots and data (spec §6.3 to §6.5, §10.2).

The names are imported lazily, so ``import reprobridge_sdk.env`` is cheap and a command that
needs only snapshots does not pay for the resolver or the downloader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .check import check_environment
    from .data import DataResult, fetch_data, verify_data
    from .lock import LockResult, lock_artifact
    from .snapshot import capture_snapshot
    from .venv import cache_root, ensure_environment, environment_path

__all__ = [
    "DataResult",
    "LockResult",
    "cache_root",
    "capture_snapshot",
    "check_environment",
    "ensure_environment",
    "environment_path",
    "fetch_data",
    "lock_artifact",
    "verify_data",
]

_WHERE = {
    "capture_snapshot": "snapshot",
    "check_environment": "check",
    "DataResult": "data",
    "fetch_data": "data",
    "verify_data": "data",
    "LockResult": "lock",
    "lock_artifact": "lock",
    "cache_root": "venv",
    "ensure_environment": "venv",
    "environment_path": "venv",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
