"""The tree of the ``raw`` variant: the upstream repository at its pinned commit.

Its source, first that works: the artifact's bundle, the upstream cache, a local upstream, the
network (only with ``fetch``); else a ``directory`` codebase's refined code stands in.

The tree is read from the bare repository, never checked out: a link out of the tree or a
submodule is held back and named.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.api import ArtifactDir
from reprobridge_sdk.checkout import git
from reprobridge_sdk.checkout.materialize import (
    CodebaseError,
    bundle_of,
    bundled_upstream,
    cached_upstream,
    fetch_upstream,
)
from reprobridge_sdk.contents import artifact_files
from reprobridge_sdk.findings import finding
from reprobridge_sdk.model.bench import HeldBack

__all__ = ["UpstreamTree", "upstream_tree"]

_URL = re.compile(r"^([a-z][a-z0-9+.-]*://|[A-Za-z0-9._-]+@[^:/]+:)")


@dataclass
class UpstreamTree:
    """The files of the raw workspace and where they came from."""

    source: str
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    copied: dict[str, Path] = field(default_factory=dict)
    skipped: list[HeldBack] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _is_local(repository: str) -> bool:
    return not _URL.match(repository) or repository.startswith("file://")


def _bare(art: ArtifactDir, *, fetch: bool) -> tuple[Path | None, str]:
    upstream = art.manifest.codebase.upstream
    bundle = bundle_of(upstream)
    if bundle is not None and (art.root / bundle.path).is_file():
        return bundled_upstream(art.root, bundle, upstream.commit), "upstream-bundle"
    cached = cached_upstream(art.root, upstream.repository, upstream.commit)
    if cached is not None:
        return cached, "upstream"
    if fetch or _is_local(upstream.repository):
        try:
            return fetch_upstream(art.root, upstream.repository, upstream.commit), ("upstream")
        except CodebaseError:
            if fetch:
                raise
    return None, "refined-code"


def _inside(name: str, target: str) -> bool:
    if posixpath.isabs(target):
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return joined != ".." and not joined.startswith("../")


def _read_tree(bare: Path, commit: str, tree: UpstreamTree) -> None:
    listing = git(["ls-tree", "-r", "-z", "--full-tree", commit], cwd=bare).stdout
    blobs: list[tuple[str, str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_name = entry.partition(b"\t")
        mode, kind, sha = meta.decode("ascii").split()
        name = raw_name.decode("utf-8", "surrogateescape")
        if kind != "blob":
            tree.skipped.append(HeldBack(what=name, why=f"upstream {kind} (not a file)"))
            continue
        blobs.append((name, mode, sha))
    for name, mode, sha in blobs:
        content = git(["cat-file", "blob", sha], cwd=bare).stdout
        if mode != "120000":
            tree.files[name] = content
            continue
        target = content.decode("utf-8", "surrogateescape")
        if _inside(name, target):
            tree.links[name] = target
        else:
            tree.skipped.append(HeldBack(what=name, why="upstream link that leaves the tree"))


def upstream_tree(art: ArtifactDir, *, fetch: bool = False) -> UpstreamTree:
    """The raw variant's files (see the module docstring)."""
    bare, source = _bare(art, fetch=fetch)
    tree = UpstreamTree(source=source)
    commit = art.manifest.codebase.upstream.commit
    if bare is not None:
        _read_tree(bare, commit, tree)
        return tree
    refined = art.manifest.codebase.refined
    if refined.kind != "directory" or refined.path is None:
        message = (
            f"the upstream {art.manifest.codebase.upstream.repository!r} at {commit[:12]} is not"
            " available offline, and a patch series has no code without it"
        )
        raise CodebaseError(
            message,
            [
                finding(
                    "C005",
                    message,
                    path="/codebase/upstream",
                    hint="`reprobridge code status` fetches it, or pass --fetch",
                )
            ],
        )
    prefix = refined.path.rstrip("/") + "/"
    for name in artifact_files(art.root, art.manifest):
        if name.startswith(prefix):
            path = art.root / name
            if path.is_symlink():
                tree.links[name[len(prefix) :]] = str(path.readlink())
            else:
                tree.copied[name[len(prefix) :]] = path
    tree.notes.append(
        f"the upstream is not available offline: the refined code ({refined.path}/) stands in"
        " for it, so raw differs from the upstream by the artifact's recorded changes"
    )
    return tree
