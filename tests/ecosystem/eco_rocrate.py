"""Seed rocrate-validator's HTTP cache from the JSON-LD contexts that ``rocrate`` ships.

rocrate-validator fetches the RO-Crate JSON-LD context over HTTP; its ``--offline`` mode
serves requests from a ``requests_cache`` SQLite cache only. The test runs it without a
network (``unshare -n``), so the cache is filled beforehand with the context document of the
``rocrate`` package, stored under the URL the crate names, as a 200 ``application/ld+json``
response (the same cache settings as the validator's own session).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import requests
import requests.adapters
import rocrate
import urllib3
from requests_cache import CachedSession

__all__ = ["context_url", "seed_cache"]

_ACCEPT = "application/ld+json, application/json"


def _context_file() -> Path:
    return Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld"


def context_url() -> str:
    """The context URL the installed ``rocrate`` writes (``https://w3id.org/ro/crate/X/context``)."""
    return str(json.loads(_context_file().read_text("utf-8"))["@id"])


class _Shipped(requests.adapters.HTTPAdapter):
    """Answers every request with the shipped context file (no network involved)."""

    def send(self, request: requests.PreparedRequest, **_: object) -> requests.Response:
        raw = urllib3.HTTPResponse(
            body=io.BytesIO(_context_file().read_bytes()),
            headers={"Content-Type": "application/ld+json"},
            status=200,
            preload_content=False,
            request_url=request.url,
        )
        return self.build_response(request, raw)


def seed_cache(cache_path: Path) -> None:
    """Store the shipped context under its URL in the cache at ``cache_path``."""
    session = CachedSession(
        cache_name=str(cache_path),
        expire_after=-1,
        backend="sqlite",
        allowable_methods=("GET",),
        allowable_codes=(200, 302, 404),
    )
    url = context_url()
    session.mount(url, _Shipped())
    response = session.get(url, headers={"Accept": _ACCEPT}, timeout=10)
    assert response.status_code == 200
    session.close()
