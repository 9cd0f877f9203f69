"""The census of finding codes that the tests produce (read by ``test_codes_produced.py``).

A code counts as produced when a :class:`~reprobridge_sdk.findings.Finding` with that code is
built in this process while a test function runs (its call phase, not its fixtures). Property
tests (Hypothesis) do not count: their examples are drawn at random, and a census that depends
on the draw would pass on one run and fail on the next. Codes that only a subprocess produces
do not count either: each code needs a test that produces it in process, where its values can
be checked.

The census is complete only when the whole suite is collected with nothing deselected;
:func:`complete` says whether it is, and why not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reprobridge_sdk.findings import Finding

TESTS = Path(__file__).resolve().parent

#: code -> the node ids of the tests that produced it.
PRODUCED: dict[str, set[str]] = {}
#: The test running now (``None`` between tests and in property tests).
CURRENT: list[str | None] = [None]
#: Why the census is not of the whole suite (empty when it is).
INCOMPLETE: list[str] = []

_original_init: Callable[..., None] = Finding.__init__


def _recording_init(self: Finding, *args: Any, **kwargs: Any) -> None:
    _original_init(self, *args, **kwargs)
    current = CURRENT[0]
    if current is not None and self.code:
        PRODUCED.setdefault(self.code, set()).add(current)


def install() -> None:
    """Record every finding built from now on (idempotent)."""
    Finding.__init__ = _recording_init  # type: ignore[method-assign]


def complete() -> str | None:
    """``None`` when the census covers the whole suite, else the reason it does not."""
    return "; ".join(INCOMPLETE) or None
