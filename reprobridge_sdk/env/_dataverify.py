"""Verify the items of ``environment.data`` where they are, without downloading anything.

Each item is checked at its destination, in the refined code (``codebase``) or in the
installed distribution (``package``); the codes (D001-D004, D008-D010) and their order are
``spec/manifest.md#data``. Findings sit at the item's pointer in ``rra.yaml``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from reprobridge_sdk.env._artifact import EnvArtifact
from reprobridge_sdk.env.hashing import DigestCache
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model.environment import DataItem
from reprobridge_sdk.versions import MANIFEST_NAME

#: Lists the files of a distribution of another interpreter: absolute path and size.
_PACKAGE_FILES = r"""
import json, sys
from importlib import metadata
try:
    dist = metadata.distribution(sys.argv[1])
except metadata.PackageNotFoundError:
    print("null"); raise SystemExit
files = []
for f in dist.files or []:
    p = f.locate()
    try:
        files.append([str(p), p.stat().st_size])
    except OSError:
        continue  # listed in the record but gone: not a file of the installed distribution
print(json.dumps({"version": dist.version, "files": files}))
"""


class _Locator:
    def __init__(self, art: EnvArtifact) -> None:
        self.art = art

    def __call__(self, code: str, message: str, pointer: str, hint: str | None = None) -> Finding:
        pointer = self.art.pointer(pointer)  # items set aside shift indices (newer minor)
        line, col = self.art.document.locate(pointer)
        return finding(
            code, message, path=pointer, file=MANIFEST_NAME, line=line, col=col, hint=hint
        )


def _inside(root: Path, relative: str) -> Path | None:
    """``root/relative`` if it stays inside ``root`` (also through links), else None."""
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or "\\" in relative:
        return None
    path = root.joinpath(*pure.parts)
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            return None
    except OSError:
        return None
    return path


def _check_file(
    item: DataItem,
    path: Path,
    pointer: str,
    at: _Locator,
    digests: DigestCache,
) -> list[Finding]:
    """D001-D003 and D009 for a file that should be at ``path``."""
    if not path.is_file():
        hint = item.instructions if item.access != "public" else "run 'reprobridge data fetch'"
        return [at("D001", f"{item.id}: {path.name} is missing", pointer, hint)]
    size = path.stat().st_size
    if item.size is not None and size != item.size:
        return [
            at(
                "D003",
                f"{item.id}: {size} bytes, the manifest declares {item.size}",
                pointer + "/size",
            )
        ]
    if item.sha256 is None:
        return [at("D009", f"{item.id} declares no sha256", pointer, "add its sha256")]
    digest = digests.sha256(path)
    if digest != item.sha256:
        return [
            at(
                "D002",
                f"{item.id}: SHA-256 {digest}, the manifest declares {item.sha256}",
                pointer + "/sha256",
            )
        ]
    return []


def _package_files(package: str, python: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    proc = subprocess.run(
        [str(python or sys.executable), "-I", "-c", _PACKAGE_FILES, package],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if proc.returncode != 0:
        return None
    data = json.loads(proc.stdout)
    return data if isinstance(data, dict) else None


def _check_package(
    item: DataItem,
    pointer: str,
    at: _Locator,
    digests: DigestCache,
    python: str | os.PathLike[str] | None,
) -> list[Finding]:
    package = item.source.package
    assert package is not None
    info = _package_files(package, python)
    if info is None:
        return [
            at(
                "D008",
                f"{item.id}: the distribution {package!r} is not installed",
                pointer + "/source/package",
                "build the environment ('reprobridge env create') and verify with its Python",
            )
        ]
    if item.sha256 is None:
        return [at("D009", f"{item.id} declares no sha256", pointer)]
    candidates = [
        Path(path) for path, size in info["files"] if item.size is None or size == item.size
    ]
    if item.sha256 in digests.sha256_many(candidates):
        return []
    return [
        at(
            "D008",
            f"{item.id}: {package} {info['version']} ships no file with SHA-256 {item.sha256}",
            pointer + "/sha256",
        )
    ]


def _refined_root(art: EnvArtifact) -> Path:
    data = art.document.data
    refined = (data.get("codebase") or {}).get("refined") or {}
    if isinstance(refined, dict) and refined.get("kind") == "directory" and refined.get("path"):
        inside = _inside(art.root, str(refined["path"]))
        if inside is not None:
            return inside
    return art.root


def _verify_item(  # noqa: PLR0917 - private helper
    art: EnvArtifact,
    index: int,
    item: DataItem,
    at: _Locator,
    digests: DigestCache,
    python: str | os.PathLike[str] | None,
) -> list[Finding]:
    pointer = f"/environment/data/{index}"
    source = item.source
    if source.package is not None:
        return _check_package(item, pointer, at, digests, python)
    if source.codebase is not None:
        path = _inside(_refined_root(art), source.codebase)
        if path is None:
            return [
                at(
                    "D004",
                    f"{item.id}: {source.codebase!r} leads outside the refined code",
                    pointer + "/source/codebase",
                )
            ]
        if path.is_dir():
            return []  # a directory of the refined code: covered by the tree digest
        return _check_file(item, path, pointer, at, digests)
    path, refused = _destination(art, item, at, pointer)
    return refused if path is None else _check_file(item, path, pointer, at, digests)


def _destination(
    art: EnvArtifact, item: DataItem, at: _Locator, pointer: str
) -> tuple[Path | None, list[Finding]]:
    """Where the item goes inside the artifact, or ``None`` and why it has no place."""
    if item.destination is None:
        return None, [at("D010", f"{item.id} declares no destination", pointer)]
    dest = _inside(art.root, item.destination)
    if dest is None:
        return None, [
            at(
                "D004",
                f"{item.id}: destination {item.destination!r} leads outside the artifact",
                pointer + "/destination",
            )
        ]
    return dest, []
