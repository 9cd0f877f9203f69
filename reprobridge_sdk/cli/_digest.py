"""``reprobridge digest``: recompute the artifact's digests; write them only with --update."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import failing, format_option, note, say, write_json

__all__ = ["digest"]


@click.command("digest")
@click.argument("path", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option("--update", is_flag=True, help="Write the recomputed digests into rra.yaml.")
@format_option("text", "json")
@artifact_alias()
def digest(path: Path, update: bool, fmt: str) -> None:
    """Recompute the tree, patch, lock, data and sample digests and show what changed.

    Nothing is written without --update. For a patch series the tree digest is that of
    the materialized checkout (fetched once if needed).

    \b
    Exit codes: 0 nothing changed or updated, 1 digests differ (without --update), 2 error.
    """
    from reprobridge_sdk.authoring.digests import refresh

    with failing():
        changes = refresh(path, write=update)
    if fmt == "json":
        data = [{"path": c.pointer, "old": c.old, "new": c.new} for c in changes]
        write_json({"changes": data, "written": update})
    for change in changes:
        say(f"{change.pointer}: {change.old} -> {change.new}")
    if not changes:
        note("every digest is current")
    elif update:
        note(f"updated {len(changes)} digest(s) in rra.yaml")
    sys.exit(1 if changes and not update else 0)
