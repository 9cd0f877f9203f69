"""One file to submit: deterministic packing and safe unpacking of an artifact.

:func:`pack` writes a byte-identical PAX tar (with an upstream bundle when nobody else could
fetch it), digested uncompressed; :func:`unpack` refuses members that could escape or exceed
the bounds (C017, C018), compares the digest (C019) and validates. Spec:
``spec/authoring.md#pack``.
"""

# ruff: noqa: PLC0415 - packing's imports (the API, the models, the checkout) are made where
# they are used: unpacking, which every command taking an archive does, needs none of them

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from reprobridge_sdk.digest import WrittenFiles
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io.atomic import atomic_open
from reprobridge_sdk.versions import MANIFEST_NAME

from ._tarsafe import TARINFO, HeaderScan, LinkTree, Refused

if TYPE_CHECKING:
    from reprobridge_sdk.api import ArtifactDir
    from reprobridge_sdk.model import Manifest

__all__ = [
    "EPOCH",
    "MAX_BYTES",
    "MAX_FILES",
    "PackError",
    "PackResult",
    "UnpackResult",
    "hidden_left_out",
    "pack",
    "packed_files",
    "unpack",
]

#: The mtime of every entry (1980-01-01T00:00:00Z, the earliest a zip can hold too).
EPOCH = 315532800
MAX_FILES = 100_000
MAX_BYTES = 20 * 1024**3


class PackError(ArtifactError):
    """An artifact cannot be packed or an archive cannot be unpacked safely (C017-C019)."""


@dataclass(frozen=True)
class PackResult:
    """The archive written: where, its uncompressed digest, and what it holds."""

    path: Path
    digest: str
    files: int
    size: int
    #: The archive path of the upstream bundle it carries, if any.
    bundle: str | None = None


@dataclass
class UnpackResult:
    """An unpacked artifact: its root, the archive's digest and the validation findings."""

    root: Path
    digest: str
    files: int
    findings: list[Finding] = field(default_factory=list)


def _error(code: str, message: str, *, file: str = "", hint: str | None = None) -> PackError:
    return PackError(message, [finding(code, message, file=file, hint=hint)])


_HINTS = {
    "C017": "the archive is unsafe or malformed; ask its author for one written by "
    "`reprobridge pack`",
    "C018": "the archive exceeds a cap of the unpacker; ask its author for one written by "
    "`reprobridge pack`",
    "link": "an archive of an artifact holds regular files and symbolic links inside it only",
}


def _unsafe(code: str, message: str, *, file: str = "", hint: str | None = None) -> PackError:
    """An archive refused while unpacking (C017, C018), with the hint of its code."""
    return _error(code, message, file=file, hint=hint or _HINTS[code])


def hidden_left_out(art: ArtifactDir) -> list[str]:
    """The hidden directories at the root that :func:`pack` leaves out, sorted."""
    from reprobridge_sdk import contents

    return contents.hidden_left_out(art.root, art.manifest)


def packed_files(root: Path, *, with_runs: bool = False, skip: Path | None = None) -> list[str]:
    """The POSIX relative paths :func:`pack` puts in the archive, sorted.

    The one rule of :func:`reprobridge_sdk.contents.artifact_files`; a link that leaves the
    artifact is a :class:`PackError` (C017).
    """
    from reprobridge_sdk.api import load

    return _files(root, load(root).manifest, with_runs=with_runs, skip=skip)


def _files(root: Path, manifest: Manifest, *, with_runs: bool, skip: Path | None) -> list[str]:
    from reprobridge_sdk import contents

    try:
        return contents.artifact_files(
            root, manifest, with_runs=with_runs, skip=() if skip is None else (skip,)
        )
    except ArtifactError as exc:
        raise PackError(exc.message, exc.findings) from None


class _HashingWriter(io.RawIOBase):
    """A write-only stream that hashes what passes and forwards it."""

    def __init__(self, sink: IO[bytes]) -> None:
        self.sink = sink
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.digest.update(view)
        self.sink.write(view)
        return len(view)


def _carried(art: ArtifactDir, scratch: Path) -> dict[str, Path]:
    """Entries pack adds or replaces: the upstream bundle and the manifest declaring it."""
    from reprobridge_sdk.checkout._bundle import bundle_path, needs_bundle, write_bundle
    from reprobridge_sdk.checkout.materialize import fetch_upstream
    from reprobridge_sdk.model import UpstreamBundle

    codebase = art.manifest.codebase
    upstream = codebase.upstream
    if (
        codebase.refined.kind != "patches"
        or upstream.bundle is not None
        or not needs_bundle(upstream.repository)
    ):
        return {}
    bare = fetch_upstream(art.root, upstream.repository, upstream.commit)
    rel = bundle_path(upstream.commit)
    bundle = scratch / "upstream.bundle"
    digest = write_bundle(bare, upstream.commit, bundle)
    upstream.bundle = UpstreamBundle(path=rel, sha256=digest)
    manifest = scratch / MANIFEST_NAME
    manifest.write_text(art.render(), "utf-8")
    return {rel: bundle, MANIFEST_NAME: manifest}


def _info(root: Path, rel: str, source: Path | None = None) -> tuple[tarfile.TarInfo, Path]:
    path = source if source is not None else root.joinpath(*rel.split("/"))
    info = tarfile.TarInfo(rel)
    info.mtime = EPOCH
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    status = path.lstat()  # one call: a regular file's size is its own
    mode = status.st_mode
    if stat.S_ISLNK(mode):
        info.type = tarfile.SYMTYPE
        info.linkname = os.readlink(path)  # noqa: PTH115 - the target as written
        info.mode = 0o777
    else:
        info.size = status.st_size
        info.mode = 0o755 if mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) else 0o644
    return info, path


def pack(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    out: str | os.PathLike[str],
    *,
    with_runs: bool = False,
) -> PackResult:
    """Write the deterministic archive of the artifact to ``out`` (``.tar``, ``.tar.gz``)."""
    from reprobridge_sdk.api import ArtifactDir, load

    root = artifact_dir.root if isinstance(artifact_dir, ArtifactDir) else Path(artifact_dir)
    target = Path(out)
    compress = target.name.endswith((".tar.gz", ".tgz"))
    if not compress and not target.name.endswith(".tar"):
        raise _error("C018", f"{target.name}: the archive must end in .tar, .tar.gz or .tgz")
    with tempfile.TemporaryDirectory(prefix="rra-pack-") as scratch:
        art = load(root)
        names = _files(root, art.manifest, with_runs=with_runs, skip=target)
        carried = _carried(art, Path(scratch))
        names = sorted(set(names) | set(carried), key=lambda name: name.encode("utf-8"))
        result = _write(root, target, names, carried, compress=compress)
    bundle = next((rel for rel in carried if rel != MANIFEST_NAME), None)
    return PackResult(result.path, result.digest, result.files, result.size, bundle)


def _write(
    root: Path, target: Path, names: list[str], carried: dict[str, Path], *, compress: bool
) -> PackResult:
    size = 0
    with atomic_open(target) as raw:
        sink: Any = (
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6)
            if compress
            else raw
        )
        hashing = _HashingWriter(sink)
        with tarfile.open(fileobj=hashing, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for rel in names:
                info, path = _info(root, rel, carried.get(rel))
                if info.isreg():
                    size += info.size
                    with path.open("rb") as handle:
                        tar.addfile(info, handle)
                else:
                    tar.addfile(info)
        if compress:
            sink.close()
    return PackResult(target, hashing.digest.hexdigest(), len(names), size)


def _parts(name: str) -> list[str] | None:
    if not name or name.startswith("/") or "\\" in name or "\0" in name:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return parts


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        member = tar.next()
        if member is None:
            return
        yield member


def unpack(
    archive: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    expected_digest: str | None = None,
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
    validate_after: bool = True,
) -> UnpackResult:
    """Unpack ``archive`` safely into ``dest`` (see the module docstring)."""
    source = Path(archive)
    root = Path(dest)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise _error("C018", f"{root} exists and is not an empty directory", file=str(root))
    root.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = WrittenFiles()
    try:
        with source.open("rb") as raw:
            head = raw.read(2)
            raw.seek(0)
            stream: Any = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw
            hashing = _HashingReader(stream, digest)
            scan = HeaderScan(hashing)
            with tarfile.open(fileobj=scan, mode="r|", tarinfo=TARINFO) as tar:
                files = _extract(tar, root, written, max_files=max_files, max_bytes=max_bytes)
            hashing.drain()
    except Refused as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise _unsafe(
            exc.code,
            f"{source.name}: {exc.message}",
            file=exc.where or str(source),
            hint=_HINTS[exc.code],
        ) from None
    except PackError:
        shutil.rmtree(root, ignore_errors=True)
        raise
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise _unsafe("C017", f"{source.name} is not a readable archive: {exc}") from None
    result = UnpackResult(root, digest.hexdigest(), files)
    if expected_digest is not None and expected_digest != result.digest:
        result.findings.append(
            finding(
                "C019",
                f"the archive's digest is {result.digest}, not the expected {expected_digest}",
                file=str(source),
            )
        )
    if validate_after:
        from reprobridge_sdk.validation import validate

        with written:  # the tree digest takes the digests of the files just written
            result.findings.extend(validate(root).findings)
    return result


def _extract(
    tar: tarfile.TarFile, root: Path, written: WrittenFiles, *, max_files: int, max_bytes: int
) -> int:
    """Write the members under ``root``; the number of members (C017, C018 raised)."""
    files = 0
    total = 0
    links = LinkTree()
    seen: set[str] = set()
    made: set[str] = {""}  # the directories made, relative to ``root`` (strings: per member)
    base = os.fspath(root)
    for member in _members(tar):
        name = member.name
        parts = _parts(name)
        if parts is None:
            raise _unsafe("C017", f"unsafe member name {name!r}", file=name)
        rel = "/".join(parts)
        if rel in seen:
            raise _unsafe("C017", f"member {rel!r} occurs twice", file=rel)
        seen.add(rel)
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            if links.has(prefix):
                raise _unsafe("C017", f"member {rel!r} lies below a link", file=rel)
            seen.add(prefix + "/")
        files += 1
        if files > max_files:
            raise _unsafe("C018", f"the archive has more than {max_files} members")
        if member.isreg():
            total += member.size
            if total > max_bytes:
                raise _unsafe("C018", f"the archive holds more than {max_bytes} bytes")
        if member.issym():
            if rel + "/" in seen:
                raise _unsafe("C017", f"link {rel!r} replaces a directory of the archive", file=rel)
            links.add(parts, member.linkname)  # refused before it is written
        _write_member(tar, member, base, rel, made=made, written=written)
    return files


def _directory(base: str, rel: str, made: set[str]) -> None:
    """Make the directory ``rel`` under ``base`` (and its parents) unless this unpacking
    already did: a directory made stays one (no link may replace a directory of the archive)."""
    if rel not in made:
        Path(base, rel).mkdir(parents=True, exist_ok=True)
        made.add(rel)


def _write_member(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    base: str,
    rel: str,
    *,
    made: set[str],
    written: WrittenFiles,
) -> None:
    """Write one checked member at ``rel`` under ``base``: a directory, a file (hashed as it
    is written, for the tree digest) or a symbolic link."""
    target = f"{base}/{rel}"
    parent = rel.rpartition("/")[0]
    if member.isdir():
        _directory(base, rel, made)
    elif member.isreg():
        _directory(base, parent, made)
        handle = tar.extractfile(member)
        assert handle is not None
        with open(target, "xb") as out:  # noqa: PTH123 - a string path: once per member
            os.fchmod(out.fileno(), 0o755 if member.mode & 0o111 else 0o644)
            written.copy(handle, out)
    elif member.issym():
        _directory(base, parent, made)
        Path(target).symlink_to(member.linkname)
    elif member.islnk():
        msg = f"member {rel!r} is a hard link (to {member.linkname!r})"
        raise _unsafe("C017", msg, file=rel, hint=_HINTS["link"])
    else:
        raise _unsafe("C017", f"member {rel!r} is a device or special file", file=rel)


class _HashingReader(io.RawIOBase):
    """A read-only stream that hashes what is read (the uncompressed tar)."""

    def __init__(self, source: IO[bytes], digest: Any) -> None:
        self.source = source
        self.digest = digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.source.read(len(buffer))
        size = len(data)
        buffer[:size] = data
        self.digest.update(data)
        return size

    def drain(self) -> None:
        """Hash the rest of the stream (the tar's end-of-archive blocks and padding)."""
        while True:
            data = self.source.read(1 << 16)
            if not data:
                return
            self.digest.update(data)
