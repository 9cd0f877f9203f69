"""The author's patch of a claims file, applied to a checkout with ``git apply``.

``git apply`` refuses what a hostile patch could do to files outside the tree (paths with
``..``, absolute paths, writing through symbolic links); a patch that does not apply
cleanly to the commit changes nothing (``--check`` first) and is B024 with git's words.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.model.build import BuildFinding

__all__ = ["apply_patch"]


def _git_apply(args: list[str], checkout: Path, text: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", "apply", "--whitespace=nowarn", *args, "-"],
        cwd=checkout,
        input=text,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def apply_patch(text: str, checkout: Path, *, name: str) -> BuildFinding | None:
    """Apply the patch ``text`` (called ``name`` in messages) to ``checkout``; None when it
    applied, else the B024 finding (and nothing is changed)."""
    checked = _git_apply(["--check"], checkout, text)
    if checked.returncode == 0:
        checked = _git_apply([], checkout, text)
    if checked.returncode == 0:
        return None
    detail = (checked.stderr.strip() or "git apply failed").splitlines()[-3:]
    return build_finding(
        "B024",
        f"the author's patch {name!r} does not apply to the repository: {' '.join(detail)}",
        path="/patch/path",
        hint="write the patch with 'git diff' against the commit the build checks out",
    )
