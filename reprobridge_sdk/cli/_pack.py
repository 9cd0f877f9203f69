"""``reprobridge pack`` and ``reprobridge unpack``: one deterministic file to submit."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import (
    echo_finding,
    failing,
    format_option,
    note,
    say,
    write_json,
)

__all__ = ["pack", "unpack"]


@click.command("pack")
@click.argument("path", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option(
    "-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="[<id>.tar.gz]"
)
@click.option("--with-runs", is_flag=True, help="Include runs/ (an evidence submission).")
@format_option("text", "json")
@artifact_alias()
def pack(path: Path, output: Path | None, with_runs: bool, fmt: str) -> None:
    """Pack the artifact at PATH into one deterministic archive and print its digest.

    The digest is the SHA-256 of the uncompressed tar: the same artifact gives the same
    digest (and the same bytes) on any machine. runs/ and caches are left out. An upstream
    that nobody else can fetch (a local path such as '..') is carried as a git bundle.

    \b
    Exit codes: 0 packed, 2 usage or I/O error (e.g. a link that leaves the artifact).
    """
    from reprobridge_sdk.api import load
    from reprobridge_sdk.authoring.pack import pack as pack_api

    with failing(doing="write"):
        target = output or Path(f"{load(path).manifest.artifact.id}.tar.gz")
        result = pack_api(path, target, with_runs=with_runs)
    if fmt == "json":
        data = {
            "path": str(result.path),
            "sha256": result.digest,
            "files": result.files,
            "size": result.size,
            "bundle": result.bundle,
        }
        write_json(data)
    else:
        say(f"sha256:{result.digest}  {result.path}")
    note(f"packed {result.files} file(s), {result.size} bytes")
    if result.bundle:
        note(f"the upstream is carried as {result.bundle} (a git bundle)")


@click.command("unpack")
@click.argument("archive", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--digest", "expected", help="The archive's expected sha256 (C019 otherwise).")
@format_option("text", "json")
def unpack(archive: Path, dest: Path, expected: str | None, fmt: str) -> None:
    """Unpack ARCHIVE safely into DEST (new or empty) and verify every digest.

    \b
    Exit codes: 0 unpacked and valid, 1 a digest or validation error, 2 an unsafe archive.
    """
    from reprobridge_sdk.authoring.pack import unpack as unpack_api
    from reprobridge_sdk.findings import Severity

    with failing():
        result = unpack_api(
            archive, dest, expected_digest=expected and expected.removeprefix("sha256:")
        )
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    if fmt == "json":
        data = {
            "root": str(result.root),
            "sha256": result.digest,
            "files": result.files,
            "findings": [f.to_dict() for f in result.findings],
        }
        write_json(data)
    for item in errors:
        echo_finding(item)
    note(f"unpacked {result.files} member(s), sha256:{result.digest}")
    sys.exit(1 if errors else 0)
