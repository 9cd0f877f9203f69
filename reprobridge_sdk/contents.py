"""What is part of an artifact: the one rule for the files that travel with it.

The rule is spec/authoring.md §14.4 ("Contents"). Entries are POSIX paths sorted by their
UTF-8 bytes, the archive's order; a link to a directory is an entry, never followed.
``pack`` and distributed executors all ask :func:`artifact_files`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reprobridge_sdk.digest import TREE_EXCLUDES, file_sha256
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.model import Manifest

__all__ = ["RUNS_DIR", "artifact_files", "files_digest", "hidden_left_out", "named_hidden"]

#: The runs directory at the root (evidence, not part of the artifact).
RUNS_DIR = "runs"

_HIDDEN_TOP = re.compile(r"(?<![\w./-])(\.[^/\s\\\"'=:,;]+)(?:/|$)")


def _named_tops(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        found.update(_HIDDEN_TOP.findall(value.replace("\\", "/").removeprefix("./")))
    elif isinstance(value, dict):
        for item in value.values():
            _named_tops(item, found)
    elif isinstance(value, list):
        for item in value:
            _named_tops(item, found)


def named_hidden(manifest: Manifest) -> set[str]:
    """The hidden top-level names that strings of the manifest start paths with.

    Every string of the manifest counts (its full data, defaults included: no default names
    a hidden path), so a path field, an ``argv`` item (``--data=.cache/x`` counts after the
    ``=``) and a ``workdir`` all keep their hidden directory.
    """
    found: set[str] = set()
    _named_tops(manifest.model_dump(mode="json", by_alias=True), found)
    return found


def hidden_left_out(root: str | os.PathLike[str], manifest: Manifest) -> list[str]:
    """The hidden directories at the root that :func:`artifact_files` leaves out, sorted."""
    named = named_hidden(manifest)
    with os.scandir(root) as entries:
        return sorted(
            entry.name
            for entry in entries
            if entry.name.startswith(".")
            and entry.name not in named
            and entry.is_dir(follow_symlinks=False)
        )


def artifact_files(
    root: str | os.PathLike[str],
    manifest: Manifest,
    *,
    with_runs: bool = False,
    with_checkout: bool = False,
    skip: Iterable[str | os.PathLike[str]] = (),
) -> list[str]:
    """The POSIX relative paths of the files that are part of the artifact (module docstring)."""
    excluded_top = set(hidden_left_out(root, manifest))
    if not with_runs:
        excluded_top.add(RUNS_DIR)
    if manifest.codebase.refined.kind == "patches" and not with_checkout:
        from reprobridge_sdk.checkout.materialize import CHECKOUT_DIR  # noqa: PLC0415 - patches

        excluded_top.add(CHECKOUT_DIR)
    skipped = {os.path.realpath(path) for path in skip}
    # a plain entry's real path ends in its own name: only a link or an entry of a skipped
    # file's name needs its real path (one system call a component) compared
    skipped_names = {Path(path).name for path in skipped}
    real_root = os.path.realpath(root)
    found: list[str] = []
    stack = [(os.fspath(root), "")]
    while stack:
        current, prefix = stack.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.name in TREE_EXCLUDES or entry.name.endswith(".pyc"):
                    continue
                if not prefix and entry.name in excluded_top:
                    continue
                if (
                    skipped
                    and (entry.name in skipped_names or entry.is_symlink())
                    and os.path.realpath(entry.path) in skipped
                ):
                    continue
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target != real_root and not target.startswith(real_root + os.sep):
                        message = f"{rel} is a link that leaves the artifact"
                        raise ArtifactError(message, [finding("C017", message, file=rel)])
                    found.append(rel)
                elif entry.is_dir():
                    stack.append((entry.path, rel + "/"))
                elif entry.is_file():
                    found.append(rel)
    return sorted(found, key=lambda name: name.encode("utf-8"))


def files_digest(root: str | os.PathLike[str], manifest: Manifest) -> str:
    """The SHA-256 of ``<sha256>  <path>`` lines (LF) of :func:`artifact_files`, in their
    order; a link's line hashes its target's text. Two trees with the same files agree."""
    lines = []
    for name in artifact_files(root, manifest):
        path = Path(root).joinpath(*name.split("/"))
        if path.is_symlink():
            digest = hashlib.sha256(str(path.readlink()).encode("utf-8")).hexdigest()
        else:
            digest = file_sha256(path)
        lines.append(f"{digest}  {name}\n")
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()
