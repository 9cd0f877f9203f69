"""Data from s3:// (moto's S3 server on loopback), hf:// (a loopback Hub via HF_ENDPOINT), .netrc.

moto's server is a real HTTP S3 implementation listening on 127.0.0.1; s3fs talks to it
through ``AWS_ENDPOINT_URL``. The Hub is a small HTTP server that serves ``resolve`` URLs,
requires the token and redirects to a second server standing for the CDN.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobridge_sdk.env import fetch_data

PAYLOAD = b"weights " * 1000


def _artifact(root: Path, url: str, payload: bytes = PAYLOAD) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "rra.yaml").write_text(
        'rra_version: "1.0"\nenvironment:\n  python: "3.11"\n  data:\n'
        f"    - id: weights\n      source: {{url: {url!r}}}\n"
        f"      sha256: {hashlib.sha256(payload).hexdigest()}\n      size: {len(payload)}\n"
        "      destination: data/weights.bin\n"
    )
    return root


def _codes(result: object) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in result.findings]  # type: ignore[attr-defined]


@contextlib.contextmanager
def _s3_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A moto S3 server on loopback holding ``s3://rb-data/models/weights.bin``, and the
    ``AWS_*`` variables that point at it."""
    pytest.importorskip("s3fs", reason="the s3 extra is a test dependency")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(key, value)
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket="rb-data")
    client.put_object(Bucket="rb-data", Key="models/weights.bin", Body=PAYLOAD)
    try:
        yield endpoint
    finally:
        server.stop()


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with _s3_server(monkeypatch) as endpoint:
        yield endpoint


def test_s3_through_fsspec(s3: str, tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", "s3://rb-data/models/weights.bin")
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    assert (result.fetched, _codes(result)) == (["weights"], [])
    assert (art / "data" / "weights.bin").read_bytes() == PAYLOAD


def test_each_s3_fetch_reads_the_configuration_of_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second fetch in the same process, with ``AWS_ENDPOINT_URL`` pointing at another
    server, goes to that server (fsspec's cached filesystem of the first fetch went to the
    first, stopped, server: D005; in a test suite, the order of two tests decided it)."""
    for attempt in ("first", "second"):
        with _s3_server(monkeypatch):
            art = _artifact(tmp_path / attempt, "s3://rb-data/models/weights.bin")
            result = fetch_data(art, cache_dir=tmp_path / f"cache-{attempt}")
        assert (attempt, result.fetched, _codes(result)) == (attempt, ["weights"], [])
        assert (art / "data" / "weights.bin").read_bytes() == PAYLOAD


def test_s3_missing_object_is_d005_and_places_nothing(s3: str, tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", "s3://rb-data/models/absent.bin")
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    assert _codes(result) == [("D005", "/environment/data/0/source/url")]
    assert not (art / "data" / "weights.bin").exists()


def test_s3_without_the_extra_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "s3fs", None)
    art = _artifact(tmp_path / "art", "s3://rb-data/models/weights.bin")
    [item] = fetch_data(art, cache_dir=tmp_path / "cache").findings
    assert (item.code, item.hint) == ("E015", "pip install 'reprobridge[s3]'")


class _Recorder:
    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_Recorder, _Recorder]]:
    """A Hub that wants ``Bearer s3cret`` and redirects to a CDN on another port."""
    hub_seen, cdn_seen = _Recorder(), _Recorder()

    class Cdn(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            cdn_seen.headers.append(dict(self.headers))
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD)

        def log_message(self, *args: object) -> None:
            pass

    cdn = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Cdn)

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hub_seen.headers.append(dict(self.headers))
            if self.path != "/org/model/resolve/v1/weights.bin":
                self.send_response(404)
            elif self.headers.get("Authorization") != "Bearer s3cret":
                self.send_response(401)
            else:
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.1:{cdn.server_address[1]}/blob")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    for item in (server, cdn):
        threading.Thread(target=item.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}/")
    try:
        yield hub_seen, cdn_seen
    finally:
        for item in (server, cdn):
            item.shutdown()
            item.server_close()


def test_hf_uses_the_endpoint_and_the_token_for_the_hub_only(
    hub: tuple[_Recorder, _Recorder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub_seen, cdn_seen = hub
    art = _artifact(tmp_path / "art", "hf://org/model@v1/weights.bin")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    denied = fetch_data(art, cache_dir=tmp_path / "cache")
    assert _codes(denied) == [("D005", "/environment/data/0/source/url")]
    monkeypatch.setenv("HF_TOKEN", "s3cret")
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    assert (result.fetched, _codes(result)) == (["weights"], [])
    assert hub_seen.headers[-1]["Authorization"] == "Bearer s3cret"
    assert [h.get("Authorization") for h in cdn_seen.headers] == [None]  # never leaked


def test_netrc_credentials_go_to_their_own_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []

    class Private(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            expected = "Basic " + base64.b64encode(b"alice:pa55").decode()
            ok = self.headers.get("Authorization") == expected
            self.send_response(200 if ok else 401)
            self.send_header("Content-Length", str(len(PAYLOAD) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(PAYLOAD)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Private)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        netrc = tmp_path / "netrc"
        netrc.write_text("machine 127.0.0.1 login alice password pa55\n")
        netrc.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        url = f"http://127.0.0.1:{server.server_address[1]}/w.bin"
        result = fetch_data(_artifact(tmp_path / "art", url), cache_dir=tmp_path / "cache")
        assert (result.fetched, _codes(result)) == (["weights"], [])
        netrc.write_text("machine 127.0.0.1 login alice password\n  garbage 'unterminated\n")
        broken = fetch_data(_artifact(tmp_path / "art2", url), cache_dir=tmp_path / "cache")
        assert _codes(broken) == [("D005", "/environment/data/0/source/url")]
    finally:
        server.shutdown()
        server.server_close()
