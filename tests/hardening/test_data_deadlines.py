"""`data fetch` against servers that drip: deadlines and rates per phase, a cap without a size.

A real threading HTTP server on 127.0.0.1 (and the same over TLS, with a certificate made by
``openssl`` for the loopback address) drips the status line, drips the headers, drips the
body, or sends an endless body without a size. Each transfer must end within its deadline,
with its code, and leave nothing behind. Deadlines, rates and the cap are made small so that
each case takes seconds; the server stops dripping after :data:`DRIP_FOR` seconds, so a
client that waits for the server instead of its own deadline ends late and with another code.
"""

from __future__ import annotations

import hashlib
import shutil
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reprobridge_sdk.env import fetch_data

PAYLOAD = bytes(range(256)) * 64  # 16 KiB
SHA = hashlib.sha256(PAYLOAD).hexdigest()
DRIP_FOR = 40.0  # seconds a dripping server keeps going at most
TIMEOUT = 2.0  # the client's read timeout and the deadline of the status line and headers
STATUS = b"HTTP/1.1 200 OK\r\n"
HEADERS = f"Content-Length: {len(PAYLOAD)}\r\nContent-Type: application/octet-stream\r\n\r\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    sent: dict[str, int]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        del format, args

    def _drip(self, data: bytes, every: float = 0.25) -> None:
        end = time.monotonic() + DRIP_FOR
        for byte in data:
            if time.monotonic() > end:
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(every)

    def do_GET(self) -> None:
        try:
            self._answer()
        except OSError:  # the client gave up: what the test wants
            return

    def _answer(self) -> None:
        if self.path == "/drip-status":
            self._drip(STATUS * 20)
        elif self.path == "/drip-headers":
            self.wfile.write(STATUS)
            self._drip(b"X-Slow: " + b"y" * 400 + b"\r\n")
        elif self.path == "/drip-body":
            self.wfile.write(STATUS + HEADERS.encode())
            self._drip(PAYLOAD)
        elif self.path == "/endless":
            self.wfile.write(STATUS + b"Connection: close\r\n\r\n")
            end = time.monotonic() + DRIP_FOR
            while time.monotonic() < end:
                self.wfile.write(PAYLOAD)
                self.server.sent["endless"] = self.server.sent.get("endless", 0) + len(PAYLOAD)
        elif self.path == "/good":
            self.wfile.write(STATUS + b"Connection: close\r\n\r\n" + PAYLOAD)
        else:
            self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")


def _serve(httpd: _Server) -> Iterator[_Server]:
    httpd.sent = {}
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def server() -> Iterator[str]:
    for httpd in _serve(_Server(("127.0.0.1", 0), _Handler)):
        yield f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def tls_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    openssl = shutil.which("openssl")
    if openssl is None:  # pragma: no cover - Debian and the CI image have it
        pytest.skip("openssl is needed to make the loopback certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this certificate only
    httpd = _Server(("127.0.0.1", 0), _Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    for served in _serve(httpd):
        yield f"https://127.0.0.1:{served.server_address[1]}"


def _artifact(root: Path, url: str, *, size: bool = True) -> Path:
    """An artifact whose one data item is ``url`` (with its sha256, and its size if asked)."""
    pins = f"      sha256: {SHA}\n" + (f"      size: {len(PAYLOAD)}\n" if size else "")
    root.mkdir(parents=True)
    (root / "requirements.in").write_text("six\n")
    (root / "rra.yaml").write_text(
        f'rra_version: "1.0"\nenvironment:\n  python: "{sys.version_info.major}.'
        f'{sys.version_info.minor}"\n  requirements: requirements.in\n  data:\n'
        f"    - id: item\n      source:\n        url: {url}\n{pins}"
        "      destination: data/x.bin\n"
    )
    return root


def _fetch(art: Path, tmp_path: Path, **bounds: float) -> tuple[list[str], float]:
    """Fetch with the test's bounds: the codes found and the seconds it took."""
    start = time.monotonic()
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=TIMEOUT, **bounds)  # type: ignore[arg-type]
    elapsed = time.monotonic() - start
    assert not (art / "data" / ".x.bin.part").exists()  # nothing half-written stays
    return [f.code for f in result.findings], elapsed


@pytest.mark.parametrize("path", ["/drip-status", "/drip-headers"])
def test_a_dripping_status_line_or_header_ends_at_its_deadline(
    server: str, tmp_path: Path, path: str
) -> None:
    # No minimum rate: only the phase's deadline (TIMEOUT) can stop it.
    art = _artifact(tmp_path / "art", server + path)
    codes, elapsed = _fetch(art, tmp_path, min_rate=0.0)
    assert codes == ["D019"]
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + 8  # the deadline, and slack for a busy machine


def test_a_dripping_body_ends_at_its_deadline(server: str, tmp_path: Path) -> None:
    # The body's deadline: TIMEOUT + 16 KiB / 4 KiB/s = 6 s, before the first 30 s window.
    art = _artifact(tmp_path / "art", f"{server}/drip-body")
    codes, elapsed = _fetch(art, tmp_path, min_rate=4096.0)
    assert codes == ["D011"]
    assert 5.5 <= elapsed < 6 + 8
    assert not (art / "data" / "x.bin").exists()


@pytest.mark.parametrize(
    ("path", "code"),
    [("/drip-status", "D019"), ("/drip-headers", "D019"), ("/drip-body", "D011")],
)
def test_a_drip_below_the_minimum_rate_ends_after_one_window(
    server: str, tmp_path: Path, path: str, code: str
) -> None:
    art = _artifact(tmp_path / "art", server + path)
    # The deadlines are far: only the rate over the 1 s window stops these (4 B/s < 100 B/s).
    codes, elapsed = _fetch(art, tmp_path, min_rate=100.0, rate_window=1.0)
    assert codes == [code]
    assert elapsed < TIMEOUT + 8


def test_an_endless_body_without_a_size_stops_at_the_cap(server: str, tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", f"{server}/endless", size=False)
    codes, elapsed = _fetch(art, tmp_path, max_size=1 << 20)
    assert codes == ["D018"]
    assert elapsed < DRIP_FOR / 2  # stopped by the cap, not by the server
    assert not (art / "data" / "x.bin").exists()
    assert not (art / "data" / ".x.bin.part").exists()


def test_a_body_without_a_size_is_hashed_as_it_streams(server: str, tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", f"{server}/good", size=False)
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=TIMEOUT)
    assert (result.fetched, [f.code for f in result.findings]) == (["item"], [])
    assert (art / "data" / "x.bin").read_bytes() == PAYLOAD
    # the same body against another digest: nothing placed, nothing left
    manifest = art / "rra.yaml"
    manifest.write_text(manifest.read_text().replace(SHA, "f" * 64))
    (art / "data" / "x.bin").unlink()
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=TIMEOUT)
    assert [f.code for f in result.findings] == ["D002"]
    assert not list((art / "data").iterdir())


@pytest.mark.parametrize(("path", "code"), [("/drip-headers", "D019"), ("/good", None)])
def test_the_same_bounds_hold_over_tls(
    tls_server: str, tmp_path: Path, path: str, code: str | None
) -> None:
    art = _artifact(tmp_path / "art", tls_server + path, size=False)
    codes, elapsed = _fetch(art, tmp_path, min_rate=0.0)
    assert codes == ([code] if code else [])
    assert elapsed < TIMEOUT + 8
    if code is None:
        assert (art / "data" / "x.bin").read_bytes() == PAYLOAD
