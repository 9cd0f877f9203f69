"""The census of finding codes that the tests produce (read by ``test_codes_produced.py``).

A code counts as produced when a :class:`~reprobridge_sdk.findings.Finding` with that code is
built in this process while a test function runs (its call phase, not its fixtures). Property
tests (Hypothesis) do not count: their examples are drawn at random, and a census that depends
on the draw would pass on one run and fail on the next.

Codes produced in a subprocess that a test starts (the CLI, a driver script) count too,
through the SDK's test hook (:mod:`reprobridge_sdk.findings`): while a counted test runs,
``_REPROBRIDGE_CODE_CENSUS`` in this process's environment names a file of that test's own,
every process started then inherits it, and each finding built in such a process appends its
code there. When the test ends the file is read and its codes are the test's. A subprocess
started with an environment of its own that leaves the variable out (a clean-room shell) is
not seen.

The census is complete only when the whole suite is collected with nothing deselected;
:func:`complete` says whether it is, and why not.

Under pytest-xdist each worker keeps the census of its own tests and hands it to the
controller when it finishes (:func:`export`, :func:`merge`); the controller then gives the
verdict for the whole suite (``tests/conftest.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import reprobridge_sdk
from reprobridge_sdk.findings import Finding, registry

TESTS = Path(__file__).resolve().parent
PACKAGE = Path(reprobridge_sdk.__file__).resolve().parent
#: The environment variable of the SDK's census hook.
HOOK = "_REPROBRIDGE_CODE_CENSUS"

#: code -> the node ids of the tests that produced it.
PRODUCED: dict[str, set[str]] = {}
#: The test running now (``None`` between tests and in property tests).
CURRENT: list[str | None] = [None]
#: Why the census is not of the whole suite (empty when it is).
INCOMPLETE: list[str] = []
#: The directory of the tests' census files (made on first use) and how many were handed out.
_FILES: dict[str, Any] = {"dir": None, "count": 0}

_original_init: Callable[..., None] = Finding.__init__


def _recording_init(self: Finding, *args: Any, **kwargs: Any) -> None:
    _original_init(self, *args, **kwargs)
    current = CURRENT[0]
    if current is not None and self.code:
        PRODUCED.setdefault(self.code, set()).add(current)


def begin(nodeid: str | None) -> None:
    """A test starts: ``nodeid`` (``None`` for a test that is not counted) is the current one."""
    CURRENT[0] = nodeid
    if nodeid is None:
        os.environ.pop(HOOK, None)
        return
    if _FILES["dir"] is None:
        _FILES["dir"] = tempfile.mkdtemp(prefix="code-census-")
    _FILES["count"] += 1
    os.environ[HOOK] = os.path.join(_FILES["dir"], f"{_FILES['count']}.codes")


def harvest() -> None:
    """Record the codes that subprocesses of the current test have written so far."""
    current, name = CURRENT[0], os.environ.get(HOOK)
    if current is None or name is None:
        return
    try:
        with open(name, "rb") as handle:
            text = handle.read().decode("ascii", "replace")
        os.unlink(name)
    except FileNotFoundError:
        return
    for code in text.split():
        PRODUCED.setdefault(code, set()).add(current)


def end() -> None:
    """The current test is over: harvest its subprocesses' codes."""
    try:
        harvest()
    finally:
        CURRENT[0] = None
        os.environ.pop(HOOK, None)


def cleanup() -> None:
    """Remove the census files (the session is over)."""
    if _FILES["dir"] is not None:
        shutil.rmtree(_FILES["dir"], ignore_errors=True)
        _FILES["dir"] = None


def missing(emitted: Iterable[str], produced: dict[str, set[str]]) -> list[str]:
    """The codes of ``emitted`` that no test produced, sorted: the census's verdict."""
    return sorted(code for code in set(emitted) if not produced.get(code))


def install() -> None:
    """Record every finding built from now on (idempotent)."""
    Finding.__init__ = _recording_init  # type: ignore[method-assign]


def complete() -> str | None:
    """``None`` when the census covers the whole suite, else the reason it does not."""
    return "; ".join(INCOMPLETE) or None


def named_in_the_package() -> set[str]:
    """The codes that appear as string literals in the package's modules."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        found.update(re.findall(r"""["']([A-Z]\d{3})["']""", path.read_text("utf-8")))
    return found


def emitted() -> set[str]:
    """The registered codes that the package emits (names in a module)."""
    return named_in_the_package() & set(registry())


def export(produced: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """A census (this process's by default) as plain data that a pytest-xdist worker can send
    to the controller."""
    produced = PRODUCED if produced is None else produced
    return {
        "produced": {code: sorted(tests) for code, tests in produced.items()},
        "incomplete": list(INCOMPLETE),
    }


def merge(
    exported: dict[str, Any],
    produced: dict[str, set[str]] | None = None,
    incomplete: list[str] | None = None,
) -> None:
    """Add a worker's census (:func:`export`) to this process's (or to the given one)."""
    produced = PRODUCED if produced is None else produced
    incomplete = INCOMPLETE if incomplete is None else incomplete
    for code, tests in exported["produced"].items():
        produced.setdefault(code, set()).update(tests)
    incomplete.extend(reason for reason in exported["incomplete"] if reason not in incomplete)
