"""``reprobridge audit``: audit evidence against compatibility intervals.

A thin layer over :func:`reprobridge_sdk.audit.audit` and ``audit_table``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import (
    color,
    count,
    failing,
    format_option,
    note,
    output_option,
    report_options,
    write_output,
)

from ._executor import batch_mapper, executor_options

if TYPE_CHECKING:
    from reprobridge_sdk.model.audit import AuditResult, AuditTable

__all__ = ["AuditRequest", "audit", "rerun_options", "run_audit_command", "sandbox_rerun_option"]

F = TypeVar("F", bound=Callable[..., Any])
#: The committee's default sample (``reprobridge_sdk.audit.rerun.DEFAULT_SAMPLE``; not
#: imported here, to keep ``--help`` fast).
DEFAULT_SAMPLE = 4


def rerun_options(default: str | None) -> Callable[[F], F]:
    """The re-execution options ``audit`` and ``review`` share (``review`` re-executes by
    default: ``default`` is its sample)."""

    def decorate(command: F) -> F:
        command = click.option(
            "--rerun-env",
            type=click.Choice(["cached", "current"]),
            default="cached",
            show_default=True,
            help="Re-execute in the environment built from the lock, or the current interpreter.",
        )(command)
        command = click.option(
            "--rerun-seed",
            type=int,
            default=None,
            help="Seed of the rerun sample, to draw a stated sample again (default: a secret "
            "seed from the OS's entropy, printed in the report).",
        )(command)
        return click.option(
            "--rerun",
            metavar="K|all",
            default=default,
            show_default=default is not None,
            help=f"Re-execute K sampled succeeded runs per launcher and per task of each attempt "
            f"(or all) and compare the values (a committee's default: {DEFAULT_SAMPLE}).",
        )(command)

    return decorate


def sandbox_rerun_option(command: F) -> F:
    """``--sandbox/--no-sandbox`` (also spelled ``--rerun-sandbox``) of re-execution."""
    return click.option(
        "--sandbox/--no-sandbox",
        "--rerun-sandbox/--no-rerun-sandbox",
        "rerun_sandbox",
        default=True,
        show_default=True,
        help="Re-execute under the runner's sandbox: no network, read-only but the run "
        "directory, private /tmp; N011 where it cannot work. --no-sandbox re-executes with "
        "every right of your user (N031).",
    )(command)


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
    "--table",
    is_flag=True,
    help="PATHS are several artifacts (directories, packed archives, or folders of "
    "submissions: their subdirectories and archives): print a table.",
)
@click.option(
    "--submissions",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="With --table: the committee's batch file (TOML, schema batch-1.0): per submission "
    "its path or archive, archive digest, ledger head, trust policy, reviewers, budget, "
    "notes and decision. Rows are named by the submissions' ids.",
)
@format_option("text", "json", "junit", "html", "csv", help="csv: the table, one row per artifact.")
@output_option("Write the report to FILE.", report=True)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="With --table: audit this many artifacts in parallel processes (or executor workers).",
)
@executor_options
@click.option("--expect-head", metavar="HEAD", help="The run ledger head the author submitted.")
@click.option(
    "--trust",
    metavar="KEYS",
    type=click.Path(dir_okay=False),
    help="Require every run to be signed by a key of this KEYS file.",
)
@rerun_options(default=None)
@sandbox_rerun_option
@click.option(
    "--attest",
    metavar="FILE",
    help="Also write the JSON report signed (DSSE envelope) with --key or the key variable.",
)
@click.option("--key", "key_file", type=click.Path(dir_okay=False), help="Key for --attest.")
@report_options
@artifact_alias("paths")
def audit(  # noqa: PLR0917 - click passes every option as an argument
    paths: tuple[str, ...],
    runs: tuple[str, ...],
    attempts: tuple[str, ...],
    level: float,
    floor: float,
    holm: bool,
    curation: bool,
    table: bool,
    submissions: str | None,
    fmt: str,
    output: str | None,
    jobs: int,
    expect_head: str | None,
    trust: str | None,
    rerun: str | None,
    rerun_seed: int | None,
    rerun_env: str,
    rerun_sandbox: bool,
    attest: str | None,
    key_file: str | None,
    executor: str | None,
    scheduler: str | None,
    shared_fs: bool | None,
    job_extra: tuple[str, ...],
) -> None:
    """Audit the artifact at PATH (default: .) against its evidence.

    PATH is an artifact directory, its rra.yaml, or a packed archive (unpacked safely into
    a temporary directory that is removed afterwards; the report names the archive).

    Attempts default to the artifact's runs/ directory. With --table, relative attempt
    directories are resolved inside each artifact. Every attempt's run ledger is checked;
    --trust checks signatures, --rerun re-executes runs (the only check of fabricated logs).

    \b
    Exit codes: 0 every task compatible in some attempt and no tampered evidence
    (with --curation: every published value compatible), 1 otherwise,
    2 usage or I/O error.
    """
    if not table and len(paths) > 1:
        raise click.UsageError("several artifacts need --table")
    if table and expect_head is not None:
        raise click.UsageError(
            "--expect-head names one artifact's ledger: with --table, give each its "
            "expect_head in a --submissions file"
        )
    if submissions is not None and not table:
        raise click.UsageError("--submissions lists the rows of a table: add --table")
    if submissions is not None and paths:
        raise click.UsageError("--submissions lists the artifacts: give no PATHS with it")
    run_audit_command(
        AuditRequest(
            paths=list(paths),
            attempts=[*runs, *attempts] or None,
            level=level,
            floor=floor,
            holm=holm,
            curation=curation,
            table=table,
            submissions=submissions,
            fmt=fmt,
            output=output,
            jobs=jobs,
            expect_head=expect_head,
            trust=trust,
            rerun=rerun,
            rerun_seed=rerun_seed,
            rerun_env=rerun_env,
            rerun_sandbox=rerun_sandbox,
            attest=attest,
            key_file=key_file,
            executor=executor,
            scheduler=scheduler,
            shared_fs=shared_fs,
            job_extra=job_extra,
        )
    )


@dataclass
class AuditRequest:
    """What ``audit`` and ``review`` were asked (click fills it)."""

    paths: list[str]
    attempts: list[str] | None = None
    level: float = 0.95
    floor: float = 0.01
    holm: bool = False
    curation: bool = False
    table: bool = False
    #: With ``table``: the batch file (``--submissions``) that lists the rows.
    submissions: str | None = None
    fmt: str = "text"
    output: str | None = None
    jobs: int = 1
    expect_head: str | None = None
    trust: str | None = None
    rerun: str | None = None
    #: None: a secret seed drawn at the audit (printed in the report).
    rerun_seed: int | None = None
    rerun_env: str = "cached"
    rerun_sandbox: bool = True
    attest: str | None = None
    key_file: str | None = None
    executor: str | None = None
    scheduler: str | None = None
    shared_fs: bool | None = None
    job_extra: tuple[str, ...] = ()
    #: The command asked (``review`` is committee-grade like ``audit --table``).
    command: str = "audit"


def _rerun_count(text: str | None) -> int | str | None:
    if text is None or text == "all":
        return text
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        msg = f"--rerun {text!r} is not a positive number of runs or 'all'"
        raise click.BadParameter(msg, param_hint="--rerun")
    return count


def rerun_progress(line: str) -> None:
    """A line of re-execution progress, on stderr (top-level: a process pool pickles it)."""
    click.echo(line, err=True)


def run_audit_command(request: AuditRequest) -> None:
    """Audit as asked, print or write the report, exit with the audit's status."""

    rerun = _rerun_count(request.rerun)
    _notices(request, rerun)
    with failing(doing="write"):
        common, signer = _prepare(request, rerun)
        result = _audit_table(request, common) if request.table else _audit_one(request, common)
        if signer is not None and request.attest is not None:
            from reprobridge_sdk.audit.attest import attest_audit  # noqa: PLC0415
            from reprobridge_sdk.io.atomic import atomic_write_json  # noqa: PLC0415

            atomic_write_json(request.attest, attest_audit(result, signer))
        _write_report(request, result)
    sys.exit(0 if result.passed else 1)


def _notices(request: AuditRequest, rerun: int | str | None) -> None:
    """N031 for an unsandboxed rerun; N030 for the settings a committee-grade audit ignores."""
    from ._safety import note_artifact_configs, warn_unsandboxed  # noqa: PLC0415

    if rerun is not None and not request.rerun_sandbox:
        warn_unsandboxed(request.command, "re-execution of the artifact's launchers")
    if (request.table or request.command == "review") and request.submissions is None:
        from reprobridge_sdk.authoring.submissions import expand  # noqa: PLC0415 - light

        given = request.paths or ["."]
        note_artifact_configs(expand(given) if request.table else given, request.command)


def _prepare(request: AuditRequest, rerun: int | str | None) -> tuple[dict[str, Any], Any]:
    """The audit's keyword arguments and the attestation's signer, refusing (N011, a bad
    key) before anything runs."""
    keys = signer = None
    if rerun is not None and request.rerun_sandbox:
        from reprobridge_sdk.run.runner import require_sandbox  # noqa: PLC0415

        require_sandbox()
    if request.trust is not None:
        from reprobridge_sdk.signing.keys import load_trusted_keys  # noqa: PLC0415

        keys = load_trusted_keys(request.trust)
    if request.attest is not None:
        from reprobridge_sdk.signing.keys import load_signing_key  # noqa: PLC0415

        signer = load_signing_key(request.key_file)
    common = {
        "level": request.level,
        "floor": request.floor,
        "holm": request.holm,
        "curation": request.curation,
        "trust": keys,
        "rerun": rerun,
        "rerun_seed": request.rerun_seed,
        "rerun_env": request.rerun_env,
        "rerun_sandbox": request.rerun_sandbox,
        "progress": rerun_progress if rerun is not None else None,
    }
    return common, signer


def _audit_one(request: AuditRequest, common: dict[str, Any]) -> AuditResult:
    from reprobridge_sdk.audit import audit as run_audit  # noqa: PLC0415
    from reprobridge_sdk.authoring.submissions import open_artifact  # noqa: PLC0415

    with open_artifact(request.paths[0] if request.paths else ".") as artifact:
        found = run_audit(
            artifact.target, request.attempts, expect_head=request.expect_head, **common
        )
        return artifact.relabel(found)


def _audit_table(request: AuditRequest, common: dict[str, Any]) -> AuditTable:
    from reprobridge_sdk.authoring.batch import audit_batch  # noqa: PLC0415
    from reprobridge_sdk.authoring.submissions import audit_submissions  # noqa: PLC0415

    from ._safety import settings as cli_settings  # noqa: PLC0415

    settings = cli_settings({"executor": request.executor})
    spread = batch_mapper(
        settings.executor, request.jobs, request.scheduler, request.shared_fs, request.job_extra
    )
    with spread as mapper:
        if request.submissions is not None:
            return audit_batch(
                request.submissions, request.attempts, jobs=request.jobs, mapper=mapper, **common
            )
        return audit_submissions(
            request.paths or ["."], request.attempts, jobs=request.jobs, mapper=mapper, **common
        )


def _write_report(request: AuditRequest, result: AuditResult | AuditTable) -> None:
    """The report as ``--format`` asks, to ``-o`` or stdout."""
    from reprobridge_sdk.audit.report import render  # noqa: PLC0415

    audits = getattr(result, "artifacts", [result])
    count([getattr(result, "errors", []), *(one.findings for one in audits)])
    paint = request.fmt == "text" and request.output is None and color()
    write_output(render(result, request.fmt, color=paint), request.output)
    if request.output is not None:
        note(f"audit {'passed' if result.passed else 'failed'}")
