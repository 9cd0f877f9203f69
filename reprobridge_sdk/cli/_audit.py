"""``reprobridge audit``: audit evidence against compatibility intervals.

A thin layer over :func:`reprobridge_sdk.audit.audit` and :func:`~reprobridge_sdk.audit.
audit_table`. The text report goes to stderr (colour only on a TTY, never with NO_COLOR);
``json``, ``junit`` and ``html`` go to stdout alone, or to ``--output FILE`` (written
atomically).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ._executor import batch_mapper, executor_options

if TYPE_CHECKING:
    from reprobridge_sdk.model.audit import AuditResult, AuditTable

__all__ = ["audit"]


def _colour() -> bool:
    from reprobridge_sdk.config import color_enabled  # noqa: PLC0415 - lazy

    return color_enabled(sys.stderr)


@click.command("audit")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--runs",
    "runs",
    multiple=True,
    metavar="DIR",
    help="A directory of run directories (an attempt, labelled by its name). Repeatable.",
)
@click.option(
    "--attempt",
    "attempts",
    multiple=True,
    metavar="LABEL=DIR",
    help="A labelled attempt (agent, model or person). Repeatable.",
)
@click.option("--level", type=float, default=0.95, show_default=True, help="Interval level.")
@click.option(
    "--floor", type=float, default=0.01, show_default=True, help="Relative floor of half-width."
)
@click.option("--holm", is_flag=True, help="Holm's correction across an attempt's tasks.")
@click.option("--curation", is_flag=True, help="Check the published values, not evidence.")
@click.option(
    "--table", is_flag=True, help="PATHS are several artifacts: audit each, print a table."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "junit", "html"]),
    default="text",
    show_default=True,
)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="With --table: audit this many artifacts in parallel processes (or executor workers).",
)
@executor_options
def audit(  # noqa: PLR0917 - click passes every option as an argument
    paths: tuple[str, ...],
    runs: tuple[str, ...],
    attempts: tuple[str, ...],
    level: float,
    floor: float,
    holm: bool,
    curation: bool,
    table: bool,
    fmt: str,
    output: str | None,
    jobs: int,
    executor: str | None,
    scheduler: str | None,
    shared_fs: bool | None,
    job_extra: tuple[str, ...],
) -> None:
    """Audit the artifact at PATH (default: .) against its evidence.

    Attempts default to the artifact's runs/ directory. With --table, relative attempt
    directories are resolved inside each artifact.

    \b
    Exit codes: 0 every task compatible in some attempt and no tampered evidence
    (with --curation: every published value compatible), 1 otherwise,
    2 usage or I/O error.
    """
    from reprobridge_sdk.audit import audit as run_audit  # noqa: PLC0415 - keep --help fast
    from reprobridge_sdk.audit import audit_table  # noqa: PLC0415
    from reprobridge_sdk.audit.report import render  # noqa: PLC0415
    from reprobridge_sdk.errors import ReproBridgeError  # noqa: PLC0415

    if not table and len(paths) > 1:
        raise click.UsageError("several artifacts need --table")
    given = [*runs, *attempts] or None
    result: AuditResult | AuditTable
    try:
        if table:
            from reprobridge_sdk.config import load_settings  # noqa: PLC0415

            settings = load_settings({"executor": executor})
            spread = batch_mapper(settings.executor, jobs, scheduler, shared_fs, job_extra)
            with spread as mapper:
                result = audit_table(
                    list(paths) or ["."],
                    given,
                    level=level,
                    floor=floor,
                    holm=holm,
                    curation=curation,
                    jobs=jobs,
                    mapper=mapper,
                )
        else:
            result = run_audit(
                paths[0] if paths else ".",
                given,
                level=level,
                floor=floor,
                holm=holm,
                curation=curation,
            )
        text = render(result, fmt, color=fmt == "text" and output is None and _colour())
        if output is not None:
            from reprobridge_sdk.io._fs import atomic_write_text  # noqa: PLC0415

            atomic_write_text(output, text)
            click.echo(f"wrote {output}: {'PASS' if result.passed else 'FAIL'}", err=True)
        elif fmt == "text":
            sys.stderr.write(text)
        else:
            sys.stdout.write(text)
    except ReproBridgeError as exc:
        click.echo(f"error: {exc.message}", err=True)
        for item in exc.findings:
            where = item.location or item.path
            click.echo(f"  {item.code} {where}: {item.message}".rstrip(), err=True)
            if item.hint:
                click.echo(f"    hint: {item.hint}", err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(f"error: cannot write {output}: {exc.strerror}", err=True)
        sys.exit(2)
    sys.exit(0 if result.passed else 1)
