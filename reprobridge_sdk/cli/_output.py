"""Where the command line's output goes, and the options that shape it (docs/cli.md).

Findings, listings and reports go to stdout; progress, notes, errors and notices to stderr,
and so does a finding while stdout holds a machine format, so stdout holds that format alone.
Human text passes through ``findings.terminal_text``: an artifact's control characters are
shown, never sent (spec/security.md §15.8).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from reprobridge_sdk.config import color_enabled
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, Severity, finding_line, terminal_text
from reprobridge_sdk.plugins import BUILT_IN, REPORT_FORMATS

__all__ = [
    "color",
    "count",
    "deprecated",
    "echo_finding",
    "error",
    "fail",
    "failing",
    "format_option",
    "legacy_format",
    "note",
    "output_option",
    "python_option",
    "render_report",
    "report_findings",
    "report_options",
    "reset",
    "say",
    "write_json",
    "write_output",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Codes that stop a command as a usage error would: exit 2, even with ``--exit-zero``.
_USAGE_CODES = frozenset({"E015"})


@dataclass
class _State:
    """The reporting choices of one invocation (reset by the group for each)."""

    color: str = "auto"
    quiet: bool = False
    exit_zero: bool = False
    statistics: bool = False
    #: ``--format`` and ``-o`` as given (``--statistics`` writes its table there).
    fmt: str | None = None
    output: str | None = None
    #: True while the command writes a machine format on stdout.
    machine: bool = False
    counts: Counter[str] = field(default_factory=Counter)


_state = _State()


def reset() -> None:
    """Start a new invocation with the default choices (the group calls it)."""
    global _state  # noqa: PLW0603 - one invocation's choices, reset for the next
    _state = _State()


def color(stream: Any = None) -> bool:
    """Whether to colour text written to ``stream`` (stdout by default): ``--color``, else
    ``NO_COLOR``, ``FORCE_COLOR`` and whether it is a terminal."""
    if _state.color != "auto":
        return _state.color == "always"
    return color_enabled(sys.stdout if stream is None else stream)


# --------------------------------------------------------------------------- channels


def say(text: str = "", *, nl: bool = True) -> None:
    """A listing or a report in text, on stdout (on stderr while stdout is machine output;
    not at all with ``--statistics``, whose table is the output)."""
    if not _state.statistics:
        click.echo(terminal_text(text, lines=True), err=_state.machine, nl=nl)


def note(text: str, *, nl: bool = True) -> None:
    """Progress, or a note on what the command did, on stderr (``-q`` silences it)."""
    if not _state.quiet:
        click.echo(terminal_text(text, lines=True), err=True, nl=nl)


def error(message: str) -> None:
    """``error: message`` on stderr: an error that has no finding code."""
    paint = color(sys.stderr)
    prefix = click.style("error:", fg="red") if paint else "error:"
    click.echo(f"{prefix} {terminal_text(message, lines=True)}", err=True, color=paint)


def deprecated(old: str, new: str) -> None:
    """A deprecation warning on stderr: ``old`` still works for one minor version."""
    click.echo(f"warning: {old} is deprecated and will be removed; use {new}", err=True)


def write_output(text: str, output: str | None = None) -> None:
    """A report: to ``output`` (written atomically; ``wrote FILE`` on stderr), else stdout.

    With ``--statistics`` the count table stands for the report, so nothing is written.
    """
    if _state.statistics:
        return
    if output is None:
        sys.stdout.write(text)
        return
    from reprobridge_sdk.io.atomic import atomic_write_text  # noqa: PLC0415 - on use

    with failing(doing="write"):
        atomic_write_text(output, text)
    note(f"wrote {output}")


def write_json(data: Any, output: str | None = None, *, sort_keys: bool = False) -> None:
    """``data`` as JSON indented by two spaces, the one JSON shape of every command, through
    :func:`write_output`."""
    from reprobridge_sdk.io.atomic import json_text  # noqa: PLC0415 - on use

    write_output(json_text(data, sort_keys=sort_keys), output)


# --------------------------------------------------------------------------- findings


def echo_finding(item: Finding, label: str = "", *, notice: bool = False) -> None:
    """One finding in the one line shape on stdout; on stderr when it is a ``notice`` about
    the invocation or while stdout is machine output. ``label`` names what it is about when
    it has no file."""
    _state.counts[item.code] += 1
    if _state.statistics and not notice:
        return
    stream = sys.stderr if notice or _state.machine else sys.stdout
    paint = color(stream)
    click.echo(finding_line(item, label, color=paint), file=stream, color=paint)


def count(groups: Iterable[Iterable[Any]]) -> None:
    """Count findings a command writes in its own report (for ``--statistics``, E015)."""
    for findings in groups:
        _state.counts.update(item.code for item in findings)


def render_report(pairs: Any, fmt: str, output: str | None = None) -> None:
    """Findings of ``(label, findings)`` pairs (or a ValidationResult) as ``fmt``, to
    ``output`` or stdout; text on stdout finding by finding, then the summary line."""
    from reprobridge_sdk.validation.reporters import render, summary_line  # noqa: PLC0415

    pairs = pairs.pairs() if hasattr(pairs, "pairs") else pairs
    if fmt == "text" and output is None:
        for label, findings in pairs:
            for item in findings:
                echo_finding(item, label)
        if not (_state.quiet or _state.statistics):
            paint = color()
            click.echo(summary_line(pairs, color=paint), color=paint)
        return
    count(findings for _, findings in pairs)
    _state.machine = output is None
    write_output(render(pairs, fmt), output)
    if output is not None:
        note(summary_line(pairs))


def report_findings(
    findings: Sequence[Finding],
    fmt: str,
    *,
    target: str,
    strict: bool = False,
    verbose: bool = False,
) -> NoReturn:
    """Render findings as ``fmt`` and exit 0 or 1. Text leaves out info findings unless
    ``verbose``; the other formats hold all."""
    failing = any(
        f.severity is Severity.ERROR or (strict and f.severity is Severity.WARNING)
        for f in findings
    )
    shown = [f for f in findings if fmt != "text" or verbose or f.severity is not Severity.INFO]
    render_report([(target, shown)], fmt)
    if len(shown) < len(findings):
        note(f"({len(findings) - len(shown)} info finding(s) not shown; use --verbose)")
    sys.exit(1 if failing else 0)


def fail(exc: ReproBridgeError, code: int = 2) -> NoReturn:
    """An error, printed once (its findings, else ``error: message``), then exit ``code``
    (2: usage or I/O error)."""
    for item in exc.findings:
        echo_finding(item)
    if not exc.findings:
        error(exc.message)
    sys.exit(code)


@contextlib.contextmanager
def failing(*results: type[ReproBridgeError], doing: str | None = None) -> Iterator[None]:
    """The one exit of a command on an SDK error, through :func:`fail`: 1 for an error of
    ``results`` (its findings are the command's answer, as a lock that cannot be made), 2 for
    any other :class:`ReproBridgeError` (a usage or I/O error). With ``doing``, an
    :class:`OSError` is an I/O error too: ``error: cannot <doing> FILE: reason``, exit 2."""
    try:
        yield
    except results as exc:
        fail(exc, code=1)
    except ReproBridgeError as exc:
        fail(exc)
    except OSError as exc:
        if doing is None:
            raise
        where = f" {exc.filename}" if exc.filename else ""
        error(f"cannot {doing}{where}: {exc.strerror or exc}")
        sys.exit(2)


# --------------------------------------------------------------------------- options


def _formats(names: Sequence[str], plugins: bool) -> tuple[str, ...]:
    if not plugins:
        return tuple(names)
    from reprobridge_sdk.plugins import plugin_names  # noqa: PLC0415 - reads entry points

    return (*names, *plugin_names(REPORT_FORMATS))


class _Formats(click.Choice):  # type: ignore[type-arg] # generic from click 8.2; 8.1 is not
    """``--format``'s choices. With ``plugins``, the plugins' formats are read (their entry
    points scanned) only when the choices are asked for: help, completion, or a value that
    is not built in."""

    def __init__(self, names: Sequence[str], *, plugins: bool) -> None:
        self._names, self._plugins, self._all = tuple(names), plugins, None
        super().__init__(self._names)

    @property
    def choices(self) -> tuple[str, ...]:
        if self._all is None:
            self._all = _formats(self._names, self._plugins)  # type: ignore[assignment]
        return self._all  # type: ignore[return-value]

    @choices.setter
    def choices(self, value: Any) -> None:
        pass  # the names given to __init__: the property reads them with the plugins'

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value if value in self._names else super().convert(value, param, ctx)


def format_option(
    *names: str,
    default: str | None = "text",
    help: str = "",
    plugins: bool = False,
    legacy: Mapping[str, str] | None = None,
) -> Callable[[F], F]:
    """``--format`` (the parameter ``fmt``) offering ``names``, each of the one list of report
    formats (``plugins.BUILT_IN``), and with ``plugins`` the installed plugin formats.

    The hidden ``--json`` is its deprecated spelling. ``legacy`` maps an old value that meant
    something else (``lock``'s lock format) to the option that says it now: it still works,
    with a deprecation warning, and :func:`legacy_format` returns it.
    """
    unknown = set(names) - set(BUILT_IN[REPORT_FORMATS])
    assert not unknown, f"not in the one list of report formats: {unknown}"
    old = dict(legacy or {})

    def old_json(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value:
            deprecated("--json", "--format json")
            ctx.meta["reprobridge.json"] = True

    def chosen(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value in old:
            deprecated(f"--format {value}", f"{old[value]} {value}")
            ctx.meta["reprobridge.legacy_format"], value = value, None
        if value is None:
            value = "json" if ctx.meta.get("reprobridge.json") else default
        _state.fmt = value
        if value is not None:
            _state.machine = value != "text"
        return value

    text = (
        "Output format"
        + (" (plugins add more)" if plugins else "")
        + (f"; {help}" if help else ".")
    )

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
            "fmt",
            type=_Formats([*names, *old], plugins=plugins),
            default=None,
            callback=chosen,
            help=text + ("" if default in (None, "text") else f"  [default: {default}]"),
        )(f)

    return decorate


def legacy_format() -> str | None:
    """The old meaning of ``--format`` given on this command line (see :func:`format_option`)."""
    return click.get_current_context().meta.get("reprobridge.legacy_format")


def _report_file(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``-o json`` (a format's name as a bare file name) still writes a file of that name,
    with a deprecation warning: it was most likely meant as ``--format json``."""
    if isinstance(value, str) and value in BUILT_IN[REPORT_FORMATS]:
        click.echo(
            f"warning: -o {value} writes the report to a file named {value!r}; this is "
            f"deprecated: use --format {value} for {value} on stdout, or -o ./{value} for "
            "the file",
            err=True,
        )
    _state.output = value
    return value


#: ``--cache-dir``: the SDK's cache, of environments and data digests alike.
cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The SDK's cache of environments and data (default: $REPROBRIDGE_CACHE_DIR or the "
    "user cache).",
)


def python_option(help: str) -> Callable[[F], F]:
    """``--python`` (the parameter ``python``): the interpreter a command works with."""
    return click.option("--python", type=click.Path(dir_okay=False, path_type=Path), help=help)


def output_option(
    help: str, *, required: bool = False, type: Any = None, report: bool = False
) -> Callable[[F], F]:
    """``-o/--output`` (the parameter ``output``): the file a command writes, or the folder
    where it writes several. ``--out`` is its deprecated spelling; with ``report``, ``-o``
    is the report's file (and ``--statistics``' file)."""

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, old_out: Any = None, **kwargs: Any) -> Any:
            if old_out is not None:
                deprecated("--out", "-o/--output")
                if kwargs.get("output") is None:
                    kwargs["output"] = old_out
            if required and kwargs.get("output") is None:
                raise click.MissingParameter(param_hint="'-o' / '--output'", param_type="option")
            return f(*args, **kwargs)

        decorated: Any = click.option(
            "--out", "old_out", type=type, hidden=True, help="Deprecated: -o/--output."
        )(wrapper)
        label = " (required)" if required else ""
        return click.option(  # type: ignore[no-any-return]
            "-o",
            "--output",
            "output",
            type=type,
            metavar="FILE" if report else None,
            callback=_report_file if report else None,
            help=help + label,
        )(decorated)

    return decorate


def _statistics() -> None:
    """``--statistics``: the count of each code reported, most frequent first, as a table
    (``COUNT  CODE  name``) or with ``--format json`` a list, on stdout or to ``-o``."""
    from reprobridge_sdk.findings import registry  # noqa: PLC0415 - lazy

    known = registry()
    rows = [
        {"code": code, "name": known[code].name if code in known else "", "count": count}
        for code, count in sorted(_state.counts.items(), key=lambda pair: (-pair[1], pair[0]))
    ]
    _state.statistics = False  # the table is the output now
    if _state.fmt == "json":
        write_json(rows, _state.output)
        return
    text = "".join(f"{r['count']:>5}  {r['code']}  {r['name']}".rstrip() + "\n" for r in rows)
    write_output(text, _state.output)


def _exit_status(status: Any) -> Any:
    """The command's exit status: E015 is 2 (a missing extra stops any command); else 1
    becomes 0 with ``--exit-zero``."""
    if status in (0, 1, None) and _USAGE_CODES & _state.counts.keys():
        return 2
    return 0 if _state.exit_zero and status == 1 else status


def _set(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None:
            setattr(_state, name, value)
        return value

    return store


def _flag(name: str, help: str, *decls: str) -> Callable[[F], F]:
    return click.option(
        *decls,
        f"--{name.replace('_', '-')}",
        name,
        is_flag=True,
        default=None,
        expose_value=False,
        callback=_set(name),
        help=help,
    )


def report_options(f: F) -> F:
    """``-q``, ``--exit-zero``, ``--statistics`` and ``--color`` for a command that reports
    findings. The options set this module's state; the command's function does not see them."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            f(*args, **kwargs)
        except SystemExit as done:
            status = done.code
        else:
            status = 0
        if _state.statistics:
            _statistics()
        sys.exit(_exit_status(status))

    options = [
        _flag("quiet", "Print no progress and no summary (findings and errors still).", "-q"),
        _flag(
            "exit_zero",
            "Exit 0 even when there are findings (usage and I/O errors, and "
            "a missing extra, E015, still exit 2).",
        ),
        _flag(
            "statistics",
            "Print how many findings there are of each code instead of the "
            "findings (text, or a JSON list with --format json; -o writes it to a file).",
        ),
        click.option(
            "--color",
            type=click.Choice(("auto", "always", "never")),
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
