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
(``timeout`` seconds); the status line and the headers must each arrive within ``timeout``
seconds (D019). From the first byte of each, over every window of :data:`RATE_WINDOW`
seconds at least ``min_rate`` bytes must arrive, and the body of an item must end within a
deadline proportional to its declared size, or else to the cap ``max_size``
(``timeout + size / min_rate``); a slower transfer stops with D011 (D019 for the status line
and headers). A body longer than the declared size stops at that size with D012; without a
declared size it stops at ``max_size`` (:data:`DEFAULT_MAX_SIZE`, 1 GiB) with D018. The SHA-256
is computed as the body streams. Whatever stops a download removes its ``.part``. A redirect
may not change the scheme or leave HTTP(S) (D013). An item that declares neither a sha256
nor a size is downloaded only when the caller allows unverified items
(``allow_unverified``); otherwise nothing is placed (D014).
The ``.part`` file is created with ``O_EXCL | O_NOFOLLOW`` (a link or other special file
planted there is removed, never written through) in the destination's directory, which must
stay inside the artifact. Credentials in a URL (userinfo) never appear in a message.

This module owns the order of the work per item (verify, then acquire, then verify what
arrived before it is renamed into place); the checks of items in place are in
``_dataverify``, one HTTP(S) transfer within its bounds in ``_download``, the other schemes
in ``_schemes``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from reprobridge_sdk.env._artifact import EnvArtifact, load_environment
from reprobridge_sdk.env._dataverify import _check_file, _inside, _Locator, _verify_item
from reprobridge_sdk.env._download import (
    ATTEMPTS,
    DEFAULT_MAX_SIZE,
    DEFAULT_MIN_RATE,
    MAX_REDIRECTS,
    RATE_WINDOW,
    _download,
    _Failed,
    _progress_printer,
)
from reprobridge_sdk.env._schemes import SchemeFailed, fetch_scheme, hf_url
from reprobridge_sdk.env.hashing import DigestCache, default_cache
from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.env.venv import cache_root, file_lock
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import Finding, Severity
from reprobridge_sdk.model.environment import DataItem

__all__ = [
    "ATTEMPTS",
    "DEFAULT_MAX_SIZE",
    "DEFAULT_MIN_RATE",
    "MAX_REDIRECTS",
    "RATE_WINDOW",
    "DataResult",
    "fetch_data",
    "hf_url",
    "verify_data",
]


#: Hints of the bounded stops of a download.
_HINTS = {
    "D011": "a slow mirror can be allowed with a lower --min-rate",
    "D018": "declare the item's size (and sha256), or raise --max-size",
    "D019": "the server does not answer in time; try again later or another mirror",
}


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
    max_size: int = DEFAULT_MAX_SIZE,
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
    streamed: str | None = None  # the SHA-256 computed as the body streamed
    try:
        if scheme in {"http", "https"}:
            streamed = _download(
                url,
                part,
                size=item.size,
                timeout=timeout,
                progress=show,
                min_rate=min_rate,
                window=window,
                max_size=max_size,
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
        return "failed", [
            at(
                exc.code,
                f"{item.id}: {message}",
                pointer + "/source/url",
                hint=_HINTS.get(exc.code),
            )
        ]
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
    digest = streamed if streamed is not None else digests.sha256(part)
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
    max_size: int = DEFAULT_MAX_SIZE,
    allow_unverified: bool = False,
) -> DataResult:
    """Acquire every declared item (or those named) and place it at its destination.

    ``timeout`` bounds each connection and read and the arrival of the status line and of
    the headers, ``min_rate`` (bytes per second, over each ``rate_window`` seconds) the rate
    of each and, with the declared size, the whole transfer; ``max_size`` caps an item that
    declares no size; ``allow_unverified`` lets items without sha256 and size be placed.
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
                max_size=max_size,
                allow_unverified=allow_unverified,
            )
        result.findings.extend(found)
        {"fetched": result.fetched, "present": result.present, "user": result.needs_user}.get(
            state, []
        ).append(item.id)
    digests.save()
    result.findings.sort()
    return result
