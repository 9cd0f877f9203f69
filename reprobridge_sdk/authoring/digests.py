"""``reprobridge digest``: recompute declared digests on purpose, built on ``refresh_digests``.

Also the tree digest of a patch series' materialized checkout (C008 for unrecorded changes).
Every change is returned as a JSON Pointer with its old and new value; the manifest is
written only with ``write`` (``spec/authoring.md#digest-command``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from reprobridge_sdk.api import ArtifactDir, load
from reprobridge_sdk.authoring.codebase import _checkout
from reprobridge_sdk.io.pointer import resolve

__all__ = ["DigestChange", "refresh"]


@dataclass(frozen=True)
class DigestChange:
    """One digest that differs from the declared value."""

    pointer: str
    old: Any
    new: Any


def refresh(
    artifact_dir: str | os.PathLike[str] | ArtifactDir, *, write: bool = False
) -> list[DigestChange]:
    """The digests that differ from the declared ones; written into rra.yaml when ``write``."""
    art = artifact_dir if isinstance(artifact_dir, ArtifactDir) else load(artifact_dir)
    before = art.manifest.model_dump(mode="json")
    pointers = art.refresh_digests()
    codebase = art.manifest.codebase
    if codebase.refined.kind == "patches":
        checkout = _checkout(art)
        if codebase.tree_digest != checkout.tree_digest:
            codebase.tree_digest = checkout.tree_digest
            art.manifest.codebase = codebase
            pointers.append("/codebase/tree_digest")
    after = art.manifest.model_dump(mode="json")
    changes = [DigestChange(p, resolve(before, p), resolve(after, p)) for p in pointers]
    if write and changes:
        art.save()
    return changes
