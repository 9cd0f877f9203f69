"""Environments built with uv (and pip where asked) from either lock format, from loopback wheels.

Real ``uv venv`` / ``uv pip sync`` and ``python -m venv`` / ``pip install`` processes install
wheels written by the test and served on 127.0.0.1 (slow: builds real environments).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from eco_wheelhouse import Wheel, wheel_index

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env import ensure_environment
from reprobridge_sdk.env._installers import uv_binary
from reprobridge_sdk.env.venv import COMPLETE_MARKER, EnvironmentBuildError

pytestmark = pytest.mark.slow

PY = "{}.{}".format(*sys.version_info[:2])


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Wheel]]]:
    root = tmp_path_factory.mktemp("wheels")
    with wheel_index(root, [("alpha", "1.0"), ("beta", "2.0")]) as served:
        yield served


def _artifact(root: Path, lock_name: str, lock_text: str, fmt: str) -> Path:
    root.mkdir(parents=True)
    (root / lock_name).write_text(lock_text, "utf-8")
    (root / "rra.yaml").write_text(
        f'rra_version: "1.0"\nenvironment:\n  python: "{PY}"\n  lock:\n'
        f"    path: {lock_name}\n    format: {fmt}\n"
        f"    sha256: {file_sha256(root / lock_name)}\n",
        "utf-8",
    )
    return root


def _requirements(wheels: dict[str, Wheel]) -> str:
    return "".join(f"{w.name}=={w.version} --hash=sha256:{w.sha256}\n" for w in wheels.values())


def _versions(python: Path) -> list[str]:
    code = "import alpha, beta; print(alpha.__version__, beta.__version__)"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_uv_builds_from_hashed_requirements_in_place(
    index: tuple[str, dict[str, Wheel]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, wheels = index
    monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
    art = _artifact(tmp_path / "art", "requirements.txt", _requirements(wheels), "requirements")
    cache = tmp_path / "cache"
    python = ensure_environment(art, cache_dir=cache, installer="uv")
    assert _versions(python) == ["1.0", "2.0"]
    env_dir = python.parent.parent
    marker = json.loads((env_dir / COMPLETE_MARKER).read_text())
    assert marker["installer"].startswith("uv ")
    assert marker["lock_sha256"] == file_sha256(art / "requirements.txt")
    # Built where it lives: no temporary build path anywhere, nothing to relocate.
    assert ".build-" not in (env_dir / "pyvenv.cfg").read_text()
    assert [p.name for p in (cache / "envs").iterdir() if not p.name.endswith(".lock")] == [
        env_dir.name
    ]
    assert ensure_environment(art, cache_dir=cache, installer="uv") == python  # reused


def test_uv_installs_a_pylock_toml_as_it_is(
    index: tuple[str, dict[str, Wheel]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pylock's own file URLs are used: the configured index is unreachable."""
    url, _ = index
    source = tmp_path / "requirements.in"
    source.write_text("alpha\nbeta\n")
    pylock = tmp_path / "pylock.toml"
    uv = uv_binary()
    assert uv is not None
    subprocess.run(
        [uv, "pip", "compile", "--no-config", "--quiet", "--generate-hashes", "--index-url", url,
         "--format", "pylock.toml", "--output-file", str(pylock), str(source)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    art = _artifact(tmp_path / "art", "pylock.toml", pylock.read_text(), "pylock")
    monkeypatch.setenv("REPROBRIDGE_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens
    python = ensure_environment(art, cache_dir=tmp_path / "cache")
    assert _versions(python) == ["1.0", "2.0"]


def test_pip_fallback_builds_hashed_requirements(
    index: tuple[str, dict[str, Wheel]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, wheels = index
    monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
    art = _artifact(tmp_path / "art", "requirements.txt", _requirements(wheels), "requirements")
    python = ensure_environment(art, cache_dir=tmp_path / "cache", installer="pip")
    assert _versions(python) == ["1.0", "2.0"]
    marker = json.loads((python.parent.parent / COMPLETE_MARKER).read_text())
    assert marker["installer"].startswith("pip ")


def test_pip_refuses_a_pylock_toml_with_e013(tmp_path: Path) -> None:
    text = 'lock-version = "1.0"\ncreated-by = "test"\npackages = []\n'
    art = _artifact(tmp_path / "art", "pylock.toml", text, "pylock")
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError) as info:
        ensure_environment(art, cache_dir=cache, installer="pip")
    [item] = info.value.findings
    assert (item.code, item.file, item.path) == ("E013", "pylock.toml", "/environment/lock")
    assert not [p for p in (cache / "envs").iterdir() if not p.name.endswith(".lock")]


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_hash_mismatch_fails_with_e013_and_leaves_the_cache_clean(
    installer: str,
    index: tuple[str, dict[str, Wheel]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = index
    monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
    art = _artifact(
        tmp_path / "art",
        "requirements.txt",
        f"alpha==1.0 --hash=sha256:{'0' * 64}\n",
        "requirements",
    )
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError) as info:
        ensure_environment(art, cache_dir=cache, installer=installer)  # type: ignore[arg-type]
    [item] = info.value.findings
    assert item.code == "E013"
    assert info.value.message.endswith("a downloaded file does not match its hash in the lock")
    assert not [p for p in (cache / "envs").iterdir() if not p.name.endswith(".lock")]
