"""Read the ``environment`` part of an artifact, and edit it with a round-trip save.

The environment commands need only this part of the manifest, so a problem elsewhere in the
manifest (reported by ``reprobridge validate``) does not stop a lock, a build or a check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from reprobridge_sdk import yamlio
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.findings import Severity
from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.model.environment import Environment

__all__ = ["EnvArtifact", "load_environment"]


@dataclass
class EnvArtifact:
    """An artifact's root, its manifest document and its typed ``environment`` part."""

    root: Path
    document: yamlio.YamlDocument
    environment: Environment

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    def inside(self, relative: str, *, what: str) -> Path:
        """Resolve a manifest path; :class:`UsageError` if it leads outside the artifact."""
        pure = PurePosixPath(relative)
        if pure.is_absolute() or ".." in pure.parts:
            msg = f"{what} {relative!r} leads outside the artifact"
            raise UsageError(msg)
        path = self.root.joinpath(*pure.parts)
        root = self.root.resolve()
        if not path.resolve().is_relative_to(root):
            msg = f"{what} {relative!r} leads outside the artifact (through a link)"
            raise UsageError(msg)
        return path

    def save_environment(self, environment: dict[str, Any]) -> None:
        """Replace the ``environment`` mapping, keeping comments and formatting elsewhere."""
        data = dict(self.document.data)
        data["environment"] = environment
        if yamlio.update(self.document, data):
            yamlio.save(self.document, self.manifest_path)
        self.environment = Environment.model_validate(environment)


def load_environment(path: str | os.PathLike[str]) -> EnvArtifact:
    """Load the artifact at ``path`` (its directory or its manifest)."""
    root = Path(path)
    if root.is_file():
        root = root.parent
    manifest = root / MANIFEST_NAME
    try:
        document = yamlio.load(manifest)
    except OSError as exc:
        msg = f"cannot read {manifest}: {exc.strerror}"
        raise ArtifactError(msg) from exc
    errors = [f for f in document.findings if f.severity is Severity.ERROR]
    if errors or not isinstance(document.data, dict):
        msg = f"{manifest} cannot be read as a manifest"
        raise ArtifactError(msg, errors)
    raw = document.data.get("environment")
    if not isinstance(raw, dict):
        msg = f"{manifest} has no 'environment' mapping"
        raise ArtifactError(msg)
    try:
        environment = Environment.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(part) for part in first["loc"])
        msg = f"{manifest}: environment/{where}: {first['msg']} (run 'reprobridge validate')"
        raise ArtifactError(msg) from exc
    return EnvArtifact(root=root, document=document, environment=environment)
