"""``reprobridge lock`` with the real resolvers against the public index (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env import lock_artifact
from reprobridge_sdk.env.lock import strip_local_options
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.locks.lockfile import LockError, check_lock, read_lock

pytestmark = pytest.mark.slow


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_lock_writes_hashed_lock_and_updates_manifest(tiny_artifact: Path) -> None:
    result = lock_artifact(tiny_artifact)
    lock_path = tiny_artifact / "requirements.txt"
    assert result.path == lock_path
    assert result.changed
    assert check_lock(lock_path) == []
    lock = read_lock(lock_path)
    assert {(e.name, e.version) for e in lock.entries} == {
        ("six", "1.16.0"),
        ("iniconfig", "2.0.0"),
    }
    assert all(e.hashes for e in lock.entries)
    text = (tiny_artifact / "rra.yaml").read_text("utf-8")
    # Comments survive the round-trip edit.
    assert "# the interpreter the study used" in text
    assert "# declared requirements, resolved by 'reprobridge lock'" in text
    data = yamlio.load(tiny_artifact / "rra.yaml").data
    assert data["environment"]["lock"] == {
        "path": "requirements.txt",
        "format": "requirements",
        "sha256": file_sha256(lock_path),
        "resolved_for": {
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "platform": result.platform,
            "resolver": result.resolver,
        },
    }
    assert result.resolver.startswith("uv ")
    # Locking again changes nothing.
    again = lock_artifact(tiny_artifact)
    assert not again.changed
    assert again.sha256 == result.sha256
    assert sorted(p.name for p in tiny_artifact.iterdir()) == [
        "requirements.in",
        "requirements.txt",
        "rra.yaml",
    ]


def test_local_configuration_does_not_leak(tiny_artifact: Path, tmp_path: Path) -> None:
    """A machine's local mirrors (env vars, config files) never reach the lock."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    uv_toml = tmp_path / "uv.toml"
    uv_toml.write_text(f'find-links = ["{mirror}"]\n', "utf-8")
    pip_conf = tmp_path / "pip.conf"
    pip_conf.write_text(f"[global]\nextra-index-url = file://{mirror}\n", "utf-8")
    env = {
        **os.environ,
        "UV_INDEX_URL": f"file://{mirror}",
        "UV_FIND_LINKS": str(mirror),
        "UV_CONFIG_FILE": str(uv_toml),
        "PIP_CONFIG_FILE": str(pip_conf),
        "PIP_FIND_LINKS": str(mirror),
        "PIP_EXTRA_INDEX_URL": f"file://{mirror}",
    }
    proc = _cli("lock", str(tiny_artifact), "--format", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["findings"] == []
    text = (tiny_artifact / "requirements.txt").read_text("utf-8")
    assert "file:" not in text
    assert str(mirror) not in text
    assert "--find-links" not in text


def test_unresolvable_requirement_writes_nothing(
    tmp_path: Path, make_artifact: Callable[..., Path]
) -> None:
    art = make_artifact(tmp_path / "art", "six==0.0.0.0.1\n")
    before = (art / "rra.yaml").read_text("utf-8")
    with pytest.raises(LockError) as info:
        lock_artifact(art)
    assert [f.code for f in info.value.findings] == ["L010"]
    assert sorted(p.name for p in art.iterdir()) == ["requirements.in", "rra.yaml"]
    assert (art / "rra.yaml").read_text("utf-8") == before
    proc = _cli("lock", str(art))
    assert proc.returncode == 1
    assert "L010" in proc.stdout


def test_unreachable_index_is_a_finding(tiny_artifact: Path) -> None:
    env = {**os.environ, "REPROBRIDGE_INDEX_URL": "http://127.0.0.1:9/simple"}
    proc = _cli("lock", str(tiny_artifact), env=env)
    assert proc.returncode == 1
    assert "L010" in proc.stdout
    assert not (tiny_artifact / "requirements.txt").exists()


def test_pylock_format(tiny_artifact: Path, public_index: None) -> None:
    result = lock_artifact(tiny_artifact, fmt="pylock")
    assert result.path.name == "pylock.toml"
    assert check_lock(result.path) == []
    assert {e.name for e in read_lock(result.path).entries} == {"six", "iniconfig"}
    data = yamlio.load(tiny_artifact / "rra.yaml").data
    assert data["environment"]["lock"]["format"] == "pylock"
    assert data["environment"]["lock"]["path"] == "pylock.toml"


def test_pip_tools_resolver(tiny_artifact: Path) -> None:
    python = ".".join(map(str, sys.version_info[:2]))
    result = lock_artifact(tiny_artifact, resolver="pip-tools", python=python)
    assert result.resolver.startswith("pip-tools ")
    assert check_lock(result.path) == []
    assert {(e.name, e.version) for e in read_lock(result.path).entries} == {
        ("six", "1.16.0"),
        ("iniconfig", "2.0.0"),
    }


def test_usage_errors(tmp_path: Path, make_artifact: Callable[..., Path]) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    with pytest.raises(UsageError):
        lock_artifact(art, resolver="pip-tools", python="2.7")
    with pytest.raises(UsageError):
        lock_artifact(art, output="../outside.txt")
    with pytest.raises(UsageError):
        lock_artifact(art, fmt="pylock", output="locks.toml")
    (art / "requirements.in").unlink()
    proc = _cli("lock", str(art))
    assert proc.returncode == 2


def test_strip_local_options() -> None:
    text = (
        "--index-url https://pypi.org/simple\n"
        "--extra-index-url file:///srv/mirror/simple\n"
        "--find-links /srv/wheelhouse\n"
        "-f=./wheels\n"
        "six==1.16.0\n"
    )
    assert strip_local_options(text) == "--index-url https://pypi.org/simple\nsix==1.16.0\n"
