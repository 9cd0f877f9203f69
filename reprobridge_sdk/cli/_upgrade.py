"""``reprobridge upgrade``: rewrite a manifest as a newer minor version of the format."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import failing, note
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.versions import NEWEST_FORMAT

__all__ = ["upgrade"]


@click.command("upgrade")
@click.argument("path", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--to",
    "to",
    default=NEWEST_FORMAT,
    show_default=True,
    help="The format version to write.",
)
@click.option(
    "--check", is_flag=True, help="Change nothing; exit 1 if the manifest would be rewritten."
)
@artifact_alias()
def upgrade(path: Path, to: str, check: bool) -> None:
    """Rewrite the manifest of the artifact at PATH as format version --to.

    Only rra_version changes (and the schema named by a yaml-language-server comment):
    comments, key order, quoting and extension keys are kept. A manifest already at that
    version is left alone; a manifest is never downgraded.

    \b
    Exit codes: 0 upgraded or already current, 1 findings (an unreadable manifest or version,
    a downgrade) or an upgrade needed (--check), 2 usage or I/O error.
    """
    from reprobridge_sdk.authoring.upgrade import upgrade as run_upgrade  # noqa: PLC0415 - lazy

    with failing(ArtifactError, doing="read or write"):
        result = run_upgrade(path, to=to, check=check)
    if not result.changed:
        note(f"up to date: {result.manifest} is {result.after}")
        return
    verb = "would upgrade" if check else "upgraded"
    note(f"{verb}: {result.manifest} {result.before} -> {result.after}")
    if check:
        sys.exit(1)
