"""``reprobridge build``: turn a raw repository and its paper's claims into an RRA."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from reprobridge_sdk.cli._output import failing, format_option, note, output_option

from ._safety import sandbox_option, warn_unsandboxed

__all__ = ["build"]


@click.command()
@click.argument("source")
@click.option(
    "--claims",
    "claims",
    required=True,
    type=click.Path(path_type=Path),
    help="The claims file: the paper's targets (schema claims-1.0).",
)
@click.option("--commit", help="The commit to build from (default: the source's HEAD).")
@output_option("Output directory (default ./<repo>-rra).", type=click.Path(path_type=Path))
@click.option(
    "--advisor",
    default="none",
    show_default=True,
    help="'none', or the base URL of an OpenAI-compatible endpoint "
    "(key from $REPROBRIDGE_ADVISOR_KEY).",
)
@click.option(
    "--advisor-model", default="gpt-4o-mini", show_default=True, help="The advisor's model."
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue from the phase that failed, keeping the changes recorded in OUT with "
    "'reprobridge code record'.",
)
@format_option("text", "json")
@click.option(
    "--max-minutes",
    type=float,
    metavar="N",
    help="The build's time limit: no phase starts that would end past N minutes, smoke and "
    "reference runs stop at it, and the Distiller takes as many reference runs as fit while "
    "keeping time for the Reviewer's clean-room check (one more run of each scored launcher).",
)
@click.option(
    "--smoke-budget",
    type=float,
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a smoke run may take before the Reproducer stops it and makes its scope "
    "short (part of the options --resume compares).",
)
@sandbox_option("the repository's code (import probes, smoke, reference and review runs)")
def build(  # noqa: PLR0917 - click passes options positionally
    source: str,
    claims: Path,
    commit: str | None,
    output: Path | None,
    advisor: str,
    advisor_model: str,
    resume: bool,
    fmt: str,
    max_minutes: float | None,
    smoke_budget: float,
    sandbox: bool,
) -> None:
    """Build an artifact from SOURCE (a git URL or a local path; it is never modified).

    Phases: intake, planner, builder, reproducer, distiller, packager, reviewer; the state
    and the report are in OUT/.rra-build/. A summary ends the build on stderr; a stopped
    build's summary names the phase, the failure class and the steps that unblock it.
    The repository's code runs in the sandbox (N011 where it cannot work; --no-sandbox: N031);
    resolving and installing its requirements runs outside it. Configuration files inside
    SOURCE are never read (N030).
    Exit 0 every gate passed, 1 a gate failed, 2 usage or I/O error (a bad claims file).
    """
    from reprobridge_sdk.agent.pipeline import BuildOptions, render_summary
    from reprobridge_sdk.agent.pipeline import build as run_build
    from reprobridge_sdk.errors import require_extra

    with failing():
        require_extra("fissix", "agent", feature="build")
    if max_minutes is not None and not max_minutes > 0:
        raise click.UsageError("--max-minutes must be positive")
    if not (math.isfinite(smoke_budget) and smoke_budget > 0):
        raise click.UsageError("--smoke-budget must be a positive number of seconds")
    if advisor != "none" and not advisor.startswith(("http://", "https://")):
        raise click.UsageError("--advisor is 'none' or an http(s) URL")
    from reprobridge_sdk.config import distrust

    if Path(source).exists():
        distrust(source)  # the repository never configures its own build
    if not sandbox:
        warn_unsandboxed("build", "the repository's code")
    options = BuildOptions(
        source=source,
        claims=claims,
        commit=commit,
        out=output,
        advisor=None if advisor == "none" else advisor,
        advisor_model=advisor_model,
        resume=resume,
        max_minutes=max_minutes,
        smoke_budget=smoke_budget,
        sandbox=sandbox,
    )
    with failing(doing="write"):
        report = run_build(options, echo=note)
    note(render_summary(report), nl=False)
    if fmt == "json":
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    sys.exit(0 if report.passed else 1)
