"""The command line's one reporter: findings, human text, failures, per invocation.

Findings are diagnostics: they go to **stdout**, each in the one line shape of
:func:`~reprobridge_sdk.validation.reporters.finding_line`
(``path:line:col: CODE severity message [pointer]``, then ``    hint: ...``), as ruff prints
them. Progress and summaries of what a command did go to **stderr** (:func:`echo` with
``err=True``), and so does an error that has no finding code. When a command writes a machine
format (``--format json``...), stdout holds that format alone, and a finding it does not
contain goes to stderr in the same line shape.

The reporting options of the commands that report findings (:func:`report_options`):
``-q/--quiet`` (diagnostics only: no progress, no summary), ``--exit-zero`` (exit 0 even
when findings fail the command), ``--statistics`` (a count per code after the findings) and
``--color auto|always|never`` (``auto`` keeps ``NO_COLOR``, ``FORCE_COLOR`` and the TTY
test of :func:`~reprobridge_sdk.config.color_enabled`).

Every line of human text passes through
:func:`~reprobridge_sdk.findings.terminal_text`: the text of an artifact in it (titles, ids,
messages, paths, log excerpts) reaches the terminal with its control characters shown, never
sent. JSON and SARIF are written as they are.
"""

from __future__ import annotations

import codecs
import functools
import io
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NoReturn, TypeVar

import click

from reprobridge_sdk.config import color_enabled
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, Severity, finding_line, terminal_text

__all__ = [
    "COLOR_CHOICES",
    "FORMATS",
    "TerminalBytes",
    "color",
    "deprecated",
    "echo",
    "echo_finding",
    "fail",
    "json_format",
    "legacy_format",
    "machine_format",
    "out_option",
    "print_error",
    "report",
    "report_file",
    "report_findings",
    "report_options",
    "reset",
    "set_machine",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The values of ``--color``.
COLOR_CHOICES = ("auto", "always", "never")


@dataclass
class _State:
    """The reporting choices of one invocation (reset by the group for each)."""

    color: str = "auto"
    quiet: bool = False
    exit_zero: bool = False
    statistics: bool = False
    #: True while the command writes a machine format on stdout.
    machine: bool = False
    counts: Counter[str] = field(default_factory=Counter)


_state = _State()


def reset() -> None:
    """Start a new invocation with the default choices (the group calls it)."""
    global _state  # noqa: PLW0603 - one invocation's choices, reset for the next
    _state = _State()


def set_machine(machine: bool) -> None:
    """Say whether stdout holds a machine format (then findings go to stderr)."""
    _state.machine = machine


def color(stream: Any = None) -> bool:
    """Whether to colour text written to ``stream`` (stdout by default): ``--color``, else
    ``NO_COLOR``, ``FORCE_COLOR`` and whether it is a terminal."""
    if _state.color != "auto":
        return _state.color == "always"
    return color_enabled(sys.stdout if stream is None else stream)


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of human text, its control characters shown (newlines and tabs kept).

    Text on stderr is progress or a summary: ``-q`` silences it, but never an error.
    """
    if err and _state.quiet and not text.startswith("error"):
        return
    click.echo(terminal_text(text, lines=True), err=err, nl=nl)


def echo_finding(item: Finding, label: str = "") -> None:
    """One finding in the one line shape, on stdout (on stderr while stdout is machine
    output); ``label`` names what it is about when it has no file."""
    stream = sys.stderr if _state.machine else sys.stdout
    _state.counts[item.code] += 1
    paint = color(stream)
    click.echo(finding_line(item, label, color=paint), file=stream, color=paint)


def report(pairs: Any) -> None:
    """Findings of ``(label, findings)`` pairs (or a ValidationResult) through the reporter,
    then the summary line (not with ``-q``)."""
    from reprobridge_sdk.validation.reporters import summary_line  # noqa: PLC0415 - lazy

    pairs = pairs.pairs() if hasattr(pairs, "pairs") else pairs
    for label, findings in pairs:
        for item in findings:
            echo_finding(item, label)
    if not _state.quiet:
        stream = sys.stderr if _state.machine else sys.stdout
        paint = color(stream)
        click.echo(summary_line(pairs, color=paint), file=stream, color=paint)


def _statistics() -> None:
    """``--statistics``: ``COUNT  CODE  name`` per code reported, most frequent first."""
    from reprobridge_sdk.findings import registry  # noqa: PLC0415 - lazy

    known = registry()
    stream = sys.stderr if _state.machine else sys.stdout
    for code, count in sorted(_state.counts.items(), key=lambda pair: (-pair[1], pair[0])):
        name = known[code].name if code in known else ""
        click.echo(f"{count:>5}  {code}  {name}".rstrip(), file=stream)


def _exit_status(status: Any) -> Any:
    """The exit status of the command: 1 becomes 0 with ``--exit-zero``."""
    if _state.exit_zero and status == 1:
        return 0
    return status


def _set(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None:
            setattr(_state, name, value)
        return value

    return store


#: The one list of output formats; each command offers those it can write (``--format``).
FORMATS = ("text", "json", "sarif", "junit", "github", "csv", "html")


def deprecated(old: str, new: str) -> None:
    """A deprecation warning on stderr: ``old`` still works for one minor version."""
    click.echo(f"warning: {old} is deprecated and will be removed; use {new}", err=True)


def machine_format(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """The callback of a ``--format`` option: any format but text makes stdout machine output."""
    if value is not None:
        set_machine(value != "text")
    return value


def json_format(
    help: str = "JSON on stdout.",
    *,
    legacy: Mapping[str, str] | None = None,
) -> Callable[[F], F]:
    """``--format text|json`` for a command whose function takes ``as_json``, and ``--json``,
    its deprecated spelling.

    ``legacy`` maps an old value of ``--format`` that meant something else (``lock``'s lock
    format) to the option that says it now: such a value still works, with a deprecation
    warning, and :func:`legacy_format` returns it.
    """
    old = dict(legacy or {})

    def old_json(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value:
            deprecated("--json", "--format json")
            ctx.meta["reprobridge.json"] = True

    def chosen(ctx: click.Context, param: click.Parameter, value: Any) -> bool:
        if value in old:
            deprecated(f"--format {value}", f"{old[value]} {value}")
            ctx.meta["reprobridge.legacy_format"] = value
            value = None
        as_json = value == "json" if value is not None else ctx.meta.get("reprobridge.json", False)
        set_machine(as_json)
        return bool(as_json)

    def decorate(f: F) -> F:
        f = click.option(
            "--json",
            "old_json",
            is_flag=True,
            hidden=True,
            expose_value=False,
            callback=old_json,
            is_eager=True,
            help="Deprecated: --format json.",
        )(f)
        return click.option(
            "--format",
            "as_json",
            type=click.Choice(["text", "json", *old]),
            default=None,
            callback=chosen,
            help=f"text (default) or json: {help}",
        )(f)

    return decorate


def legacy_format() -> str | None:
    """The old meaning of ``--format`` given on this command line (see :func:`json_format`)."""
    return click.get_current_context().meta.get("reprobridge.legacy_format")


def report_file(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """The callback of ``-o FILE`` for a report: ``-o json`` (a format's name as a bare file
    name) still writes a file of that name, with a deprecation warning, since it was most
    likely meant as ``--format json``."""
    if isinstance(value, str) and value in FORMATS:
        click.echo(
            f"warning: -o {value} writes the report to a file named {value!r}; this is "
            f"deprecated: use --format {value} for {value} on stdout, or -o ./{value} for "
            "the file",
            err=True,
        )
    return value


def out_option(
    help: str,
    *,
    required: bool = False,
    type: Any = None,
) -> Callable[[F], F]:
    """``-o/--output`` as the parameter ``out`` of a command that used to spell it ``--out``
    (still accepted, with a deprecation warning)."""

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, old_out: Any = None, **kwargs: Any) -> Any:
            if old_out is not None:
                deprecated("--out", "-o/--output")
                if kwargs.get("out") is None:
                    kwargs["out"] = old_out
            if required and kwargs.get("out") is None:
                raise click.MissingParameter(param_hint="'-o' / '--output'", param_type="option")
            return f(*args, **kwargs)

        decorated: Any = click.option(
            "--out", "old_out", type=type, hidden=True, help="Deprecated: -o/--output."
        )(wrapper)
        label = " (required)" if required else ""
        return click.option("-o", "--output", "out", type=type, help=help + label)(decorated)  # type: ignore[no-any-return]

    return decorate


def report_options(f: F) -> F:
    """``-q``, ``--exit-zero``, ``--statistics`` and ``--color`` for a command that reports
    findings. The options set this module's state; the command's function does not see them."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = f(*args, **kwargs)
        except SystemExit as done:
            if _state.statistics:
                _statistics()
            status = _exit_status(done.code)
            if status == done.code:
                raise
            raise SystemExit(status) from None
        if _state.statistics:
            _statistics()
        return result

    options = [
        click.option(
            "-q",
            "--quiet",
            is_flag=True,
            default=None,
            expose_value=False,
            callback=_set("quiet"),
            help="Print the diagnostics only: no progress, no summary.",
        ),
        click.option(
            "--exit-zero",
            is_flag=True,
            default=None,
            expose_value=False,
            callback=_set("exit_zero"),
            help="Exit 0 even when there are findings (usage and I/O errors still exit 2).",
        ),
        click.option(
            "--statistics",
            is_flag=True,
            default=None,
            expose_value=False,
            callback=_set("statistics"),
            help="After the findings, print how many there are of each code.",
        ),
        click.option(
            "--color",
            type=click.Choice(COLOR_CHOICES),
            default=None,
            expose_value=False,
            callback=_set("color"),
            help="Colour the output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces "
            "it), always or never.  [default: auto]",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


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


def print_error(exc: ReproBridgeError, label: str = "") -> None:
    """An error, printed once: its findings through the reporter, else ``error: message``
    on stderr."""
    for item in exc.findings:
        echo_finding(item, label)
    if not exc.findings:
        paint = color(sys.stderr)
        prefix = click.style("error:", fg="red") if paint else "error:"
        click.echo(f"{prefix} {terminal_text(exc.message, lines=True)}", err=True, color=paint)


def fail(exc: ReproBridgeError, code: int = 2, label: str = "") -> NoReturn:
    """Print an error once (:func:`print_error`) and exit (2: usage or I/O error)."""
    print_error(exc, label)
    sys.exit(code)


def report_findings(
    findings: Sequence[Finding],
    fmt: str,
    *,
    target: str,
    strict: bool = False,
    verbose: bool = False,
) -> NoReturn:
    """Render findings (text through the reporter, else ``fmt`` on stdout) and exit 0 or 1.

    Text output leaves out info findings unless ``verbose``; the other formats hold all.
    """
    from reprobridge_sdk.validation.reporters import render  # noqa: PLC0415 - lazy

    failing = any(
        f.severity is Severity.ERROR or (strict and f.severity is Severity.WARNING)
        for f in findings
    )
    if fmt == "text":
        shown = [f for f in findings if verbose or f.severity is not Severity.INFO]
        report([(target, shown)])
        hidden = len(findings) - len(shown)
        if hidden:
            echo(f"({hidden} info finding(s) not shown; use --verbose)", err=True)
    else:
        sys.stdout.write(render([(target, list(findings))], fmt))
    sys.exit(1 if failing else 0)
