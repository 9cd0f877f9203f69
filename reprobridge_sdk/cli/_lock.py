"""``reprobridge lock``: resolve the declared requirements into a hashed lock."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

from pathlib import Path

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import failing, format_option, legacy_format, note, write_json

__all__ = ["lock"]


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option(
    "--resolver",
    type=click.Choice(["uv", "pip-tools"]),
    default="uv",
    show_default=True,
    help="uv is fast; pip-tools downloads and hashes every candidate file.",
)
@click.option(
    "--python", "python", help="Python version to resolve for (default: environment.python)."
)
@click.option("--upgrade", is_flag=True, help="Ignore the pins of the existing lock.")
@click.option(
    "--lock-format",
    "lock_format",
    type=click.Choice(["requirements", "pylock"]),
    help="Lock file format (default: the manifest's, else hashed requirements).",
)
@click.option(
    "-o",
    "--output",
    help="Where to write the lock, inside the artifact (default: the manifest's).",
)
@click.option(
    "--accelerator",
    type=click.Choice(["auto", "cpu", "cuda"]),
    default="auto",
    show_default=True,
    help="Variant of frameworks such as PyTorch: their CPU builds, the default index's CUDA "
    "builds, or auto (cpu when the manifest declares no GPU and this machine has none).",
)
@format_option("text", "json", legacy={"requirements": "--lock-format", "pylock": "--lock-format"})
@artifact_alias()
def lock(  # noqa: PLR0917 - click passes options positionally
    path: Path,
    resolver: str,
    python: str | None,
    upgrade: bool,
    lock_format: str | None,
    output: str | None,
    accelerator: str,
    fmt: str,
) -> None:
    """Resolve environment.requirements into a hashed, portable lock and record its digest.

    The manifest's environment.lock is updated in place; its comments are kept.
    Exit 0 locked, 1 resolution failed or the lock is not portable, 2 usage or I/O error.
    """
    from reprobridge_sdk.env.lock import lock_artifact
    from reprobridge_sdk.locks.lockfile import LockError

    lock_format = lock_format or legacy_format()
    with failing(LockError):
        result = lock_artifact(
            path,
            resolver=resolver,  # type: ignore[arg-type]
            python=python,
            upgrade=upgrade,
            fmt=lock_format,  # type: ignore[arg-type]
            output=output,
            accelerator=accelerator,  # type: ignore[arg-type]
        )
    if fmt == "json":
        data = {
            "path": str(result.path),
            "format": result.format,
            "sha256": result.sha256,
            "resolved_for": {
                "python": result.python,
                "platform": result.platform,
                "resolver": result.resolver,
                "accelerator": result.accelerator,
            },
            "changed": result.changed,
            "findings": [f.to_dict() for f in result.findings],
        }
        write_json(data)
    state = "updated" if result.changed else "unchanged"
    note(
        f"{result.path}: {state}, sha256 {result.sha256[:12]}..., "
        f"python {result.python} on {result.platform} ({result.resolver})"
        + (f", {result.accelerator} build" if result.accelerator else ""),
    )
