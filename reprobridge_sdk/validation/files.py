"""Files layer: paths, existence, kinds and digests of what the manifest references (F codes).

The path rules are spec ``manifest.md#paths`` (§7), the digests F005-F007 ``#digests``.
Declared digests are checked for the lock, the patches, the sample files (since 1.1), data
items present on disk, and the refined code's tree; a digest the format asks for but that is
missing is a warning (F007).
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from typing import Any, Literal

from reprobridge_sdk.digest import TREE_EXCLUDES, file_sha256, tree_digest
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.document import Document
from reprobridge_sdk.io.pointer import escape_pointer
from reprobridge_sdk.validation._plain import mapping, mappings

__all__ = ["check_files", "check_path_form", "kind_of", "resolve_path", "usable_path"]

_Kind = Literal["file", "dir", "any"]


def check_path_form(text: str, base: str = ".") -> str | None:
    """``"F001"`` if ``text`` is absolute, ``"F002"`` if it leaves the artifact, else ``None``.

    ``base``: the directory ``text`` is relative to, itself relative to the artifact root (a
    launcher's ``workdir`` for outputs and ``extract.file``). ``../metrics.json`` from
    ``workdir: code`` names ``metrics.json`` at the root: inside the artifact, no F002 (spec
    "paths", rule 2). A ``base`` that is itself absolute or escaping counts as the root (its
    own field is reported).
    """
    if text.startswith(("/", "\\")) or (len(text) > 1 and text[1] == ":" and text[0].isalpha()):
        return "F001"
    if base not in ("", ".") and check_path_form(base) is None:
        text = posixpath.join(base.replace("\\", "/"), text)
    normal = posixpath.normpath(text.replace("\\", "/"))
    if normal == ".." or normal.startswith("../"):
        return "F002"
    return None


def usable_path(text: Any) -> bool:
    """A relative path inside its base that the file system can be asked about."""
    return (
        isinstance(text, str)
        and 0 < len(text) <= 4096
        and "\0" not in text
        and check_path_form(text) is None
    )


def kind_of(path: str | os.PathLike[str]) -> str | None:
    """``"file"``, ``"dir"`` or ``"other"`` (links followed); ``None`` if it cannot be reached."""
    try:
        mode = os.stat(path).st_mode  # noqa: PTH116 - no Path made for each of many files
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "dir" if stat.S_ISDIR(mode) else "other"


def _real(path: str | os.PathLike[str]) -> Path:
    # os.path.realpath never raises on symlink loops (Path.resolve does before 3.13).
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def resolve_path(root: Path, base: Path, text: str) -> Path:
    """``text`` (relative POSIX) joined to ``base`` inside the artifact at ``root``."""
    return base.joinpath(*[part for part in text.replace("\\", "/").split("/") if part])


class _Files:
    def __init__(self, doc: Document, root: Path) -> None:
        self.doc = doc
        self.root = root
        self.real_root = _real(root)
        self.data: dict[str, Any] = doc.data if isinstance(doc.data, dict) else {}
        self.out: list[Finding] = []
        self.links: set[str] = set()
        # One walk of the tree answers most path questions without further system calls:
        # the kind of every entry (from the directory listing, links not followed) by its
        # relative POSIX path; the symbolic links are checked against the root at the end.
        self.tree: dict[str, str] = {}
        self.symlink_entries: list[os.DirEntry[str]] = []
        self.kinds: dict[Path, str] = {}
        self.root_listed = False  # the root was read as a directory by the walk
        self._scan()

    def _scan(self) -> None:
        stack: list[tuple[str, str]] = [(os.fspath(self.root), "")]
        while stack:
            current, prefix = stack.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            if not prefix:
                self.root_listed = True
            for entry in entries:
                if entry.name in TREE_EXCLUDES:
                    continue
                rel = prefix + entry.name
                if entry.is_symlink():
                    self.tree[rel] = "link"
                    self.symlink_entries.append(entry)
                elif entry.is_dir(follow_symlinks=False):
                    self.tree[rel] = "dir"
                    stack.append((entry.path, rel + "/"))
                elif entry.is_file(follow_symlinks=False):
                    self.tree[rel] = "file"
                else:
                    self.tree[rel] = "other"

    def _known(self, parts: list[str]) -> str | None:
        """The kind of a path from the walk when no part of it is a link, ``..`` or skipped.

        A ``.`` part names the directory before it (the root when first), as it does on
        disk: ``.`` alone is the root, a directory when its listing was read; a ``.`` after
        anything but a directory is left to the disk.
        """
        key = ""
        kind: str | None = "dir"
        for part in parts:
            if kind != "dir" or part == ".." or part in TREE_EXCLUDES:
                return None
            if part == ".":
                continue
            key = f"{key}/{part}" if key else part
            kind = self.tree.get(key)
            if kind is None or kind == "link":
                return None
        if not key:
            return "dir" if self.root_listed else None
        return kind

    def kind(self, path: Path) -> str | None:
        """:func:`kind_of`, answered from the walk for paths this layer resolved."""
        known = self.kinds.get(path)
        return known if known is not None else kind_of(path)

    def add(self, code: str, message: str, path: str, hint: str | None = None) -> None:
        self.out.append(self.doc.finding(code, message, path=path, hint=hint))

    def path(
        self, value: Any, pointer: str, kind: _Kind | None, *, base: Path | None = None
    ) -> Path | None:
        """Check one path field; the resolved path when it exists inside the artifact."""
        if not isinstance(value, str) or not value:
            return None
        code = check_path_form(value)
        if code == "F001":
            self.add("F001", f"{value!r} is absolute", pointer, hint="write it relative")
            return None
        if code == "F002":
            self.add("F002", f"{value!r} leaves the artifact", pointer)
            return None
        if "\0" in value or len(value) > 4096:
            self.add("F004", f"{value[:60]!r} cannot name a file", pointer)
            return None
        full = resolve_path(self.root, base or self.root, value)
        parts = [part for part in value.replace("\\", "/").split("/") if part]
        known = self._known(self.base_parts(base) + parts)
        if known is not None:
            return self._kind_ok(value, pointer, kind, known, full)
        if not os.path.lexists(full):
            if kind is not None:
                what = {"file": "file", "dir": "directory", "any": "path"}[kind]
                self.add("F004", f"the {what} {value!r} does not exist", pointer)
            return None
        real = _real(full)
        if not _inside(real, self.real_root):
            self.links.add(os.path.normpath(full))
            self.add(
                "F003",
                f"{value!r} is a symbolic link to {real}, outside the artifact",
                pointer,
            )
            return None
        found = kind_of(full)
        if found is None:
            self.add("F004", f"{value!r} cannot be followed (a symbolic link loop?)", pointer)
            return None
        return self._kind_ok(value, pointer, kind, found, full)

    def _kind_ok(
        self, value: str, pointer: str, kind: _Kind | None, found: str, full: Path
    ) -> Path | None:
        if kind == "file" and found != "file":
            self.add("F009", f"{value!r} is not a regular file", pointer)
            return None
        if kind == "dir" and found != "dir":
            self.add("F008", f"{value!r} is not a directory", pointer)
            return None
        self.kinds[full] = found
        return full

    def base_parts(self, base: Path | None) -> list[str]:
        """The parts of ``base`` below the root (``[".."]``, never known, if not below it)."""
        if base is None or base == self.root:
            return []
        try:
            return list(base.relative_to(self.root).parts)
        except ValueError:
            return [".."]

    def digest(
        self,
        path: Path | None,
        declared: Any,
        pointer: str,
        what: str,
        limit: int = safefs.MAX_TEXT_BYTES,
    ) -> None:
        if path is None or not isinstance(declared, str) or self.kind(path) != "file":
            return
        try:
            actual = file_sha256(path, root=self.root, max_bytes=limit)
        except safefs.UnsafeFileError as exc:
            self._refused(exc, pointer)
            return
        except OSError as exc:
            self.add("F004", f"{what} cannot be read: {exc.strerror}", pointer)
            return
        if actual != declared:
            self.add(
                "F005",
                f"{what} has sha256 {actual}, not the declared {declared}",
                pointer,
                hint="if the file changed on purpose, update the digest",
            )

    def _refused(self, exc: safefs.UnsafeFileError, pointer: str) -> None:
        """A file the safe layer refused; links leading out are the symlink pass's F003."""
        if exc.reason not in ("escapes", "link"):
            item = safefs.refusal(exc)
            self.add(item.code, item.message, pointer, item.hint)

    def run(self) -> list[Finding]:
        self.codebase()
        self.environment()
        self.launchers()
        self.guide()
        self.symlinks()
        return self.out

    def codebase(self) -> None:
        codebase = mapping(self.data.get("codebase"))
        refined = mapping(codebase.get("refined"))
        kind = refined.get("kind")
        if kind == "directory" and "path" in refined:
            code = self.path(refined["path"], "/codebase/refined/path", "dir")
            declared = codebase.get("tree_digest")
            actual: str | None = None
            if code is not None:
                try:
                    actual = tree_digest(code)
                except safefs.UnsafeFileError as exc:
                    self._refused(exc, "/codebase/refined/path")
                except OSError as exc:
                    message = f"the refined code cannot be read: {exc.strerror}"
                    self.add("F004", message, "/codebase/refined/path")
            if declared is None:
                self.add(
                    "F007",
                    "the refined code has no tree_digest",
                    "/codebase/tree_digest",
                    hint=f"add tree_digest: {actual}" if actual else None,
                )
            elif actual is not None and isinstance(declared, str) and actual != declared:
                self.add(
                    "F006",
                    f"the refined code's tree digest is {actual}, not the declared one",
                    "/codebase/tree_digest",
                    hint="if the code changed on purpose, update tree_digest",
                )
        for ptr, patch in mappings(refined.get("patches"), "/codebase/refined/patches"):
            found = self.path(patch.get("path"), f"{ptr}/path", "file")
            if patch.get("sha256") is None:
                self.add("F007", "the patch has no sha256", f"{ptr}/sha256")
            else:
                self.digest(found, patch.get("sha256"), f"{ptr}/sha256", "the patch")
        upstream = mapping(codebase.get("upstream"))
        self.path(
            mapping(upstream.get("bundle")).get("path"), "/codebase/upstream/bundle/path", "file"
        )
        if kind == "patches":
            self.series()

    def series(self) -> None:
        """The patch series against the cached upstream (never fetched): C003-C006."""
        from reprobridge_sdk.checkout.materialize import (  # noqa: PLC0415 - patches only
            bundle_from_data,
            inspect_series,
            series_from_data,
        )

        series = series_from_data(self.data)
        if series is None or not all(usable_path(p.path) for p in series[2]):
            return
        repository, commit, patches, declared = series
        bundle = bundle_from_data(self.data)
        for item in inspect_series(
            self.root,
            repository=repository,
            commit=commit,
            patches=patches,
            declared=declared if isinstance(declared, str) else None,
            bundle=bundle if bundle is not None and usable_path(bundle.path) else None,
        ):
            self.add(item.code, item.message, item.path, hint=item.hint)

    def environment(self) -> None:
        environment = mapping(self.data.get("environment"))
        self.path(environment.get("requirements"), "/environment/requirements", "file")
        lock = environment.get("lock")
        if isinstance(lock, dict):
            found = self.path(lock.get("path"), "/environment/lock/path", "file")
            if lock.get("sha256") is None:
                self.add("F007", "the lock has no sha256", "/environment/lock/sha256")
            else:
                self.digest(found, lock.get("sha256"), "/environment/lock/sha256", "the lock")
        code_dir = self._code_dir()
        for ptr, item in mappings(environment.get("data"), "/environment/data"):
            found = self.path(item.get("destination"), f"{ptr}/destination", None)
            self.digest(
                found, item.get("sha256"), f"{ptr}/sha256", "the data item", safefs.MAX_HASH_BYTES
            )
            source = mapping(item.get("source"))
            if code_dir is not None:
                self.path(source.get("codebase"), f"{ptr}/source/codebase", "any", base=code_dir)
            elif isinstance(source.get("codebase"), str):
                self._form(source["codebase"], f"{ptr}/source/codebase")
            if source.get("url") is not None and item.get("sha256") is None:
                self.add(
                    "F007",
                    f"data item {item.get('id')!r} is downloaded but has no sha256",
                    f"{ptr}/sha256",
                    hint="pin it: `reprobridge data` prints the digest of a fetched item",
                )

    def _code_dir(self) -> Path | None:
        refined = mapping(mapping(self.data.get("codebase")).get("refined"))
        text = refined.get("path")
        if refined.get("kind") != "directory" or not isinstance(text, str):
            return None
        if check_path_form(text) is not None:
            return None
        return resolve_path(self.root, self.root, text)

    def _in_missing_checkout(self, value: Any) -> bool:
        """A path inside the working checkout of a patch series that is not materialized.

        The checkout is derived (spec "codebase"): ``run`` builds it, so a path into it is
        not checked while it is absent.
        """
        refined = mapping(mapping(self.data.get("codebase")).get("refined"))
        if refined.get("kind") != "patches" or not isinstance(value, str):
            return False
        from reprobridge_sdk.checkout.materialize import CHECKOUT_DIR  # noqa: PLC0415 - patches

        first = value.replace("\\", "/").split("/")[0]
        return first == CHECKOUT_DIR and not (self.root / CHECKOUT_DIR).is_dir()

    def _form(self, value: Any, pointer: str, base: Any = ".") -> None:
        if isinstance(value, str) and value:
            code = check_path_form(value, base if isinstance(base, str) else ".")
            if code == "F001":
                self.add("F001", f"{value!r} is absolute", pointer, hint="write it relative")
            elif code == "F002":
                self.add("F002", f"{value!r} leaves the artifact", pointer)

    def launchers(self) -> None:
        for ptr, launcher in mappings(self.data.get("launchers"), "/launchers"):
            workdir = launcher.get("workdir", ".")
            if not self._in_missing_checkout(workdir):
                self.path(workdir, f"{ptr}/workdir", "dir")
            for optr, output in mappings(launcher.get("outputs"), f"{ptr}/outputs"):
                self._form(output.get("path"), f"{optr}/path", workdir)
            for mptr, measurement in mappings(launcher.get("measurements"), f"{ptr}/measurements"):
                extract_file = mapping(measurement.get("extract")).get("file")
                self._form(extract_file, f"{mptr}/extract/file", workdir)
            for sptr, sample in mappings(launcher.get("samples"), f"{ptr}/samples"):
                log = self.path(sample.get("log"), f"{sptr}/log", "file")
                self.digest(log, sample.get("log_sha256"), f"{sptr}/log_sha256", "the sample log")
                declared = mapping(sample.get("outputs_sha256"))
                for key, value in mapping(sample.get("outputs")).items():
                    found = self.path(value, f"{sptr}/outputs/{escape_pointer(key)}", "file")
                    self.digest(
                        found,
                        declared.get(key),
                        f"{sptr}/outputs_sha256/{escape_pointer(key)}",
                        f"the sample output {key!r}",
                    )

    def guide(self) -> None:
        guide = mapping(self.data.get("guide"))
        found = self.path(guide.get("path"), "/guide/path", None)
        if found is not None and self.kind(found) != "file":
            self.add("F009", f"the guide {guide['path']!r} is not a regular file", "/guide/path")
        for ptr, change in mappings(guide.get("changes"), "/guide/changes"):
            files = change.get("files")
            for index, value in enumerate(files if isinstance(files, list) else []):
                self._form(value, f"{ptr}/files/{index}")
            self.path(change.get("patch"), f"{ptr}/patch", "file")

    def symlinks(self) -> None:
        """F003 for every symbolic link in the artifact tree that points outside it."""
        for entry in self.symlink_entries:
            if os.path.normpath(entry.path) in self.links:
                continue
            target = _real(entry.path)
            if not _inside(target, self.real_root):
                relative = Path(entry.path).relative_to(self.root).as_posix()
                self.out.append(
                    Finding(
                        file=relative,
                        code="F003",
                        message=f"the symbolic link {relative} points outside the "
                        f"artifact ({Path(entry.path).readlink()})",
                    )
                )


def check_files(doc: Document, root: Path) -> list[Finding]:
    """F findings for the artifact at ``root`` whose manifest is ``doc``."""
    if not isinstance(doc.data, dict):
        return []
    found = _Files(doc, root).run()
    return [_registered(item) for item in found]


def _registered(item: Finding) -> Finding:
    if item.spec is not None:
        return item
    return finding(item.code, item.message, file=item.file, path=item.path)
