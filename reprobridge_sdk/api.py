"""The Python API for artifacts: load, create, edit and save.

This first version reads manifests with a plain YAML loader; the round-trip writer that keeps
comments and formatting replaces it (see ``yamlio``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import ArtifactError
from .model import MANIFEST_NAME, Manifest

__all__ = ["ArtifactDir", "create", "load"]


@dataclass
class ArtifactDir:
    """An artifact on disk: its root directory and its typed manifest."""

    root: Path
    manifest: Manifest

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    def path(self, relative: str) -> Path:
        """Resolve a manifest path (relative, POSIX) against the artifact root."""
        return self.root.joinpath(*relative.split("/"))


def load(path: str | os.PathLike[str]) -> ArtifactDir:
    """Load the artifact at ``path`` (its directory, or its ``rra.yaml``)."""
    root = Path(path)
    if root.is_file():
        root = root.parent
    manifest_path = root / MANIFEST_NAME
    try:
        data = yaml.safe_load(manifest_path.read_text("utf-8"))
    except OSError as exc:
        msg = f"cannot read {manifest_path}: {exc.strerror}"
        raise ArtifactError(msg) from exc
    return ArtifactDir(root=root, manifest=Manifest.model_validate(data))


def create(path: str | os.PathLike[str], manifest: Manifest) -> ArtifactDir:
    """Create an artifact directory at ``path`` holding ``manifest``."""
    from ._fs import atomic_write_text

    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    data = manifest.model_dump(mode="json", exclude_defaults=True, by_alias=True)
    atomic_write_text(root / MANIFEST_NAME, yaml.safe_dump(data, sort_keys=False))
    return ArtifactDir(root=root, manifest=manifest)
