"""How an agent's run ended (:func:`classify`) and what it reported spending through the
usage channel (:func:`read_usage`). See spec §18.5."""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reprobridge_sdk.model.bench import RunOutcome, Usage

__all__ = ["USAGE_NAME", "classify", "read_usage"]


#: The usage channel: JSON lines the agent may append in its workspace.
USAGE_NAME = "bench-usage.jsonl"


#: Lines of the usage channel read at most, and its largest size read.
MAX_USAGE_LINES = 10_000


MAX_USAGE_BYTES = 1 << 20


#: The largest token count summed (the report's integers stay 64-bit).
MAX_TOKENS = (1 << 63) - 1


#: Bytes of the log scanned for the markers of :func:`classify`.
SCAN_BYTES = 4 << 20


_OUTSIDE_MARKERS = (b"Read-only file system",)


def _log_has(log: Path, markers: Sequence[bytes]) -> bool:
    try:
        with log.open("rb") as handle:
            data = handle.read(SCAN_BYTES)
    except OSError:
        return False
    return any(marker in data for marker in markers)


def classify(outcome: Any, log: Path) -> RunOutcome:
    """How a run ended: the first outcome of spec/bench.md §18.5 ("run-outcomes") that holds."""
    from reprobridge_sdk.run.process import ended_by, out_of_memory  # noqa: PLC0415

    if outcome.not_found is not None:
        return "not-started"
    if outcome.timed_out:
        return "timeout"
    if outcome.cancelled:
        return "over-cost"
    if outcome.flooded:
        return "flood"
    code = outcome.exit_code
    if ended_by(code) == signal.SIGXCPU:
        return "cpu-limit"
    if out_of_memory(code, log):
        return "over-memory"
    if _log_has(log, _OUTSIDE_MARKERS):
        return "wrote-outside"
    if code != 0:
        return "crash"
    return "finished"


def _amount(value: object) -> float | None:
    """``value`` as a cost the channel counts: a finite number, not negative (a negative
    line would hide what came before it from the cost cap); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        amount = float(value)
    except OverflowError:  # an integer past any float
        return None
    return amount if math.isfinite(amount) and amount >= 0 else None


def _head(path: Path) -> bytes | None:
    """The first :data:`MAX_USAGE_BYTES` of ``path`` when it is a regular file, else None.

    Opened without following a link and without blocking (a FIFO the agent swapped in while
    the cost watch reads would otherwise hold it forever), then checked on the open handle.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_USAGE_BYTES)


def read_usage(workspace: Path) -> Usage:
    """The usage lines the agent left (:data:`USAGE_NAME`), summed; malformed lines, negative
    or non-finite amounts and anything but a regular file of the workspace are ignored."""
    data = _head(workspace / USAGE_NAME)
    if data is None:
        return Usage()
    tokens: int | None = None
    cost: float | None = None
    currency: str | None = None
    count = 0
    for line in data.splitlines()[:MAX_USAGE_LINES]:
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):  # a line nested past the parser's depth
            continue
        if not isinstance(item, dict):
            continue
        count += 1
        spent = item.get("tokens")
        if isinstance(spent, int) and not isinstance(spent, bool) and spent >= 0:
            tokens = min((tokens or 0) + spent, MAX_TOKENS)
        price = _amount(item.get("cost"))
        if price is not None:
            cost = min((cost or 0.0) + price, sys.float_info.max)
        if isinstance(item.get("currency"), str) and len(item["currency"]) <= 8:
            currency = item["currency"]
    return Usage(tokens=tokens, cost=cost, currency=currency, lines=count)
