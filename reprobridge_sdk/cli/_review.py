"""``reprobridge review``: a committee's review, re-executing recorded runs.

The same as ``reprobridge audit --rerun all`` (or ``--sample K``): each attempt's ledger
and, with ``--trust``, signatures are checked, and the sampled runs are executed again.
"""

from __future__ import annotations

import click

from ._audit import AuditRequest, run_audit_command
from ._safety import sandbox_option

__all__ = ["review"]


@click.command("review", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", required=False, type=click.Path(path_type=str))
@click.option(
    "--sample",
    metavar="K|all",
    default="all",
    show_default=True,
    help="Runs to re-execute per attempt.",
)
@click.option("--seed", "seed", type=int, default=0, show_default=True, help="Seed of the sample.")
@click.option(
    "--trust",
    metavar="KEYS",
    type=click.Path(dir_okay=False),
    help="Require every run to be signed by a key of this KEYS file.",
)
@click.option("--expect-head", metavar="HEAD", help="The ledger head the author submitted.")
@click.option(
    "--env",
    "env_mode",
    type=click.Choice(["cached", "current"]),
    default="cached",
    show_default=True,
    help="Environment of the re-execution.",
)
@sandbox_option("the re-executed launchers")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "junit", "html", "csv"]),
    default="text",
    show_default=True,
)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE.")
def review(  # noqa: PLR0917 - click passes every option as an argument
    path: str | None,
    sample: str,
    seed: int,
    trust: str | None,
    expect_head: str | None,
    env_mode: str,
    sandbox: bool,
    fmt: str,
    output: str | None,
) -> None:
    """Re-execute the recorded runs of the artifact at PATH (default: .) and audit them.

    PATH is an artifact directory or a packed archive (an evidence submission, packed with
    --with-runs; unpacked safely into a temporary directory that is removed afterwards).

    Re-execution runs in the sandbox (N011 where it cannot work; --no-sandbox: N031). An
    artifact's own configuration files are ignored (N030).

    \\b
    Exit codes: 0 the audit passes and every re-executed run holds up, 1 otherwise,
    2 usage or I/O error.
    """
    run_audit_command(
        AuditRequest(
            paths=[path or "."],
            rerun=sample,
            rerun_seed=seed,
            rerun_env=env_mode,
            rerun_sandbox=sandbox,
            trust=trust,
            expect_head=expect_head,
            fmt=fmt,
            output=output,
            command="review",
        )
    )
