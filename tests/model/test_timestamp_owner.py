"""Timestamps have one owner, ``timestamps.py``'s ``utc_now``: every record, snapshot,
check record and cache marker carries the one shape the spec's records use (RFC 3339 in
UTC, microseconds, ``Z``). Checked on the syntax tree: no other module reads the clock as a
date and time (``datetime.now``, ``datetime.utcnow``, ``time.strftime``, ``time.gmtime``).
``agent/`` joins with the build agent's issue."""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path

from reprobridge_sdk.timestamps import utc_now

PACKAGE = Path(__file__).resolve().parent.parent.parent / "reprobridge_sdk"
OWNER = "timestamps.py"
#: Modules that read the clock for something other than a timestamp: the reason for each.
ALLOWED = {
    "authoring/scaffold.py": "a new study's calendar date, not a timestamp",
}
NOT_YET = ("agent/",)
_CLOCKS = {("datetime", "now"), ("datetime", "utcnow"), ("time", "strftime"), ("time", "gmtime")}
SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def _clock_reads(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) in _CLOCKS
    ]


def test_only_the_owner_reads_the_clock_as_a_timestamp() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == OWNER or rel in ALLOWED or rel.startswith(NOT_YET):
            continue
        lines = _clock_reads(ast.parse(path.read_text("utf-8")))
        if lines:
            found[rel] = lines
    assert found == {}, f"use reprobridge_sdk.timestamps.utc_now: {found}"


def test_the_one_timestamp_shape_is_rfc_3339_utc_with_microseconds() -> None:
    stamp = utc_now()
    assert SHAPE.fullmatch(stamp), stamp
    parsed = datetime.fromisoformat(stamp)
    assert parsed.tzinfo == UTC
    assert abs((datetime.now(UTC) - parsed).total_seconds()) < 60
