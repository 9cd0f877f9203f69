"""Data URL schemes other than plain HTTP(S): the volatile part of acquiring data.

``hf://`` becomes the Hub's file URL on ``$HF_ENDPOINT`` (``$HF_TOKEN`` to that host only);
``s3://`` and ``gs://`` go through fsspec (extras ``s3`` and ``gcs``; E015 without them);
``x-<scheme>://`` (format 1.1) through the plugin of that name in
``reprobridge.data_schemes`` (D015 when none, D016 when it fails); any other scheme is D007.
HTTP(S) credentials come from ``$HF_TOKEN`` or ``.netrc``, sent to the URL's own host only.
The caller verifies size and SHA-256 and places the file. Spec: ``spec/manifest.md#data``,
``spec/security.md#data-fetch``.
"""

from __future__ import annotations

import base64
import netrc
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reprobridge_sdk.errors import MissingExtraError, require_extra

__all__ = ["SchemeFailed", "auth_header", "fetch_scheme", "hf_endpoint", "hf_url"]

_FSSPEC = {"s3": ("s3fs", "s3"), "gs": ("gcsfs", "gcs")}


class SchemeFailed(Exception):
    """A source (a scheme, or an HTTP(S) transfer) could not deliver the file; ``code`` is the
    finding's (D005, D007, D011, E015...)."""

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint


def hf_endpoint() -> str:
    """``$HF_ENDPOINT`` without a trailing slash, else the public Hub."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hf_url(url: str) -> str:
    """``hf://[datasets/|spaces/]owner/repo[@rev]/path`` as a Hub download URL."""
    rest = url[len("hf://") :]
    kind = ""
    for prefix in ("datasets/", "spaces/"):
        if rest.startswith(prefix):
            kind, rest = prefix, rest[len(prefix) :]
    parts = rest.split("/", 2)
    if len(parts) < 3 or not all(parts):
        msg = f"{url!r} is not hf://[datasets/]owner/repo/path"
        raise ValueError(msg)
    owner, repo, path = parts
    revision = "main"
    if "@" in repo:
        repo, revision = repo.split("@", 1)
    return f"{hf_endpoint()}/{kind}{owner}/{repo}/resolve/{revision}/{path}"


def auth_header(url: str) -> str | None:
    """The ``Authorization`` value for ``url``'s own host, or ``None``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    token = os.environ.get("HF_TOKEN", "")
    if token and host == (urlsplit(hf_endpoint()).hostname or "").lower():
        return f"Bearer {token}"
    path = os.environ.get("NETRC") or str(Path.home() / ".netrc")
    if not Path(path).is_file():
        return None
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (netrc.NetrcParseError, OSError):
        return None
    if entry is None:
        return None
    login, _, password = entry
    raw = f"{login}:{password or ''}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def fetch_scheme(
    scheme: str,
    url: str,
    destination: Path,
    *,
    timeout: float,
    size: int | None = None,
    sha256: str | None = None,
    deadline: float | None = None,
) -> None:
    """Write the file at ``url`` (``s3://``, ``gs://`` or a plugin's ``x-`` scheme) to
    ``destination``; ``deadline`` bounds a plugin's whole call (default ``10 * timeout``)."""
    if scheme.startswith("x-"):
        limit = deadline if deadline is not None else 10 * timeout
        _plugin_fetch(scheme, url, destination, timeout, size, sha256, limit)
        return
    if scheme in _FSSPEC:
        module, extra = _FSSPEC[scheme]
        try:
            require_extra(module, extra, feature=f"{scheme}:// data sources")
        except MissingExtraError as exc:
            item = exc.findings[0]
            raise SchemeFailed("E015", item.message, item.hint) from None
        fsspec: Any = require_extra("fsspec", extra)
        try:
            # A filesystem of its own for each fetch: fsspec would hand back the instance
            # made by an earlier fetch of this process, with the endpoint and credentials
            # read then, not the configuration of now.
            fs = fsspec.filesystem(scheme if scheme != "gs" else "gcs", skip_instance_cache=True)
            fs.get_file(url, str(destination))
        except Exception as exc:
            raise SchemeFailed("D005", f"{url}: {type(exc).__name__}: {exc}") from None
        return
    raise SchemeFailed(
        "D007",
        f"{scheme}:// URLs are not downloaded by the SDK",
        "download it with the provider's tool",
    )


def _plugin_fetch(  # noqa: PLR0917 - private helper of one call site
    scheme: str,
    url: str,
    destination: Path,
    timeout: float,
    size: int | None,
    sha256: str | None,
    limit: float,
) -> None:
    from reprobridge_sdk import plugins  # noqa: PLC0415 - only plugin schemes pay for it
    from reprobridge_sdk.errors import UsageError  # noqa: PLC0415

    maintainers = "report it to the plugin's maintainers"
    try:
        fetch = plugins.load_plugin(plugins.DATA_SCHEMES, scheme)
    except UsageError as exc:
        raise SchemeFailed("D016", exc.message, exc.findings[0].hint) from None
    if fetch is None:
        raise SchemeFailed(
            "D015",
            f"no installed plugin provides the {scheme}:// URL scheme",
            plugins.scheme_hint(scheme),
        )
    try:
        plugins.call_with_limit(
            fetch,
            url,
            destination,
            size=size,
            sha256=sha256,
            timeout=timeout,
            limit=limit,
            name=scheme,
        )
    except plugins.PluginTimeout:
        msg = f"{url}: the {scheme} plugin did not return within {limit:g} s"
        raise SchemeFailed("D016", msg, maintainers) from None
    except Exception as exc:  # any failure of a plugin is the item's finding
        msg = f"{url}: the {scheme} plugin raised {type(exc).__name__}: {exc}"
        raise SchemeFailed("D016", msg, maintainers) from None
    if not destination.is_file():
        raise SchemeFailed("D016", f"{url}: the {scheme} plugin wrote no file", maintainers)
