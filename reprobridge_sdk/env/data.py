"""Data and checkpoints: acquire and verify the items of ``environment.data``.

A destination holds a verified file or nothing: a download goes to a ``.part`` file beside
it, bounded in time and size, and is renamed into place only once its size and SHA-256
match. This module owns the order of the work per item (verify, acquire, verify what
arrived); the checks of items in place are in ``_dataverify``, one HTTP(S) transfer in
``_download``, the other schemes in ``_schemes``. Spec: ``spec/manifest.md#data`` (the items),
``spec/security.md#data-fetch`` (the bounds and findings of a download).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from reprobridge_sdk.env._artifact import EnvArtifact, load_environment
from reprobridge_sdk.env._dataverify import (
    _check_file,
    _destination,
    _inside,
    _Locator,
    _verify_item,
)
from reprobridge_sdk.env._download import (
    ATTEMPTS,
    DEFAULT_MAX_SIZE,
    DEFAULT_MIN_RATE,
    MAX_REDIRECTS,
    RATE_WINDOW,
    _Bounds,
    _download,
    _progress_printer,
)
from reprobridge_sdk.env._schemes import SchemeFailed, fetch_scheme, hf_url
from reprobridge_sdk.env.hashing import DigestCache, default_cache
from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.env.venv import cache_root
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import Finding, Severity
from reprobridge_sdk.io.filelock import file_lock
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
    limits: _Bounds,
    show_progress: bool,
    allow_unverified: bool,
) -> tuple[str, list[Finding]]:
    """Returns ``(state, findings)`` with state ``fetched``, ``present``, ``user`` or
    ``failed``."""
    pointer = f"/environment/data/{index}"
    url = item.source.url
    if url is None:  # package and codebase items come with the environment or the code
        found = _verify_item(art, index, item, at, digests, None)
        failed = any(f.severity is Severity.ERROR for f in found)
        return ("failed" if failed else "present"), found
    dest, refused = _destination(art, item, at, pointer)
    if dest is None:
        return "failed", refused
    settled = _settled(item, dest, at, digests, pointer, allow_unverified=allow_unverified)
    if settled is not None:
        return settled
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "hf":
        try:
            url = hf_url(url)
        except ValueError as exc:
            return "failed", [at("D007", f"{item.id}: {exc}", pointer + "/source/url")]
        scheme = url.split("://", 1)[0].lower()
    dest.parent.mkdir(parents=True, exist_ok=True)
    assert item.destination is not None  # an item without one has no ``dest``
    if _inside(art.root, item.destination) is None:  # a directory link planted meanwhile
        return "failed", [at("D004", f"{item.id}: destination leads outside the artifact", pointer)]
    part = dest.with_name(f".{dest.name}.part")
    show = _progress_printer(item.id, item.size) if show_progress else (lambda done: None)
    try:
        streamed = _transfer(item, url, scheme, part, replace(limits, size=item.size), show)
    except SchemeFailed as exc:
        part.unlink(missing_ok=True)  # whatever a failed transfer left behind
        hint = exc.hint or _HINTS.get(exc.code)
        if exc.code == "D007":
            hint = f"{hint}; place it at {item.destination}"
        message = f"{item.id}: {redact_text(exc.message)}"
        return "failed", [at(exc.code, message, pointer + "/source/url", hint=hint)]
    return _place(item, part, dest, streamed, at, digests, pointer)


def _settled(
    item: DataItem,
    dest: Path,
    at: _Locator,
    digests: DigestCache,
    pointer: str,
    *,
    allow_unverified: bool,
) -> tuple[str, list[Finding]] | None:
    """The outcome when nothing is downloaded: the file is there and right, the item is not
    public, or nothing could verify a download; else ``None``."""
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
    return None


def _transfer(  # noqa: PLR0917 - private helper
    item: DataItem,
    url: str,
    scheme: str,
    part: Path,
    bounds: _Bounds,
    progress: Callable[[int], None],
) -> str | None:
    """Download ``url`` into ``part`` within the item's ``bounds``; the SHA-256 computed as
    the body streamed, if any."""
    if scheme in {"http", "https"}:
        return _download(url, part, bounds, progress)
    part.unlink(missing_ok=True)  # other schemes do not resume
    deadline = None
    if item.size is not None and bounds.min_rate > 0:
        deadline = bounds.timeout + item.size / bounds.min_rate
    fetch_scheme(
        scheme,
        url,
        part,
        timeout=bounds.timeout,
        size=item.size,
        sha256=item.sha256,
        deadline=deadline,
    )
    if not part.is_file():
        raise SchemeFailed("D005", f"{url}: the {scheme}:// source wrote no file")
    return None


def _place(  # noqa: PLR0917 - private helper
    item: DataItem,
    part: Path,
    dest: Path,
    streamed: str | None,
    at: _Locator,
    digests: DigestCache,
    pointer: str,
) -> tuple[str, list[Finding]]:
    """Check the downloaded ``part`` against the declared size and SHA-256, then put it at
    ``dest``; a part that does not match is removed."""
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

    Within the bounds of ``spec/security.md#data-fetch`` (``timeout``, ``min_rate`` over
    ``rate_window``, ``max_size``); ``allow_unverified`` places items without sha256 and size."""
    art = load_environment(artifact_dir)
    at = _Locator(art)
    digests = default_cache(cache_dir)
    result = DataResult()
    locks = cache_root(cache_dir) / "locks"
    limits = _Bounds(timeout, min_rate=min_rate, window=rate_window, max_size=max_size)
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
                limits=limits,
                show_progress=progress,
                allow_unverified=allow_unverified,
            )
        result.findings.extend(found)
        {"fetched": result.fetched, "present": result.present, "user": result.needs_user}.get(
            state, []
        ).append(item.id)
    digests.save()
    result.findings.sort()
    return result
