"""The one place that runs ``git``: a small wrapper with a quiet, non-interactive setup.

Every call runs ``git`` with ``GIT_TERMINAL_PROMPT=0`` (a credential prompt would hang a
run), no pager, no advice, a fixed identity for the commits the checkout makes, and the
C locale (so messages parse the same everywhere). A failure raises :class:`GitError` with the
command's own message; a missing ``git`` raises it too (``missing`` set).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["GitError", "git", "git_available"]

_IDENTITY = (
    "-c",
    "user.name=reprobridge",
    "-c",
    "user.email=reprobridge@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "protocol.file.allow=always",
)


class GitError(Exception):
    """A git command failed; ``stderr`` is git's own message."""

    def __init__(self, args: Sequence[str], stderr: str, *, missing: bool = False) -> None:
        super().__init__(stderr.strip() or f"git {' '.join(args)} failed")
        self.args_ = list(args)
        self.stderr = stderr.strip()
        self.missing = missing


def git_available() -> bool:
    return shutil.which("git") is not None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
            "LANGUAGE": "C",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
        }
    )
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(name, None)
    return env


def git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    input_: bytes | None = None,
    timeout: float = 600,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` and return the completed process (stdout and stderr as bytes)."""
    command = ["git", *_IDENTITY, *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            input=input_,
            capture_output=True,
            env=_env(),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError(args, "git is not installed or not on PATH", missing=True) from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(args, f"git {args[0]} took longer than {timeout:.0f} s") from exc
    if check and done.returncode != 0:
        raise GitError(args, done.stderr.decode("utf-8", "replace"))
    return done
