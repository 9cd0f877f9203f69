"""Environments built from locks with real uv and venvs, and checked (slow: needs PyPI)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env import (
    check_environment,
    ensure_environment,
    environment_path,
    lock_artifact,
)
from reprobridge_sdk.env._resolvers import index_url, isolated_environ
from reprobridge_sdk.env.check import check_accelerator
from reprobridge_sdk.env.venv import COMPLETE_MARKER, EnvironmentBuildError
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.locks.lockfile import read_lock
from reprobridge_sdk.model import Accelerator

pytestmark = pytest.mark.slow

PY = ".".join(map(str, sys.version_info[:2]))


def _codes(findings: list) -> list[tuple[str, str, int]]:  # type: ignore[type-arg]
    return [(f.code, f.file, f.line) for f in findings if f.severity.value != "info"]


def _lock_line(lock: Path, name: str) -> int:
    for number, line in enumerate(lock.read_text("utf-8").splitlines(), start=1):
        if line.startswith(f"{name}=="):
            return number
    raise AssertionError(name)


@pytest.fixture
def locked(tiny_artifact: Path) -> Path:
    lock_artifact(tiny_artifact, python=PY)
    return tiny_artifact


def test_build_reuse_and_check(locked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    python = ensure_environment(locked, cache_dir=cache)
    env_dir = python.parent.parent
    assert env_dir.parent == cache / "envs"
    marker = json.loads((env_dir / COMPLETE_MARKER).read_text("utf-8"))
    assert marker["lock_sha256"] == file_sha256(locked / "requirements.txt")
    # Built in place by uv: pyvenv.cfg names no temporary build directory.
    assert marker["installer"].startswith("uv ")
    assert ".build-" not in (env_dir / "pyvenv.cfg").read_text("utf-8")
    proc = subprocess.run(
        [str(python), "-c", "import six, iniconfig; print(six.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "1.16.0"
    # Reused, not rebuilt.
    assert ensure_environment(locked, cache_dir=cache) == python
    assert json.loads((env_dir / COMPLETE_MARKER).read_text("utf-8")) == marker
    assert environment_path(locked, cache_dir=cache) == env_dir
    assert [p.name for p in (cache / "envs").iterdir() if not p.name.endswith(".lock")] == [
        env_dir.name
    ]
    assert _codes(check_environment(locked, cache_dir=cache)) == []
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "env",
            "check",
            str(locked),
            "--cache-dir",
            str(cache),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["errors"] == 0


def test_wrong_environment_is_reported_precisely(locked: Path, tmp_path: Path) -> None:
    venv_dir = tmp_path / "wrong"
    subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True)
    python = venv_dir / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--index-url",
            index_url(),  # the SDK's own setting: REPROBRIDGE_INDEX_URL, else the public index
            "six==1.17.0",
        ],
        check=True,
        env=isolated_environ(),
    )
    lock = locked / "requirements.txt"
    findings = check_environment(locked, python=python)
    assert _codes(findings) == sorted(
        [
            ("E001", "requirements.txt", _lock_line(lock, "iniconfig")),
            ("E002", "requirements.txt", _lock_line(lock, "six")),
        ]
    )
    six = next(f for f in findings if f.code == "E002")
    assert six.path == "/distributions/six"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "env",
            "check",
            str(locked),
            "--python",
            str(python),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    codes = [f["code"] for f in json.loads(proc.stdout)["artifacts"][0]["findings"]]
    assert codes == ["E001", "E002"]


def test_not_built_and_python_mismatch(locked: Path, tmp_path: Path) -> None:
    findings = check_environment(locked, cache_dir=tmp_path / "empty")
    assert [(f.code, f.file) for f in findings] == [("E011", "rra.yaml")]
    text = (locked / "rra.yaml").read_text("utf-8").replace(f'python: "{PY}"', 'python: "3.9"')
    (locked / "rra.yaml").write_text(text, "utf-8")
    findings = check_environment(locked, python=sys.executable)
    e004 = [f for f in findings if f.code == "E004"]
    assert [(f.file, f.line, f.path) for f in e004] == [("rra.yaml", 4, "/environment/python")]


def _record_lock_digest(art: Path) -> None:
    doc = yamlio.load(art / "rra.yaml")
    data = copy.deepcopy(doc.data)  # update() compares the new data with the document's
    data["environment"]["lock"]["sha256"] = file_sha256(art / "requirements.txt")
    yamlio.update(doc, data)
    yamlio.save(doc, art / "rra.yaml")


def test_tampered_lock(locked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    lock = locked / "requirements.txt"
    text = lock.read_text("utf-8")
    digest = next(
        line.split("sha256:")[1][:64] for line in text.splitlines() if "--hash=sha256:" in line
    )
    lock.write_text(text.replace(digest, "0" * 64), "utf-8")
    with pytest.raises(EnvironmentBuildError) as info:
        ensure_environment(locked, cache_dir=cache)
    assert [f.code for f in info.value.findings] == ["E014"]
    assert [f.code for f in check_environment(locked, cache_dir=cache)] == ["E014"]
    # A lock whose digest is recorded but whose file hashes are wrong: pip refuses the
    # download, the build fails with E013 and the cache is left clean.
    lock.write_text(f"six==1.16.0 --hash=sha256:{'0' * 64}\n", "utf-8")
    _record_lock_digest(locked)
    with pytest.raises(EnvironmentBuildError) as info:
        ensure_environment(locked, cache_dir=cache)
    assert [f.code for f in info.value.findings] == ["E013"]
    assert "hash" in info.value.message
    envs = cache / "envs"
    assert [p.name for p in envs.iterdir() if not p.name.endswith(".lock")] == []


def test_concurrent_builders_share_one_build(locked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    code = (
        "import sys; from reprobridge_sdk.env.venv import ensure_environment;"
        f"print(ensure_environment({str(locked)!r}, cache_dir={str(cache)!r}))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1]
    envs = [p for p in (cache / "envs").iterdir() if not p.name.endswith(".lock")]
    assert len(envs) == 1


def test_system_packages_and_accelerator(
    make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    extra = (
        "  system_packages:\n"
        "    - name: coreutils\n"
        "      command: sh\n"
        "    - name: frobnicator\n"
        "      command: frobnicate-xyz-not-here\n"
        "    - name: reprobridge-no-such-package\n"
        "  accelerator:\n"
        "    kind: cuda\n"
        "    gpus: 2\n"
    )
    art = make_artifact(tmp_path / "sys", "six\n", python=PY, extra=extra)
    findings = check_environment(art, python=sys.executable)
    by_code = {f.code: f for f in findings}
    assert (by_code["E005"].file, by_code["E005"].line) == ("rra.yaml", 11)
    assert by_code["E005"].path == "/environment/system_packages/1/command"
    if shutil.which("dpkg-query"):
        assert by_code["E006"].path == "/environment/system_packages/2/name"
    if shutil.which("nvidia-smi") is None:
        # No GPU on this machine: a clear finding, not a failure of the check itself.
        assert by_code["E007"].path == "/environment/accelerator"
        assert "2 CUDA GPU" in by_code["E007"].message
    assert "E012" in by_code  # no lock declared


def test_accelerator_none_passes() -> None:
    assert check_accelerator(Accelerator(kind="none")) == []


def test_bundled_example_builds_and_checks(repo_root: Path, tmp_path: Path) -> None:
    """The example's lock builds in a fresh venv with pip, and the result checks clean."""
    art = tmp_path / "example"
    shutil.copytree(repo_root / "examples" / "digits-logreg", art)
    cache = tmp_path / "cache"
    python = ensure_environment(art, cache_dir=cache)
    assert _codes(check_environment(art, cache_dir=cache)) == []
    proc = subprocess.run(
        [str(python), "-c", "import sklearn; print(sklearn.__version__)"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONNOUSERSITE": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    # Re-locking the example keeps its pins (the lock is the resolver's preference): the same
    # distributions at the same versions, whatever the header says.
    lock = art / "environment" / "requirements.lock"
    before = lock.read_bytes()
    pins = {(e.name, e.version) for e in read_lock(lock).entries}
    result = lock_artifact(art)
    assert result.findings == []
    assert {(e.name, e.version) for e in read_lock(lock).entries} == pins
    assert result.changed == (lock.read_bytes() != before)


def test_pylock_lock_builds(tiny_artifact: Path, tmp_path: Path, public_index: None) -> None:
    """uv installs a PEP 751 lock as it is and builds the same environment."""
    lock_artifact(tiny_artifact, python=PY, fmt="pylock")
    cache = tmp_path / "cache"
    python = ensure_environment(tiny_artifact, cache_dir=cache)
    proc = subprocess.run(
        [str(python), "-c", "import six; print(six.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "1.16.0"
    assert _codes(check_environment(tiny_artifact, cache_dir=cache)) == []


def test_lock_from_pyproject(make_artifact: Callable[..., Path], tmp_path: Path) -> None:
    art = make_artifact(tmp_path / "art", "")
    (art / "requirements.in").unlink()
    (art / "code").mkdir()
    (art / "code" / "pyproject.toml").write_text(
        '[project]\nname = "study"\nversion = "0.1"\ndependencies = ["six==1.16.0"]\n', "utf-8"
    )
    text = (art / "rra.yaml").read_text("utf-8")
    (art / "rra.yaml").write_text(
        text.replace("requirements: requirements.in", "requirements: code/pyproject.toml"),
        "utf-8",
    )
    result = lock_artifact(art, python=PY)
    assert result.findings == []
    assert "six==1.16.0" in result.path.read_text("utf-8")
