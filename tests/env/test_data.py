"""Data fetch and verify against a real HTTP server on 127.0.0.1, faults included."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path

import pytest

from reprobridge_sdk.env import fetch_data, verify_data
from reprobridge_sdk.env.data import MAX_REDIRECTS, hf_url
from reprobridge_sdk.errors import UsageError

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB
SHA = hashlib.sha256(PAYLOAD).hexdigest()
WRONG = b"\0" * len(PAYLOAD)
INSTRUCTIONS = "Accept the license at https://example.org/model and download."


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[tuple[str, str | None]]
    dropped: set[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, body: bytes, *, status: int = 200, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _ranged(self, body: bytes) -> None:
        header = self.headers.get("Range")
        if header and header.startswith("bytes="):
            start = int(header[6:].split("-")[0])
            if start >= len(body):
                self._send(b"", status=416)
                return
            extra = {"Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}"}
            self._send(body[start:], status=206, extra=extra)
            return
        self._send(body)

    def do_GET(self) -> None:
        self.server.requests.append((self.path, self.headers.get("Range")))
        if self.path == "/good.bin":
            self._ranged(PAYLOAD)
        elif self.path == "/norange.bin":
            self._send(PAYLOAD)
        elif self.path == "/drop.bin":
            if "drop" not in self.server.dropped and not self.headers.get("Range"):
                # Promise the whole file, send half, then cut the connection.
                self.server.dropped.add("drop")
                self.send_response(200)
                self.send_header("Content-Length", str(len(PAYLOAD)))
                self.end_headers()
                self.wfile.write(PAYLOAD[: len(PAYLOAD) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self._ranged(PAYLOAD)
        elif self.path == "/wrong.bin":
            self._ranged(WRONG)
        elif self.path == "/redirect":
            self._send(b"", status=302, extra={"Location": "/hop"})
        elif self.path == "/hop":
            self._send(b"", status=301, extra={"Location": "/good.bin"})
        elif self.path == "/loop":
            self._send(b"", status=302, extra={"Location": "/loop"})
        elif self.path == "/flaky.bin":
            if "flaky" not in self.server.dropped:
                self.server.dropped.add("flaky")
                self._send(b"busy", status=503)
                return
            self._ranged(PAYLOAD)
        else:
            self._send(b"not found", status=404)


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.requests = []
    httpd.dropped = set()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _item(
    id_: str, url: str, dest: str, *, sha: str = SHA, size: int | None = None, extra: str = ""
) -> str:
    size_line = f"      size: {size if size is not None else len(PAYLOAD)}\n" if size != -1 else ""
    return (
        f"    - id: {id_}\n"
        f"      source:\n"
        f"        url: {url}\n"
        f"      sha256: {sha}\n"
        f"{size_line}"
        f"      destination: {dest}\n"
        f"{extra}"
    )


@pytest.fixture
def data_artifact(server: _Server, make_artifact: Callable[..., Path], tmp_path: Path) -> Path:
    base = f"http://127.0.0.1:{server.server_address[1]}"
    items = "".join(
        [
            _item("good", f"{base}/good.bin", "data/good.bin"),
            _item("drop", f"{base}/drop.bin", "data/drop.bin"),
            _item("wrong", f"{base}/wrong.bin", "data/wrong.bin"),
            _item("redirect", f"{base}/redirect", "data/redirect.bin"),
            _item("loop", f"{base}/loop", "data/loop.bin"),
            _item("missing", f"{base}/missing", "data/missing.bin"),
            _item("flaky", f"{base}/flaky.bin", "data/flaky.bin"),
            _item("norange", f"{base}/norange.bin", "data/norange.bin"),
            _item("badsize", f"{base}/good.bin", "data/badsize.bin", size=12),
            _item("escape", f"{base}/good.bin", "../outside.bin"),
            _item(
                "gated",
                f"{base}/good.bin",
                "ckpt/gated.bin",
                extra=f"      access: gated\n      instructions: {INSTRUCTIONS}\n",
            ),
            _item("bucket", "gs://bucket/key.bin", "data/bucket.bin"),
        ]
    )
    return make_artifact(tmp_path / "art", "six\n", extra=f"  data:\n{items}")


def _by_id(findings: list) -> dict[str, list[str]]:  # type: ignore[type-arg]
    result: dict[str, list[str]] = {}
    for f in findings:
        index = int(f.path.split("/")[3])
        result.setdefault(str(index), []).append(f.code)
    return result


def test_fetch_all_items(
    data_artifact: Path, server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gcsfs", None)  # the gcs extra is absent: E015
    cache = tmp_path / "cache"
    result = fetch_data(data_artifact, cache_dir=cache, timeout=10)
    assert sorted(result.fetched) == ["drop", "flaky", "good", "norange", "redirect"]
    assert result.needs_user == ["gated"]
    codes = {f.path.split("/")[3]: f.code for f in result.findings}
    # Indexes in the manifest: wrong=2, loop=4, missing=5, badsize=8, escape=9, gated=10, gs=11
    assert codes == {
        "2": "D002",
        "4": "D005",
        "5": "D005",
        "8": "D012",  # the body is longer than the declared 12 bytes: stopped there
        "9": "D004",
        "10": "D006",
        "11": "E015",
    }
    paths = {f.code + f.path.split("/")[3]: f.path for f in result.findings}
    assert paths["D0022"] == "/environment/data/2/sha256"
    assert paths["D0049"] == "/environment/data/9/destination"
    for f in result.findings:
        assert f.file == "rra.yaml"
        assert f.line > 0
    gated = next(f for f in result.findings if f.code == "D006")
    assert gated.hint == "Accept the license at https://example.org/model and download."
    for name in ("good", "drop", "redirect", "flaky", "norange"):
        assert (data_artifact / "data" / f"{name}.bin").read_bytes() == PAYLOAD
    # Nothing half-written or wrong is left anywhere.
    data_dir = sorted(p.name for p in (data_artifact / "data").iterdir())
    assert data_dir == ["drop.bin", "flaky.bin", "good.bin", "norange.bin", "redirect.bin"]
    assert not (data_artifact.parent / "outside.bin").exists()
    assert not (data_artifact / "ckpt").exists()
    # The dropped transfer resumed where it stopped.
    assert ("/drop.bin", f"bytes={len(PAYLOAD) // 2}-") in server.requests
    # The gated item was never requested; the redirect loop stopped.
    # A URL that redirects to itself is stopped by the repeat check (before MAX_REDIRECTS is
    # reached) and is not retried: the first request and one per allowed repeat.
    repeats = urllib.request.HTTPRedirectHandler.max_repeats
    assert repeats < MAX_REDIRECTS
    assert sum(1 for path, _ in server.requests if path == "/loop") == repeats + 1
    # A second fetch downloads nothing again.
    before = len(server.requests)
    again = fetch_data(data_artifact, ["good", "drop"], cache_dir=cache)
    assert sorted(again.present) == ["drop", "good"]
    assert len(server.requests) == before


def test_verify_detects_changes(data_artifact: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fetch_data(data_artifact, ["good", "drop"], cache_dir=cache)
    assert verify_data(data_artifact, ["good", "drop"], cache_dir=cache).findings == []
    target = data_artifact / "data" / "good.bin"
    # Same size, other bytes: the digest cache must not hide the change.
    target.write_bytes(WRONG)
    result = verify_data(data_artifact, ["good"], cache_dir=cache)
    assert [(f.code, f.path) for f in result.findings] == [("D002", "/environment/data/0/sha256")]
    target.write_bytes(PAYLOAD + b"x")
    assert [f.code for f in verify_data(data_artifact, ["good"], cache_dir=cache).findings] == [
        "D003"
    ]
    target.unlink()
    assert [f.code for f in verify_data(data_artifact, ["good"], cache_dir=cache).findings] == [
        "D001"
    ]
    gated = verify_data(data_artifact, ["gated"], cache_dir=cache).findings
    assert [(f.code, f.hint) for f in gated] == [
        ("D001", "Accept the license at https://example.org/model and download.")
    ]


def test_user_placed_gated_item_is_verified(data_artifact: Path, tmp_path: Path) -> None:
    (data_artifact / "ckpt").mkdir()
    (data_artifact / "ckpt" / "gated.bin").write_bytes(PAYLOAD)
    result = fetch_data(data_artifact, ["gated"], cache_dir=tmp_path / "c")
    assert result.present == ["gated"]
    assert result.findings == []


def test_unknown_item_is_a_usage_error(data_artifact: Path) -> None:
    with pytest.raises(UsageError):
        fetch_data(data_artifact, ["nope"])


def test_package_and_codebase_items(make_artifact: Callable[..., Path], tmp_path: Path) -> None:
    dist = metadata.distribution("click")
    init = next(f for f in dist.files or [] if str(f).endswith("click/__init__.py"))
    located = Path(str(init.locate()))
    sha = hashlib.sha256(located.read_bytes()).hexdigest()
    size = located.stat().st_size
    code_file = b"label,value\na,1\n"
    items = (
        f"    - id: pkg\n      source: {{package: click}}\n"
        f"      sha256: {sha}\n      size: {size}\n"
        f"    - id: pkg-wrong\n      source: {{package: click}}\n      sha256: '{'1' * 64}'\n"
        f"    - id: pkg-absent\n      source: {{package: no-such-dist-xyz}}\n"
        f"      sha256: {sha}\n"
        f"    - id: code\n      source: {{codebase: data/table.csv}}\n"
        f"      sha256: {hashlib.sha256(code_file).hexdigest()}\n"
        f"    - id: code-escape\n      source: {{codebase: ../../etc/passwd}}\n"
    )
    art = make_artifact(tmp_path / "art", "six\n", extra=f"  data:\n{items}")
    text = (art / "rra.yaml").read_text("utf-8")
    (art / "rra.yaml").write_text(
        text + "codebase:\n  refined:\n    kind: directory\n    path: code\n", "utf-8"
    )
    (art / "code" / "data").mkdir(parents=True)
    (art / "code" / "data" / "table.csv").write_bytes(code_file)
    result = verify_data(art, cache_dir=tmp_path / "cache", python=sys.executable)
    assert sorted((f.code, f.path) for f in result.findings) == [
        ("D004", "/environment/data/4/source/codebase"),
        ("D008", "/environment/data/1/sha256"),
        ("D008", "/environment/data/2/source/package"),
    ]
    assert sorted(result.present) == ["code", "pkg"]


def test_cli_fetch_and_verify(data_artifact: Path, tmp_path: Path) -> None:
    env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(tmp_path / "cache")}
    run = [sys.executable, "-m", "reprobridge_sdk", "data"]
    proc = subprocess.run(
        [*run, "fetch", str(data_artifact), "good", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["errors"] == 0
    proc = subprocess.run(
        [*run, "fetch", str(data_artifact), "gated"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 1
    assert "D006" in proc.stdout
    proc = subprocess.run(
        [*run, "verify", str(data_artifact), "good", "wrong", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 1
    found = json.loads(proc.stdout)["artifacts"][0]["findings"]
    assert [(f["code"], f["path"]) for f in found] == [("D001", "/environment/data/2")]
    proc = subprocess.run(
        [*run, "verify", str(data_artifact), "nope"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 2
    assert "no data item 'nope'" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("hf://bert-base-uncased/config.json", None),
        (
            "hf://google/bert/config.json",
            "https://huggingface.co/google/bert/resolve/main/config.json",
        ),
        (
            "hf://datasets/org/set@v1/data/train.parquet",
            "https://huggingface.co/datasets/org/set/resolve/v1/data/train.parquet",
        ),
    ],
)
def test_hf_url(url: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(ValueError, match="hf://"):
            hf_url(url)
    else:
        assert hf_url(url) == expected


def test_concurrent_fetchers_take_turns(
    data_artifact: Path, server: _Server, tmp_path: Path
) -> None:
    results: list[object] = []

    def fetch() -> None:
        results.append(fetch_data(data_artifact, ["good"], cache_dir=tmp_path / "cache"))

    threads = [threading.Thread(target=fetch) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 3
    assert (data_artifact / "data" / "good.bin").read_bytes() == PAYLOAD
    assert [path for path, _ in server.requests] == ["/good.bin"]
    assert sorted(p.name for p in (data_artifact / "data").iterdir()) == ["good.bin"]
