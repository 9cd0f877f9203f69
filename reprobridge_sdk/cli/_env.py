"""``reprobridge env``: build, check and snapshot environments."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import SuggestingGroup, artifact_alias
from reprobridge_sdk.cli._output import (
    cache_dir_option,
    failing,
    format_option,
    python_option,
    report_findings,
    report_options,
    say,
    write_json,
)

__all__ = ["env"]


@click.group(cls=SuggestingGroup)
def env() -> None:
    """Build, check and snapshot environments."""


@env.command()
@python_option("Interpreter to describe (default: the running one).")
@click.option("--var", "variables", multiple=True, help="Also record this variable (or PREFIX*).")
@format_option("text", "json")
def snapshot(python: Path | None, variables: tuple[str, ...], fmt: str) -> None:
    """Capture what a run would run on: Python, platform, CPU, GPUs, packages, variables.

    Secrets among the recorded variables are redacted.
    """
    from reprobridge_sdk.env.snapshot import capture_snapshot

    with failing():
        snap = capture_snapshot(python, variables=variables)
    if fmt == "json":
        write_json(snap.model_dump(mode="json"))
        return
    gpus = ", ".join(f"{g.name} ({g.memory_mb} MB)" for g in snap.gpus) or "none visible"
    lines = [
        f"python        {snap.python} ({snap.implementation}) {snap.executable}",
        f"platform      {snap.platform}",
        f"cpu           {snap.cpu or 'unknown'} x {snap.cpu_count or '?'}",
        f"memory        {(snap.memory_bytes or 0) / 2**30:.1f} GiB",
        f"gpus          {gpus}",
        f"distributions {len(snap.distributions)}",
    ]
    lines.extend(f"  {name}={value}" for name, value in snap.variables.items())
    say("\n".join(lines))


@env.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
@cache_dir_option
@python_option("Interpreter to build the environment with (default: the running one).")
@click.option(
    "--installer",
    type=click.Choice(["uv", "pip"]),
    default=None,
    help="Install with uv (the default where it is present) or pip (hashed requirements only).",
)
@artifact_alias()
def create(path: Path, cache_dir: Path | None, python: Path | None, installer: str | None) -> None:
    """Build the artifact's environment from its lock (cached; reused when built)."""
    from reprobridge_sdk.env.venv import ensure_environment

    with failing():
        exe = ensure_environment(
            path,
            cache_dir=cache_dir,
            python=python,
            progress=True,
            installer=installer,  # type: ignore[arg-type]
        )
    say(str(exe))


@env.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option("--current", is_flag=True, help="Check the running interpreter.")
@python_option("Check this interpreter.")
@cache_dir_option
@format_option("text", "json", "sarif", "junit", "github")
@click.option("--strict", is_flag=True, help="Warnings fail the check too.")
@click.option("-v", "--verbose", is_flag=True, help="Also show info findings (extra packages).")
@report_options
@artifact_alias()
def check(  # noqa: PLR0917 - click passes options positionally
    path: Path,
    current: bool,
    python: Path | None,
    cache_dir: Path | None,
    fmt: str,
    strict: bool,
    verbose: bool,
) -> None:
    """Compare an environment with the lock and the declared system needs.

    By default the cached environment built by 'env create' is checked.
    Exit 0 clean, 1 findings, 2 usage or I/O error.
    """
    from reprobridge_sdk.env.check import check_environment

    if current and python is not None:
        raise click.UsageError("--current and --python exclude each other")
    with failing():
        findings = check_environment(
            path,
            python=sys.executable if current else python,
            cache_dir=cache_dir,
        )
    report_findings(findings, fmt, target=str(path), strict=strict, verbose=verbose)
