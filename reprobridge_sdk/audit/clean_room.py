"""The clean-room check's record, ``runs/check.json`` (spec authoring.md#check-record):
written by ``reprobridge check --record``, read by the audit for the *reusable* badge, which
counts it only when it passed and the artifact's files are still those it checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reprobridge_sdk.contents import RUNS_DIR, files_digest
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model.evidence import utc_now

__all__ = ["CHECK_RECORD", "CHECK_VERSION", "check_record", "clean_room_problem"]

#: The record's name in the runs directory.
CHECK_RECORD = "check.json"
CHECK_VERSION = "1.0"
#: A record is a few hundred bytes; anything past this is not one.
_MAX_BYTES = 64 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}")
_WHERE = f"{RUNS_DIR}/{CHECK_RECORD}"


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
        "finished": utc_now(),
    }


def _read(root: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        raw = safefs.read_bytes(
            root / RUNS_DIR / CHECK_RECORD, root=root, max_bytes=_MAX_BYTES, allow_links=False
        )
        data = safefs.loads_json(raw, path=_WHERE, max_depth=8)
    except FileNotFoundError:
        return None, f"no clean-room check on record ({_WHERE})"
    except (OSError, ValueError, ReproBridgeError) as exc:
        return None, f"the clean-room check record {_WHERE} cannot be read: {exc}"
    if not isinstance(data, dict):
        return None, f"the clean-room check record {_WHERE} is not a JSON object"
    return data, None


def clean_room_problem(root: Path) -> str | None:
    """Why the artifact at ``root`` has no passing clean-room check on record; ``None``: it
    has one, and its files are those the check ran."""
    data, problem = _read(root)
    if data is None:
        return problem
    return _record_problem(data) or _changed(root, data["artifact_files_sha256"])


def _record_problem(data: dict[str, Any]) -> str | None:
    """Why the record itself does not count: another version, a step that failed, no digest."""
    if data.get("check_version") != CHECK_VERSION:
        return f"the clean-room check record {_WHERE} is not of version {CHECK_VERSION}"
    steps = data.get("steps")
    if (
        data.get("passed") is not True
        or not isinstance(steps, list)
        or not steps
        or not all(isinstance(s, dict) and s.get("ok") is True for s in steps)
    ):
        return f"the clean-room check on record ({_WHERE}) did not pass"
    digest = data.get("artifact_files_sha256")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        return f"the clean-room check record {_WHERE} names no artifact files digest"
    return None


def _changed(root: Path, digest: str) -> str | None:
    """Why the artifact's files are not those the check ran, if they are not."""
    from reprobridge_sdk.api import load  # noqa: PLC0415 - a lower layer, only with a record

    try:
        current = files_digest(root, load(root).manifest)
    except (ReproBridgeError, OSError) as exc:
        return f"the artifact's files cannot be listed to compare with {_WHERE}: {exc}"
    if current != digest:
        return (
            f"the clean-room check on record ({_WHERE}) checked other files: the artifact "
            "changed since"
        )
    return None
