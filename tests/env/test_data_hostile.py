"""Hostile servers and hostile artifacts for `data fetch` (a real HTTP server on 127.0.0.1).

Each attack of the hardening issue: a `.part` planted as a link, a server that trickles one
byte at a time, an endless body, a redirect to another scheme, a password in the URL, an item
that nothing can verify. Rates and windows are made small so each case ends in seconds.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reprobridge_sdk.env import fetch_data

PAYLOAD = bytes(range(256)) * 200  # 51,200 bytes
SHA = hashlib.sha256(PAYLOAD).hexdigest()
TRICKLED = 300  # bytes the trickling server sends, one every 0.2 s: a minute


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    sent: dict[str, int]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        del format, args

    def do_GET(self) -> None:
        if self.path == "/good.bin":
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD)
        elif self.path == "/trickle.bin" and not self.server.sent.get("trickle"):
            # One byte every 0.2 s (5 B/s), for one request only and for a minute at most: a
            # client that the rate window does not stop ends with a short body and, on its
            # retry, a 404 (D005), never with D011 from its whole-transfer deadline (522 s).
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            try:
                for byte in PAYLOAD[:TRICKLED]:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    self.server.sent["trickle"] = self.server.sent.get("trickle", 0) + 1
                    time.sleep(0.2)
            except OSError:
                return
        elif self.path == "/endless.bin":
            self.send_response(200)
            self.end_headers()
            sent = 0
            try:
                while sent < 64 << 20:
                    self.wfile.write(PAYLOAD)
                    sent += len(PAYLOAD)
                    self.server.sent["endless"] = sent
            except OSError:
                return
        elif self.path == "/to-ftp":
            self.send_response(302)
            self.send_header("Location", "ftp://127.0.0.1/x.bin")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


@pytest.fixture
def server() -> Iterator[str]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.sent = {}
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _artifact(
    make_artifact: Callable[..., Path], root: Path, url: str, *, verified: bool = True
) -> Path:
    pins = f"      sha256: {SHA}\n      size: {len(PAYLOAD)}\n" if verified else ""
    items = (
        f"    - id: item\n      source:\n        url: {url}\n{pins}      destination: data/x.bin\n"
    )
    return make_artifact(root, "six\n", extra=f"  data:\n{items}")


def test_a_part_planted_as_a_link_is_never_written_through(
    server: str, make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    art = _artifact(make_artifact, tmp_path / "art", f"{server}/good.bin")
    (art / "data").mkdir()
    (art / "data" / ".x.bin.part").symlink_to(victim)
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=10)
    assert result.fetched == ["item"]
    assert victim.read_text() == "precious\n"
    assert (art / "data" / "x.bin").read_bytes() == PAYLOAD
    assert not (art / "data" / "x.bin").is_symlink()


def test_a_trickling_server_is_stopped_by_the_minimum_rate(
    server: str, make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    art = _artifact(make_artifact, tmp_path / "art", f"{server}/trickle.bin")
    # D011 can come only from the rate window here: the server stops trickling after a minute,
    # long before the whole-transfer deadline (10 s + 51,200 B / 100 B/s); so the code, not an
    # elapsed time, shows what stopped the transfer, however loaded the machine.
    result = fetch_data(
        art, cache_dir=tmp_path / "cache", timeout=10, min_rate=100, rate_window=1.0
    )
    assert [f.code for f in result.findings] == ["D011"]
    assert not list((art / "data").iterdir())


def test_an_endless_body_stops_at_the_declared_size(
    server: str, make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    art = _artifact(make_artifact, tmp_path / "art", f"{server}/endless.bin")
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=10)
    assert [f.code for f in result.findings] == ["D012"]
    assert not list((art / "data").iterdir())  # no .part left behind


def test_a_redirect_to_another_scheme_is_refused(
    server: str, make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    art = _artifact(make_artifact, tmp_path / "art", f"{server}/to-ftp")
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=10)
    assert [f.code for f in result.findings] == ["D013"]


def test_a_password_in_the_url_never_appears_in_a_message(
    server: str, make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    port = server.rsplit(":", 1)[1]
    art = _artifact(make_artifact, tmp_path / "art", f"http://alice:s3cr3t@127.0.0.1:{port}/nope")
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=10)
    assert result.findings
    assert [f.code for f in result.findings] == ["D005"]
    assert all(
        "s3cr3t" not in f.message and "s3cr3t" not in (f.hint or "") for f in result.findings
    )


def test_an_unverifiable_item_is_placed_only_when_asked(
    server: str, make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    art = _artifact(make_artifact, tmp_path / "art", f"{server}/good.bin", verified=False)
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=10)
    assert [f.code for f in result.findings] == ["D014"]
    assert not (art / "data" / "x.bin").exists()
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=10, allow_unverified=True)
    assert result.fetched == ["item"]
    assert (art / "data" / "x.bin").read_bytes() == PAYLOAD
