"""What the commands that run or judge a stranger's code share on the command line.

``--sandbox/--no-sandbox`` (N031) and the notes about configuration an artifact carries
(N030). Both are notices about the invocation, not findings about the artifact, so they go to
stderr and never precede a machine format on stdout.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ._output import echo_finding

if TYPE_CHECKING:
    from reprobridge_sdk.config import Settings

__all__ = [
    "note_artifact_configs",
    "sandbox_option",
    "settings",
    "warn_unsandboxed",
]

F = TypeVar("F", bound=Callable[..., Any])


def sandbox_option(what: str) -> Callable[[F], F]:
    """``--sandbox/--no-sandbox`` (default on) for a command that runs ``what``."""
    return click.option(
        "--sandbox/--no-sandbox",
        "sandbox",
        default=True,
        show_default=True,
        help=f"Run {what} under the runner's sandbox (no network, read-only file system but "
        "the run directory, private /tmp; N011 where it cannot work). --no-sandbox runs it "
        "with every right of your user (N031).",
    )


def warn_unsandboxed(command: str, what: str) -> None:
    """N031 on stderr: ``command`` runs ``what`` without the sandbox."""
    from reprobridge_sdk.findings import finding  # noqa: PLC0415 - lazy

    echo_finding(
        finding(
            "N031",
            f"{command} --no-sandbox: {what} runs unsandboxed, with every right of your user "
            "(files, network, processes)",
            hint="use --no-sandbox only for code you trust",
        ),
        notice=True,
    )


def _note_ignored(path: os.PathLike[str] | str, why: str) -> None:
    from reprobridge_sdk.findings import finding  # noqa: PLC0415 - lazy

    echo_finding(
        finding(
            "N030",
            f"configuration ignored: {why}",
            file=str(path),
            hint="an artifact never configures its own check; "
            "name a file of yours with --config FILE",
        ),
        notice=True,
    )


def settings(flags: Mapping[str, Any] | None = None, **kwargs: Any) -> Settings:
    """:func:`~reprobridge_sdk.config.load_settings`, with N030 for every skipped file."""
    from reprobridge_sdk.config import load_settings  # noqa: PLC0415 - lazy

    found = load_settings(flags, **kwargs)
    for path in found.skipped:
        _note_ignored(path, "it lies inside an artifact")
    return found


def note_artifact_configs(artifacts: Iterable[str | os.PathLike[str]], command: str) -> None:
    """N030 for each configuration file at the root of one of ``artifacts`` (``check``,
    ``review`` and ``audit --table`` ignore an artifact's ignore lists and cache settings)."""
    from reprobridge_sdk.config import artifact_configs  # noqa: PLC0415 - lazy

    for artifact in artifacts:
        for path in artifact_configs(artifact):
            _note_ignored(path, f"{command} never applies an artifact's own settings")
