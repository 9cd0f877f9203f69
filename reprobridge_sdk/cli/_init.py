"""``reprobridge init``: scaffold a new artifact that validates clean."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.authoring.scaffold import (
    PLACEHOLDER_COMMIT,
    PLACEHOLDER_REPOSITORY,
    InitOptions,
    default_id,
    scaffold,
)
from reprobridge_sdk.cli._output import echo_finding, error, failing, note

__all__ = ["init"]


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("-y", "--yes", is_flag=True, help="Do not prompt; take flags or defaults.")
@click.option("--id", "artifact_id", help="Artifact id (a slug; default: from DIRECTORY).")
@click.option("--title", help="Title of the artifact.")
@click.option("--paper-title", help="Title of the paper the artifact reproduces.")
@click.option("--license", "license_", help="SPDX license of the artifact [Apache-2.0].")
@click.option("--repository", help="Clone URL of the upstream repository.")
@click.option("--commit", help="Full upstream commit (40 or 64 hex digits).")
@click.option("--python", "python_version", help="Python version, e.g. 3.11 [the running one].")
@click.option("--author", help="Name of the artifact's author.")
@click.option("--force", is_flag=True, help="Overwrite an existing scaffold in DIRECTORY.")
@click.option(
    "--from",
    "source",
    help="Scaffold around this repository (a clone URL or a local path), imported at --commit.",
)
@click.option(
    "--as",
    "as_",
    type=click.Choice(["patches", "directory"]),
    default="patches",
    show_default=True,
    help="With --from: the refined code as a patch series or as a directory.",
)
def init(  # noqa: PLR0917 - click passes options as arguments
    directory: Path,
    yes: bool,
    artifact_id: str | None,
    title: str | None,
    paper_title: str | None,
    license_: str | None,
    repository: str | None,
    commit: str | None,
    python_version: str | None,
    author: str | None,
    force: bool,
    source: str | None,
    as_: str,
) -> None:
    """Scaffold a new artifact in DIRECTORY (asks for what flags do not give, unless --yes).

    The scaffold (rra.yaml, GUIDE.md, code/, environment/, samples/) passes
    `reprobridge validate` with no findings; replace its placeholders with the paper's.

    \b
    Exit codes: 0 created, 2 usage error or an existing artifact (without --force).
    """
    defaults = InitOptions(id=default_id(directory), title="")

    def value(given: str | None, prompt: str, default: str) -> str:
        if given is not None:
            return given
        if yes:
            return default
        try:
            return str(click.prompt(prompt, default=default, err=True))
        except click.Abort:
            error("no answer to a prompt; use --yes and flags")
            sys.exit(2)

    artifact = value(artifact_id, "Artifact id", defaults.id)
    options = InitOptions(
        id=artifact,
        title=value(title, "Title", f"Reproduction of {artifact}"),
        paper_title=value(paper_title, "Paper title", defaults.paper_title),
        license=value(license_, "License (SPDX)", defaults.license),
        repository=(
            PLACEHOLDER_REPOSITORY
            if source
            else value(repository, "Upstream repository", PLACEHOLDER_REPOSITORY)
        ),
        commit=(
            PLACEHOLDER_COMMIT
            if source
            else value(commit, "Upstream commit (full hash)", PLACEHOLDER_COMMIT)
        ),
        python=value(python_version, "Python version", defaults.python),
        author=author,
    )
    if source is not None:
        _from(directory, options, source, commit=commit, as_=as_, force=force)
        return
    with failing(doing="write"):
        scaffold(directory, options, force=force)
    note(f"created the artifact {options.id!r} in {directory}")
    _list_placeholders(directory)
    note(f"then check it with: reprobridge validate {directory}")


def _from(
    directory: Path, options: InitOptions, source: str, *, commit: str | None, as_: str, force: bool
) -> None:
    from reprobridge_sdk.authoring.intake import scaffold_from  # noqa: PLC0415 - on use

    with failing():
        result = scaffold_from(
            directory,
            options,
            source,
            commit=commit,
            as_="directory" if as_ == "directory" else "patches",
            force=force,
        )
    imported = result.imported
    note(
        f"created {options.id!r} in {directory} around {imported.repository} at "
        f"{imported.commit} ({imported.kind})",
    )
    if result.requirements_from:
        note(f"requirements from {result.requirements_from}: run `reprobridge lock`")
    if result.python:
        note(f"python {result.python} from {result.python_from}")
    for command in result.commands:
        note(f"candidate launcher (as a comment in rra.yaml): {command}")
    _list_placeholders(directory)


def _list_placeholders(directory: Path) -> None:
    from reprobridge_sdk.validation import validate  # noqa: PLC0415 - on use

    found = [f for f in validate(directory).findings if f.code.startswith("P")]
    if found:
        note("replace the placeholders (each a P warning of `validate`):")
        for item in found:
            echo_finding(item, str(directory))
