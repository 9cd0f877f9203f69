"""Data and checkpoints: acquire and verify the items of ``environment.data`` (spec ``data``).

* ``url`` items are downloaded over HTTP(S) into ``<destination>.part`` beside the
  destination, resumed with a ``Range`` request when a transfer breaks, verified (size,
  SHA-256) and only then renamed into place: a destination holds a verified file or nothing.
  Redirects are followed (at most :data:`MAX_REDIRECTS`). ``hf://`` URLs are mapped to the
  Hugging Face Hub's HTTPS file URLs (``$HF_ENDPOINT``, ``$HF_TOKEN``); ``.netrc`` credentials
  are sent to their own host. ``s3://`` and ``gs://`` go through fsspec (extras ``s3`` and
  ``gcs``), ``x-`` schemes (format 1.1) through plugins (:mod:`reprobridge_sdk.env._schemes`:
  D015 when none is installed, D016 when it fails); any other scheme is D007.
* ``gated`` and ``manual`` items are never downloaded: the finding carries the item's
  instructions; once the user has placed the file, it is verified like any other.
* ``package`` items are found among the files of the installed distribution (by size and
  SHA-256); ``codebase`` items are verified in place in the refined code.

Every destination must stay inside the artifact (D004). Findings are of family ``D``.

Bounds (spec ``security.md#data-fetch``). Each connection and each read has a timeout
(``timeout`` seconds). Over every window of :data:`RATE_WINDOW` seconds at least
``min_rate`` bytes must arrive, and the whole transfer of an item must end within a deadline
proportional to its declared size (``timeout + size / min_rate``); a slower transfer stops
with D011 and its ``.part`` is removed. A body longer than the declared size stops at that
size with D012 (the ``.part`` is removed). A redirect may not change the scheme or leave
HTTP(S) (D013). An item that declares neither a sha256 nor a size is downloaded only when the
caller allows unverified items (``allow_unverified``); otherwise nothing is placed (D014).
The ``.part`` file is created with ``O_EXCL | O_NOFOLLOW`` (a link or other special file
planted there is removed, never written through) in the destination's directory, which must
stay inside the artifact. Credentials in a URL (userinfo) never appear in a message.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from reprobridge_sdk.env._artifact import EnvArtifact, load_environment
from reprobridge_sdk.env._schemes import SchemeFailed, auth_header, fetch_scheme, hf_url
from reprobridge_sdk.env.hashing import DigestCache, default_cache
from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.env.venv import cache_root, file_lock
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model.environment import DataItem

__all__ = [
    "DEFAULT_MIN_RATE",
    "MAX_REDIRECTS",
    "RATE_WINDOW",
    "DataResult",
    "fetch_data",
    "hf_url",
    "verify_data",
]

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

#: Lists the files of a distribution of another interpreter: absolute path and size.
_PACKAGE_FILES = r"""
import json, sys
from importlib import metadata
try:
    dist = metadata.distribution(sys.argv[1])
except metadata.PackageNotFoundError:
    print("null"); raise SystemExit
files = []
for f in dist.files or []:
    p = f.locate()
    try:
        files.append([str(p), p.stat().st_size])
    except OSError:
        pass
print(json.dumps({"version": dist.version, "files": files}))
"""


@dataclass
class DataResult:
    """The outcome of :func:`fetch_data` or :func:`verify_data`."""

    findings: list[Finding] = field(default_factory=list)
    #: Items downloaded by this call.
    fetched: list[str] = field(default_factory=list)
    #: Items already present and verified (nothing to do).
    present: list[str] = field(default_factory=list)
    #: Gated or manual items the user must obtain.
    needs_user: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)


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


def _items(art: EnvArtifact, wanted: Sequence[str]) -> list[tuple[int, DataItem]]:
    items = list(enumerate(art.environment.data))
    if not wanted:
        return items
    known = {item.id for _, item in items}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        msg = f"no data item {', '.join(map(repr, unknown))}; declared: {', '.join(sorted(known))}"
        raise UsageError(msg)
    return [(i, item) for i, item in items if item.id in wanted]


class _Locator:
    def __init__(self, art: EnvArtifact) -> None:
        self.art = art

    def __call__(self, code: str, message: str, pointer: str, hint: str | None = None) -> Finding:
        pointer = self.art.pointer(pointer)  # items set aside shift indices (newer minor)
        line, col = self.art.document.locate(pointer)
        return finding(code, message, path=pointer, file="rra.yaml", line=line, col=col, hint=hint)


def _inside(root: Path, relative: str) -> Path | None:
    """``root/relative`` if it stays inside ``root`` (also through links), else None."""
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or "\\" in relative:
        return None
    path = root.joinpath(*pure.parts)
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            return None
    except OSError:
        return None
    return path


def _check_file(
    item: DataItem,
    path: Path,
    pointer: str,
    at: _Locator,
    digests: DigestCache,
) -> list[Finding]:
    """D001-D003 and D009 for a file that should be at ``path``."""
    if not path.is_file():
        hint = item.instructions if item.access != "public" else "run 'reprobridge data fetch'"
        return [at("D001", f"{item.id}: {path.name} is missing", pointer, hint)]
    size = path.stat().st_size
    if item.size is not None and size != item.size:
        return [
            at(
                "D003",
                f"{item.id}: {size} bytes, the manifest declares {item.size}",
                pointer + "/size",
            )
        ]
    if item.sha256 is None:
        return [at("D009", f"{item.id} declares no sha256", pointer, "add its sha256")]
    digest = digests.sha256(path)
    if digest != item.sha256:
        return [
            at(
                "D002",
                f"{item.id}: SHA-256 {digest}, the manifest declares {item.sha256}",
                pointer + "/sha256",
            )
        ]
    return []


def _package_files(package: str, python: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    proc = subprocess.run(
        [str(python or sys.executable), "-I", "-c", _PACKAGE_FILES, package],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if proc.returncode != 0:
        return None
    data = json.loads(proc.stdout)
    return data if isinstance(data, dict) else None


def _check_package(
    item: DataItem,
    pointer: str,
    at: _Locator,
    digests: DigestCache,
    python: str | os.PathLike[str] | None,
) -> list[Finding]:
    package = item.source.package
    assert package is not None
    info = _package_files(package, python)
    if info is None:
        return [
            at(
                "D008",
                f"{item.id}: the distribution {package!r} is not installed",
                pointer + "/source/package",
                "build the environment ('reprobridge env create') and verify with its Python",
            )
        ]
    if item.sha256 is None:
        return [at("D009", f"{item.id} declares no sha256", pointer)]
    candidates = [
        Path(path) for path, size in info["files"] if item.size is None or size == item.size
    ]
    if item.sha256 in digests.sha256_many(candidates):
        return []
    return [
        at(
            "D008",
            f"{item.id}: {package} {info['version']} ships no file with SHA-256 {item.sha256}",
            pointer + "/sha256",
        )
    ]


def _refined_root(art: EnvArtifact) -> Path:
    data = art.document.data
    refined = (data.get("codebase") or {}).get("refined") or {}
    if isinstance(refined, dict) and refined.get("kind") == "directory" and refined.get("path"):
        inside = _inside(art.root, str(refined["path"]))
        if inside is not None:
            return inside
    return art.root


def _verify_item(  # noqa: PLR0917 - private helper
    art: EnvArtifact,
    index: int,
    item: DataItem,
    at: _Locator,
    digests: DigestCache,
    python: str | os.PathLike[str] | None,
) -> list[Finding]:
    pointer = f"/environment/data/{index}"
    source = item.source
    if source.package is not None:
        return _check_package(item, pointer, at, digests, python)
    if source.codebase is not None:
        path = _inside(_refined_root(art), source.codebase)
        if path is None:
            return [
                at(
                    "D004",
                    f"{item.id}: {source.codebase!r} leads outside the refined code",
                    pointer + "/source/codebase",
                )
            ]
        if path.is_dir():
            return []  # a directory of the refined code: covered by the tree digest
        return _check_file(item, path, pointer, at, digests)
    if item.destination is None:
        return [at("D010", f"{item.id} declares no destination", pointer)]
    path = _inside(art.root, item.destination)
    if path is None:
        return [
            at(
                "D004",
                f"{item.id}: destination {item.destination!r} leads outside the artifact",
                pointer + "/destination",
            )
        ]
    return _check_file(item, path, pointer, at, digests)


def verify_data(
    artifact_dir: str | os.PathLike[str],
    items: Sequence[str] = (),
    *,
    python: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> DataResult:
    """Check every declared item (or those named) on disk; ``python`` is the interpreter whose
    installed distributions hold ``package`` items (default: the running one)."""
    art = load_environment(artifact_dir)
    at = _Locator(art)
    digests = default_cache(cache_dir)
    result = DataResult()
    for index, item in _items(art, items):
        found = _verify_item(art, index, item, at, digests, python)
        result.findings.extend(found)
        if not any(f.severity is Severity.ERROR for f in found):
            result.present.append(item.id)
    digests.save()
    result.findings.sort()
    return result


# ------------------------------------------------------------------------------- download


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


def _fetch_item(
    art: EnvArtifact,
    index: int,
    item: DataItem,
    at: _Locator,
    digests: DigestCache,
    *,
    timeout: float,
    show_progress: bool,
    min_rate: float = DEFAULT_MIN_RATE,
    window: float = RATE_WINDOW,
    allow_unverified: bool = False,
) -> tuple[str, list[Finding]]:
    """Returns ``(state, findings)`` with state ``fetched``, ``present``, ``user`` or
    ``failed``."""
    pointer = f"/environment/data/{index}"
    url = item.source.url
    if url is None:  # package and codebase items come with the environment or the code
        found = _verify_item(art, index, item, at, digests, None)
        failed = any(f.severity is Severity.ERROR for f in found)
        return ("failed" if failed else "present"), found
    if item.destination is None:
        return "failed", [at("D010", f"{item.id} declares no destination", pointer)]
    dest = _inside(art.root, item.destination)
    if dest is None:
        return "failed", [
            at(
                "D004",
                f"{item.id}: destination {item.destination!r} leads outside the artifact",
                pointer + "/destination",
            )
        ]
    if dest.is_file():
        found = _check_file(item, dest, pointer, at, digests)
        if not any(f.severity is Severity.ERROR for f in found):
            return "present", found
    if item.access != "public":
        instructions = item.instructions or "see the artifact's guide"
        return "user", [
            at(
                "D006",
                f"{item.id} is {item.access}: obtain it yourself and place it at "
                f"{item.destination}; {instructions}",
                pointer + "/access",
                hint=instructions,
            )
        ]
    if item.sha256 is None and item.size is None and not allow_unverified:
        return "failed", [
            at(
                "D014",
                f"{item.id} declares neither a sha256 nor a size: nothing can verify what "
                "would be placed, so it is not downloaded",
                pointer,
                hint="declare its sha256 (and size), or fetch with --allow-unverified",
            )
        ]
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "hf":
        try:
            url = hf_url(url)
        except ValueError as exc:
            return "failed", [at("D007", f"{item.id}: {exc}", pointer + "/source/url")]
        scheme = url.split("://", 1)[0].lower()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if _inside(art.root, item.destination) is None:  # a directory link planted meanwhile
        return "failed", [at("D004", f"{item.id}: destination leads outside the artifact", pointer)]
    part = dest.with_name(f".{dest.name}.part")
    show = _progress_printer(item.id, item.size) if show_progress else (lambda done: None)
    try:
        if scheme in {"http", "https"}:
            _download(
                url,
                part,
                size=item.size,
                timeout=timeout,
                progress=show,
                min_rate=min_rate,
                window=window,
            )
        else:
            part.unlink(missing_ok=True)  # other schemes do not resume
            deadline = None
            if item.size is not None and min_rate > 0:
                deadline = timeout + item.size / min_rate
            fetch_scheme(
                scheme,
                url,
                part,
                timeout=timeout,
                size=item.size,
                sha256=item.sha256,
                deadline=deadline,
            )
            if not part.is_file():
                raise SchemeFailed("D005", f"{url}: the {scheme}:// source wrote no file")
    except _Failed as exc:
        message = redact_text(exc.message)
        return "failed", [at(exc.code, f"{item.id}: {message}", pointer + "/source/url")]
    except SchemeFailed as exc:
        part.unlink(missing_ok=True)  # whatever a failed scheme left behind
        hint = exc.hint
        if exc.code == "D007":
            hint = f"{hint}; place it at {item.destination}"
        return "failed", [
            at(
                exc.code,
                f"{item.id}: {redact_text(exc.message)}",
                pointer + "/source/url",
                hint=hint,
            )
        ]
    size = part.stat().st_size
    if item.size is not None and size != item.size:
        part.unlink()
        return "failed", [
            at(
                "D003",
                f"{item.id}: downloaded {size} bytes, the manifest declares {item.size}",
                pointer + "/size",
            )
        ]
    findings: list[Finding] = []
    digest = digests.sha256(part)
    if item.sha256 is None:
        findings.append(at("D009", f"{item.id} declares no sha256", pointer))
    elif digest != item.sha256:
        part.unlink()
        return "failed", [
            at(
                "D002",
                f"{item.id}: downloaded SHA-256 {digest}, the manifest declares "
                f"{item.sha256}; nothing was placed",
                pointer + "/sha256",
            )
        ]
    part.replace(dest)
    with contextlib.suppress(OSError):  # a renamed file keeps size, mtime and inode
        digests.remember(dest, digest, dest.stat())
    return "fetched", findings


def fetch_data(
    artifact_dir: str | os.PathLike[str],
    items: Sequence[str] = (),
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    progress: bool = False,
    min_rate: float = DEFAULT_MIN_RATE,
    rate_window: float = RATE_WINDOW,
    allow_unverified: bool = False,
) -> DataResult:
    """Acquire every declared item (or those named) and place it at its destination.

    ``timeout`` bounds each connection and read, ``min_rate`` (bytes per second, over each
    ``rate_window`` seconds) the transfer rate and, with the declared size, the whole
    transfer; ``allow_unverified`` lets items without sha256 and size be placed.
    """
    art = load_environment(artifact_dir)
    at = _Locator(art)
    digests = default_cache(cache_dir)
    result = DataResult()
    locks = cache_root(cache_dir) / "locks"
    for index, item in _items(art, items):
        # Concurrent fetchers of one destination take turns: the second finds the file there.
        key = hashlib.sha256(str(art.root.resolve() / (item.destination or item.id)).encode())
        with file_lock(locks / f"data-{key.hexdigest()[:32]}.lock"):
            state, found = _fetch_item(
                art,
                index,
                item,
                at,
                digests,
                timeout=timeout,
                show_progress=progress,
                min_rate=min_rate,
                window=rate_window,
                allow_unverified=allow_unverified,
            )
        result.findings.extend(found)
        {"fetched": result.fetched, "present": result.present, "user": result.needs_user}.get(
            state, []
        ).append(item.id)
    digests.save()
    result.findings.sort()
    return result
