"""Environment build failures reported as what they are, with the installer's own message.

A real loopback HTTPS package index whose certificate is self-signed: the installer (uv, or
pip where uv is absent) refuses the certificate; the run's failure detail and its log hold
E021 and the installer's words.
"""

from __future__ import annotations

import http.server
import json
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from authoring_support import reprobridge

from reprobridge_sdk import api
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.env import ensure_environment
from reprobridge_sdk.env._installers import classify_failure
from reprobridge_sdk.env.venv import EnvironmentBuildError, install_failure


@pytest.fixture
def self_signed_index(tmp_path: Path) -> Iterator[str]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    served = tmp_path / "index" / "simple" / "tiny"
    served.mkdir(parents=True)
    (served / "index.html").write_text("<html><body></body></html>\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(tmp_path / "index"), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_self_signed_index_is_e021_in_the_record_and_the_log(
    tmp_path: Path, self_signed_index: str
) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    lock = root / "environment" / "requirements.txt"
    lock.write_text("tiny==1.0 \\\n    --hash=sha256:" + "ab" * 32 + "\n")
    art = api.load(root)
    art.refresh_digests()
    art.save()
    env = {
        "REPROBRIDGE_INDEX_URL": self_signed_index,
        "REPROBRIDGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    # in process: the build's finding is E021 with the installer's words
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REPROBRIDGE_INDEX_URL", self_signed_index)
        with pytest.raises(EnvironmentBuildError) as caught:
            ensure_environment(root, cache_dir=tmp_path / "cache")
    assert [f.code for f in caught.value.findings] == ["E021"]
    assert "certificate" in caught.value.findings[0].message.lower()
    # and through `run`: the record's failure detail and the run's log hold it
    done = reprobridge("run", str(root), "smoke", "--format", "json", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    records = list((root / "runs").glob("*/record.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["failure"]["reason"] == "environment-error"
    detail = record["failure"]["detail"]
    assert "E021:" in detail
    assert "E013" not in detail
    log = (records[0].parent / "log.txt").read_text()
    assert "E021:" in log
    assert "certificate" in log.lower()


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        # pip's words after a TLS failure end with "Could not find a version": E021 first
        (
            "Could not fetch URL https://x/simple/tiny/: There was a problem confirming the ssl "
            "certificate: HTTPSConnectionPool(host='x', port=443): Max retries exceeded "
            "(Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] "
            "certificate verify failed: self-signed certificate')))\nERROR: Could not find a "
            "version that satisfies the requirement tiny==1.0",
            "E021",
        ),
        (
            "error: Request failed after 3 retries\n  Caused by: invalid peer certificate: "
            "UnknownIssuer",
            "E021",
        ),
        (
            "WARNING: Retrying ... after connection broken by 'ProxyError('Unable to connect to "
            "proxy', ...)'",
            "E022",
        ),
        (
            "Caused by: error sending request for url (https://127.0.0.1:9/simple/tiny/)\n"
            "Caused by: tcp connect error: Connection refused (os error 111)",
            "E020",
        ),
        (
            "error: Failed to fetch: `https://x/simple/tiny/`\n  Caused by: HTTP status client "
            "error (403 Forbidden) for url (https://x/simple/tiny/)",
            "E023",
        ),
        ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.", "E013"),
        ("ERROR: No matching distribution found for tiny==1.0", "E013"),
    ],
    ids=["pip-tls", "uv-tls", "proxy", "refused", "http-403", "hash", "missing"],
)
def test_the_installers_words_are_classified(stderr: str, code: str) -> None:
    assert classify_failure(stderr)[0] == code
    item = install_failure(stderr, "environment/requirements.txt")
    assert (item.code, item.file, item.path) == (
        code,
        "environment/requirements.txt",
        "/environment/lock",
    )
    assert stderr.strip()[-40:] in item.message  # the installer's own words
