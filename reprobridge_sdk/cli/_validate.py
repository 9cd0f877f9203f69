"""``reprobridge validate``: a thin call into :func:`reprobridge_sdk.validation.validate`."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import (
    fail,
    failing,
    format_option,
    output_option,
    render_report,
    report_options,
)
from reprobridge_sdk.errors import ReproBridgeError

from ._executor import batch_mapper, executor_options

__all__ = ["validate"]


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


def _fail_as_report(exc: ReproBridgeError, fmt: str, output: str | None) -> NoReturn:
    """A path that cannot be validated (it does not exist): exit 2, but machine output is
    still a report of the requested format, with the finding (Y010) under that path."""
    render_report([(exc.findings[0].file or ".", list(exc.findings))], fmt, output)
    sys.exit(2)


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path())
@format_option(
    "text",
    "json",
    "sarif",
    "junit",
    "github",
    default=None,
    plugins=True,
    help="default: report.format of the configuration, else text; github writes "
    "workflow-command annotations.",
)
@output_option("Write the report to this file instead.", report=True)
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
    with failing():
        settings = cli_settings(flags)  # N030 for a file inside an artifact
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
        fail(exc)
    with failing():
        render_report(result, settings.report_format, output)
    sys.exit(result.exit_code)
