"""Materialize a patch series: upstream at the pinned commit, patches applied in order.

Owns the working checkout ``code/``: building or reusing it (never discarding working
changes, C008), its tree digest (C004), and the read-only views of the validator and auditor.
Spec: ``spec/manifest.md#patch-series``.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io.atomic import atomic_directory

from ._apply import _apply, init_checkout
from ._bundle import BundleRef
from ._git import GitError, git
from ._series import (
    CodebaseError,
    SeriesPatch,
    _read_marker,
    _wanted,
    bundle_from_data,
    bundle_of,
    read_marker,
    series_from_data,
    write_marker,
)
from ._upstream import bundled_upstream, cached_upstream, fetch_upstream, upstream_location

__all__ = [
    "CHECKOUT_DIR",
    "BundleRef",
    "Checkout",
    "CodebaseError",
    "SeriesPatch",
    "bundle_from_data",
    "bundle_of",
    "bundled_upstream",
    "cached_upstream",
    "checkout_blocker",
    "fetch_upstream",
    "init_checkout",
    "inspect_series",
    "materialize_series",
    "read_marker",
    "series_from_data",
    "series_tree",
    "upstream_location",
    "working_changes",
    "write_marker",
]

#: Where the working checkout of a patch series lives in the artifact.
CHECKOUT_DIR = "code"


@dataclass
class Checkout:
    """A materialized checkout: where it is, what it holds, and what does not match."""

    path: Path
    commit: str
    tree_digest: str
    applied: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    reused: bool = False

    @property
    def ok(self) -> bool:
        return not any(item.severity.value == "error" for item in self.findings)


def _untracked_cache(line: str) -> bool:
    """True for a ``git status --porcelain`` line of an untracked byte-code cache: a file
    under a ``__pycache__`` directory or named ``*.pyc`` (spec "checkout-record"), whatever
    ignore rules the checkout has. git quotes a path with special characters; the quotes are
    dropped, and escapes never produce ``/``, ``__pycache__`` or a final ``.pyc``."""
    if not line.startswith("?? "):
        return False
    path = line[3:]
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    parts = path.split("/")
    return "__pycache__" in parts[:-1] or parts[-1].endswith(".pyc")


def working_changes(checkout: Path) -> list[str]:
    """``git status --porcelain`` lines of the checkout: its unrecorded changes, untracked
    byte-code caches excluded."""
    done = git(["status", "--porcelain", "--untracked-files=all"], cwd=checkout)
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return [line for line in lines if line and not _untracked_cache(line)]


def materialize_series(
    root: Path,
    *,
    repository: str,
    commit: str,
    patches: Sequence[SeriesPatch],
    tree_digest_: str | None = None,
    dest: Path | None = None,
    fetch: bool = True,
    force: bool = False,
    bundle: BundleRef | None = None,
) -> Checkout:
    """The working checkout of the series at ``dest`` (default ``root/code``), built or reused.

    Raises :class:`CodebaseError` (C001-C003, C005 without ``fetch``, C008 unless ``force``,
    C024-C026 for the bundle); another tree digest is a C004 finding on the :class:`Checkout`."""
    root = Path(root)
    target = dest if dest is not None else root / CHECKOUT_DIR
    digests = [
        (p.path, file_sha256(root / p.path) if (root / p.path).is_file() else "") for p in patches
    ]
    wanted = _wanted(repository, commit, digests)
    reusable = (target / ".git").is_dir() and _read_marker(target) == wanted
    if reusable and not working_changes(target):
        return _result(target, commit, patches, tree_digest_, reused=True)
    if not force:
        blocker = checkout_blocker(target)
        if blocker is not None:
            raise CodebaseError(f"{target}: {blocker.message}", [blocker])
    if bundle is not None:
        bare = bundled_upstream(root, bundle, commit)
    elif fetch:
        bare = fetch_upstream(root, repository, commit)
    else:
        found = cached_upstream(root, repository, commit)
        if found is None:
            raise CodebaseError(
                "the upstream is not in the cache",
                [
                    finding(
                        "C005",
                        f"the upstream {repository!r} at {commit[:12]} is not in the cache; "
                        "the patch series was not checked",
                        path="/codebase/upstream",
                        hint="`reprobridge code status` fetches it",
                    )
                ],
            )
        bare = found
    try:
        with atomic_directory(target, replace=True, fresh=True) as building:
            init_checkout(bare, commit, building)
            for position, patch in enumerate(patches, start=1):
                _apply(building, root, patch, position)
            write_marker(building, repository, commit, digests)
    except GitError as exc:
        raise CodebaseError(
            exc.stderr, [finding("C010" if exc.missing else "C001", f"git failed: {exc.stderr}")]
        ) from None
    return _result(target, commit, patches, tree_digest_, reused=False)


def checkout_blocker(target: Path) -> Finding | None:
    """The C008 that makes ``target`` (``code/``) unusable for a run of the series, or None.

    The one decision on the working checkout (spec/manifest.md §6.2, "checkout-record"), for
    the validator, the runner and ``run --dry-run``.
    """
    if (target / ".git").is_dir():
        changes = working_changes(target)
        if not changes:
            return None
        return finding(
            "C008",
            f"the checkout has {len(changes)} unrecorded change(s); not replacing it",
            path="/codebase/refined",
            file=CHECKOUT_DIR,
            hint="record them (`reprobridge code record`) or discard them (--force)",
        )
    if target.is_symlink() or target.is_file() or (target.is_dir() and any(target.iterdir())):
        return finding(
            "C008",
            f"{CHECKOUT_DIR}/ exists and is not a checkout of the series",
            path="/codebase/refined",
            file=CHECKOUT_DIR,
            hint="move it away, or pass --force to replace it",
        )
    return None


def _result(
    target: Path, commit: str, patches: Sequence[SeriesPatch], declared: str | None, *, reused: bool
) -> Checkout:
    actual = tree_digest(target)
    found: list[Finding] = []
    if declared is not None and declared != actual:
        found.append(
            finding(
                "C004",
                f"the patched tree has digest {actual}, not the declared one",
                path="/codebase/tree_digest",
                hint="if the series changed on purpose, run `reprobridge digest --update`",
            )
        )
    return Checkout(
        path=target,
        commit=commit,
        tree_digest=actual,
        applied=[p.path for p in patches],
        findings=found,
        reused=reused,
    )


@contextlib.contextmanager
def series_tree(
    root: Path,
    *,
    repository: str,
    commit: str,
    patches: Sequence[SeriesPatch],
    declared: str | None,
    bundle: BundleRef | None = None,
) -> Iterator[tuple[Path | None, list[Finding]]]:
    """The refined code of a series, read without fetching and without writing in the artifact.

    Yields ``(tree, findings)``: ``code/`` when it holds exactly this series, else the series
    applied in a scratch directory; None with C005 when the upstream is not cached. Never
    raises for git (C001). What the validator and the auditor both read.
    """
    digests = [
        (p.path, file_sha256(root / p.path) if (root / p.path).is_file() else "") for p in patches
    ]
    wanted = _wanted(repository, commit, digests)
    checkout = root / CHECKOUT_DIR
    with tempfile.TemporaryDirectory(prefix="rra-series-") as scratch:
        tree: Path | None = None
        out: list[Finding] = []
        try:
            if (checkout / ".git").is_dir() and _read_marker(checkout) == wanted:
                changes = working_changes(checkout)
                tree = checkout
                if changes:
                    out.append(
                        finding(
                            "C006",
                            f"{CHECKOUT_DIR}/ has {len(changes)} change(s) that no patch records",
                            path="/codebase/refined",
                            hint="record them with `reprobridge code record` (see `code diff`)",
                        )
                    )
                else:
                    out.extend(_result(checkout, commit, patches, declared, reused=True).findings)
            elif bundle is not None and not (root / bundle.path).is_file():
                pass  # F004 of the files layer: the declared bundle is missing
            elif bundle is None and cached_upstream(root, repository, commit) is None:
                out.append(
                    finding(
                        "C005",
                        f"the upstream {repository!r} at {commit[:12]} is not in the cache; "
                        "the patch series was not checked (validators and auditors do not "
                        "fetch)",
                        path="/codebase/upstream",
                        hint="`reprobridge code status` fetches it",
                    )
                )
            else:
                result = materialize_series(
                    root,
                    repository=repository,
                    commit=commit,
                    patches=patches,
                    tree_digest_=declared,
                    dest=Path(scratch) / "code",
                    fetch=False,
                    bundle=bundle,
                )
                tree = result.path
                out.extend(result.findings)
        except CodebaseError as exc:
            tree = None
            out.extend(exc.findings)
        except (GitError, OSError) as exc:
            tree = None
            out.append(finding("C001", f"the series cannot be checked: {exc}", path="/codebase"))
        yield tree, out


def inspect_series(
    root: Path,
    *,
    repository: str,
    commit: str,
    patches: Sequence[SeriesPatch],
    declared: str | None,
    bundle: BundleRef | None = None,
) -> list[Finding]:
    """What a validator can tell about a series without fetching or writing in the artifact.

    The findings of :func:`series_tree`, and C008 when ``run`` would refuse ``code/``
    (:func:`checkout_blocker`), which then replaces the C006 warning on the same changes.
    Never raises."""
    out: list[Finding] = []
    try:
        blocker = checkout_blocker(root / CHECKOUT_DIR)
    except (GitError, OSError) as exc:
        blocker = finding("C001", f"the checkout cannot be read: {exc}", path="/codebase")
    if blocker is not None:
        out.append(blocker)
    with series_tree(
        root,
        repository=repository,
        commit=commit,
        patches=patches,
        declared=declared,
        bundle=bundle,
    ) as (_, found):
        out.extend(f for f in found if not (blocker is not None and f.code == "C006"))
    return out
