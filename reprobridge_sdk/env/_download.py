"""One HTTP(S) transfer of a data item into its ``.part`` file, within bounds.

Rules (spec ``security.md#data-fetch``): every connection and read has a timeout; at least
``min_rate`` bytes must arrive over each ``window`` seconds and the whole transfer must end
by ``timeout + size / min_rate`` (D011); a body longer than the declared size stops at that
size (D012); a redirect may not change the scheme or leave HTTP(S) (D013), and at most
:data:`MAX_REDIRECTS` are followed. A broken transfer resumes with a ``Range`` request, at most
:data:`ATTEMPTS` attempts in all, backing off between them; 408, 429 and 5xx are retried,
another HTTP error is D005 at once, as is the last attempt's failure. The ``.part`` is created
with ``O_EXCL | O_NOFOLLOW`` (a link or other special file there is removed, never written
through) and removed on every bounded stop. An ``Authorization`` header goes to the URL's own
host only, never onto a redirect; credentials in a URL never appear in a message. A failure is
raised as :class:`_Failed` (a code and a message); the caller turns it into a finding.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import stat
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reprobridge_sdk.env._schemes import auth_header
from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.io import safefs

__all__ = ["ATTEMPTS", "DEFAULT_MIN_RATE", "MAX_REDIRECTS", "RATE_WINDOW"]

#: Redirects followed per request.
MAX_REDIRECTS = 10
#: Attempts per download (a broken transfer resumes where it stopped).
ATTEMPTS = 4
_CHUNK = 1 << 20
#: Least average transfer rate (bytes per second) over each :data:`RATE_WINDOW`.
DEFAULT_MIN_RATE = 1024
#: Seconds over which the transfer rate is measured.
RATE_WINDOW = 30.0
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
            raise _Failed(
                "D013",
                f"{redact_text(req.full_url)} redirects to {redact_text(newurl)}: "
                f"a redirect may not change the scheme ({old} to {new})",
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Failed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _progress_printer(label: str, total: int | None) -> Callable[[int], None]:
    stream = sys.stderr
    if not stream.isatty():
        return lambda done: None
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
    """The limits of one item's transfer (see the module docstring)."""

    size: int | None
    timeout: float
    min_rate: float
    window: float
    deadline: float | None = None

    def start(self) -> None:
        if self.size is not None and self.min_rate > 0:
            self.deadline = time.monotonic() + self.timeout + self.size / self.min_rate


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


def _download(
    url: str,
    part: Path,
    *,
    size: int | None,
    timeout: float,
    progress: Callable[[int], None],
    min_rate: float = DEFAULT_MIN_RATE,
    window: float = RATE_WINDOW,
) -> None:
    """Download ``url`` into ``part``, resuming what is already there, within the bounds."""
    opener = urllib.request.build_opener(_Redirects())
    authorization = auth_header(url)
    shown = redact_text(url)
    bounds = _Bounds(size=size, timeout=timeout, min_rate=min_rate, window=window)
    bounds.start()
    last_error = ""
    for attempt in range(ATTEMPTS):
        have = _part_size(part)
        if size is not None and have == size:
            return
        if size is not None and have > size:
            part.unlink()
            have = 0
        request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})  # noqa: S310
        if authorization is not None:  # to this host only: not copied onto a redirect
            request.add_unredirected_header("Authorization", authorization)
        if have:
            request.add_header("Range", f"bytes={have}-")
        try:
            with opener.open(request, timeout=timeout) as response:
                status = response.status
                if have and status != 206:
                    have = 0  # the server ignored the range: start over
                with _open_part(part, have) as handle:
                    _copy(response, handle, have, progress, bounds, shown)
                    handle.flush()
                    os.fsync(handle.fileno())
            length = part.stat().st_size
            if size is None or length >= size:
                return
            last_error = f"transfer ended at {length} of {size} bytes"
        except _Failed:
            part.unlink(missing_ok=True)
            raise
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:  # nothing left to send: the part is complete
                return
            if exc.code in {408, 429} or exc.code >= 500:
                last_error = f"HTTP {exc.code} {exc.reason}"
            else:
                raise _Failed("D005", f"HTTP {exc.code} {exc.reason} for {shown}") from exc
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, _Failed):  # raised by the redirect handler, wrapped
                part.unlink(missing_ok=True)
                raise reason from None
            last_error = redact_text(f"{type(exc).__name__}: {reason}")
        time.sleep(min(0.2 * 2**attempt, 2.0))
    raise _Failed("D005", f"{shown}: {last_error} (after {ATTEMPTS} attempts)")


def _copy(  # noqa: PLR0917 - private helper
    response: IO[bytes],
    handle: IO[bytes],
    start: int,
    progress: Callable[[int], None],
    bounds: _Bounds,
    shown: str,
) -> None:
    """Copy the body; stop at the declared size (D012), below the rate or past the deadline
    (D011)."""
    done = start
    window_start, window_bytes = time.monotonic(), 0
    while True:
        want = _CHUNK if bounds.size is None else min(_CHUNK, bounds.size - done + 1)
        chunk = response.read1(want) if hasattr(response, "read1") else response.read(want)
        if not chunk:
            return
        if bounds.size is not None and done + len(chunk) > bounds.size:
            msg = f"{shown} sends more than the declared {bounds.size} bytes; stopped there"
            raise _Failed("D012", msg)
        handle.write(chunk)
        done += len(chunk)
        window_bytes += len(chunk)
        progress(done)
        now = time.monotonic()
        if bounds.deadline is not None and now > bounds.deadline:
            msg = (
                f"{shown}: {done} of {bounds.size} bytes after the deadline of "
                f"{bounds.timeout:g} s + size / {bounds.min_rate:g} B/s"
            )
            raise _Failed("D011", msg)
        if now - window_start >= bounds.window:
            rate = window_bytes / (now - window_start)
            if bounds.min_rate > 0 and rate < bounds.min_rate:
                msg = (
                    f"{shown}: {rate:.0f} B/s over the last {now - window_start:.0f} s, "
                    f"below the minimum of {bounds.min_rate:g} B/s"
                )
                raise _Failed("D011", msg)
            window_start, window_bytes = now, 0
