"""Data fetch faults against a real HTTP server on 127.0.0.1: retries that run out, a server
that ignores ``Range``, a partial file larger than declared, ``416`` on resume, and items that
declare no digest (D009) or no destination (D010).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reprobridge_sdk.env import fetch_data
from reprobridge_sdk.env.data import ATTEMPTS

PAYLOAD = bytes(range(251)) * 1000  # 251,000 bytes, no period that divides a chunk
SHA = hashlib.sha256(PAYLOAD).hexdigest()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[tuple[str, str | None]]
    cut: set[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, body: bytes, status: int = 200, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _cut_once(self, name: str) -> bool:
        """Promise the whole payload, send half and close (the first time only)."""
        if name in self.server.cut:
            return False
        self.server.cut.add(name)
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD)))
        self.end_headers()
        self.wfile.write(PAYLOAD[: len(PAYLOAD) // 2])
        self.wfile.flush()
        self.close_connection = True
        return True

    def do_GET(self) -> None:
        ranged = self.headers.get("Range")
        self.server.requests.append((self.path, ranged))
        if self.path == "/busy.bin":
            self._send(b"busy", status=503)
        elif self.path == "/norange.bin":
            if not self._cut_once("norange"):
                self._send(PAYLOAD)  # a Range header or not: always the whole file, 200
        elif self.path == "/complete.bin":
            if ranged:
                # Everything was received before: nothing satisfies the range.
                self._send(b"", status=416, extra={"Content-Range": f"bytes */{len(PAYLOAD)}"})
            else:
                self._send(PAYLOAD)
        elif self.path == "/plain.bin":
            self._send(PAYLOAD)
        else:
            self._send(b"not found", status=404)


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.requests = []
    httpd.cut = set()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def artifact(
    server: _Server, make_artifact: Callable[..., Path], tmp_path: Path
) -> Callable[[str], Path]:
    """An artifact whose one data item is ``lines`` (a YAML list item under ``data:``)."""
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def build(item: str) -> Path:
        return make_artifact(tmp_path / "art", "six\n", extra="  data:\n" + item.format(base=base))

    return build


def _item(path: str, *, sha: str | None = SHA, size: int | None = len(PAYLOAD)) -> str:
    lines = ["    - id: item", "      source:", f"        url: {{base}}/{path}"]
    if sha is not None:
        lines.append(f"      sha256: {sha}")
    if size is not None:
        lines.append(f"      size: {size}")
    lines.append("      destination: data/item.bin")
    return "\n".join(lines) + "\n"


def _part(root: Path) -> Path:
    return root / "data" / ".item.bin.part"


def test_retries_run_out(artifact: Callable[[str], Path], server: _Server) -> None:
    root = artifact(_item("busy.bin"))
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert result.fetched == []
    assert [(f.code, f.path) for f in result.findings] == [
        ("D005", "/environment/data/0/source/url")
    ]
    assert f"after {ATTEMPTS} attempts" in result.findings[0].message
    assert server.requests == [("/busy.bin", None)] * ATTEMPTS
    assert not (root / "data" / "item.bin").exists()
    assert not _part(root).exists()


def test_a_server_that_ignores_range_starts_over(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    root = artifact(_item("norange.bin"))
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert (result.fetched, result.findings) == (["item"], [])
    assert (root / "data" / "item.bin").read_bytes() == PAYLOAD  # not half + whole
    # The resume asked for the rest; the 200 answer made the client write from the start.
    assert server.requests == [
        ("/norange.bin", None),
        ("/norange.bin", f"bytes={len(PAYLOAD) // 2}-"),
    ]
    assert not _part(root).exists()


def test_a_partial_file_larger_than_declared_is_discarded(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    root = artifact(_item("plain.bin"))
    _part(root).parent.mkdir(parents=True)
    _part(root).write_bytes(PAYLOAD + b"left over from another file")
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert (result.fetched, result.findings) == (["item"], [])
    assert (root / "data" / "item.bin").read_bytes() == PAYLOAD
    assert server.requests == [("/plain.bin", None)]  # a fresh download, no Range


def test_416_on_resume_means_the_part_is_complete(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    # Without a declared size, only the server can say that nothing is left to send.
    root = artifact(_item("complete.bin", size=None))
    _part(root).parent.mkdir(parents=True)
    _part(root).write_bytes(PAYLOAD)
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert (result.fetched, result.findings) == (["item"], [])
    assert (root / "data" / "item.bin").read_bytes() == PAYLOAD
    assert server.requests == [("/complete.bin", f"bytes={len(PAYLOAD)}-")]


def test_416_on_resume_of_a_wrong_part_is_a_digest_error(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    root = artifact(_item("complete.bin", size=None))
    _part(root).parent.mkdir(parents=True)
    _part(root).write_bytes(b"\0" * len(PAYLOAD))
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert result.fetched == []
    assert [(f.code, f.path) for f in result.findings] == [("D002", "/environment/data/0/sha256")]
    assert not (root / "data" / "item.bin").exists()
    assert not _part(root).exists()


def test_an_item_without_digest_is_placed_with_a_warning(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    root = artifact(_item("plain.bin", sha=None))
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert result.fetched == ["item"]
    assert [(f.code, f.severity.value, f.path) for f in result.findings] == [
        ("D009", "warning", "/environment/data/0")
    ]
    assert (root / "data" / "item.bin").read_bytes() == PAYLOAD


def test_an_item_without_destination_is_not_downloaded(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    item = _item("plain.bin").replace("      destination: data/item.bin\n", "")
    root = artifact(item)
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert result.fetched == []
    assert [(f.code, f.path) for f in result.findings] == [("D010", "/environment/data/0")]
    assert server.requests == []


def test_a_malformed_hf_url_is_not_downloaded(
    artifact: Callable[[str], Path], server: _Server
) -> None:
    item = _item("plain.bin").replace("url: {base}/plain.bin", "url: hf://only-an-owner")
    root = artifact(item)
    result = fetch_data(root, cache_dir=root / ".cache", timeout=10)
    assert result.fetched == []
    assert [(f.code, f.path) for f in result.findings] == [
        ("D007", "/environment/data/0/source/url")
    ]
    assert server.requests == []
