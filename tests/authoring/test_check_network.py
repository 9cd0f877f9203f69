"""``check`` behind a TLS-intercepting proxy: the network configuration passes into the clean
room, and nothing else does.

The real case: a loopback PEP 503 index served over HTTPS, with a certificate signed by a CA
of the test's own that no trust store holds. The caller knows that CA only through
``SSL_CERT_FILE``; the check passes because the variable reaches the installers in the clean
room, and fails without it with E021 and a hint that names the CA bundle variables, never a
traceback. Credentials in a proxy URL never show in any output or file of the check.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import re
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.authoring.clean_shell import (
    NETWORK_ENV,
    clean_environment,
    network_environment,
)
from reprobridge_sdk.authoring.digests import refresh
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.env._resolvers import isolated_environ

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
from eco_wheelhouse import build_wheel, serve_index, write_index

#: A password in a proxy URL: it must never be printed or written by the check.
SECRET = "s3cr3t-Pr0xy-pw"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA of the test's own and a server certificate it signs for 127.0.0.1 and localhost:
    the CA bundle (the CA alone), the server's certificate chain and its key."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("ReproBridge test interception CA"))
        .issuer_name(_name("ReproBridge test interception CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True)
    bundle, chain, key_file = directory / "ca.pem", directory / "server.pem", directory / "key.pem"
    bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return bundle, chain, key_file


@contextmanager
def _https_index(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A tiny artifact whose lock pins one wheel by hash, that wheel on a loopback HTTPS
    index, and the CA bundle that index's certificate needs: ``(url, artifact, bundle)``."""
    wheel = build_wheel(tmp_path / "build", "alpha", "1.0")
    write_index(tmp_path / "index", [wheel.path])
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    (root / "environment" / "requirements.txt").write_text(
        f"alpha==1.0 --hash=sha256:{wheel.sha256}\n", "utf-8"
    )
    refresh(root, write=True)
    bundle, chain, key = _certificates(tmp_path / "pki")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, key)
    with serve_index(tmp_path / "index", tls=context) as url:
        yield url, root, bundle


def _caller(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str) -> None:
    """A caller with no network configuration but the index and caches of its own."""
    for name in NETWORK_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip-cache"))


def _files_holding(root: Path, text: str) -> list[str]:
    needle = text.encode()
    return [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and not path.is_symlink() and needle in path.read_bytes()
    ]


def test_the_network_configuration_passes_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NETWORK_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HTTPS_PROXY", f"http://ada:{SECRET}@proxy.example:3128")
    monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
    monkeypatch.setenv("SSL_CERT_FILE", "certs/ca.pem")  # relative: made absolute
    monkeypatch.setenv("SSL_CERT_DIR", f"/etc/ssl/certs{os.pathsep}more-certs")
    monkeypatch.setenv("PIP_CERT", "/etc/ssl/corporate.pem")
    monkeypatch.setenv("UV_SYSTEM_CERTS", "1")
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://mirror.example/simple")
    monkeypatch.setenv("REPROBRIDGE_INDEX_URL", "https://mirror.example/simple")
    # not network configuration: tokens, an index's own credentials, uv's other settings
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    monkeypatch.setenv("UV_INDEX_MIRROR_PASSWORD", "secret")
    monkeypatch.setenv("UV_CONSTRAINT", "constraints.txt")
    monkeypatch.setenv("PIP_REQUIRE_VIRTUALENV", "1")
    env = clean_environment(tmp_path / "home")
    here = Path.cwd()
    assert env["SSL_CERT_FILE"] == str(here / "certs" / "ca.pem")
    assert env["SSL_CERT_DIR"] == f"/etc/ssl/certs{os.pathsep}{here / 'more-certs'}"
    assert env["HTTPS_PROXY"] == f"http://ada:{SECRET}@proxy.example:3128"
    assert env["no_proxy"] == "localhost,127.0.0.1"
    assert set(network_environment()) == {
        "HTTPS_PROXY",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "PIP_CERT",
        "UV_SYSTEM_CERTS",
        "UV_DEFAULT_INDEX",
        "REPROBRIDGE_INDEX_URL",
    }
    for name in (
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "UV_INDEX_MIRROR_PASSWORD",
        "UV_CONSTRAINT",
        "PIP_REQUIRE_VIRTUALENV",
    ):
        assert name not in env
    assert "UV_CONSTRAINT" in clean_environment(tmp_path / "home", ["UV_CONSTRAINT"])


def test_the_spec_lists_exactly_the_variables_that_pass() -> None:
    spec = Path(__file__).resolve().parents[2] / "spec" / "authoring.md"
    text = spec.read_text("utf-8")
    table = text[text.index("| What | Variables |") :].split("\n\n", 1)[0]
    listed: set[str] = set()
    for row in table.splitlines()[2:]:
        names = re.findall(r"`([A-Z_]+)`", row.split("|")[2])
        listed.update(names)
        if "either case" in row:
            listed.update(name.lower() for name in names)
    assert listed == set(NETWORK_ENV)


def test_the_installers_keep_how_to_reach_the_index_and_drop_what_it_serves() -> None:
    caller = {
        "SSL_CERT_FILE": "/etc/ssl/corporate.pem",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "PIP_CERT": "/etc/ssl/corporate.pem",
        "PIP_CLIENT_CERT": "/etc/ssl/me.pem",
        "PIP_PROXY": "http://proxy.example:3128",
        "UV_SYSTEM_CERTS": "1",
        "UV_NATIVE_TLS": "1",
        "PIP_INDEX_URL": "https://mirror.example/simple",
        "UV_DEFAULT_INDEX": "https://mirror.example/simple",
        "UV_FIND_LINKS": "wheels",
    }
    env = isolated_environ(caller)
    for name in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_FIND_LINKS"):
        assert name not in env
    for name in set(caller) - {"PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_FIND_LINKS"}:
        assert env[name] == caller[name]


@pytest.mark.slow
def test_check_reaches_an_https_index_whose_ca_only_ssl_cert_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _https_index(tmp_path) as (url, root, bundle):
        _caller(monkeypatch, tmp_path, url)
        # the index is not trusted without the CA: the clean room says why and what to set
        refused = check(root)
        assert not refused.ok
        smoke = refused.steps[-1]
        assert smoke.name == "smoke", [s.to_dict() for s in refused.steps]
        assert [f.code for f in smoke.findings] == ["E021"]
        (item,) = smoke.findings
        assert "network configuration passed: REPROBRIDGE_INDEX_URL" in item.message
        assert item.hint is not None
        assert "SSL_CERT_FILE" in item.hint
        assert "--pass-env" in item.hint
        assert item.path == "/environment/lock"
        # the CA known only through SSL_CERT_FILE: the check passes
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
        monkeypatch.setenv("OTHER", "value")
        passed = check(root, pass_env=["SSL_CERT_FILE", "OTHER", "UNSET"])
        assert passed.ok, [s.to_dict() for s in passed.steps]
        assert passed.network_env == ["SSL_CERT_FILE", "REPROBRIDGE_INDEX_URL"]
        assert passed.to_dict()["env_passed"] == {
            "network": ["SSL_CERT_FILE", "REPROBRIDGE_INDEX_URL"],
            "pass_env": ["OTHER"],
        }


@pytest.mark.slow
def test_a_proxy_password_never_shows_in_the_output_or_the_files_of_a_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _https_index(tmp_path) as (url, root, bundle):
        _caller(monkeypatch, tmp_path, url)
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
        # the proxy is passed in, and the loopback index bypasses it (NO_PROXY)
        monkeypatch.setenv("HTTPS_PROXY", f"http://ada:{SECRET}@127.0.0.1:9")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        work = tmp_path / "work"
        work.mkdir()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "reprobridge_sdk",
                "check",
                str(root),
                "--format",
                "json",
                "--keep",
            ],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "TMPDIR": str(work)},
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["env_passed"]["network"] == [
            "HTTPS_PROXY",
            "NO_PROXY",
            "SSL_CERT_FILE",
            "REPROBRIDGE_INDEX_URL",
        ]
        assert "network configuration passed: HTTPS_PROXY, NO_PROXY" in done.stderr
        assert SECRET not in done.stdout
        assert SECRET not in done.stderr
        kept = Path(report["copy"]).parent
        assert kept.is_relative_to(work)
        assert (kept / "artifact" / "runs").is_dir()
        assert _files_holding(kept, SECRET) == []
