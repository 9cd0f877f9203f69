"""Output helpers shared by the environment, lock and data commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

import click

from reprobridge_sdk.config import color_enabled
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, Severity

__all__ = ["fail", "report_findings"]


def _colour(text: str, colour: str) -> str:
    if not color_enabled(sys.stderr):
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
    findings: Sequence[Finding],
    fmt: str,
    *,
    target: str,
    strict: bool = False,
    verbose: bool = False,
) -> NoReturn:
    """Render findings (JSON, SARIF, JUnit on stdout; text on stderr) and exit 0 or 1.

    Text output leaves out info findings unless ``verbose``; the other formats hold all.
    """
    from reprobridge_sdk.validation.reporters import render  # noqa: PLC0415 - only when reporting

    failing = any(
        f.severity is Severity.ERROR or (strict and f.severity is Severity.WARNING)
        for f in findings
    )
    if fmt == "text":
        shown = [f for f in findings if verbose or f.severity is not Severity.INFO]
        color = color_enabled(sys.stderr)
        sys.stderr.write(render([(target, shown)], "text", color=color))
        hidden = len(findings) - len(shown)
        if hidden:
            click.echo(f"({hidden} info finding(s) not shown; use --verbose)", err=True)
    else:
        sys.stdout.write(render([(target, list(findings))], fmt))
    sys.exit(1 if failing else 0)
