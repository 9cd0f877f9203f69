"""``reprobridge export``: write an artifact in another format (CITATION.cff, RO-Crate)."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import SuggestingGroup, artifact_alias
from reprobridge_sdk.cli._output import failing, note

__all__ = ["export"]


@click.group("export", cls=SuggestingGroup)
def export() -> None:
    """Export an artifact into another format."""


@export.command("citation")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option(
    "-o",
    "--output",
    help="Where to write (default: CITATION.cff in the artifact; '-' for stdout).",
)
@artifact_alias()
def citation(path: Path, output: str | None) -> None:
    """Write CITATION.cff (Citation File Format 1.2.0) from the manifest's artifact part.

    PATH may be a packed archive (unpacked safely into a temporary directory); its
    CITATION.cff is then written beside the archive.

    Exit 0 written, 2 usage or I/O error (E018 when the manifest names no author).
    """
    from reprobridge_sdk.api import load
    from reprobridge_sdk.authoring.submissions import open_artifact
    from reprobridge_sdk.interop.citation import citation_text
    from reprobridge_sdk.io.atomic import atomic_write_text

    with failing(), open_artifact(path) as opened:
        text = citation_text(load(opened.target).manifest)
    if output == "-":
        sys.stdout.write(text)
        return
    target = Path(output) if output else (path if path.is_dir() else path.parent) / "CITATION.cff"
    with failing(doing="write"):
        atomic_write_text(target, text)
    note(str(target))


@export.command("ro-crate")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    help="A new or empty directory for the crate.",
)
@artifact_alias()
def ro_crate(path: Path, output: Path) -> None:
    """Write a Process Run RO-Crate of the artifact and its recorded runs.

    PATH may be a packed archive (with --with-runs, an evidence submission).

    Needs the ro-crate extra. Exit 0 written, 2 usage or I/O error.
    """
    from reprobridge_sdk.authoring.submissions import open_artifact
    from reprobridge_sdk.interop.ro_crate import export_ro_crate

    with failing(doing="write"), open_artifact(path) as opened:
        written = export_ro_crate(opened.target, output)
    note(str(written))
