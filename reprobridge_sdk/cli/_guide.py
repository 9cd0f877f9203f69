"""``reprobridge guide``: render the structured records into GUIDE.md, or check them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import echo_finding, failing, note
from reprobridge_sdk.findings import Severity
from reprobridge_sdk.guide import check_guide, guide_path, write_guide
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.versions import MANIFEST_NAME

__all__ = ["guide"]


@click.command("guide")
@click.argument("path", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--check", is_flag=True, help="Change nothing; exit 1 if GUIDE.md is missing or out of date."
)
@artifact_alias()
def guide(path: Path, check: bool) -> None:
    """Render the guide records of the artifact at PATH into its GUIDE.md.

    The records (ambiguities, change record, discrepancies, pitfalls, open choices) go between
    the markers <!-- reprobridge:records:begin --> and <!-- reprobridge:records:end -->;
    hand-written text around them is kept. Without markers the block is appended.

    \b
    Exit codes: 0 done or up to date, 1 findings (--check, or an unreadable manifest),
    2 usage or I/O error.
    """
    root = path.parent if path.is_file() else path
    manifest = root / MANIFEST_NAME
    with failing(doing="read"):
        document = load_document(manifest, name=str(manifest), root=root)
    if document.fatal or not isinstance(document.data, dict):
        for item in document.findings:
            echo_finding(item)
        sys.exit(1)
    records = document.data.get("guide")
    records = records if isinstance(records, dict) else {}
    if check:
        findings = check_guide(root, records)
        for item in findings:
            echo_finding(item)
        sys.exit(1 if any(f.severity != Severity.INFO for f in findings) else 0)
    artifact = document.data.get("artifact")
    title = artifact.get("title") if isinstance(artifact, dict) else None
    with failing(doing="write"):
        changed = write_guide(root, records, title=title if isinstance(title, str) else None)
    target = root / guide_path(records)
    note(f"{'updated' if changed else 'up to date'}: {target}")
