"""``check`` shares the caller's installer caches with its clean shell, and nothing else.

A loopback PEP 503 index counts the downloads of the one wheel the lock pins: the first check
downloads it, a second check installs it from the caller's uv cache, and a check with
``installer_cache=False`` downloads it again (its caches are empty).
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.authoring.clean_shell import (
    NETWORK_ENV,
    clean_environment,
    installer_cache_dirs,
)
from reprobridge_sdk.authoring.digests import refresh
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
from eco_wheelhouse import build_wheel, write_index


def test_the_clean_shell_gets_the_caches_and_no_other_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NETWORK_ENV:  # passed too: tests/authoring/test_check_network.py
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    monkeypatch.delenv("PIP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("UV_CONSTRAINT", "constraints.txt")
    monkeypatch.setenv("PIP_REQUIRE_VIRTUALENV", "1")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    # where the machine's interpreters live (pyenv, uv): here, a pyenv root of its own
    (tmp_path / "pyenv" / "versions").mkdir(parents=True)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    env = clean_environment(tmp_path / "home")
    assert env["UV_CACHE_DIR"] == str(tmp_path / "uv")
    assert env["PIP_CACHE_DIR"] == str(tmp_path / "xdg" / "pip")
    assert env["PYENV_ROOT"] == str(tmp_path / "pyenv")
    homes = {"PYENV_ROOT"} | ({"UV_PYTHON_INSTALL_DIR"} & set(env))
    assert (
        set(env)
        == {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "NO_COLOR"}
        | {
            "UV_CACHE_DIR",
            "PIP_CACHE_DIR",
        }
        | homes
    )
    cold = clean_environment(tmp_path / "home", installer_cache=False)
    assert set(cold) == {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "NO_COLOR"} | homes


def test_the_default_cache_directories_follow_each_installer() -> None:
    home = {"HOME": "/home/ada"}
    assert installer_cache_dirs(home) == {
        "UV_CACHE_DIR": "/home/ada/.cache/uv",
        "PIP_CACHE_DIR": (
            "/home/ada/Library/Caches/pip" if sys.platform == "darwin" else "/home/ada/.cache/pip"
        ),
    }
    xdg = {"HOME": "/home/ada", "XDG_CACHE_HOME": "/var/cache/ada", "PIP_CACHE_DIR": "/p"}
    assert installer_cache_dirs(xdg) == {
        "UV_CACHE_DIR": "/var/cache/ada/uv",
        "PIP_CACHE_DIR": "/p",
    }


class _Counting(http.server.SimpleHTTPRequestHandler):
    downloads: list[str]

    def do_GET(self) -> None:
        if self.path.startswith("/files/"):
            self.downloads.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _counting_index(root: Path) -> Iterator[tuple[str, list[str]]]:
    downloads: list[str] = []
    handler = type("Handler", (_Counting,), {"downloads": downloads})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple", downloads
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_second_check_installs_from_the_callers_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = build_wheel(tmp_path / "build", "alpha", "1.0")
    write_index(tmp_path / "index", [wheel.path])
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    (root / "environment" / "requirements.txt").write_text(
        f"alpha==1.0 --hash=sha256:{wheel.sha256}\n", "utf-8"
    )
    refresh(root, write=True)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip-cache"))
    with _counting_index(tmp_path / "index") as (url, downloads):
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)  # passes into the clean room unasked
        first = check(root)
        assert first.ok, [s.to_dict() for s in first.steps]
        assert downloads == ["/files/alpha-1.0-py3-none-any.whl"]
        second = check(root)
        assert second.ok, [s.to_dict() for s in second.steps]
        assert len(downloads) == 1  # installed from the caller's cache
        cold = check(root, installer_cache=False)
        assert cold.ok, [s.to_dict() for s in cold.steps]
        assert len(downloads) == 2  # empty caches: downloaded again
