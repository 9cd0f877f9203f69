"""Authoring the codebase: import an upstream, record fixes as a patch series, diff, status.

:func:`import_code` pins a repository at a commit and checks it out into ``code/``;
:func:`record_patch` turns the working changes into the next patch and change record;
:func:`code_diff` and :func:`code_status` show them. Rules: ``spec/authoring.md#code-commands``;
the checkout itself is :mod:`reprobridge_sdk.checkout.materialize`.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reprobridge_sdk.api import ArtifactDir, load
from reprobridge_sdk.checkout import GitError, git, git_available
from reprobridge_sdk.checkout.materialize import (
    CHECKOUT_DIR,
    Checkout,
    CodebaseError,
    SeriesPatch,
    bundle_of,
    fetch_upstream,
    init_checkout,
    materialize_series,
    read_marker,
    upstream_location,
    working_changes,
    write_marker,
)
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.guide import clip
from reprobridge_sdk.io.atomic import atomic_write_bytes
from reprobridge_sdk.model import Change
from reprobridge_sdk.model.codebase import Patch, RefinedCode, Upstream
from reprobridge_sdk.versions import parse_version, written_version

__all__ = [
    "CHECKOUT_DIR",
    "CodebaseError",
    "ImportResult",
    "NothingToRecord",
    "PatchStatus",
    "SeriesStatus",
    "code_diff",
    "code_status",
    "import_code",
    "materialize",
    "record_change",
    "record_patch",
]

_HEX = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")
_URL = re.compile(r"^([a-z][a-z0-9+.-]*://|[A-Za-z0-9._-]+@[^:/]+:)")
_PATCHES_DIR = "patches"


def require_version(art: ArtifactDir, version: str) -> None:
    """Declare at least format ``version`` (a producer writes the lowest version whose fields
    it uses; a feature of 1.1 written into a 1.0 manifest raises its version to 1.1)."""

    needed = parse_version(version)
    assert needed is not None, version
    art.manifest.rra_version = written_version(art.manifest.rra_version, needed)


def _art(artifact: str | os.PathLike[str] | ArtifactDir) -> ArtifactDir:
    return artifact if isinstance(artifact, ArtifactDir) else load(artifact)


class NothingToRecord(CodebaseError):
    """C007: ``code/`` has no working changes, the answer of ``code record`` (exit 1)."""


def _error(
    code: str, message: str, *, path: str = "", file: str = "", hint: str | None = None
) -> CodebaseError:
    return CodebaseError(message, [finding(code, message, path=path, file=file, hint=hint)])


def _git_missing() -> CodebaseError:
    """C010: git, which every import and record needs, cannot be run (not a C009: the request
    itself may be fine)."""
    return _error(
        "C010",
        "git is not installed or not on PATH",
        hint="install git (e.g. apt-get install git) or put it on PATH",
    )


def _require_git() -> None:
    """C010 before the first git command when git cannot be found on PATH."""
    if not git_available():
        raise _git_missing()


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_code` pinned."""

    repository: str
    commit: str
    kind: str
    tree_digest: str
    checkout: Path


def _repository_form(root: Path, source: str) -> str:
    """How the manifest names ``source`` (see the module docstring)."""
    if _URL.match(source):
        return source
    path = Path(source).resolve()
    try:
        top = git(["rev-parse", "--show-toplevel"], cwd=path).stdout.decode().strip()
    except GitError as exc:
        if exc.missing:
            raise _git_missing() from None
        raise _error("C009", f"{source} is not a git repository") from None
    except (OSError, NotADirectoryError):
        raise _error("C009", f"{source} is not a git repository") from None
    top_path = Path(top).resolve()
    if root.resolve().is_relative_to(top_path):
        relative = os.path.relpath(top_path, root.resolve())
        return Path(relative).as_posix()
    return top_path.as_uri()


def _resolve_commit(location: str, commit: str | None) -> str:
    if commit is not None and _HEX.match(commit):
        return commit
    name = commit or "HEAD"
    try:
        done = git(["ls-remote", location, name])
    except GitError as exc:
        if exc.missing:
            raise _git_missing() from None
        raise _error("C001", f"cannot list the upstream {location}: {exc.stderr}") from None
    refs = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition("\t")
        refs[ref] = sha
    for candidate in (name, f"refs/heads/{name}", f"refs/tags/{name}^{{}}", f"refs/tags/{name}"):
        if candidate in refs:
            return refs[candidate]
    raise _error(
        "C009",
        f"{name!r} is neither a full commit id nor a branch or tag of the upstream",
        path="/codebase/upstream/commit",
    )


def import_code(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    source: str,
    *,
    commit: str | None = None,
    as_: Literal["directory", "patches"] = "directory",
    force: bool = False,
) -> ImportResult:
    """Pin ``source`` at ``commit`` as the artifact's upstream and check it out in ``code/``."""
    art = _art(artifact_dir)
    root = art.root
    if as_ not in ("directory", "patches"):
        raise _error("C009", f"--as must be 'directory' or 'patches', not {as_!r}")
    repository = _repository_form(root, source)
    location = upstream_location(root, repository)
    pinned = _resolve_commit(location, commit)
    bare = fetch_upstream(root, repository, pinned)
    target = root / CHECKOUT_DIR
    if target.exists() and any(target.iterdir()):
        if not force:
            raise _error(
                "C008",
                f"{CHECKOUT_DIR}/ exists already; refusing to replace it",
                file=CHECKOUT_DIR,
                hint="move it away, or pass --force",
            )
        shutil.rmtree(target)
    elif target.exists():
        target.rmdir()
    if as_ == "directory":
        try:
            init_checkout(bare, pinned, target)
        except GitError as exc:
            if exc.missing:
                raise _git_missing() from None
            raise _error("C001", f"git failed: {exc.stderr}") from None
        write_marker(target, repository, pinned, [])
        digest = tree_digest(target)
        refined = RefinedCode(kind="directory", path=CHECKOUT_DIR)
    else:
        checkout = materialize_series(root, repository=repository, commit=pinned, patches=[])
        digest = checkout.tree_digest
        refined = RefinedCode(kind="patches", patches=[])
        require_version(art, "1.1")  # an empty series is a format 1.1 feature
    codebase = art.manifest.codebase
    codebase.upstream = Upstream(repository=repository, commit=pinned)
    codebase.refined = refined
    codebase.tree_digest = digest
    art.manifest.codebase = codebase
    art.save()
    return ImportResult(repository, pinned, as_, digest, target)


def materialize(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    *,
    fetch: bool = True,
    force: bool = False,
    verify: bool = True,
) -> Path:
    """The directory of the refined code: the directory itself, or a series' working checkout;
    with ``verify``, another tree digest than the declared one raises C004."""
    art = _art(artifact_dir)
    checkout = _checkout(art, fetch=fetch, force=force)
    if verify and checkout.findings:
        raise CodebaseError(checkout.findings[0].message, checkout.findings)
    return checkout.path


def _checkout(art: ArtifactDir, *, fetch: bool = True, force: bool = False) -> Checkout:
    codebase = art.manifest.codebase
    refined = codebase.refined
    if refined.kind == "directory":
        assert refined.path is not None
        path = art.path(refined.path)
        if not path.is_dir():
            raise _error("C016", f"the refined code {refined.path!r} is not a directory")
        actual = tree_digest(path)
        found: list[Finding] = []
        if codebase.tree_digest is not None and codebase.tree_digest != actual:
            found.append(
                finding(
                    "C004",
                    f"the refined code has digest {actual}, not the declared one",
                    path="/codebase/tree_digest",
                    hint="record the change (`reprobridge code record`) or `digest --update`",
                )
            )
        return Checkout(path, codebase.upstream.commit, actual, [], found, reused=True)
    return materialize_series(
        art.root,
        repository=codebase.upstream.repository,
        commit=codebase.upstream.commit,
        patches=[SeriesPatch(p.path, p.sha256) for p in refined.patches],
        tree_digest_=codebase.tree_digest,
        fetch=fetch,
        force=force,
        bundle=bundle_of(codebase.upstream),
    )


def _tracked_checkout(art: ArtifactDir) -> Path:
    refined = art.manifest.codebase.refined
    relative = refined.path if refined.kind == "directory" and refined.path else CHECKOUT_DIR
    checkout = art.path(relative)
    if not (checkout / ".git").is_dir() or read_marker(checkout) is None:
        raise _error(
            "C016",
            f"{relative}/ is not a checkout made by `reprobridge code import`",
            path="/codebase/refined",
            hint="import the upstream first: `reprobridge code import SOURCE`",
        )
    return checkout


def _ensure_current(art: ArtifactDir, checkout: Path) -> None:
    codebase = art.manifest.codebase
    marker = read_marker(checkout) or {}
    if codebase.refined.kind != "patches":
        return
    wanted = [p.path for p in codebase.refined.patches]
    held = [item.get("path") for item in marker.get("patches", []) if isinstance(item, dict)]
    if marker.get("commit") != codebase.upstream.commit or held != wanted:
        raise _error(
            "C011",
            "the checkout holds another series than the manifest's",
            path="/codebase/refined/patches",
            hint="save its changes, remove code/ and run `reprobridge digest` (it rebuilds code/)",
        )


def _diff(checkout: Path) -> str:
    git(["add", "-A", "--intent-to-add"], cwd=checkout)
    done = git(["diff", "--binary", "--no-color", "--no-ext-diff", "HEAD"], cwd=checkout)
    return done.stdout.decode("utf-8", "surrogateescape")


def code_diff(artifact_dir: str | os.PathLike[str] | ArtifactDir) -> str:
    """The working changes of ``code/`` not yet recorded, as a unified diff ('' if none)."""
    art = _art(artifact_dir)
    checkout = _tracked_checkout(art)
    _require_git()
    return _diff(checkout)


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "-".join(words)[:48].strip("-") or "change"


def _changed_files(checkout: Path) -> list[str]:
    done = git(["diff", "--cached", "--name-only", "--no-renames", "HEAD"], cwd=checkout)
    return [line for line in done.stdout.decode("utf-8", "replace").splitlines() if line]


def record_patch(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    *,
    kind: str,
    why: str,
    tasks: Sequence[str] = (),
    summary: str | None = None,
    change_id: str | None = None,
) -> Change:
    """Record the working changes of ``code/`` as the next patch and change-record entry."""
    art = _art(artifact_dir)
    if kind not in ("execution-fix", "correctness-fix", "convenience"):
        raise _error(
            "C009", f"unknown kind {kind!r}", hint="execution-fix, correctness-fix or convenience"
        )
    if not why.strip():
        raise _error("C009", "the rationale (--why) is empty")
    checkout = _tracked_checkout(art)
    _ensure_current(art, checkout)
    _require_git()
    git(["add", "-A"], cwd=checkout)
    diff = git(["diff", "--cached", "--binary", "--no-color", "HEAD"], cwd=checkout).stdout
    if not diff.strip():
        msg = "code/ has no working changes to record"
        raise NothingToRecord(msg, [finding("C007", msg, file=CHECKOUT_DIR)])
    files = _changed_files(checkout)
    line = summary or why.strip().splitlines()[0]
    line = clip(line, 80)
    codebase = art.manifest.codebase
    refined = codebase.refined
    number = len([c for c in art.manifest.guide.changes if c.patch]) + 1
    if refined.kind == "patches":
        number = max(number, len(refined.patches) + 1)
    relative = f"{_PATCHES_DIR}/{number:04d}-{_slug(line)}.patch"
    while art.path(relative).exists():
        number += 1
        relative = f"{_PATCHES_DIR}/{number:04d}-{_slug(line)}.patch"
    header = [f"# {kind}: {line}", "#"]
    header += [f"# {text}" if text else "#" for text in why.strip().splitlines()]
    text = "\n".join(header).encode("utf-8") + b"\n\n" + diff
    target = art.path(relative)
    atomic_write_bytes(target, text)
    identifier = change_id or _change_id(art, kind)
    try:
        change = art.record_change(
            identifier, kind, line, why.strip(), files=files, patch=relative, tasks=tasks
        )
    except Exception:
        target.unlink(missing_ok=True)
        raise
    git(["commit", "-q", "--no-verify", "-m", f"{relative}: {line}"], cwd=checkout)
    digest = tree_digest(checkout)
    if refined.kind == "patches":
        refined.patches = [
            *refined.patches,
            Patch(path=relative, sha256=file_sha256(target), summary=line),
        ]
        codebase.refined = refined
        marker = [(p.path, file_sha256(art.path(p.path))) for p in refined.patches]
        write_marker(checkout, codebase.upstream.repository, codebase.upstream.commit, marker)
    codebase.tree_digest = digest
    art.manifest.codebase = codebase
    art.save()
    art.write_guide()
    return change


#: The name the reference build agent codes against (issue 11): the same function.
record_change = record_patch


def _change_id(art: ArtifactDir, kind: str) -> str:
    taken = {change.id for change in art.manifest.guide.changes}
    index = 1
    while f"{kind}-{index}" in taken:
        index += 1
    return f"{kind}-{index}"


@dataclass(frozen=True)
class PatchStatus:
    """One patch of the series: ``state`` is applies, fails or not-tried."""

    position: int
    path: str
    summary: str | None
    state: str
    finding: Finding | None = None


@dataclass
class SeriesStatus:
    """The series, patch by patch, and the working checkout."""

    kind: str
    repository: str
    commit: str
    patches: list[PatchStatus] = field(default_factory=list)
    tree_digest: str | None = None
    declared_digest: str | None = None
    working_changes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings and all(p.state == "applies" for p in self.patches)


def code_status(
    artifact_dir: str | os.PathLike[str] | ArtifactDir, *, fetch: bool = True
) -> SeriesStatus:
    """Which patches of the series apply (in a scratch checkout), and the working changes."""
    art = _art(artifact_dir)
    codebase = art.manifest.codebase
    refined = codebase.refined
    status = SeriesStatus(
        kind=refined.kind,
        repository=codebase.upstream.repository,
        commit=codebase.upstream.commit,
        declared_digest=codebase.tree_digest,
    )
    checkout_rel = refined.path if refined.kind == "directory" and refined.path else CHECKOUT_DIR
    checkout = art.path(checkout_rel)
    if (checkout / ".git").is_dir():
        try:
            status.working_changes = working_changes(checkout)
        except GitError:
            status.working_changes = []
    if refined.kind == "directory":
        if checkout.is_dir():
            status.tree_digest = tree_digest(checkout)
        return status
    with tempfile.TemporaryDirectory(prefix="rra-status-") as scratch:
        applied: list[SeriesPatch] = []
        for position, patch in enumerate(refined.patches, start=1):
            applied.append(SeriesPatch(patch.path, patch.sha256))
            try:
                result = materialize_series(
                    art.root,
                    repository=codebase.upstream.repository,
                    commit=codebase.upstream.commit,
                    patches=applied,
                    dest=Path(scratch) / f"s{position}",
                    fetch=fetch,
                    bundle=bundle_of(codebase.upstream),
                )
            except CodebaseError as exc:
                item = exc.findings[0] if exc.findings else None
                if item is not None and item.code != "C003":
                    status.findings.append(item)
                    break
                status.patches.append(
                    PatchStatus(position, patch.path, patch.summary, "fails", item)
                )
                status.patches.extend(
                    PatchStatus(later, p.path, p.summary, "not-tried")
                    for later, p in enumerate(refined.patches[position:], start=position + 1)
                )
                break
            status.patches.append(PatchStatus(position, patch.path, patch.summary, "applies"))
            status.tree_digest = result.tree_digest
            shutil.rmtree(result.path, ignore_errors=True)
        if not refined.patches:
            try:
                result = materialize_series(
                    art.root,
                    repository=codebase.upstream.repository,
                    commit=codebase.upstream.commit,
                    patches=[],
                    dest=Path(scratch) / "s0",
                    fetch=fetch,
                    bundle=bundle_of(codebase.upstream),
                )
                status.tree_digest = result.tree_digest
            except CodebaseError as exc:
                status.findings.extend(exc.findings)
    if (
        status.tree_digest is not None
        and status.declared_digest is not None
        and len(status.patches) == len(refined.patches)
        and all(p.state == "applies" for p in status.patches)
        and status.tree_digest != status.declared_digest
    ):
        status.findings.append(
            finding(
                "C004",
                f"the patched tree has digest {status.tree_digest}, not the declared one",
                path="/codebase/tree_digest",
            )
        )
    return status
