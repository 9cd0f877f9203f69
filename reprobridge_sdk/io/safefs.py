"""The safe file layer: every read and write of an artifact's or a run's files goes through it.

Why no library: none resolves paths below a root's descriptor with caps (os lacks openat2).

An artifact and its evidence are written by strangers. Reading or writing them must not leave
the directory they live in, hang, or read without bound. The rules, in the order they apply:

* **Containment.** A path under a *root* (the artifact directory or the run directory) is
  resolved one component at a time from a descriptor of the root: each directory is opened
  relative to the one before (``openat`` with ``O_NOFOLLOW | O_DIRECTORY``), then the last
  component; a component that is a symbolic link is read (``readlinkat``) and its target
  resolved the same way, from the root for an absolute target. ``..`` climbs back through the
  directories already opened; above the root it may only come back down along the root's own
  path. A link that leads out (however many hops) is refused with reason ``"escapes"``; a
  link that stays inside is followed; more than :data:`MAX_LINK_HOPS` links is a loop
  (``"unreadable"``). Since nothing is looked up by path again after it was checked, a
  directory swapped for a link between two steps is seen as the link it now is, never
  followed out of the root (no check-then-open window). The root itself is trusted.
* **Links where none are expected.** Evidence files (logs, outputs, records) are refused when
  they are links at all (``allow_links=False``, reason ``"link"``): a run writes regular
  files. Without a root (a venv's interpreter, a cache) links are followed and the resolved
  path is opened with ``O_NOFOLLOW``.
* **Regular files only.** Where a file is expected the open uses ``O_NONBLOCK`` (opening a
  FIFO never waits for a writer), then ``fstat`` must say *regular file*; a FIFO, socket,
  device or directory is ``"not-regular"``.
* **Size caps.** Each read states its limit (``max_bytes``); the size from ``fstat`` is
  checked before reading (a sparse 4 GiB file is refused without reading it) and at most
  ``max_bytes + 1`` bytes are ever read, so a file that grows while it is read is caught too
  (``"too-large"``). Callers turn the refusal into a finding with its code.
* **Deadlines.** Hashing evidence (:func:`reprobridge_sdk.digest.handle_sha256`) counts the
  bytes it reads against the cap whatever ``fstat`` said (``/proc/self/pagemap`` says 0 and
  reads for ever) and stops at its deadline (:data:`HASH_SECONDS`): ``"too-slow"``.
* **JSON depth.** :func:`load_json` refuses JSON nested deeper than its limit
  (``"too-deep"``): the decoder's own ``RecursionError`` on very deep input is caught, and the
  parsed value's depth is measured without recursion; :func:`check_json_depth` finds the
  offending byte of a text without parsing it.
* **Writes.** Temporary and ``.part`` files are created with ``O_CREAT | O_EXCL |
  O_NOFOLLOW`` (mode 0600 until placed) in the target's own directory, which is resolved
  (and made) inside the root like a read's path, then used by its descriptor; the final step
  is a rename, so a reader never sees half a file and a link planted at the target is
  replaced, never written through.

Reads and writes under a root hold against a process that swaps directories concurrently
(the hostile tests swap one in a tight loop): writes resolve their directory the same way and
create, rename and remove relative to its descriptor. This module imports nothing of the
SDK but its exception base, so the ground floor (:mod:`reprobridge_sdk.digest`) may use it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, finding

__all__ = [
    "HASH_SECONDS",
    "MAX_EVIDENCE_BYTES",
    "MAX_HASH_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_LINK_HOPS",
    "MAX_TEXT_BYTES",
    "OpenRoot",
    "UnsafeFileError",
    "UnsafeReason",
    "atomic_open",
    "atomic_write_bytes",
    "check_json_depth",
    "create_exclusive",
    "is_inside",
    "load_json",
    "loads_json",
    "open_regular",
    "read_bytes",
    "read_opened",
    "read_text",
    "refusal",
    "resolve_inside",
]

#: Largest text file read whole (a guide, a sample, a lock, a record): 64 MiB.
MAX_TEXT_BYTES = 64 * 1024 * 1024
#: Largest structured evidence file (JSON, CSV, YAML output or record) parsed whole: 256 MiB.
MAX_EVIDENCE_BYTES = 256 * 1024 * 1024
#: Largest single file hashed to check a declared digest (a lock, a patch, a data item):
#: 64 GiB. A sparse file claiming more is refused rather than read.
MAX_HASH_BYTES = 64 * 1024 * 1024 * 1024
#: Longest a single file's hashing may take before it is refused (``"too-slow"``): 30
#: minutes, the time of a 64 GiB file on a disk that reads 40 MB/s.
HASH_SECONDS = 1800.0
#: Deepest nesting of arrays and objects accepted in JSON evidence.
MAX_JSON_DEPTH = 256
#: Most symbolic links followed while resolving one path under a root (Linux's own limit).
MAX_LINK_HOPS = 40

UnsafeReason = Literal[
    "escapes", "link", "not-regular", "too-large", "too-deep", "too-slow", "unreadable"
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: Directories are opened only to look names up in them: ``O_PATH`` where it exists (search
#: permission is enough, as for a path lookup), else read-only.
_DIRECTORY = (
    getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
)
#: What ``openat`` says of a link met with ``O_NOFOLLOW`` (Linux: ELOOP for the last
#: component, ENOTDIR with ``O_DIRECTORY``; BSDs: EMLINK or EFTYPE).
_LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK, getattr(errno, "EFTYPE", errno.ELOOP)}


class UnsafeFileError(ArtifactError):
    """A file was refused by the safe file layer; ``reason`` says why, ``limit`` the cap."""

    def __init__(
        self,
        reason: UnsafeReason,
        path: str | os.PathLike[str],
        message: str,
        *,
        limit: int | None = None,
    ) -> None:
        super().__init__(message)
        self.reason: UnsafeReason = reason
        self.path = os.fspath(path)
        self.limit = limit
        self.findings = (refusal(self, file=self.path),)


#: The finding code of each refusal when an artifact's file is refused.
_REFUSAL_CODES: dict[str, str] = {
    "escapes": "F003",
    "link": "F003",
    "not-regular": "F009",
    "unreadable": "F009",
    "too-large": "F010",
    "too-deep": "F011",
    "too-slow": "F012",
}


def refusal(exc: UnsafeFileError, *, file: str = "", path: str = "") -> Finding:
    """The finding for a refused file: F003 a link out, F009 not a regular file, F010 over its
    size limit, F011 nested deeper than its depth limit, F012 read past its deadline."""
    hints = {
        "escapes": "keep every file the artifact names inside it; copy it in instead of linking",
        "link": "a run writes regular files; replace the link with the file",
        "too-large": f"the limit is {exc.limit} bytes",
        "too-deep": f"the limit is {exc.limit} levels of nesting",
        "too-slow": f"the limit is {exc.limit} seconds",
    }
    return finding(
        _REFUSAL_CODES[exc.reason], exc.message, file=file, path=path, hint=hints.get(exc.reason)
    )


def _real(path: str | os.PathLike[str]) -> Path:
    # os.path.realpath never raises on loops (Path.resolve does before 3.13).
    return Path(os.path.realpath(path))


def is_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True when ``path``, with every link followed, stays inside ``root`` (or is ``root``)."""
    real, base = _real(path), _real(root)
    return real == base or base in real.parents


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """``path`` (as it would be opened) resolved; refused when it leaves ``root``."""
    candidate = Path(path)
    real = _real(candidate)
    base = _real(root)
    if real != base and base not in real.parents:
        msg = f"{candidate} leads outside {root} (to {real})"
        raise UnsafeFileError("escapes", candidate, msg)
    return real


class OpenRoot:
    """A root opened once for several reads below it (the record, log and outputs of one run).

    The root is resolved (``realpath``) and opened when this is made, not at each read: every
    read given it as ``root`` walks from this descriptor, so the root is the
    directory it was then, even if its path is renamed or replaced meanwhile (the root is
    trusted, as for a path). Everything below it is resolved at each read as usual (from this
    descriptor, which a read never closes; :meth:`below` opens a directory below it). Raises
    like a read (``FileNotFoundError``, :class:`UnsafeFileError`) when the root cannot be
    opened. Close it (or use it as a context manager) when the reads are done.
    """

    __slots__ = ("base", "fd", "parts", "path", "spellings")

    def __init__(
        self, root: str | os.PathLike[str], *, base: str | None = None, fd: int | None = None
    ) -> None:
        """Resolve and open ``root``; or, from :meth:`below`, take its resolved ``base`` and
        the descriptor ``fd`` already opened there (owned from now on)."""
        self.path = os.fspath(root)
        self.base = os.path.realpath(root) if base is None else base
        if fd is None:
            try:
                fd = os.open(self.base, _DIRECTORY)
            except OSError as exc:
                raise _open_error(exc, Path(self.base), root) from None
        self.fd = fd
        #: The components of the resolved root, and the root's spellings a path below it may
        #: start with: made once, used by every read below it.
        self.parts = _parts(self.base)
        self.spellings = _spellings(self.path, self.base)

    def below(self, relative: str, path: str | os.PathLike[str]) -> OpenRoot:
        """The directory ``relative`` below this root (``/``-separated names, none empty,
        ``.`` or ``..``), opened as :class:`OpenRoot` of ``path`` (its spelling from the
        caller's side) would be, without resolving ``path`` again: each name opened from the
        directory before it (``O_NOFOLLOW``), starting from this root's descriptor. A link on
        the way is not followed: the open fails as for a missing directory
        (``FileNotFoundError``), or with :class:`UnsafeFileError` ``"link"``. The root of a
        run found below its attempt's, which was resolved once."""
        names = relative.split("/")
        if any(name in ("", ".", "..") for name in names):
            msg = f"not a plain relative path: {relative!r}"
            raise ValueError(msg)
        real = os.path.join(self.base, relative)  # noqa: PTH118 - the root's spelling, a str
        fd = self.fd
        try:
            for name in names:
                step = os.open(name, _DIRECTORY, dir_fd=fd)
                if fd != self.fd:
                    os.close(fd)
                fd = step
        except OSError as exc:
            if fd != self.fd:
                os.close(fd)
            raise _open_error(exc, Path(real), path) from None
        return OpenRoot(path, base=real, fd=fd if fd != self.fd else os.dup(fd))

    def __fspath__(self) -> str:
        return self.path

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> OpenRoot:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def open_regular(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int | None = None,
    allow_links: bool = True,
) -> io.FileIO:
    """Open a regular file for binary reading under the rules of this module.

    With ``root`` (a path, or an :class:`OpenRoot` opened once for several reads), the path is
    resolved component by component from a descriptor of the root (see the module docstring):
    links are followed only while they stay inside it, and with ``allow_links`` False a path
    that is itself a link is refused. Without ``root`` (files
    that are not an artifact's: a venv's interpreter, a cache) links are followed and the
    resolved path is opened with ``O_NOFOLLOW``. In every case the file must be a regular
    file. Raises :class:`UnsafeFileError`, or ``FileNotFoundError`` when it is missing
    (callers report a missing file with their own code).
    """
    target = Path(path)
    if isinstance(root, OpenRoot):
        fd = _open_beneath(root.path, target, allow_links=allow_links, opened=root)
    elif root is not None:
        fd = _open_beneath(root, target, allow_links=allow_links)
    else:
        if not allow_links and target.is_symlink():
            raise UnsafeFileError("link", target, f"{target} is a symbolic link")
        target = _real(target)
        try:
            fd = os.open(target, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
        except OSError as exc:
            raise _open_error(exc, target, path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            msg = f"{target} is not a regular file ({_kind(info.st_mode)})"
            raise UnsafeFileError("not-regular", target, msg)
        if max_bytes is not None and info.st_size > max_bytes:
            msg = f"{target} has {info.st_size} bytes; at most {max_bytes} are read"
            raise UnsafeFileError("too-large", target, msg, limit=max_bytes)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def _open_error(exc: OSError, target: str | Path, path: str | os.PathLike[str]) -> Exception:
    """The refusal (or ``FileNotFoundError``) for an ``open`` of ``target`` that failed."""
    if exc.errno == errno.ELOOP:
        return UnsafeFileError("link", target, f"{target} is a symbolic link")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
    return UnsafeFileError("unreadable", target, f"{target}: {exc.strerror}")


def _parts(path: str) -> list[str]:
    return [part for part in path.split(os.sep) if part not in ("", ".")]  # noqa: PTH206


def _spellings(root: str | os.PathLike[str], base: str) -> tuple[tuple[str, ...], ...]:
    """The components of ``root`` made absolute (``..`` folded), and of ``base`` (``root``
    resolved): the two spellings a path below the root starts with."""
    return Path(os.path.abspath(root)).parts, Path(base).parts  # noqa: PTH100 - ``..`` folded


def _relative_parts(
    root: str | os.PathLike[str],
    base: str,
    path: str | Path,
    spellings: tuple[tuple[str, ...], ...] | None = None,
) -> list[str]:
    """The components of ``path`` below ``root``, as written (no link followed).

    ``spellings``: :func:`_spellings` of the root, when the caller made them once.

    ``base`` is ``root`` resolved by the caller, once per open (never cached across calls:
    the root may change between them).

    ``path`` names the file either through the root as given or through its resolved
    spelling; a path that starts elsewhere (through another link to the root) is resolved
    once to find what it names, and that name is then resolved again from the root's
    descriptor like any other.
    """
    full = Path(path).absolute().parts  # as written: ``..`` kept, no link followed
    for prefix in spellings or _spellings(root, base):
        if full[: len(prefix)] == prefix:
            return list(full[len(prefix) :])
    real, base_path = _real(path), Path(base)
    if real != base_path and base_path not in real.parents:
        raise UnsafeFileError("escapes", path, f"{path} leads outside {root} (to {real})")
    return list(real.relative_to(base_path).parts)


def _open_beneath(
    root: str | os.PathLike[str],
    path: str | Path,
    *,
    allow_links: bool = True,
    directory: bool = False,
    create: bool = False,
    opened: OpenRoot | None = None,
) -> int:
    """A read-only descriptor of ``path``, every component resolved inside ``root``.

    With ``directory`` the path is a directory and the descriptor only serves to look names
    up in it (``O_PATH`` where it exists): the ``dir_fd`` of a write. With ``opened`` (the
    root's :class:`OpenRoot`) the root is neither resolved nor opened again: the walk starts
    from its descriptor (borrowed: never closed here). With ``create`` the root
    is made if missing, and a missing directory below it is made (``mkdirat``) and then opened
    like any other, so a link planted in its place meanwhile is resolved, not trusted.

    Linear in the number of components plus those of the links followed (at most
    :data:`MAX_LINK_HOPS` links, or directories made): one ``openat`` per directory, one
    ``readlinkat`` per link.
    """
    if create:
        Path(root).mkdir(parents=True, exist_ok=True)  # the root is trusted: made as asked
    if opened is None:
        base = os.path.realpath(root)
        root_parts = _parts(base)
        pending = deque(_relative_parts(root, base, path))
    else:  # the root's spellings, made once when it was opened
        base, root_parts = opened.base, opened.parts
        pending = deque(_relative_parts(root, base, path, opened.spellings))
    # an opened root's own descriptor is walked from, never closed here (no duplicate per read)
    borrowed = opened is not None
    try:
        if opened is None:
            root_fd = os.open(base, _DIRECTORY)
        elif opened.fd < 0:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))  # closed: as dup would say
        else:
            root_fd = opened.fd
    except OSError as exc:
        raise _open_error(exc, Path(base), path) from None
    stack = [root_fd]  # the directories opened, from the root down
    above = 0  # levels above the root a ``..`` climbed (only the root's own path leads back)
    hops = 0
    try:
        while pending:
            part = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                if above or len(stack) == 1:
                    above += 1
                else:
                    os.close(stack.pop())
                continue
            if above:
                if above > len(root_parts) or part != root_parts[len(root_parts) - above]:
                    raise UnsafeFileError("escapes", path, f"{path} leads outside {root}")
                above -= 1
                continue
            leaf = not pending and not directory
            flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC if leaf else _DIRECTORY
            try:
                fd = os.open(part, flags, dir_fd=stack[-1])
            except OSError as exc:
                if create and not leaf and exc.errno == errno.ENOENT:
                    hops += 1
                    if hops > MAX_LINK_HOPS:
                        msg = f"{path}: its directories keep disappearing"
                        raise UnsafeFileError("unreadable", path, msg) from None
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=stack[-1])
                    pending.appendleft(part)  # open what is there now, whatever it is
                    continue
                target = _link_target(exc, part, stack[-1])
                if target is None:
                    raise _open_error(exc, path, path) from None
                if leaf and not allow_links:
                    raise UnsafeFileError("link", path, f"{path} is a symbolic link") from None
                hops += 1
                if hops > MAX_LINK_HOPS:
                    msg = f"{path}: more than {MAX_LINK_HOPS} links (a loop)"
                    raise UnsafeFileError("unreadable", path, msg) from None
                if target.startswith(os.sep):
                    while len(stack) > 1:
                        os.close(stack.pop())
                    above = len(root_parts)
                pending.extendleft(reversed(target.split(os.sep)))  # noqa: PTH206
                continue
            if leaf:
                return fd
            stack.append(fd)
        if above:
            raise UnsafeFileError("escapes", path, f"{path} leads outside {root}")
        if directory:
            return os.dup(stack[0]) if borrowed and len(stack) == 1 else stack.pop()
        # the path ends on a directory (``..``, ``.`` or the root itself)
        return os.open(".", os.O_RDONLY | _NONBLOCK | _CLOEXEC, dir_fd=stack[-1])
    finally:
        for fd in stack[1:] if borrowed else stack:
            os.close(fd)


def _link_target(exc: OSError, name: str, dir_fd: int) -> str | None:
    """The target of ``name`` in ``dir_fd`` when ``exc`` came from meeting a link, else None."""
    if exc.errno not in _LINK_ERRNOS:
        return None
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:  # not a link: a file where a directory was expected, or gone since
        return None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
    allow_links: bool = True,
) -> bytes:
    """The content of a regular file, at most ``max_bytes`` (else ``"too-large"``)."""
    with open_regular(path, root=root, max_bytes=max_bytes, allow_links=allow_links) as handle:
        return read_opened(handle, max_bytes=max_bytes, name=path)


def read_opened(
    handle: io.RawIOBase | io.BufferedIOBase,
    *,
    max_bytes: int = MAX_TEXT_BYTES,
    name: str | os.PathLike[str] = "",
) -> bytes:
    """The rest of a file opened by :func:`open_regular` (from its offset), at most
    ``max_bytes`` (else ``"too-large"``, naming ``name``): for a caller that keeps the
    descriptor to read the file again, never reopening it by name."""
    # ask for the size fstat gives (plus one byte, to see growth), not the cap: a read
    # allocates what it asks for, and the cap is 64 MiB for a 100-byte file
    size = max(0, os.fstat(handle.fileno()).st_size - handle.tell())
    data = handle.read(min(size, max_bytes) + 1) or b""
    # read() of a raw file may return short, or the file grew; keep reading to the cap.
    chunks = [data]
    total = len(data)
    while data and total <= max_bytes:
        # what fstat promised is left, else growth in 64 KiB steps (never past the cap)
        data = handle.read(min(max(size - total, 1 << 16), max_bytes + 1 - total)) or b""
        chunks.append(data)
        total += len(data)
    if total > max_bytes:
        msg = f"{name} grew beyond {max_bytes} bytes while it was read"
        raise UnsafeFileError("too-large", name, msg, limit=max_bytes)
    return b"".join(chunks)


def read_text(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
    allow_links: bool = True,
    errors: str = "strict",
) -> str:
    """:func:`read_bytes` decoded as UTF-8 (``UnicodeDecodeError`` with ``errors="strict"``)."""
    raw = read_bytes(path, root=root, max_bytes=max_bytes, allow_links=allow_links)
    return raw.decode("utf-8", errors)


def check_json_depth(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> int | None:
    """The offset where JSON ``text`` first nests deeper than ``max_depth``, else ``None``.

    Brackets inside strings do not count; the scan is linear and never recurses.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return None
    depth = 0
    in_string = False
    escaped = False
    for offset, byte in enumerate(data):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > max_depth:
                return offset
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return None


def load_json(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int = MAX_EVIDENCE_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    allow_links: bool = True,
) -> Any:
    """Parse a JSON file under the size and depth caps (``ValueError`` for bad JSON)."""
    raw = read_bytes(path, root=root, max_bytes=max_bytes, allow_links=allow_links)
    return loads_json(raw, path=path, max_depth=max_depth)


def loads_json(raw: bytes, *, path: str | os.PathLike[str], max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse the bytes of a JSON file (``path`` names it in a refusal) under the depth cap, as
    :func:`load_json` does after reading it: for a caller that also needs the bytes (to hash
    the very content it parsed, without reading the file again)."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return json.loads(raw)  # cannot nest deeper than its number of brackets
    # ``path`` is formatted only in a refusal (a caller may name the file lazily)
    try:  # the C decoder stops with RecursionError (never a crash) past the recursion limit
        value = json.loads(raw)
    except RecursionError:
        msg = f"{path} nests deeper than {max_depth} levels"
        raise UnsafeFileError("too-deep", path, msg, limit=max_depth) from None
    if _depth_exceeds(value, max_depth):
        msg = f"{path} nests deeper than {max_depth} levels"
        raise UnsafeFileError("too-deep", path, msg, limit=max_depth)
    return value


def _depth_exceeds(value: Any, max_depth: int) -> bool:
    """Whether a parsed JSON value nests deeper than ``max_depth`` (level by level, no
    recursion, stops at the first level past the limit)."""
    level: list[Any] = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        deeper: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item
            deeper += [c for c in children if type(c) is dict or type(c) is list]
        level = deeper
    return False


def create_exclusive(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = 0o600,
    append: bool = False,
) -> int:
    """Create ``path`` with ``O_EXCL | O_NOFOLLOW``; a link or file already there is refused.

    The parent directory is created if needed. With ``root`` it is resolved (and made) one
    component at a time inside the root, and the file is created relative to its descriptor
    (a directory link that leads out is ``"escapes"``). Returns the open (write-only)
    descriptor. ``FileExistsError`` when something is already at ``path``.
    """
    target = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    if append:
        flags |= os.O_APPEND
    if root is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        return os.open(target, flags, mode)
    parent = _open_beneath(root, target.parent, directory=True, create=True)
    try:
        return os.open(target.name, flags, mode, dir_fd=parent)
    finally:
        os.close(parent)


def _temporary(directory: Path, name: str, dir_fd: int | None) -> tuple[int, str]:
    """An ``O_EXCL`` temporary file beside ``name``: its descriptor and its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for _ in range(100):
        candidate = f".{name}.{os.urandom(6).hex()}.tmp"
        where = candidate if dir_fd is not None else os.fspath(directory / candidate)
        with contextlib.suppress(FileExistsError):
            return os.open(where, flags, 0o600, dir_fd=dir_fd), candidate
    msg = f"cannot create a temporary file in {directory}"  # pragma: no cover
    raise UnsafeFileError("unreadable", directory, msg)  # pragma: no cover


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes | Iterator[bytes],
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = 0o644,
    durable: bool = True,
) -> None:
    """Write ``data`` (bytes, or an iterator of pieces written as they come) to ``path``
    atomically, through :func:`atomic_open`."""
    with atomic_open(path, root=root, mode=mode, durable=durable) as handle:
        if isinstance(data, bytes):
            handle.write(data)
        else:
            for chunk in data:
                handle.write(chunk)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = 0o644,
    durable: bool = True,
) -> Iterator[BinaryIO]:
    """A file to write that appears at ``path`` whole when the block ends without an error
    (``O_EXCL`` temporary beside it, fsync, rename). The one owner of atomic file writes.

    With ``root`` the directory is resolved (and made) one component at a time inside it and
    the temporary file is created, renamed and on failure removed relative to its descriptor:
    a directory link that leads out is refused (``"escapes"``), and a directory swapped for a
    link meanwhile cannot redirect the write. A link at ``path`` itself is replaced by the
    file, never followed. On any error (a full disk included) the temporary file is removed
    and ``path`` is as before.

    ``durable=False`` leaves out the fsync: the rename is still atomic for every reader and
    survives the writer's crash or ``kill -9`` (the data is in the kernel's page cache), but
    after a crash of the operating system the file may be missing or empty. Use it only for
    a file that a later durable write replaces and whose loss with the machine costs nothing.
    """
    target = Path(path)
    if root is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        parent = None
    else:
        parent = _open_beneath(root, target.parent, directory=True, create=True)
    try:
        fd, tmp = _temporary(target.parent, target.name, parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
                os.fchmod(handle.fileno(), mode)
            if parent is None:
                (target.parent / tmp).replace(target)
            else:
                os.replace(tmp, target.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                if parent is None:
                    (target.parent / tmp).unlink()
                else:
                    os.unlink(tmp, dir_fd=parent)
            raise
    finally:
        if parent is not None:
            os.close(parent)
