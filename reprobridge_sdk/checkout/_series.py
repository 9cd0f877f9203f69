"""A patch series as the manifest declares it, and as a checkout records which one it holds.

The record is ``.git/rra-series.json``; an unreadable one reads as None, so the checkout is
rebuilt rather than trusted. :class:`CodebaseError` carries the C findings of a failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.io import reading

from ._bundle import BundleRef

_MARKER = "rra-series.json"


class CodebaseError(ArtifactError):
    """The refined code cannot be materialized; ``findings`` (C codes) say why."""


@dataclass(frozen=True)
class SeriesPatch:
    """One patch of the series: its path in the artifact and its declared digest."""

    path: str
    sha256: str | None = None


def series_from_data(data: Mapping[str, Any]) -> tuple[str, str, list[SeriesPatch], Any] | None:
    """``(repository, commit, patches, tree_digest)`` of a manifest's plain data, or None.

    None unless the refined code is a patch series with a string repository and commit.
    """
    codebase = data.get("codebase")
    if not isinstance(codebase, Mapping):
        return None
    upstream, refined = codebase.get("upstream"), codebase.get("refined")
    if not isinstance(upstream, Mapping) or not isinstance(refined, Mapping):
        return None
    if refined.get("kind") != "patches":
        return None
    repository, commit = upstream.get("repository"), upstream.get("commit")
    if not isinstance(repository, str) or not isinstance(commit, str):
        return None
    raw = refined.get("patches")
    patches = [
        SeriesPatch(str(item["path"]), item.get("sha256"))
        for item in (raw if isinstance(raw, list) else [])
        if isinstance(item, Mapping) and isinstance(item.get("path"), str)
    ]
    return repository, commit, patches, codebase.get("tree_digest")


def bundle_from_data(data: Mapping[str, Any]) -> BundleRef | None:
    """The bundle ``codebase.upstream.bundle`` of a manifest's plain data declares, or None."""
    codebase = data.get("codebase")
    upstream = codebase.get("upstream") if isinstance(codebase, Mapping) else None
    bundle = upstream.get("bundle") if isinstance(upstream, Mapping) else None
    if not isinstance(bundle, Mapping):
        return None
    path, digest = bundle.get("path"), bundle.get("sha256")
    if not isinstance(path, str) or not path or not isinstance(digest, str):
        return None
    return BundleRef(path, digest)


def bundle_of(upstream: Any) -> BundleRef | None:
    """The bundle a typed ``codebase.upstream`` declares, or None."""
    bundle = getattr(upstream, "bundle", None)
    return None if bundle is None else BundleRef(bundle.path, bundle.sha256)


def _wanted(repository: str, commit: str, patches: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {
        "repository": repository,
        "commit": commit,
        "patches": [{"path": path, "sha256": digest} for path, digest in patches],
    }


def _read_marker(checkout: Path) -> Any:
    try:
        return reading.read_json(checkout / ".git" / _MARKER)
    except reading.Unreadable:
        return None


def write_marker(
    checkout: Path, repository: str, commit: str, patches: Sequence[tuple[str, str]]
) -> None:
    """Record in the checkout which series it holds (used by ``code record``)."""
    text = json.dumps(_wanted(repository, commit, patches), indent=1)
    (checkout / ".git" / _MARKER).write_text(text + "\n", "utf-8")


def read_marker(checkout: Path) -> dict[str, Any] | None:
    value = _read_marker(checkout)
    return value if isinstance(value, dict) else None
