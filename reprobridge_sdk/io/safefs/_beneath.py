"""Paths resolved below a root's descriptor, and the refusals of the safe file layer.

Why no library: none resolves paths below a root's descriptor with caps (os lacks openat2).
The rules are spec/security.md §15.1 ("Containment", "No check-then-open window").
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections import deque
from pathlib import Path
from typing import Literal

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, finding

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


def _within(real: Path, base: Path) -> bool:
    return real == base or base in real.parents


def is_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True when ``path``, with every link followed, stays inside ``root`` (or is ``root``)."""
    return _within(_real(path), _real(root))


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """``path`` (as it would be opened) resolved; refused when it leaves ``root``."""
    candidate = Path(path)
    real = _real(candidate)
    base = _real(root)
    if not _within(real, base):
        msg = f"{candidate} leads outside {root} (to {real})"
        raise UnsafeFileError("escapes", candidate, msg)
    return real


class OpenRoot:
    """A root opened once for several reads below it (the record, log and outputs of one run).

    Resolved and opened when made: every read given it as ``root`` walks from this descriptor
    (never closing it), so the root stays the directory it was then, even if its path is
    replaced meanwhile. Raises like a read when the root cannot be opened. Close it (or use it
    as a context manager) when the reads are done.
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
        """The directory ``relative`` below this root, as an :class:`OpenRoot` of ``path``.

        Each ``/``-separated name is opened from the one before with ``O_NOFOLLOW``, so
        ``path`` is not resolved again and a link on the way fails the open
        (``FileNotFoundError`` or :class:`UnsafeFileError` ``"link"``).
        """
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

    ``base`` is ``root`` resolved by the caller for this open; ``spellings`` its
    :func:`_spellings` when made once. A path that starts neither with the root as given nor
    with ``base`` (another link to the root) is resolved once to find what it names, which is
    then resolved again from the root's descriptor like any other.
    """
    # as written: ``..`` kept, no link followed
    full = (path if isinstance(path, Path) else Path(path)).absolute().parts
    for prefix in spellings or _spellings(root, base):
        if full[: len(prefix)] == prefix:
            return list(full[len(prefix) :])
    real, base_path = _real(path), Path(base)
    if not _within(real, base_path):
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
    root's :class:`OpenRoot`) the walk starts from its descriptor (borrowed: never closed
    here). With ``create`` the root is made if missing, and a missing directory below it is
    made (``mkdirat``) and then opened like any other, so a link planted in its place
    meanwhile is resolved, not trusted. Linear in the components plus those of the links
    followed: one ``openat`` per directory, one ``readlinkat`` per link.
    """
    if create:
        Path(root).mkdir(parents=True, exist_ok=True)  # the root is trusted: made as asked
    walk = _Walk(root, path, opened)
    try:
        return walk.run(allow_links=allow_links, directory=directory, create=create)
    finally:
        walk.close()


class _Walk:
    """One walk of a path's components from its root's descriptor (see :func:`_open_beneath`)."""

    __slots__ = ("above", "borrowed", "hops", "path", "pending", "root", "root_parts", "stack")

    def __init__(self, root: str | os.PathLike[str], path: str | Path, opened: OpenRoot | None):
        self.root, self.path = root, path
        if opened is None:
            base = os.path.realpath(root)
            self.root_parts = _parts(base)
            self.pending = deque(_relative_parts(root, base, path))
        else:  # the root's spellings, made once when it was opened
            base, self.root_parts = opened.base, opened.parts
            self.pending = deque(_relative_parts(root, base, path, opened.spellings))
        # an opened root's own descriptor is walked from, never closed here
        self.borrowed = opened is not None
        try:
            if opened is None:
                root_fd = os.open(base, _DIRECTORY)
            elif opened.fd < 0:
                raise OSError(errno.EBADF, os.strerror(errno.EBADF))  # closed: as dup would say
            else:
                root_fd = opened.fd
        except OSError as exc:
            raise _open_error(exc, Path(base), path) from None
        self.stack = [root_fd]  # the directories opened, from the root down
        self.above = 0  # levels above the root a ``..`` climbed (only its own path leads back)
        self.hops = 0  # links followed and directories made

    def run(self, *, allow_links: bool, directory: bool, create: bool) -> int:
        pending, stack = self.pending, self.stack
        while pending:
            part = pending.popleft()
            if part in ("", ".") or self._climb(part):
                continue
            leaf = not pending and not directory
            flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC if leaf else _DIRECTORY
            try:
                fd = os.open(part, flags, dir_fd=stack[-1])
            except OSError as exc:
                self._missed(exc, part, leaf=leaf, allow_links=allow_links, create=create)
                continue
            if leaf:
                return fd
            stack.append(fd)
        if self.above:
            raise UnsafeFileError("escapes", self.path, f"{self.path} leads outside {self.root}")
        if directory:
            return os.dup(stack[0]) if self.borrowed and len(stack) == 1 else stack.pop()
        # the path ends on a directory (``..``, ``.`` or the root itself)
        return os.open(".", os.O_RDONLY | _NONBLOCK | _CLOEXEC, dir_fd=stack[-1])

    def _climb(self, part: str) -> bool:
        """Take a ``..``, or a step back down the root's own path after climbing above it;
        False for a name to open."""
        if part == "..":
            if self.above or len(self.stack) == 1:
                self.above += 1
            else:
                os.close(self.stack.pop())
            return True
        if not self.above:
            return False
        parts = self.root_parts
        if self.above > len(parts) or part != parts[len(parts) - self.above]:
            raise UnsafeFileError("escapes", self.path, f"{self.path} leads outside {self.root}")
        self.above -= 1
        return True

    def _missed(
        self, exc: OSError, part: str, *, leaf: bool, allow_links: bool, create: bool
    ) -> None:
        """After ``part`` failed to open: make it (a missing directory with ``create``) or
        queue its link's target; else raise the refusal."""
        path, stack = self.path, self.stack
        if create and not leaf and exc.errno == errno.ENOENT:
            self._hop(f"{path}: its directories keep disappearing")
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=stack[-1])
            self.pending.appendleft(part)  # open what is there now, whatever it is
            return
        target = _link_target(exc, part, stack[-1])
        if target is None:
            raise _open_error(exc, path, path) from None
        if leaf and not allow_links:
            raise UnsafeFileError("link", path, f"{path} is a symbolic link") from None
        self._hop(f"{path}: more than {MAX_LINK_HOPS} links (a loop)")
        if target.startswith(os.sep):
            while len(stack) > 1:
                os.close(stack.pop())
            self.above = len(self.root_parts)
        self.pending.extendleft(reversed(target.split(os.sep)))  # noqa: PTH206

    def _hop(self, message: str) -> None:
        self.hops += 1
        if self.hops > MAX_LINK_HOPS:
            raise UnsafeFileError("unreadable", self.path, message) from None

    def close(self) -> None:
        for fd in self.stack[1:] if self.borrowed else self.stack:
            os.close(fd)


def _link_target(exc: OSError, name: str, dir_fd: int) -> str | None:
    """The target of ``name`` in ``dir_fd`` when ``exc`` came from meeting a link, else None."""
    if exc.errno not in _LINK_ERRNOS:
        return None
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:  # not a link: a file where a directory was expected, or gone since
        return None
