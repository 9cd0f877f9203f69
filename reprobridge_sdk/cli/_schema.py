"""``reprobridge schema``: print, write or check the JSON Schemas of the format."""

from __future__ import annotations

import sys

import click

from reprobridge_sdk.cli._output import failing, note, say
from reprobridge_sdk.schema import (
    SCHEMAS,
    check_schemas,
    packaged_schema_text,
    resolve_name,
    write_schemas,
)

__all__ = ["schema"]


@click.command("schema")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the registered schema names.")
@click.option(
    "--write",
    is_flag=True,
    help="Regenerate every schema file (schemas/ of a source checkout and the package copy).",
)
@click.option(
    "--check", is_flag=True, help="Exit 1 if a committed schema differs from a fresh generation."
)
def schema(name: str | None, list_: bool, write: bool, check: bool) -> None:
    """Print the JSON Schema NAME (default: rra-1.0; also evidence-1.0, evidence-1 for a
    record of any 1.x version, and the 1.1 drafts).

    \b
    Exit codes: 0 done or up to date, 1 stale schema files (--check), 2 usage error.
    """
    if write and check:
        raise click.UsageError("--write and --check exclude each other")
    if list_:
        for spec in SCHEMAS.values():
            say(f"{spec.name}\t{spec.id}")
        return
    with failing(doing="read or write"):
        names = None if name is None else [resolve_name(name).name]
        if write:
            for path in write_schemas(names):
                note(f"wrote {path}")
            return
        if check:
            stale = check_schemas(names)
            for path in stale:
                say(f"{path}: stale; regenerate with `reprobridge schema --write`")
            sys.exit(1 if stale else 0)
        sys.stdout.write(packaged_schema_text(names[0] if names else "rra-1.0"))
