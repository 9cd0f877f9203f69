"""The upstream carried in the artifact: a git bundle of exactly the pinned commit's history.

Rules (spec manifest.md "The upstream bundle", authoring.md "pack"):

* **When one is needed.** An upstream that is not an address anyone can fetch (a path, such
  as the enclosing repository ``..``, or a ``file://`` URL: :func:`needs_bundle`) cannot be
  fetched from a packed archive on another machine. ``pack`` then writes a bundle of the
  pinned commit into the archive at :func:`bundle_path` (``upstream/<commit>.bundle``) and
  declares it in the archived manifest as ``codebase.upstream.bundle`` (path and SHA-256).
* **What it holds.** A git bundle (format v2, or v3 without a ``filter`` capability) with no
  prerequisites (the whole history of the commit) and exactly one ref, ``refs/rra/<commit>``,
  whose object is the pinned commit. It is written with one pack thread, so one git version
  writes the same bytes for the same commit.
* **Verified before use** (:func:`verify_bundle`), in this order: the file is a regular file
  inside the artifact (C025 when it cannot be read), its SHA-256 equals the declared one
  (C024), its header is a git bundle's without prerequisites or a filter (C025), and it lists
  exactly one ref whose object is the pinned commit (C026: another commit, or extra refs).
  :func:`import_bundle` then fetches its objects into a bare repository; git computes every
  object's id from its content while it indexes the pack, so a pack that is damaged or does
  not hold the commit's history fails there (C025), and the ref it lands on names exactly the
  pinned commit.

The header is read by this module (at most :data:`MAX_HEADER` bytes) rather than by ``git
bundle list-heads``, so that prerequisites and capabilities are judged by the rules above and
not by the installed git's version.
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
