"""``reprobridge review``: a committee's review, re-executing recorded runs.

The same as ``reprobridge audit --rerun K`` with a committee's default sample (4 runs per
launcher and per task). The options are ``audit``'s; the older spellings ``--sample``,
``--seed`` and ``--env`` still work, with a deprecation warning.
"""

from __future__ import annotations

from typing import TypeVar

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import deprecated, format_option, output_option, report_options

from ._audit import (
    DEFAULT_SAMPLE,
    AuditRequest,
    rerun_options,
    run_audit_command,
    sandbox_rerun_option,
)

__all__ = ["review"]

T = TypeVar("T")


def _renamed(value: T | None, new: T, old: str, spelling: str) -> T:
    """``value`` of a deprecated option if given (with a warning), else the new one's."""
    if value is None:
        return new
    deprecated(old, f"{spelling} (as audit does)")
    return value


@click.command("review", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", required=False, type=click.Path(path_type=str))
@rerun_options(default=str(DEFAULT_SAMPLE))
@click.option("--sample", hidden=True, metavar="K|all", help="Deprecated: --rerun.")
@click.option("--seed", "seed", hidden=True, type=int, help="Deprecated: --rerun-seed.")
@click.option(
    "--env", "env_mode", hidden=True, type=click.Choice(["cached", "current"]), help="Deprecated."
)
@click.option(
    "--trust",
    metavar="KEYS",
    type=click.Path(dir_okay=False),
    help="Require every run to be signed by a key of this KEYS file.",
)
@click.option("--expect-head", metavar="HEAD", help="The ledger head the author submitted.")
@sandbox_rerun_option
@format_option("text", "json", "junit", "html", "csv")
@output_option("Write the report to FILE.", report=True)
@report_options
@artifact_alias()
def review(  # noqa: PLR0917 - click passes every option as an argument
    path: str | None,
    rerun: str,
    rerun_seed: int | None,
    rerun_env: str,
    sample: str | None,
    seed: int | None,
    env_mode: str | None,
    trust: str | None,
    expect_head: str | None,
    rerun_sandbox: bool,
    fmt: str,
    output: str | None,
) -> None:
    """Re-execute a sample of the recorded runs of the artifact at PATH (default: .) and
    audit them.

    PATH is an artifact directory or a packed archive (an evidence submission, packed with
    --with-runs; unpacked safely into a temporary directory that is removed afterwards).

    The sample seed is secret: drawn from the OS's entropy unless --rerun-seed gives it, and
    printed in the report. Re-execution runs in the sandbox (N011 where it cannot work;
    --no-sandbox: N031). An artifact's own configuration files are ignored (N030).

    \\b
    Exit codes: 0 the audit passes and every re-executed run holds up, 1 otherwise,
    2 usage or I/O error.
    """
    run_audit_command(
        AuditRequest(
            paths=[path or "."],
            rerun=_renamed(sample, rerun, "--sample", "--rerun"),
            rerun_seed=_renamed(seed, rerun_seed, "--seed", "--rerun-seed"),
            rerun_env=_renamed(env_mode, rerun_env, "--env", "--rerun-env"),
            rerun_sandbox=rerun_sandbox,
            trust=trust,
            expect_head=expect_head,
            fmt=fmt,
            output=output,
            command="review",
        )
    )
