"""Environments: locks, cached venvs, checks, snapshots and data (spec §6.3 to §6.5, §10.2).

The names are imported lazily, so ``import reprobridge_sdk.env`` is cheap and a command that
needs only snapshots does not pay for the resolver or the downloader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobridge_sdk._lazy import lazy_names

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
    ".snapshot": "capture_snapshot",
    ".check": "check_environment",
    ".data": "DataResult fetch_data verify_data",
    ".lock": "LockResult lock_artifact",
    ".venv": "cache_root ensure_environment environment_path",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
