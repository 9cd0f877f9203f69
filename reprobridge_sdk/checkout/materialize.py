"""Materialize a patch series: upstream at the pinned commit, patches applied in order.

Rules (spec "codebase", "The working checkout of a patch series"):

* **Where the upstream comes from.** ``upstream.repository`` is a clone URL (``https://``,
  ``http://``, ``git://``, ``ssh://``, ``file://`` or ``user@host:path``) or a path; a relative
  path is resolved against the artifact root (``..`` names the repository that encloses the
  artifact). The upstream is fetched once into ``<cache>/upstream/<key>.git``, a bare
  repository keyed by the resolved location, holding the ref ``refs/rra/<commit>`` for every
  pinned commit fetched; so the cache is keyed by repository and commit. Fetching asks for
  the commit itself first and falls back to every branch and tag (servers that refuse a
  want by id); a commit the upstream does not have is C002, an upstream that cannot be
  reached C001 with git's own message.
* **A bundle first.** When the manifest declares ``codebase.upstream.bundle`` (a git bundle
  of the pinned commit that ``pack`` carries for an upstream nobody else can fetch), it is
  verified (C024-C026, :mod:`._bundle`) and its objects are fetched into
  ``<cache>/upstream/<key>.git`` keyed by ``bundle:<commit>``; the repository is never
  contacted, so an unpacked archive reruns offline. A validator uses it too: it is a file of
  the artifact, and reading it is not a fetch.
* **Where the checkout lives.** In ``code/`` (:data:`CHECKOUT_DIR`) of the artifact, so a
  launcher's ``workdir: code`` or ``python code/train.py`` means the same for both kinds of
  refined code. The checkout is derived: it is a git repository whose commits are the
  upstream commit and one commit per applied patch, and it is never packed.
* **Applying.** Each patch (a unified diff, as ``git apply`` reads it; text before the first
  ``diff`` line is commentary) is applied in the series' order; the first that fails stops
  the series with C003, naming the patch, its position in the series and the hunk that fails.
* **Verifying.** The tree digest of the result (spec §3.7; ``.git`` is excluded) is compared
  with ``codebase.tree_digest``; a difference is C004 (a finding on the result, not raised).
* **Reuse and safety.** A checkout whose recorded series (upstream, commit, patch digests)
  equals the wanted one and that has no working changes is reused as it is. A checkout with
  working changes is never thrown away: C008 unless ``force``. Byte-code caches
  (``__pycache__``, ``*.pyc``) are not working changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprobridge_sdk.digest import TREE_EXCLUDES, file_sha256, tree_digest
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, finding

from ._bundle import BundleError, BundleRef, import_bundle, verify_bundle
from ._git import GitError, git

__all__ = [
    "CHECKOUT_DIR",
    "BundleRef",
    "Checkout",
    "CodebaseError",
    "SeriesPatch",
    "bundle_from_data",
    "bundle_of",
    "cached_upstream",
    "checkout_blocker",
    "fetch_upstream",
    "inspect_series",
    "materialize_series",
    "series_from_data",
    "series_tree",
    "upstream_location",
    "working_changes",
]

#: Where the working checkout of a patch series lives in the artifact.
CHECKOUT_DIR = "code"
_MARKER = "rra-series.json"
_URL = re.compile(r"^([a-z][a-z0-9+.-]*://|[A-Za-z0-9._-]+@[^:/]+:)")
_FAILED = re.compile(r"^error: patch failed: (?P<file>.+):(?P<line>\d+)$", re.MULTILINE)
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


class CodebaseError(ArtifactError):
    """The refined code cannot be materialized; ``findings`` (C codes) say why."""


@dataclass(frozen=True)
class SeriesPatch:
    """One patch of the series: its path in the artifact and its declared digest."""

    path: str
    sha256: str | None = None


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


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _has_commit(bare: Path, commit: str) -> bool:
    if not (bare / "HEAD").is_file():
        return False
    done = git(
        ["rev-parse", "-q", "--verify", f"refs/rra/{commit}^{{commit}}"], cwd=bare, check=False
    )
    return done.returncode == 0


def _init_bare(bare: Path) -> None:
    if not (bare / "HEAD").is_file():
        tmp = Path(tempfile.mkdtemp(prefix=".init-", dir=bare.parent))
        git(["init", "-q", "--bare", str(tmp)])
        tmp.replace(bare)


def bundled_upstream(root: Path, bundle: BundleRef, commit: str) -> Path:
    """The cached bare repository holding ``commit``, taken from the artifact's bundle.

    The bundle is verified every time (C024-C026), also when the cache already holds the
    commit; the repository is never contacted.
    """
    bare = _bare_path(f"bundle:{commit}")
    with _locked(bare):
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
    with _locked(bare):
        try:
            if _has_commit(bare, commit):
                return bare
            _init_bare(bare)
            first = git(
                ["fetch", "-q", "--no-tags", location, f"{commit}:refs/rra/{commit}"],
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


def _wanted(repository: str, commit: str, patches: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {
        "repository": repository,
        "commit": commit,
        "patches": [{"path": path, "sha256": digest} for path, digest in patches],
    }


def _read_marker(checkout: Path) -> Any:
    try:
        return json.loads((checkout / ".git" / _MARKER).read_text("utf-8"))
    except (OSError, ValueError):
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


def working_changes(checkout: Path) -> list[str]:
    """``git status --porcelain`` lines of the checkout (byte-code caches excluded)."""
    done = git(["status", "--porcelain", "--untracked-files=all"], cwd=checkout)
    return [line for line in done.stdout.decode("utf-8", "replace").splitlines() if line]


def _exclude_caches(checkout: Path) -> None:
    names = sorted(TREE_EXCLUDES - {".git"})
    lines = [f"{name}/" if "." not in name else name for name in names]
    (checkout / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (checkout / ".git" / "info" / "exclude").write_text("\n".join([*lines, "*.pyc", ""]), "utf-8")


def init_checkout(bare: Path, commit: str, dest: Path) -> None:
    """A git checkout of ``commit`` from the cached ``bare`` repository at ``dest`` (new)."""
    dest.mkdir(parents=True)
    git(["init", "-q", str(dest)])
    _exclude_caches(dest)
    git(["fetch", "-q", "--no-tags", str(bare), f"refs/rra/{commit}"], cwd=dest)
    git(["checkout", "-q", "--detach", "FETCH_HEAD"], cwd=dest)


def _hunk_of(patch_text: str, file: str, line: int) -> int | None:
    """The 1-based index (within ``file``) of the hunk starting at old line ``line``."""
    current: str | None = None
    index = 0
    for raw in patch_text.splitlines():
        if raw.startswith(("+++ ", "--- ")):
            name = raw[4:].split("\t")[0].strip()
            if name != "/dev/null":
                candidate = name[2:] if name[:2] in ("a/", "b/") else name
                if candidate != current:
                    current, index = candidate, 0
            continue
        match = _HUNK.match(raw)
        if match and current == file:
            index += 1
            if int(match.group("start")) == line:
                return index
    return None


def _apply(checkout: Path, root: Path, patch: SeriesPatch, position: int) -> None:
    pointer = f"/codebase/refined/patches/{position - 1}"
    source = root.joinpath(*patch.path.split("/"))
    try:
        text = source.read_text("utf-8", "replace")
    except OSError as exc:
        raise CodebaseError(
            f"cannot read patch {patch.path}",
            [
                finding(
                    "C003",
                    f"patch {position} ({patch.path}) cannot be read: {exc.strerror}",
                    path=pointer,
                )
            ],
        ) from None
    done = git(["apply", "--whitespace=nowarn", str(source.resolve())], cwd=checkout, check=False)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        failed = _FAILED.search(message)
        where = ""
        if failed is not None:
            hunk = _hunk_of(text, failed.group("file"), int(failed.group("line")))
            where = (
                f" at hunk {hunk} of {failed.group('file')}"
                if hunk
                else f" in {failed.group('file')}"
            )
            where += f" (line {failed.group('line')})"
        raise CodebaseError(
            f"patch {patch.path} does not apply",
            [
                finding(
                    "C003",
                    f"patch {position} ({patch.path}) does not apply{where}: "
                    + " ".join(message.splitlines()[:3]),
                    path=pointer,
                    file=patch.path,
                    hint="rebase the patch on the pinned commit and the patches before it",
                )
            ],
        )
    git(["add", "-A"], cwd=checkout)
    git(
        ["commit", "-q", "--allow-empty", "--no-verify", "-m", f"patch {position}: {patch.path}"],
        cwd=checkout,
    )


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

    Raises :class:`CodebaseError`: C001/C002 (fetch), C003 (a patch does not apply), C005
    (``fetch=False`` and the upstream is not cached), C008 (a checkout with working changes
    would be replaced; ``force`` discards them), C024-C026 (``bundle``: the artifact's bundle
    of the upstream, used instead of the repository, does not hold up). A tree digest other
    than ``tree_digest_`` is a C004 finding on the returned :class:`Checkout`.
    """
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
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        building.rmdir()
        init_checkout(bare, commit, building)
        for position, patch in enumerate(patches, start=1):
            _apply(building, root, patch, position)
        write_marker(building, repository, commit, digests)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        building.replace(target)
    except GitError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise CodebaseError(
            exc.stderr, [finding("C010" if exc.missing else "C001", f"git failed: {exc.stderr}")]
        ) from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return _result(target, commit, patches, tree_digest_, reused=False)


def checkout_blocker(target: Path) -> Finding | None:
    """The C008 that makes ``target`` (``code/``) unusable for a run of the series, or None.

    The one decision on the working checkout, called by the validator (:func:`inspect_series`),
    the runner (:func:`materialize_series`) and ``run --dry-run``, so that all three report the
    same C008, an error, at ``/codebase/refined`` (spec "patch-series"):

    * a checkout (``.git`` inside) with unrecorded changes is C008 whatever series it holds:
      the runner would have to replace it to run the series, and it never throws away an
      author's unrecorded work (it would not run them either: they are not the refined
      code). Byte-code caches are not changes;
    * a file, a link or a non-empty directory that is not a checkout is C008;
    * a clean checkout (of this or another series), an empty directory or nothing is None:
      the runner reuses or rebuilds it and loses nothing.
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

    Yields ``(tree, findings)``. A checkout in ``code/`` that holds exactly this series is the
    tree (C006 for working changes, C004 if its digest is not the declared one). Otherwise the
    series is applied in a scratch directory, removed on exit, from the artifact's ``bundle``
    when it declares one (verified: C024-C026; a missing bundle file gives no tree and no
    finding, the files layer's F004 says it), else from the cache (C003, C004); when the
    upstream is not cached the tree is None with C005 (a warning: what cannot be checked
    offline is not a fault of the manifest). Never raises for git: a failure is C001.
    This is what the validator and the auditor both read (spec "patch-series").
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
    (:func:`checkout_blocker`, the runner's own decision): a file, a link, a directory that is
    not a checkout, or a checkout (of this series or another) with unrecorded changes. When
    C008 is reported for a checkout of this series, the C006 warning of :func:`series_tree`
    on the same changes is left out: the error says it. Never raises.
    """
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
