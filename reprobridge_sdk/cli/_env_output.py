"""Output helpers shared by the environment, lock and data commands."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import click

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, Severity

__all__ = ["fail", "report_findings"]


def _colour(text: str, colour: str) -> str:
    if os.environ.get("NO_COLOR") or not sys.stderr.isatty():
        return text
    return click.style(text, fg=colour)


def _line(f: Finding) -> str:
    where = f.location or f.path or "-"
    colour = {"error": "red", "warning": "yellow"}.get(f.severity.value, "blue")
    text = f"{where}: {_colour(f.code, colour)} {f.severity.value}: {f.message}"
    if f.path and f.location:
        text += f" [{f.path}]"
    if f.hint:
        text += f"\n    hint: {f.hint}"
    return text


def fail(exc: ReproBridgeError, code: int = 2) -> NoReturn:
    """Print an error and its findings on stderr and exit (2: usage or I/O error)."""
    click.echo(_colour("error: ", "red") + exc.message, err=True)
    for f in exc.findings:
        click.echo("  " + _line(f), err=True)
    sys.exit(code)


def report_findings(
    findings: Sequence[Finding], fmt: str, *, target: str, strict: bool = False
) -> NoReturn:
    """Render findings (JSON, SARIF, JUnit on stdout; text on stderr) and exit 0 or 1."""
    failing = any(
        f.severity is Severity.ERROR or (strict and f.severity is Severity.WARNING)
        for f in findings
    )
    try:
        from reprobridge_sdk import reporters  # noqa: PLC0415 - optional at this layer

        render = getattr(reporters, "render", None)
    except ImportError:
        render = None
    if fmt == "text":
        for f in findings:
            click.echo(_line(f), err=True)
        errors = sum(f.severity is Severity.ERROR for f in findings)
        warnings = sum(f.severity is Severity.WARNING for f in findings)
        click.echo(f"{target}: {errors} error(s), {warnings} warning(s)", err=True)
    elif render is not None:
        sys.stdout.write(str(render(list(findings), fmt, target=target)))
    elif fmt == "json":
        data = {"target": target, "findings": [f.to_dict() for f in findings]}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        click.echo(f"format {fmt!r} needs the reporters module", err=True)
        sys.exit(2)
    sys.exit(1 if failing else 0)
