"""What the auditor knows of the artifact before it looks at any run: its manifest's facts,
and its refined code and lock on disk checked against the manifest's digests (A010, A012).
See spec §11.2."""

from __future__ import annotations

import contextlib
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk._forward import DocumentView
from reprobridge_sdk.digest import file_sha256, iter_tree_entries, tree_digest
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import Launcher, Measurement

from .facts import ManifestFacts

if TYPE_CHECKING:
    from reprobridge_sdk.api import ArtifactDir
    from reprobridge_sdk.model import Codebase

__all__ = ["ArtifactFacts", "artifact_facts", "check_artifact"]


@dataclass(frozen=True)
class ArtifactFacts:
    """What the auditor knows about the artifact before it looks at any run."""

    root: Path
    #: The manifest, its tasks condensed (:mod:`.facts`).
    manifest: ManifestFacts
    tree_digest: str | None
    lock_digest: str | None
    shipped: frozenset[str]
    findings: tuple[Finding, ...]
    #: Digests of the launchers' declared sample files (logs and outputs).
    samples: frozenset[str] = frozenset()
    #: The manifest as loaded (a :class:`reprobridge_sdk.io.document.Document`), for the validator.
    document: Any = field(default=None, compare=False, repr=False)
    #: How a newer-minor manifest was read (``validation.forward.ForwardView``), or None.
    forward: DocumentView | None = field(default=None, compare=False, repr=False)
    _plain: dict[tuple[str, str], dict[str, object]] = field(default_factory=dict, compare=False)
    _launchers: dict[str, Launcher] = field(default_factory=dict, compare=False, repr=False)

    def extractor(self, launcher_id: str, measurement: Measurement) -> dict[str, object]:
        """The measurement's extractor as a plain mapping that reads its ``log`` argument."""
        key = (launcher_id, measurement.task)
        plain = self._plain.get(key)
        if plain is None:
            plain = {**measurement.extract.model_dump(), "output": None, "file": None}
            self._plain[key] = plain
        return plain

    def launcher(self, launcher_id: str) -> Launcher | None:
        """The first launcher with this id (indexed once: a lookup per run, not a scan)."""
        index = self._launchers
        if not index and self.manifest.launchers:
            for launcher in self.manifest.launchers:
                index.setdefault(launcher.id, launcher)
        return index.get(launcher_id)


def _artifact_path(root: Path, relative: str) -> Path:
    return root.joinpath(*relative.split("/"))


def _series_tree(
    root: Path, codebase: Codebase, stack: contextlib.ExitStack
) -> tuple[Path | None, list[Finding]]:
    """The refined code of a patch series as the validator reads it: the checkout in ``code/``
    when it holds the series, else the series applied from the artifact's bundle or the cache in
    a scratch directory
    (removed with ``stack``), else None with C005 (the upstream is not cached). Never fetched
    and never written in the artifact: the auditor needs no network (spec "patch-series")."""
    from reprobridge_sdk.checkout.materialize import (  # noqa: PLC0415 - only for a series
        SeriesPatch,
        bundle_of,
        series_tree,
    )

    tree, found = stack.enter_context(
        series_tree(
            root,
            repository=codebase.upstream.repository,
            commit=codebase.upstream.commit,
            patches=[SeriesPatch(p.path, p.sha256) for p in codebase.refined.patches],
            declared=None,
            bundle=bundle_of(codebase.upstream),
        )
    )
    return tree, found


def artifact_facts(artifact: ArtifactDir) -> ArtifactFacts:
    """Check the artifact's code and lock on disk; collect digests of the files of its code
    tree (``shipped``) and of its launchers' declared samples (``samples``).

    A patch series is read as :func:`_series_tree` says, without network; when its upstream
    is not cached the code tree is the declared ``tree_digest`` (the records' digests are
    compared with it, A009) and C005 is a warning.
    """
    return check_artifact(
        artifact.root, ManifestFacts.of(artifact.manifest), forward=artifact.forward
    )


def check_artifact(
    root: Path, manifest: ManifestFacts, *, forward: DocumentView | None = None
) -> ArtifactFacts:
    """:func:`artifact_facts` of the artifact at ``root`` whose manifest is ``manifest``
    (``forward``: how a newer-minor manifest was read)."""
    with contextlib.ExitStack() as stack:
        return _artifact_facts(root, manifest, forward, stack)


def _artifact_facts(
    root: Path,
    manifest: ManifestFacts,
    forward: DocumentView | None,
    stack: contextlib.ExitStack,
) -> ArtifactFacts:
    findings: list[Finding] = []
    expected_tree, shipped = _code_facts(root, manifest, stack, findings)
    lock_digest = _lock_digest(root, manifest, findings)
    return ArtifactFacts(
        root=root,
        manifest=manifest,
        tree_digest=expected_tree,
        lock_digest=lock_digest,
        shipped=frozenset(shipped),
        findings=tuple(findings),
        samples=frozenset(_sample_digests(root, manifest)),
        forward=forward,
    )


def _code_dir(
    root: Path, manifest: ManifestFacts, stack: contextlib.ExitStack, findings: list[Finding]
) -> Path | None:
    """The refined code as the auditor reads it (``None``: there is none to read)."""
    refined = manifest.codebase.refined
    if refined.kind == "directory" and refined.path is not None:
        code_dir = _artifact_path(root, refined.path)
        if not safefs.is_inside(code_dir, root):
            return None  # a link out of the artifact: the validator's F003
        return code_dir
    if refined.kind == "patches":
        tree, problems = _series_tree(root, manifest.codebase, stack)
        findings.extend(problems)
        return tree
    return None


def _code_facts(
    root: Path, manifest: ManifestFacts, stack: contextlib.ExitStack, findings: list[Finding]
) -> tuple[str | None, set[str]]:
    """The code tree digest the runs are compared with, and the digests of the code's
    non-empty files; A010 when the code on disk is not the manifest's."""
    shipped: set[str] = set()
    refined = manifest.codebase.refined
    expected_tree = manifest.codebase.tree_digest
    code_dir = _code_dir(root, manifest, stack, findings)
    if code_dir is None or not code_dir.is_dir():
        return expected_tree, shipped
    try:
        for kind, rel, value in iter_tree_entries(code_dir):
            if kind != "l" and (code_dir / rel).stat().st_size > 0:
                shipped.add(value)
        actual = tree_digest(code_dir)
    except safefs.UnsafeFileError as exc:
        findings.append(
            finding(
                "A010",
                f"the refined code cannot be digested: {exc.message}",
                path="/codebase/tree_digest",
            )
        )
        return expected_tree, shipped
    if expected_tree is None:
        return actual, shipped
    if actual != expected_tree:
        findings.append(
            finding(
                "A010",
                f"the refined code in {refined.path or code_dir.name} has digest {actual}, "
                f"the manifest says {expected_tree}",
                path="/codebase/tree_digest",
                hint="re-run the evidence on the artifact as published",
            )
        )
    return expected_tree, shipped


def _sample_digests(root: Path, manifest: ManifestFacts) -> set[str]:
    """The digests of the launchers' declared non-empty sample files (logs and outputs), each
    read below the artifact's root opened once (not resolved and opened again per file)."""
    samples: set[str] = set()
    try:
        opened: safefs.OpenRoot | None = safefs.OpenRoot(root)
    except (OSError, safefs.UnsafeFileError):
        opened = None
    try:
        for launcher in manifest.launchers:
            for sample in launcher.samples:
                for sample_rel in [sample.log, *sample.outputs.values()]:
                    sample_path = _artifact_path(root, sample_rel) if sample_rel else None
                    if sample_path is not None and _non_empty_file(sample_path):
                        with contextlib.suppress(safefs.UnsafeFileError):
                            samples.add(file_sha256(sample_path, root=opened or root))
    finally:
        if opened is not None:
            opened.close()
    return samples


def _non_empty_file(path: Path) -> bool:
    """A regular file (links followed) with at least one byte."""
    try:
        info = path.stat()
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def _lock_digest(root: Path, manifest: ManifestFacts, findings: list[Finding]) -> str | None:
    """The lock digest the runs are compared with; A012 when the lock on disk is not the
    manifest's."""
    lock = manifest.environment.lock
    if lock is None:
        return None
    lock_path = _artifact_path(root, lock.path)
    on_disk = None
    if lock_path.is_file():
        with contextlib.suppress(safefs.UnsafeFileError):
            on_disk = file_sha256(lock_path, root=root)
    if lock.sha256 is not None and on_disk is not None and on_disk != lock.sha256:
        findings.append(
            finding(
                "A012",
                f"the lock {lock.path} has digest {on_disk}, the manifest says {lock.sha256}",
                path="/environment/lock/sha256",
            )
        )
    return lock.sha256 or on_disk
