"""Finding and reading an artifact's manifest: the one loader of ``rra.yaml``.

:func:`read_manifest` gives the root and the round-trip document, or raises
:class:`~reprobridge_sdk.errors.ArtifactError` with located findings (Y010, Y002, the reader's).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ArtifactError
from .findings import Severity, finding
from .versions import MANIFEST_NAME

if TYPE_CHECKING:
    from .io import yamlio

__all__ = ["MANIFEST_NAME", "manifest_root", "read_manifest"]


def manifest_root(path: str | os.PathLike[str]) -> Path:
    """The root of the artifact at ``path``: the directory, or the one that holds the file."""
    root = Path(path)
    if root.name == MANIFEST_NAME or root.is_file():
        return root.parent
    return root


def read_manifest(path: str | os.PathLike[str]) -> tuple[Path, yamlio.YamlDocument]:
    """The root of the artifact at ``path`` and its manifest, read; :class:`ArtifactError`
    (with findings) when there is none or it cannot be read as a mapping."""
    from .io import yamlio  # noqa: PLC0415 - start-up: manifest_root needs no YAML writer

    root = manifest_root(path)
    manifest = root / MANIFEST_NAME
    name = str(manifest)
    try:
        document = yamlio.load(manifest, name=name)
    except FileNotFoundError as exc:
        msg = f"cannot read {manifest}: there is no such file"
        item = finding("Y010", msg, file=str(root), hint="create one with `reprobridge init`")
        raise ArtifactError(msg, [item]) from exc
    except OSError as exc:
        raise ArtifactError(f"cannot read {manifest}: {exc.strerror or exc}") from exc
    if not document.ok:
        errors = [f for f in document.findings if f.severity == Severity.ERROR]
        raise ArtifactError(f"{name} cannot be read", errors or document.findings)
    if not isinstance(document.data, dict):
        item = finding("Y002", "the manifest is not a mapping", file=name, line=1, col=1)
        raise ArtifactError(f"{name} is not a mapping", [item])
    return root, document
