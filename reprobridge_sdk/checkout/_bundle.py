"""The upstream carried in the artifact: a git bundle of exactly the pinned commit's history.

Its header is read here (at most :data:`MAX_HEADER` bytes) so that it is judged by the
spec's rules (C024-C026, ``spec/manifest.md#upstream-bundle``), not the installed git's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import safefs

from ._git import git

__all__ = [
    "BUNDLE_DIR",
    "MAX_HEADER",
    "BundleError",
    "BundleRef",
    "bundle_path",
    "import_bundle",
    "needs_bundle",
    "verify_bundle",
    "write_bundle",
]

#: Where ``pack`` places the bundle inside the archive.
BUNDLE_DIR = "upstream"
#: The most bytes of a bundle's header that are read (refs and prerequisites).
MAX_HEADER = 1 << 20
_POINTER = "/codebase/upstream/bundle"
_FETCHABLE = re.compile(r"^((https?|git|ssh)://|[A-Za-z0-9._-]+@[^:/]+:)")
_OID = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")
_SIGNATURES = {"# v2 git bundle", "# v3 git bundle"}


class BundleError(Exception):
    """A bundle that cannot be used; ``finding`` (C024-C026) says why."""

    def __init__(self, item: Finding) -> None:
        super().__init__(item.message)
        self.finding = item


@dataclass(frozen=True)
class BundleRef:
    """A bundle the manifest declares: its path in the artifact and its SHA-256."""

    path: str
    sha256: str


def needs_bundle(repository: str) -> bool:
    """True when ``repository`` is not an address anyone can fetch: a path or ``file://``."""
    return _FETCHABLE.match(repository) is None


def bundle_path(commit: str) -> str:
    """The path of the bundle of ``commit`` inside an archive: ``upstream/<commit>.bundle``."""
    return f"{BUNDLE_DIR}/{commit}.bundle"


def _fail(code: str, message: str, hint: str) -> BundleError:
    return BundleError(finding(code, message, path=_POINTER, hint=hint))


def _header(path: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """``(prerequisites, refs)`` of the bundle at ``path`` (C025 if it is not a bundle)."""
    with path.open("rb") as handle:
        head = handle.read(MAX_HEADER)
    end = head.find(b"\n\n")
    lines = head[: max(end, 0)].decode("utf-8", "replace").split("\n")
    if end < 0 or lines[0] not in _SIGNATURES:
        raise _fail(
            "C025",
            "the upstream bundle is not a git bundle (no v2 or v3 header)",
            "pack the artifact again: `reprobridge pack`",
        )
    prerequisites: list[str] = []
    refs: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line.startswith("@"):
            if line.startswith("@filter"):
                raise _fail(
                    "C025",
                    f"the upstream bundle is partial ({line}): it lacks objects of the history",
                    "bundle the whole history of the pinned commit",
                )
            continue
        if line.startswith("-"):
            prerequisites.append(line[1:].split(" ")[0])
            continue
        oid, _, ref = line.partition(" ")
        if not _OID.match(oid) or not ref:
            raise _fail(
                "C025",
                f"the upstream bundle's header has a line git does not write: {line[:80]!r}",
                "pack the artifact again: `reprobridge pack`",
            )
        refs.append((oid, ref))
    return prerequisites, refs


def verify_bundle(root: Path, bundle: BundleRef, commit: str) -> Path:
    """The bundle's file, verified as the module docstring says (raises :class:`BundleError`)."""
    path = root.joinpath(*bundle.path.split("/"))
    try:
        actual = file_sha256(path, root=root, max_bytes=safefs.MAX_HASH_BYTES)
    except (OSError, safefs.UnsafeFileError) as exc:
        raise _fail(
            "C025",
            f"the upstream bundle {bundle.path!r} cannot be read: {exc}",
            "the archive must hold the bundle its manifest declares",
        ) from None
    if actual != bundle.sha256:
        raise _fail(
            "C024",
            f"the upstream bundle {bundle.path!r} has sha256 {actual}, not the declared "
            f"{bundle.sha256}",
            "the bundle was changed after packing: pack the artifact again",
        )
    prerequisites, refs = _header(path)
    if prerequisites:
        raise _fail(
            "C025",
            f"the upstream bundle needs {len(prerequisites)} commit(s) it does not hold "
            f"(e.g. {prerequisites[0][:12]}): it is not the whole history",
            "bundle the whole history of the pinned commit",
        )
    heads = [oid for oid, _ in refs]
    if heads != [commit]:
        shown = ", ".join(f"{ref} -> {oid[:12]}" for oid, ref in refs[:4]) or "none"
        raise _fail(
            "C026",
            f"the upstream bundle must hold exactly one ref, the pinned commit {commit[:12]}; "
            f"it holds {len(refs)}: {shown}",
            "pack the artifact again: `reprobridge pack` bundles only the pinned commit",
        )
    return path


def import_bundle(bare: Path, source: Path, commit: str) -> None:
    """Fetch a verified bundle's objects into ``bare`` as ``refs/rra/<commit>`` (C025)."""
    _, refs = _header(source)
    done = git(
        ["fetch", "-q", "--no-tags", str(source), f"{refs[0][1]}:refs/rra/{commit}"],
        cwd=bare,
        check=False,
    )
    landed = git(
        ["rev-parse", "-q", "--verify", f"refs/rra/{commit}^{{commit}}"], cwd=bare, check=False
    )
    if done.returncode != 0 or landed.stdout.decode().strip() != commit:
        message = done.stderr.decode("utf-8", "replace").strip()
        git(["update-ref", "-d", f"refs/rra/{commit}"], cwd=bare, check=False)
        raise _fail(
            "C025",
            f"git cannot read the upstream bundle: {' '.join(message.splitlines()[:2])}",
            "the bundle is damaged: pack the artifact again",
        )


def write_bundle(bare: Path, commit: str, dest: Path) -> str:
    """Write the bundle of ``refs/rra/<commit>`` of ``bare`` to ``dest``; its SHA-256."""
    git(
        ["-c", "pack.threads=1", "bundle", "create", "-q", str(dest), f"refs/rra/{commit}"],
        cwd=bare,
    )
    return file_sha256(dest)
