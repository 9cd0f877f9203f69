"""One HTTP(S) transfer of a data item into its ``.part`` file, within bounds.

Why no library: no HTTP client bounds each phase of a response by a deadline and a minimum rate.

Rules: ``spec/security.md#data-fetch`` (deadlines and rates D019/D011, sizes D012/D018,
redirects D013, retries and D005). :class:`_PhasedReader` keeps the deadlines at the socket;
a failure is raised as :class:`SchemeFailed` (code and message) for the caller's finding.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import io
import os
import selectors
import socket
import stat
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reprobridge_sdk.env._schemes import SchemeFailed, auth_header
from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.findings import terminal_text
from reprobridge_sdk.io import safefs

__all__ = ["ATTEMPTS", "DEFAULT_MAX_SIZE", "DEFAULT_MIN_RATE", "MAX_REDIRECTS", "RATE_WINDOW"]

#: Redirects followed per request.
MAX_REDIRECTS = 10
#: Attempts per download (a broken transfer resumes where it stopped).
ATTEMPTS = 4
_CHUNK = 1 << 20
#: Least average transfer rate (bytes per second) over each :data:`RATE_WINDOW`.
DEFAULT_MIN_RATE = 1024
#: Seconds over which the transfer rate is measured.
RATE_WINDOW = 30.0
#: Bytes at most of an item that declares no size (``--max-size``).
DEFAULT_MAX_SIZE = 1 << 30
_USER_AGENT = "reprobridge (+https://reprobridge.org)"


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def redirect_request(  # noqa: PLR0917 - the signature of the base class
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        old = req.full_url.split("://", 1)[0].lower()
        new = newurl.split("://", 1)[0].lower() if "://" in newurl else old
        if new != old or new not in {"http", "https"}:
            raise SchemeFailed(
                "D013",
                f"{redact_text(req.full_url)} redirects to {redact_text(newurl)}: "
                f"a redirect may not change the scheme ({old} to {new})",
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _progress_printer(label: str, total: int | None) -> Callable[[int], None]:
    stream = sys.stderr
    if not stream.isatty():
        return lambda done: None
    label = terminal_text(label)  # an item's id is the artifact's text
    last = [0.0]

    def show(done: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and (total is None or done < total):
            return
        last[0] = now
        if total:
            width = 30
            filled = int(width * done / total)
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r{label} [{bar}] {done / 2**20:.1f}/{total / 2**20:.1f} MiB"
        else:
            text = f"\r{label} {done / 2**20:.1f} MiB"
        stream.write(text)
        if total is not None and done >= total:
            stream.write("\n")
        stream.flush()

    return show


@dataclass
class _Bounds:
    """The limits of a fetch (see the module docstring), and of one item's transfer once its
    ``size`` is set and it is started."""

    timeout: float
    min_rate: float = DEFAULT_MIN_RATE
    window: float = RATE_WINDOW
    max_size: int = DEFAULT_MAX_SIZE
    size: int | None = None
    deadline: float | None = None

    def start(self) -> None:
        if self.min_rate > 0:
            expected = self.max_size if self.size is None else self.size
            self.deadline = time.monotonic() + self.timeout + expected / self.min_rate

    @property
    def cap(self) -> int:
        """Bytes the body may hold: the declared size, or else the cap."""
        return self.max_size if self.size is None else self.size


#: The phases of a response, in order, with the code of a phase that is too slow.
_PHASES = (("status line", "D019"), ("headers", "D019"), ("body", "D011"))


class _PhasedReader(io.RawIOBase):
    """The raw reader under ``http.client``'s response: deadlines and rates per phase.

    The phase moves on at the bytes that end it (the status line's LF, the blank line after
    the headers). Each ``recv`` waits at most until the phase's deadline, the end of the
    rate window or the read timeout, whichever comes first; a deadline passed, or a window
    that ends with fewer than ``min_rate * window`` bytes of an unfinished phase, raises
    :class:`SchemeFailed` (D019 for the status line and headers, D011 for the body). The read
    timeout alone raises ``TimeoutError`` (a broken transfer: the caller retries).
    """

    def __init__(self, sock: socket.socket, bounds: _Bounds, shown: str) -> None:
        self._sock = sock
        # The socket's own reader: the socket stays open while it is (http.client closes the
        # connection before the body is read); it never waits itself, the selector does.
        self._raw = sock.makefile("rb", buffering=0)
        self._ready = selectors.DefaultSelector()
        self._ready.register(sock, selectors.EVENT_READ)
        self._bounds = bounds
        self._shown = shown
        self._phase = 0
        self._line = 0  # bytes (CR aside) of the header line read so far
        self._begin(time.monotonic())

    def close(self) -> None:
        if not self.closed:
            self._ready.close()
            self._raw.close()
        super().close()

    def readable(self) -> bool:
        return True

    def _begin(self, now: float) -> None:
        self._started = now
        self._deadline = (
            self._bounds.deadline if self._phase == len(_PHASES) - 1 else now + self._bounds.timeout
        )
        self._window_start: float | None = None  # from the phase's first byte
        self._window_bytes = 0

    def _check(self, now: float) -> None:
        name, code = _PHASES[self._phase]
        bounds = self._bounds
        if self._deadline is not None and now >= self._deadline:
            waited = now - self._started
            raise SchemeFailed(code, f"{self._shown}: the {name} did not end within {waited:.0f} s")
        if self._window_start is None or now - self._window_start < bounds.window:
            return
        rate = self._window_bytes / (now - self._window_start)
        if bounds.min_rate > 0 and rate < bounds.min_rate:
            msg = (
                f"{self._shown}: the {name} came at {rate:.0f} B/s over the last "
                f"{now - self._window_start:.0f} s, below the minimum of {bounds.min_rate:g} B/s"
            )
            raise SchemeFailed(code, msg)
        self._window_start, self._window_bytes = now, 0

    def _wait(self, now: float) -> float:
        """Seconds the next ``recv`` may block: up to the next deadline of any kind."""
        limits = [self._bounds.timeout]
        if self._deadline is not None:
            limits.append(self._deadline - now)
        if self._window_start is not None:
            limits.append(self._window_start + self._bounds.window - now)
        return max(min(limits), 0.001)

    def readinto(self, buffer: Any) -> int:
        idle_since = time.monotonic()
        while True:
            now = time.monotonic()
            self._check(now)
            pending = getattr(self._sock, "pending", None)  # TLS: bytes decrypted already
            if (pending is not None and pending()) or self._ready.select(self._wait(now)):
                count = self._raw.readinto(buffer) or 0
                if self._phase == len(_PHASES) - 1:  # the body: only counted, never copied
                    if self._window_start is None:
                        self._window_start = time.monotonic()
                    self._window_bytes += count
                else:
                    self._account(memoryview(buffer)[:count].tobytes(), time.monotonic())
                return count
            if time.monotonic() - idle_since >= self._bounds.timeout:
                # nothing at all for the read timeout: a broken transfer, retried
                msg = f"no data for {self._bounds.timeout:g} s"
                raise TimeoutError(msg)

    def _account(self, data: bytes, now: float) -> None:
        """Count ``data`` in the rate of its phases and move to the phases it ends."""
        while data:
            if self._window_start is None:
                self._window_start = now
            if self._phase == len(_PHASES) - 1:
                self._window_bytes += len(data)
                return
            end = data.find(b"\n") if self._phase == 0 else self._blank_line(data)
            if end < 0:
                self._window_bytes += len(data)
                return
            self._window_bytes += end + 1
            data = data[end + 1 :]
            self._phase += 1
            self._line = 0
            self._begin(now)

    def _blank_line(self, data: bytes) -> int:
        """Where in ``data`` the LF of the blank line that ends the headers is, or -1."""
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            piece = data[start:end]
            if self._line + len(piece) - piece.count(b"\r") == 0:
                return end
            self._line = 0
            start = end + 1
        piece = data[start:]
        self._line += len(piece) - piece.count(b"\r")
        return -1


class _Socket:
    """A connected socket whose response is read by a :class:`_PhasedReader`."""

    def __init__(self, sock: socket.socket, bounds: _Bounds, shown: str) -> None:
        self._sock = sock
        self._bounds = bounds
        self._shown = shown

    def makefile(self, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode != "rb":  # http.client reads a response through "rb" only
            return getattr(self._sock, "makefile")(mode, *args, **kwargs)  # noqa: B009
        return io.BufferedReader(_PhasedReader(self._sock, self._bounds, self._shown))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _HTTPConnection(http.client.HTTPConnection):
    """A connection of one transfer: its response is read by the bounds it was given."""

    bounds: _Bounds
    shown: str
    sock: Any

    def connect(self) -> None:
        super().connect()  # for HTTPS, the TLS socket: what the phases are read from
        self.sock = _Socket(self.sock, self.bounds, self.shown)


class _HTTPSConnection(_HTTPConnection, http.client.HTTPSConnection):
    """The same over TLS: ``connect`` wraps the TLS socket that HTTPS's own connect makes."""


def _connection(kind: type[_HTTPConnection], bounds: _Bounds, shown: str) -> Callable[..., Any]:
    def make(*args: Any, **kwargs: Any) -> Any:
        made = kind(*args, **kwargs)
        made.bounds, made.shown = bounds, shown
        return made

    return make


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, bounds: _Bounds, shown: str) -> None:
        super().__init__()
        self._make = _connection(_HTTPConnection, bounds, shown)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._make, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, bounds: _Bounds, shown: str) -> None:
        super().__init__()
        self._make = _connection(_HTTPSConnection, bounds, shown)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._make, req, context=self._context)  # type: ignore[attr-defined]


def _open_part(part: Path, have: int) -> IO[bytes]:
    """The ``.part`` file: appended to when resuming a regular file, else created afresh
    with ``O_EXCL | O_NOFOLLOW`` (whatever else is there, a link included, is removed)."""
    if have:
        fd = os.open(part, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        return os.fdopen(fd, "ab")
    with contextlib.suppress(FileNotFoundError):
        part.unlink()
    fd = safefs.create_exclusive(part, mode=0o644)
    return os.fdopen(fd, "wb")


def _part_size(part: Path) -> int:
    """Bytes already in a regular ``.part``; anything that is not one is removed."""
    try:
        info = part.lstat()
    except FileNotFoundError:
        return 0
    if not stat.S_ISREG(info.st_mode):
        part.unlink()
        return 0
    return info.st_size


def _download(url: str, part: Path, bounds: _Bounds, progress: Callable[[int], None]) -> str:
    """Download ``url`` into ``part`` within ``bounds`` (an item's, started here); the SHA-256
    of what it holds.

    Whatever stops the download removes ``part``; a broken transfer resumes from what the
    ``.part`` already holds (hashed first), within this call's attempts.
    """
    shown = redact_text(url)
    bounds.start()
    opener = urllib.request.build_opener(
        _Redirects(), _HTTPHandler(bounds, shown), _HTTPSHandler(bounds, shown)
    )
    try:
        return _attempts(opener, url, part, bounds, progress, shown)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def _attempts(  # noqa: PLR0917 - private helper
    opener: urllib.request.OpenerDirector,
    url: str,
    part: Path,
    bounds: _Bounds,
    progress: Callable[[int], None],
    shown: str,
) -> str:
    authorization = auth_header(url)
    size = bounds.size
    last_error = ""
    for attempt in range(ATTEMPTS):
        have = _part_size(part)
        if have > bounds.cap:
            part.unlink()
            have = 0
        if size is not None and have == size:
            return _hash_part(part)
        request = _request(url, authorization, have)
        try:
            with opener.open(request, timeout=bounds.timeout) as response:
                if have and response.status != 206:
                    have = 0  # the server ignored the range: start over
                digest = _rehash(part) if have else hashlib.sha256()
                with _open_part(part, have) as handle:
                    _copy(response, handle, have, digest, progress, bounds, shown)
                    handle.flush()
                    os.fsync(handle.fileno())
            length = part.stat().st_size
            if size is None or length >= size:
                return digest.hexdigest()
            last_error = f"transfer ended at {length} of {size} bytes"
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:
                return _hash_part(part)
            if exc.code in {408, 429} or exc.code >= 500:
                last_error = f"HTTP {exc.code} {exc.reason}"
            else:
                raise SchemeFailed("D005", f"HTTP {exc.code} {exc.reason} for {shown}") from exc
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, SchemeFailed):  # raised by the redirect handler, wrapped
                raise reason from None
            last_error = redact_text(f"{type(exc).__name__}: {reason}")
        time.sleep(min(0.2 * 2**attempt, 2.0))
    raise SchemeFailed("D005", f"{shown}: {last_error} (after {ATTEMPTS} attempts)")


def _request(url: str, authorization: str | None, have: int) -> urllib.request.Request:
    """The GET of ``url``, resuming after the ``have`` bytes already on disk."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})  # noqa: S310
    if authorization is not None:  # to this host only: not copied onto a redirect
        request.add_unredirected_header("Authorization", authorization)
    if have:
        request.add_header("Range", f"bytes={have}-")
    return request


def _rehash(part: Path) -> Any:
    """A SHA-256 fed with what the ``.part`` holds (to resume hashing where it stops)."""
    digest = hashlib.sha256()
    with part.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest


def _hash_part(part: Path) -> str:
    return str(_rehash(part).hexdigest())


def _copy(  # noqa: PLR0917 - private helper
    response: http.client.HTTPResponse,
    handle: IO[bytes],
    start: int,
    digest: Any,
    progress: Callable[[int], None],
    bounds: _Bounds,
    shown: str,
) -> None:
    """Copy and hash the body; stop past the declared size (D012) or the cap (D018).

    The deadline and the minimum rate are kept by the reader under ``response``
    (:class:`_PhasedReader`).
    """
    done = start
    cap = bounds.cap
    while True:
        chunk = response.read1(min(_CHUNK, cap - done + 1))
        if not chunk:
            return
        if done + len(chunk) > cap:
            if bounds.size is not None:
                msg = f"{shown} sends more than the declared {bounds.size} bytes; stopped there"
                raise SchemeFailed("D012", msg)
            msg = (
                f"{shown} sends more than {cap} bytes and the item declares no size; stopped there"
            )
            raise SchemeFailed("D018", msg)
        handle.write(chunk)
        digest.update(chunk)
        done += len(chunk)
        progress(done)
