"""Output helpers shared by the commands: human text on a terminal, findings, failures.

Every line of human text a command prints goes through :func:`echo` (or, for findings, the
reporters), so that the text of an artifact in it (titles, ids, messages, paths, log
excerpts) reaches the terminal with its control characters shown, never sent
(:func:`~reprobridge_sdk.findings.terminal_text`). JSON and SARIF are written as they are.
"""

from __future__ import annotations

import codecs
import io
import sys
from collections.abc import Sequence
from typing import BinaryIO, NoReturn

import click

from reprobridge_sdk.config import color_enabled
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, Severity, terminal_text

__all__ = ["TerminalBytes", "echo", "fail", "report_findings"]


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of human text, its control characters shown (newlines and tabs kept)."""
    click.echo(terminal_text(text, lines=True), err=err, nl=nl)


class TerminalBytes(io.RawIOBase):
    """A byte stream to a terminal that shows control characters (a launcher's live output).

    The bytes are decoded as UTF-8 as they come (a character split across writes is kept
    for the next; an invalid byte is shown as ``\\xNN``), passed through
    :func:`~reprobridge_sdk.findings.terminal_text` with newlines kept, and written on.
    """

    def __init__(self, sink: BinaryIO) -> None:
        self._sink = sink
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        text = self._decoder.decode(bytes(data))
        self._sink.write(terminal_text(text, lines=True).encode("utf-8"))
        return len(data)

    def flush(self) -> None:
        self._sink.flush()


def _colour(text: str, colour: str) -> str:
    if not color_enabled(sys.stderr):
        return text
    return click.style(text, fg=colour)


def _line(f: Finding) -> str:
    where = terminal_text(f.location or f.path or "-")
    colour = {"error": "red", "warning": "yellow"}.get(f.severity.value, "blue")
    text = f"{where}: {_colour(f.code, colour)} {f.severity.value}: {terminal_text(f.message)}"
    if f.path and f.location:
        text += f" [{terminal_text(f.path)}]"
    if f.hint:
        text += f"\n    hint: {terminal_text(f.hint)}"
    return text


def fail(exc: ReproBridgeError, code: int = 2) -> NoReturn:
    """Print an error and its findings on stderr and exit (2: usage or I/O error)."""
    click.echo(_colour("error: ", "red") + terminal_text(exc.message, lines=True), err=True)
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
            echo(f"({hidden} info finding(s) not shown; use --verbose)", err=True)
    else:
        sys.stdout.write(render([(target, list(findings))], fmt))
    sys.exit(1 if failing else 0)
