"""``reprobridge code``: import an upstream, record fixes as patches, show diff and status."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from reprobridge_sdk.cli import SuggestingGroup, artifact_alias
from reprobridge_sdk.cli._output import (
    echo_finding,
    failing,
    format_option,
    note,
    say,
    write_json,
)

__all__ = ["code"]

F = TypeVar("F", bound=Callable[..., Any])


def _ARTIFACT(f: F) -> F:
    """The artifact directory: a positional ``[PATH]`` (default ``.``), or ``-C PATH``."""
    f = artifact_alias("artifact")(f)
    return click.argument(
        "artifact",
        metavar="[PATH]",
        required=False,
        default=".",
        type=click.Path(path_type=Path, file_okay=False),
    )(f)


@click.group("code", cls=SuggestingGroup)
def code() -> None:
    """Bring an upstream repository in and record fixes as an ordered patch series.

    \b
    Exit codes: 0 done, 1 a patch does not apply or nothing to record, 2 usage or I/O error.
    """


@code.command("import")
@click.argument("source")
@_ARTIFACT
@click.option("--commit", help="Full commit id, branch or tag [the upstream's HEAD].")
@click.option(
    "--as",
    "as_",
    type=click.Choice(["directory", "patches"]),
    default="directory",
    show_default=True,
    help="Refined code as a directory in the artifact, or as a patch series on the commit.",
)
@click.option("--force", is_flag=True, help="Replace an existing code/ directory.")
def import_(source: str, artifact: Path, commit: str | None, as_: str, force: bool) -> None:
    """Pin SOURCE (a clone URL or a local repository) at a commit as the upstream.

    The tree is checked out in code/; upstream, commit and tree digest are written.
    """
    from reprobridge_sdk.authoring.codebase import import_code

    with failing():
        result = import_code(artifact, source, commit=commit, as_=as_, force=force)  # type: ignore[arg-type]
    note(
        f"imported {result.repository} at {result.commit} as {result.kind}; "
        f"tree digest {result.tree_digest}",
    )


@code.command("record")
@_ARTIFACT
@click.option(
    "--kind",
    type=click.Choice(["execution-fix", "correctness-fix", "convenience"]),
    required=True,
    help="What the change is.",
)
@click.option("--why", required=True, help="The rationale: why the change is needed.")
@click.option("--summary", help="One line (default: the first line of --why).")
@click.option("--task", "tasks", multiple=True, help="An affected task id (repeatable).")
@click.option("--id", "change_id", help="Id of the change-record entry [KIND-N].")
def record(  # noqa: PLR0917 - click passes options positionally
    artifact: Path,
    kind: str,
    why: str,
    summary: str | None,
    tasks: tuple[str, ...],
    change_id: str | None,
) -> None:
    """Turn the working changes in code/ into the next patch and a change-record entry."""
    from reprobridge_sdk.authoring.codebase import NothingToRecord, record_patch

    with failing(NothingToRecord):
        change = record_patch(
            artifact, kind=kind, why=why, tasks=tasks, summary=summary, change_id=change_id
        )
    note(f"recorded {change.patch} as change {change.id!r} ({change.kind})")


@code.command("diff")
@_ARTIFACT
def diff(artifact: Path) -> None:
    """Print the unrecorded working changes of code/ as a unified diff (exit 1 if any)."""
    from reprobridge_sdk.authoring.codebase import code_diff

    with failing():
        text = code_diff(artifact)
    sys.stdout.write(text)
    sys.exit(1 if text else 0)


@code.command("status")
@_ARTIFACT
@format_option("text", "json")
def status(artifact: Path, fmt: str) -> None:
    """List the series and whether each patch applies (fetches the upstream once)."""
    from reprobridge_sdk.authoring.codebase import code_status

    with failing():
        result = code_status(artifact)
    if fmt == "json":
        data = {
            "kind": result.kind,
            "repository": result.repository,
            "commit": result.commit,
            "tree_digest": result.tree_digest,
            "declared_digest": result.declared_digest,
            "patches": [
                {
                    "position": p.position,
                    "path": p.path,
                    "summary": p.summary,
                    "state": p.state,
                    "finding": p.finding.to_dict() if p.finding else None,
                }
                for p in result.patches
            ],
            "working_changes": result.working_changes,
            "findings": [f.to_dict() for f in result.findings],
            "ok": result.ok,
        }
        write_json(data)
    else:
        say(f"{result.kind} on {result.repository} at {result.commit}")
        for p in result.patches:
            say(f"  {p.position:>3} {p.state:<10} {p.path}  {p.summary or ''}")
            if p.finding is not None:
                echo_finding(p.finding, p.path)
        for f in result.findings:
            echo_finding(f)
        if result.working_changes:
            say(f"  {len(result.working_changes)} unrecorded change(s):")
            for line in result.working_changes:
                say(f"    {line}")
    sys.exit(0 if result.ok else 1)
