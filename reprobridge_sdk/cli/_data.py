"""``reprobridge data``: fetch and verify data and checkpoints."""

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
    note,
    python_option,
    report_findings,
    report_options,
)

__all__ = ["data"]

_FORMATS = ("text", "json", "sarif", "junit", "github")


@click.group(cls=SuggestingGroup)
def data() -> None:
    """Fetch and verify data and checkpoints."""


@data.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.argument("items", nargs=-1)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds per read, and for the status line and the headers each (D019).",
)
@click.option(
    "--min-rate",
    type=float,
    default=1024.0,
    show_default=True,
    help="Least bytes per second over each 30 s; slower transfers stop (D011).",
)
@click.option(
    "--max-size",
    type=click.IntRange(min=1),
    default=1 << 30,
    show_default=True,
    help="Bytes at most of an item that declares no size; more stops it (D018).",
)
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Also place items that declare neither sha256 nor size (else D014).",
)
@cache_dir_option
@format_option(*_FORMATS)
@report_options
@artifact_alias(rest="items")
def fetch(  # noqa: PLR0917 - click passes options positionally
    path: Path,
    items: tuple[str, ...],
    timeout: float,
    min_rate: float,
    max_size: int,
    allow_unverified: bool,
    cache_dir: Path | None,
    fmt: str,
) -> None:
    """Download the declared items (all, or ITEM...) to their destinations and verify them.

    Gated and manual items are not downloaded: the output says what to do.
    Exit 0 all present, 1 an item failed or needs the user, 2 usage or I/O error.
    """
    from reprobridge_sdk.env.data import fetch_data

    with failing():
        result = fetch_data(
            path,
            items,
            cache_dir=cache_dir,
            timeout=timeout,
            progress=sys.stderr.isatty(),
            min_rate=min_rate,
            max_size=max_size,
            allow_unverified=allow_unverified,
        )
    for name, ids in (("fetched", result.fetched), ("present", result.present)):
        if ids:
            note(f"{name}: {', '.join(ids)}")
    if result.needs_user and fmt == "text":
        note(f"needs you: {', '.join(result.needs_user)}")
    if result.needs_user and result.ok:
        # Nothing failed, but the data is not all there: say so with the exit status.
        report_findings(result.findings, fmt, target=str(path), strict=True)
    report_findings(result.findings, fmt, target=str(path))


@data.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.argument("items", nargs=-1)
@python_option("Interpreter whose distributions hold 'package' items (default: the running one).")
@cache_dir_option
@format_option(*_FORMATS)
@click.option("--strict", is_flag=True, help="Warnings fail the check too.")
@report_options
@artifact_alias(rest="items")
def verify(  # noqa: PLR0917 - click passes options positionally
    path: Path,
    items: tuple[str, ...],
    python: Path | None,
    cache_dir: Path | None,
    fmt: str,
    strict: bool,
) -> None:
    """Check the declared items on disk: presence, size and SHA-256.

    Exit 0 all verified, 1 findings, 2 usage or I/O error.
    """
    from reprobridge_sdk.env.data import verify_data

    with failing():
        result = verify_data(path, items, python=python, cache_dir=cache_dir)
    report_findings(result.findings, fmt, target=str(path), strict=strict)
