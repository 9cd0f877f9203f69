"""Build a checkout: the pinned commit from the cached upstream, then each patch in order.

Each patch is applied with ``git apply`` and committed; one that cannot be read or applied is
C003 at its pointer, naming its position and, when git names the line, the failing hunk.
"""

from __future__ import annotations

import re
from pathlib import Path

from reprobridge_sdk.digest import TREE_EXCLUDES
from reprobridge_sdk.findings import finding

from ._git import git
from ._series import CodebaseError, SeriesPatch

_FAILED = re.compile(r"^error: patch failed: (?P<file>.+):(?P<line>\d+)$", re.MULTILINE)
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


def _exclude_caches(checkout: Path) -> None:
    names = sorted(TREE_EXCLUDES - {".git"})
    lines = [f"{name}/" if "." not in name else name for name in names]
    (checkout / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (checkout / ".git" / "info" / "exclude").write_text("\n".join([*lines, "*.pyc", ""]), "utf-8")


def init_checkout(bare: Path, commit: str, dest: Path) -> None:
    """A git checkout of ``commit`` from the cached ``bare`` repository at ``dest`` (new)."""
    dest.mkdir(parents=True)
    git(["init", "-q", str(dest)])
    _exclude_caches(dest)
    git(["fetch", "-q", "--no-tags", "--depth", "1", str(bare), f"refs/rra/{commit}"], cwd=dest)
    git(["checkout", "-q", "--detach", "FETCH_HEAD"], cwd=dest)


def _hunk_of(patch_text: str, file: str, line: int) -> int | None:
    """The 1-based index (within ``file``) of the hunk starting at old line ``line``."""
    current: str | None = None
    index = 0
    for raw in patch_text.splitlines():
        if raw.startswith(("+++ ", "--- ")):
            name = raw[4:].split("\t")[0].strip()
            if name != "/dev/null":
                candidate = name[2:] if name[:2] in ("a/", "b/") else name
                if candidate != current:
                    current, index = candidate, 0
            continue
        match = _HUNK.match(raw)
        if match and current == file:
            index += 1
            if int(match.group("start")) == line:
                return index
    return None


def _apply(checkout: Path, root: Path, patch: SeriesPatch, position: int) -> None:
    pointer = f"/codebase/refined/patches/{position - 1}"
    source = root.joinpath(*patch.path.split("/"))
    try:
        text = source.read_text("utf-8", "replace")
    except OSError as exc:
        raise CodebaseError(
            f"cannot read patch {patch.path}",
            [
                finding(
                    "C003",
                    f"patch {position} ({patch.path}) cannot be read: {exc.strerror}",
                    path=pointer,
                )
            ],
        ) from None
    done = git(["apply", "--whitespace=nowarn", str(source.resolve())], cwd=checkout, check=False)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        failed = _FAILED.search(message)
        where = ""
        if failed is not None:
            hunk = _hunk_of(text, failed.group("file"), int(failed.group("line")))
            where = (
                f" at hunk {hunk} of {failed.group('file')}"
                if hunk
                else f" in {failed.group('file')}"
            )
            where += f" (line {failed.group('line')})"
        raise CodebaseError(
            f"patch {patch.path} does not apply",
            [
                finding(
                    "C003",
                    f"patch {position} ({patch.path}) does not apply{where}: "
                    + " ".join(message.splitlines()[:3]),
                    path=pointer,
                    file=patch.path,
                    hint="rebase the patch on the pinned commit and the patches before it",
                )
            ],
        )
    git(["add", "-A"], cwd=checkout)
    git(
        ["commit", "-q", "--allow-empty", "--no-verify", "-m", f"patch {position}: {patch.path}"],
        cwd=checkout,
    )
