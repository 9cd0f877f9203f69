"""The upstream of a patch series: where it is fetched from, and its cache of bare repositories.

Each location is fetched once into ``<cache>/upstream/<key>.git`` under a file lock; a
declared bundle replaces the fetch. Rules and codes (C001, C002, C010, C024-C026):
``spec/manifest.md#upstream-repository``. :func:`cached_upstream` never fetches.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from reprobridge_sdk.findings import finding
from reprobridge_sdk.io.atomic import atomic_directory
from reprobridge_sdk.io.filelock import file_lock

from ._bundle import BundleError, BundleRef, import_bundle, verify_bundle
from ._git import GitError, git
from ._series import CodebaseError

_URL = re.compile(r"^([a-z][a-z0-9+.-]*://|[A-Za-z0-9._-]+@[^:/]+:)")


def upstream_location(root: Path, repository: str) -> str:
    """Where git fetches ``repository`` from: a URL as written, a path resolved absolute.

    A relative path must be made only of ``..`` segments and name the top of a git
    repository (one that encloses the artifact, spec "upstream-repository"); C001 otherwise.
    """
    if _URL.match(repository):
        return repository
    path = Path(repository)
    if path.is_absolute():
        return str(path.resolve())
    parts = repository.replace("\\", "/").rstrip("/").split("/")
    top = (root / path).resolve()
    if any(part != ".." for part in parts) or not (top / ".git").exists():
        raise CodebaseError(
            f"{repository!r} does not name the repository that encloses the artifact",
            [
                finding(
                    "C001",
                    f"the relative upstream {repository!r} must be '..' segments naming the top"
                    " of the git repository that encloses the artifact",
                    path="/codebase/upstream/repository",
                    hint="use a clone URL, or the '..' path of the enclosing repository",
                )
            ],
        )
    return str(top)


def _cache_dir() -> Path:
    from reprobridge_sdk.env.venv import cache_root  # noqa: PLC0415 - one cache root

    return cache_root() / "upstream"


def _bare_path(location: str) -> Path:
    key = hashlib.sha256(location.encode("utf-8")).hexdigest()[:32]
    return _cache_dir() / f"{key}.git"


def _has_commit(bare: Path, commit: str) -> bool:
    if not (bare / "HEAD").is_file():
        return False
    done = git(
        ["rev-parse", "-q", "--verify", f"refs/rra/{commit}^{{commit}}"], cwd=bare, check=False
    )
    return done.returncode == 0


def _init_bare(bare: Path) -> None:
    if not (bare / "HEAD").is_file():
        with atomic_directory(bare) as tmp:
            git(["init", "-q", "--bare", str(tmp)])


def bundled_upstream(root: Path, bundle: BundleRef, commit: str) -> Path:
    """The cached bare repository holding ``commit``, taken from the artifact's bundle.

    The bundle is verified every time (C024-C026), also when the cache already holds the
    commit; the repository is never contacted.
    """
    bare = _bare_path(f"bundle:{commit}")
    with file_lock(bare.with_suffix(".lock")):
        try:
            source = verify_bundle(root, bundle, commit)
            if not _has_commit(bare, commit):
                _init_bare(bare)
                import_bundle(bare, source, commit)
        except BundleError as exc:
            raise CodebaseError(exc.finding.message, [exc.finding]) from None
        except GitError as exc:
            code = "C010" if exc.missing else "C025"
            raise CodebaseError(
                exc.stderr,
                [finding(code, f"git failed: {exc.stderr}", path="/codebase/upstream/bundle")],
            ) from None
    return bare


def cached_upstream(root: Path, repository: str, commit: str) -> Path | None:
    """The cached bare repository holding ``commit`` of ``repository``; None if not cached.

    Never fetches (a validator must not: spec §6.2).
    """
    try:
        bare = _bare_path(upstream_location(root, repository))
        return bare if _has_commit(bare, commit) else None
    except (GitError, CodebaseError):
        return None


def fetch_upstream(root: Path, repository: str, commit: str) -> Path:
    """The cached bare repository holding ``commit``, fetched once (C001, C002, C010)."""
    location = upstream_location(root, repository)
    bare = _bare_path(location)
    where = "/codebase/upstream/repository"
    with file_lock(bare.with_suffix(".lock")):
        try:
            if _has_commit(bare, commit):
                return bare
            _init_bare(bare)
            # The commit alone (its tree, no history) first: a research repository's
            # history can be far larger than one tree, and a copy that lacks an old,
            # unreachable-from-here object is still a complete source of the commit.
            first = git(
                [
                    "fetch",
                    "-q",
                    "--no-tags",
                    "--depth",
                    "1",
                    location,
                    f"{commit}:refs/rra/{commit}",
                ],
                cwd=bare,
                check=False,
            )
            if first.returncode != 0:
                second = git(
                    [
                        "fetch",
                        "-q",
                        "--no-tags",
                        location,
                        "+refs/heads/*:refs/up/heads/*",
                        "+refs/tags/*:refs/up/tags/*",
                    ],
                    cwd=bare,
                    check=False,
                )
                if second.returncode != 0:
                    message = second.stderr.decode("utf-8", "replace").strip()
                    raise CodebaseError(
                        f"cannot fetch the upstream {repository}",
                        [
                            finding(
                                "C001",
                                f"cannot fetch the upstream {repository!r}: {message}",
                                path=where,
                                hint="check the URL or path and the network",
                            )
                        ],
                    )
                found = git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=bare, check=False)
                if found.returncode != 0:
                    raise CodebaseError(
                        f"the upstream has no commit {commit}",
                        [
                            finding(
                                "C002",
                                f"the upstream {repository!r} has no commit {commit}",
                                path="/codebase/upstream/commit",
                                hint="pin a full commit id that the upstream has",
                            )
                        ],
                    )
                git(["update-ref", f"refs/rra/{commit}", commit], cwd=bare)
        except GitError as exc:
            code = "C010" if exc.missing else "C001"
            raise CodebaseError(
                exc.stderr, [finding(code, f"git failed: {exc.stderr}", path=where)]
            ) from None
    return bare
