"""The clean-room check's record (spec authoring.md#check-record): written by the check, read by
the audit for the *reusable* badge.

``reprobridge check --record`` writes ``runs/check.json`` into the artifact it checked, beside
the run ledger (evidence, not the artifact: the runs directory is left out of the artifact's
files and of its archive unless packed with its runs). The record says what was checked, by
the SHA-256 of the artifact's file list (:func:`reprobridge_sdk.contents.files_digest`) taken
from the clean room's copy before anything ran, and how each step ended. An audit counts it
only when it passed and the artifact's files are still those checked: a record of another
version of the artifact, or of a failed check, is no clean-room check on record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reprobridge_sdk.contents import RUNS_DIR, files_digest
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.io import safefs

__all__ = ["CHECK_RECORD", "CHECK_VERSION", "check_record", "clean_room_problem"]

#: The record's name in the runs directory.
CHECK_RECORD = "check.json"
CHECK_VERSION = "1.0"
#: A record is a few hundred bytes; anything past this is not one.
_MAX_BYTES = 64 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}")


def check_record(
    artifact: str,
    digest: str,
    steps: Sequence[tuple[str, bool]],
    *,
    scored: bool,
    archive_sha256: str | None,
) -> dict[str, Any]:
    """The record of one check: the artifact's id, its files' digest, each step's outcome."""
    return {
        "check_version": CHECK_VERSION,
        "artifact": artifact,
        "artifact_files_sha256": digest,
        "archive_sha256": archive_sha256,
        "scored": scored,
        "passed": bool(steps) and all(ok for _, ok in steps),
        "steps": [{"name": name, "ok": ok} for name, ok in steps],
        "finished": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _read(root: Path) -> tuple[dict[str, Any] | None, str | None]:
    where = f"{RUNS_DIR}/{CHECK_RECORD}"
    try:
        raw = safefs.read_bytes(
            root / RUNS_DIR / CHECK_RECORD, root=root, max_bytes=_MAX_BYTES, allow_links=False
        )
        data = safefs.loads_json(raw, path=where, max_depth=8)
    except FileNotFoundError:
        return None, f"no clean-room check on record ({where})"
    except (OSError, ValueError, ReproBridgeError) as exc:
        return None, f"the clean-room check record {where} cannot be read: {exc}"
    if not isinstance(data, dict):
        return None, f"the clean-room check record {where} is not a JSON object"
    return data, None


def clean_room_problem(root: Path) -> str | None:
    """Why the artifact at ``root`` has no passing clean-room check on record; ``None``: it
    has one, and its files are those the check ran."""
    data, problem = _read(root)
    if data is None:
        return problem
    where = f"{RUNS_DIR}/{CHECK_RECORD}"
    if data.get("check_version") != CHECK_VERSION:
        return f"the clean-room check record {where} is not of version {CHECK_VERSION}"
    steps = data.get("steps")
    if (
        data.get("passed") is not True
        or not isinstance(steps, list)
        or not steps
        or not all(isinstance(s, dict) and s.get("ok") is True for s in steps)
    ):
        return f"the clean-room check on record ({where}) did not pass"
    digest = data.get("artifact_files_sha256")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        return f"the clean-room check record {where} names no artifact files digest"
    from reprobridge_sdk.api import load  # noqa: PLC0415 - a lower layer, only with a record

    try:
        current = files_digest(root, load(root).manifest)
    except (ReproBridgeError, OSError) as exc:
        return f"the artifact's files cannot be listed to compare with {where}: {exc}"
    if current != digest:
        return (
            f"the clean-room check on record ({where}) checked other files: the artifact "
            "changed since"
        )
    return None
