"""Findings: what validators, environment checks and the auditor report.

A finding is a value, not an exception. Codes live in one registry, ``validators/codes.json``
(spec/conformance.md §16.3).

A test hook: when ``_REPROBRIDGE_CODE_CENSUS`` names a file at import, every finding appends
its code to it, so the code census counts the codes of subprocesses too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from types import MappingProxyType
from typing import Any

__all__ = [
    "SPEC_URL",
    "CodeInfo",
    "Finding",
    "Severity",
    "code_info",
    "finding",
    "finding_line",
    "registry",
    "terminal_text",
]

#: Base URL of the published specification (the directory ``spec/`` of the repository); a
#: code's ``spec`` (a part and an anchor, ``manifest.md#yaml``) is appended after a ``/``.
SPEC_URL = "https://reprobridge.org/spec"

#: The census file of the test hook (see the module docstring), read once, at import.
_CENSUS_FILE = os.environ.get("_REPROBRIDGE_CODE_CENSUS") or None


def _census(code: str) -> None:
    """Append ``code`` to the census file of the test hook."""
    assert _CENSUS_FILE is not None
    with contextlib.suppress(OSError):
        handle = os.open(_CENSUS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(handle, f"{code}\n".encode())
        finally:
            os.close(handle)


class Severity(StrEnum):
    """How serious a finding is. ``error`` fails validation; ``warning`` fails only --strict."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(frozen=True)
class CodeInfo:
    """One entry of the code registry."""

    code: str
    name: str
    severity: Severity
    status: str
    since: str
    spec: str
    summary: str
    #: The severity in each context that reports the code (``validation``, ``run``,
    #: ``audit``, ``authoring``); ``severity`` is the most severe of them.
    contexts: Mapping[str, Severity] = field(default_factory=dict)
    #: Where a finding with this code points (spec §9.2 for validation).
    pointer: str = ""
    #: Why a finding with this code matters to a user (a sentence or two).
    why: str = ""
    #: How to fix such a finding, in general (a finding's own hint is more specific).
    fix: str = ""

    def severity_in(self, context: str) -> Severity:
        """The code's severity in ``context`` (its default when the context is not listed)."""
        return self.contexts.get(context, self.severity)


@dataclass(frozen=True, order=True)
class Finding:
    """One problem found in an artifact, a lock, an environment or a piece of evidence."""

    file: str = ""
    line: int = 0
    col: int = 0
    code: str = field(default="", compare=True)
    severity: Severity = field(default=Severity.ERROR, compare=False)
    message: str = field(default="", compare=False)
    path: str = field(default="", compare=False)
    hint: str | None = field(default=None, compare=False)
    spec: str | None = field(default=None, compare=False)

    if _CENSUS_FILE is not None:  # the test hook: defined only when it is on

        def __post_init__(self) -> None:
            if self.code:
                _census(self.code)

    @property
    def location(self) -> str:
        """``file:line:col`` (parts that are unknown are left out)."""
        if not self.file:
            return ""
        if self.line:
            return f"{self.file}:{self.line}:{self.col or 1}"
        return self.file

    def with_severity(self, severity: Severity) -> Finding:
        return replace(self, severity=severity)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by the ``json`` reporter and the conformance suite."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "path": self.path,
            "file": self.file or None,
            "line": self.line or None,
            "col": self.col or None,
            "hint": self.hint,
            "spec": self.spec,
        }


@lru_cache(maxsize=1)
def registry() -> dict[str, CodeInfo]:
    """All registered codes, by code."""
    from importlib import resources  # noqa: PLC0415 - start-up: only when a code is looked up

    text = resources.files(__package__).joinpath("_data/codes.json").read_text("utf-8")
    data = json.loads(text)
    return {
        entry["code"]: CodeInfo(
            code=entry["code"],
            name=entry["name"],
            severity=Severity(entry["severity"]),
            status=entry["status"],
            since=entry["since"],
            spec=entry["spec"],
            summary=entry["summary"],
            contexts=MappingProxyType(
                {name: Severity(value) for name, value in entry.get("contexts", {}).items()}
            ),
            pointer=entry.get("pointer", ""),
            why=entry.get("why", ""),
            fix=entry.get("fix", ""),
        )
        for entry in data["codes"]
    }


def code_info(code: str) -> CodeInfo:
    """The registry entry of ``code``; ``KeyError`` for an unregistered code."""
    return registry()[code]


def finding(
    code: str,
    message: str,
    *,
    path: str = "",
    file: str = "",
    line: int = 0,
    col: int = 0,
    hint: str | None = None,
    severity: Severity | None = None,
    context: str | None = None,
) -> Finding:
    """Build a finding for a registered code, with its severity and spec link.

    The severity is ``severity`` when given, else the code's in ``context`` (spec/conformance.md
    §16.2), else its default.
    """
    info = code_info(code)
    chosen = severity or (info.severity if context is None else info.severity_in(context))
    return Finding(
        file=file,
        line=line,
        col=col,
        code=code,
        severity=chosen,
        message=message,
        path=path,
        hint=hint,
        spec=f"{SPEC_URL}/{info.spec}",
    )


#: The control characters of :func:`terminal_text`: C0 (tab aside), DEL and C1.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SHOWN = {"\n": "\\n", "\r": "\\r"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    return _SHOWN.get(char) or f"\\x{ord(char):02x}"


def terminal_text(text: str, *, lines: bool = False) -> str:
    """``text`` as a terminal may show it: every control character visible, none sent.

    The one escape of every text output that includes an artifact's text (spec/security.md
    §15.8). A tab stays, and a newline only with ``lines``, so one finding stays one line.
    """
    pattern = _CONTROL_BUT_NEWLINE if lines else _CONTROL
    return pattern.sub(_shown, text) if pattern.search(text) else text


#: ANSI colours of :func:`finding_line`.
_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def finding_line(item: Any, label: str = "", *, color: bool = False) -> str:
    """One finding as ``where: CODE severity message [pointer]``, then an indented hint line.

    ``item`` is a :class:`Finding` or its JSON form's model. ``where`` is ``file:line:col``,
    else ``label``, else ``-``. Control characters are shown, never sent.
    """
    file, line_no = item.file or "", item.line or 0
    location = f"{file}:{line_no}:{item.col or 1}" if file and line_no else file
    where = terminal_text(location or label or "-")
    severity = str(getattr(item.severity, "value", item.severity))
    pointer = f" [{terminal_text(item.path)}]" if item.path else ""
    message = terminal_text(item.message)
    if color:
        paint = _COLORS[severity]
        line = (
            f"{_BOLD}{where}:{_RESET} {_BOLD}{item.code}{_RESET} {paint}{severity}{_RESET} "
            f"{message}{_DIM}{pointer}{_RESET}"
        )
    else:
        line = f"{where}: {item.code} {severity} {message}{pointer}"
    if item.hint:
        line += f"\n    hint: {terminal_text(item.hint)}"
    return line
