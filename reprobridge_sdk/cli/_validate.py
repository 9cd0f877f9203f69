"""``reprobridge validate``: a thin call into :func:`reprobridge_sdk.validation.validate`."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import (
    echo,
    fail,
    machine_format,
    report,
    report_file,
    report_options,
    set_machine,
)
from reprobridge_sdk.errors import ReproBridgeError

from ._executor import batch_mapper, executor_options

__all__ = ["validate"]


#: The report formats built in; plugins may add others.
_BUILT_IN_FORMATS = ("text", "json", "sarif", "junit", "github")


def _formats() -> tuple[str, ...]:
    from reprobridge_sdk.plugins import REPORT_FORMATS, plugin_names  # noqa: PLC0415 - lazy

    return (*_BUILT_IN_FORMATS, *plugin_names(REPORT_FORMATS))


class _ReportFormats(click.Choice):  # type: ignore[type-arg] # generic from click 8.2; 8.1 is not
    """``--format``'s choices: the plugins' formats are read (their entry points scanned) only
    when the choices are asked for: help, completion, or a value that is not built in. A
    validation without ``--format``, or with a built-in one, reads no entry point."""

    def __init__(self) -> None:
        self._all: tuple[str, ...] | None = None
        super().__init__(_BUILT_IN_FORMATS)

    @property
    def choices(self) -> tuple[str, ...]:
        if self._all is None:
            self._all = _formats()
        return self._all

    @choices.setter
    def choices(self, value: Any) -> None:
        pass  # the built-in formats, given by __init__: the property reads them with the rest

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in _BUILT_IN_FORMATS:
            return value
        return super().convert(value, param, ctx)


def _codes(values: tuple[str, ...], option: str) -> tuple[str, ...]:
    from reprobridge_sdk.findings import registry  # noqa: PLC0415 - lazy

    known = registry()
    prefixes = tuple(
        part.strip().upper() for value in values for part in value.split(",") if part.strip()
    )
    for prefix in prefixes:
        if not any(code.startswith(prefix) for code in known):
            msg = f"{prefix!r} matches no finding code"
            raise click.BadParameter(msg, param_hint=option)
    return prefixes


def _fail(exc: ReproBridgeError) -> NoReturn:
    fail(exc)


def _fail_as_report(exc: ReproBridgeError, fmt: str, output: str | None) -> NoReturn:
    """A path that cannot be validated (it does not exist): exit 2, but machine output is
    still a report of the requested format, with the finding (Y010) under that path."""
    from reprobridge_sdk.validation import ArtifactResult, ValidationResult  # noqa: PLC0415

    label = exc.findings[0].file or "."
    _write(ValidationResult([ArtifactResult(label, label, list(exc.findings))]), fmt, output)
    sys.exit(2)


def _write(result: Any, fmt: str, output: str | None) -> None:
    """The report: to ``output``, else on stdout; text through the one reporter."""
    from reprobridge_sdk.validation.reporters import render, summary_line  # noqa: PLC0415

    if output is not None:
        from reprobridge_sdk.io._fs import atomic_write_text  # noqa: PLC0415 - lazy

        try:
            atomic_write_text(output, render(result, fmt))
        except OSError as exc:
            echo(f"error: cannot write {output}: {exc.strerror}", err=True)
            sys.exit(2)
        echo(summary_line(result), err=True)
    elif fmt == "text":
        report(result)
    else:
        set_machine(True)
        sys.stdout.write(render(result, fmt))


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format",
    "fmt",
    callback=machine_format,
    type=_ReportFormats(),
    default=None,
    help="Output format (default: report.format of the configuration, else text); machine "
    "formats go to stdout, text to stderr; github writes workflow-command annotations.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    callback=report_file,
    help="Write the report to this file instead.",
)
@click.option(
    "--strict/--no-strict", default=None, help="Treat warnings as errors (default: the config)."
)
@click.option("--select", multiple=True, help="Only these codes (prefixes, comma-separated).")
@click.option("--ignore", multiple=True, help="Drop these codes (prefixes, comma-separated).")
@click.option("--fail-fast", is_flag=True, help="Stop at the first error.")
@click.option("--no-files", is_flag=True, help="Check the manifest only, not the files.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Validate artifacts in this many processes (or executor workers).",
)
@executor_options
@report_options
@artifact_alias("paths")
def validate(
    *,
    paths: tuple[str, ...],
    fmt: str | None,
    output: str | None,
    strict: bool | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_fast: bool,
    no_files: bool,
    jobs: int,
    executor: str | None,
    scheduler: str | None,
    shared_fs: bool | None,
    job_extra: tuple[str, ...],
) -> None:
    """Validate artifacts and report findings.

    PATH is an artifact directory, a manifest file, a packed archive (.tar, .tar.gz, .tgz,
    as `reprobridge pack` writes; unpacked safely into a temporary directory, its files
    reported as ARCHIVE#MEMBER), or a folder of submissions: a directory without an rra.yaml,
    whose subdirectories with one and whose archives are validated in name order. The
    default is the current directory.

    Settings not given as flags come from REPROBRIDGE_* environment variables, then from
    [tool.reprobridge] in pyproject.toml or a reprobridge.toml (select, ignore, strict,
    report.format).

    Exit codes: 0 no errors, 1 errors found (with --strict: warnings too), 2 usage or I/O error.
    """
    from reprobridge_sdk.authoring.submissions import (  # noqa: PLC0415 - lazy
        validate_submissions as run,
    )

    from ._safety import settings as cli_settings  # noqa: PLC0415 - lazy

    flags = {
        "select": _codes(select, "--select"),
        "ignore": _codes(ignore, "--ignore"),
        "strict": strict,
        "report_format": fmt,
        "executor": executor,
    }
    try:
        settings = cli_settings(flags)  # N030 for a file inside an artifact
    except ReproBridgeError as exc:
        _fail(exc)
    try:
        with batch_mapper(settings.executor, jobs, scheduler, shared_fs, job_extra) as mapper:
            result = run(
                list(paths) or ["."],
                strict=settings.strict,
                select=settings.select,
                ignore=settings.ignore,
                fail_fast=fail_fast,
                check_files=not no_files,
                jobs=jobs,
                mapper=mapper,
            )
    except ReproBridgeError as exc:
        if settings.report_format != "text" and exc.findings:
            _fail_as_report(exc, settings.report_format, output)
        _fail(exc)
    try:
        _write(result, settings.report_format, output)
    except ReproBridgeError as exc:  # a report-format plugin that cannot be loaded (E017)
        _fail(exc)
    sys.exit(result.exit_code)
