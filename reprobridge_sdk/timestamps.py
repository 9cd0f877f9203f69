"""The format's one timestamp shape, owned here: records, snapshots, check records and cache
markers carry it. A module of its own, so that a command stamping a time (a cache marker) does
not import the data model."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["utc_now"]


def utc_now() -> str:
    """The current time as the format's one timestamp shape: RFC 3339 in UTC with
    microseconds and ``Z`` (``2026-12-03T13:44:44.123456Z``), as records carry it."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
