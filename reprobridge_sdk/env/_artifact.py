"""Read the ``environment`` part of an artifact, and edit it with a round-trip save.

The environment commands need only this part of the manifest, so a problem elsewhere in the
manifest (reported by ``reprobridge validate``) does not stop a lock, a build or a check.
:func:`load_raw` does not import the data model at all (``reprobridge lock`` stays quick);
:func:`load_environment` validates the part with the model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from reprobridge_sdk._forward import DocumentView, consumer_view
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.io.pointer import from_loc
from reprobridge_sdk.loading import MANIFEST_NAME, read_manifest
from reprobridge_sdk.versions import follow_modeline, parse_version, written_version

if TYPE_CHECKING:
    from reprobridge_sdk.model.environment import Environment

__all__ = [
    "MANIFEST",
    "EnvArtifact",
    "LoadedEnvironment",
    "RawArtifact",
    "consumer_environment",
    "inside",
    "load_environment",
    "load_raw",
]

#: The manifest's file name (not imported from the model, since importing the model costs
#: more than a whole ``reprobridge lock``'s overhead).
MANIFEST = MANIFEST_NAME


def inside(root: Path, relative: str, *, what: str, pointer: str = "") -> Path:
    """Resolve a manifest path; :class:`UsageError` if it leads outside the artifact.

    The error's finding is F001 for an absolute path, F002 for one with a ``..`` part and
    F003 for one that leaves through a symbolic link; its file is ``relative`` and its path
    ``pointer`` (the manifest key that named it, ``""`` for an option).
    """
    pure = PurePosixPath(relative)
    hint = "give a path relative to the artifact's root, inside it"
    if pure.is_absolute() or ".." in pure.parts:
        msg = f"{what} {relative!r} leads outside the artifact"
        code = "F001" if pure.is_absolute() else "F002"
        raise UsageError(msg, [finding(code, msg, file=relative, path=pointer, hint=hint)])
    path = root.joinpath(*pure.parts)
    if not path.resolve().is_relative_to(root.resolve()):
        msg = f"{what} {relative!r} leads outside the artifact (through a link)"
        raise UsageError(msg, [finding("F003", msg, file=relative, path=pointer, hint=hint)])
    return path


@dataclass
class RawArtifact:
    """An artifact's root, its manifest document and its ``environment`` mapping as data."""

    root: Path
    document: yamlio.YamlDocument
    raw: dict[str, Any]

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    def inside(self, relative: str, *, what: str, pointer: str = "") -> Path:
        return inside(self.root, relative, what=what, pointer=pointer)

    def save_raw(self, environment: dict[str, Any], *, at_least: str | None = None) -> None:
        """Replace the ``environment`` mapping, keeping comments and formatting elsewhere.

        ``at_least``: the format version the new mapping's fields need; a lower
        ``rra_version`` is raised to it (:func:`~reprobridge_sdk.versions.written_version`),
        and the modeline follows the version written.
        """
        data = dict(self.document.data)
        data["environment"] = environment
        needed = parse_version(at_least) if at_least else None
        declared = data.get("rra_version")
        if needed is not None and isinstance(declared, str):
            data["rra_version"] = written_version(declared, needed)
        version = data.get("rra_version")
        if yamlio.update(self.document, data):
            edit = partial(follow_modeline, version=version) if isinstance(version, str) else None
            yamlio.save(self.document, self.manifest_path, edit=edit)
        self.raw = environment


@dataclass
class EnvArtifact(RawArtifact):
    """A :class:`RawArtifact` with its typed ``environment`` part."""

    environment: Environment
    #: How a newer-minor document was read (a ``validation.forward.ForwardView``), or None.
    forward: DocumentView | None = None

    def pointer(self, pointer: str) -> str:
        """``pointer`` into :attr:`environment` as a pointer into the document."""
        return pointer if self.forward is None else self.forward.to_document(pointer)


@dataclass
class LoadedEnvironment:
    """An artifact's root and the ``environment`` part of a manifest the caller has loaded.

    Building or locating an environment needs nothing else, so a caller holding the manifest
    (the runner) passes this instead of having the manifest read again.
    """

    root: Path
    environment: Environment

    def inside(self, relative: str, *, what: str, pointer: str = "") -> Path:
        return inside(self.root, relative, what=what, pointer=pointer)


def load_raw(path: str | os.PathLike[str]) -> RawArtifact:
    """Load the artifact at ``path`` (its directory or its manifest) without the model."""
    root, document = read_manifest(path)
    raw = document.data.get("environment")
    if not isinstance(raw, dict):
        msg = f"{root / MANIFEST} has no 'environment' mapping"
        raise ArtifactError(msg)
    return RawArtifact(root=root, document=document, raw=raw)


def consumer_environment(
    data: dict[str, Any], raw: dict[str, Any]
) -> tuple[Any, DocumentView | None]:
    """The ``environment`` part as every consumer reads it (forward compatibility).

    A newer minor version is read through :func:`reprobridge_sdk._forward.consumer_view`, the
    API's one implementation (``spec/manifest.md#forward-compatibility``); any other
    document's part is ``raw``. Returns the part and the view (or None)."""
    from reprobridge_sdk.versions import NEWEST_FORMAT  # noqa: PLC0415

    version, newest = parse_version(data.get("rra_version")), parse_version(NEWEST_FORMAT)
    if version is None or newest is None or version[0] != newest[0] or version <= newest:
        return raw, None
    view_data, view = consumer_view(data)
    part = view_data.get("environment", raw) if isinstance(view_data, dict) else raw
    return part, view


def load_environment(path: str | os.PathLike[str]) -> EnvArtifact:
    """Load the artifact at ``path`` and validate its ``environment`` part with the model."""
    from pydantic import ValidationError  # noqa: PLC0415

    from reprobridge_sdk.model.environment import Environment  # noqa: PLC0415

    art = load_raw(path)
    raw, view = consumer_environment(art.document.data, art.raw)
    try:
        environment = Environment.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = from_loc(raw, first["loc"])
        msg = (
            f"{art.manifest_path}: /environment{where}: {first['msg']} (run 'reprobridge validate')"
        )
        raise ArtifactError(msg) from exc
    return EnvArtifact(
        root=art.root, document=art.document, raw=art.raw, environment=environment, forward=view
    )
