"""The CPU and CUDA builds of a framework, locked and installed from a loopback index.

A stand-in for PyTorch's two builds, as tiny wheels written by the test: ``smallnet 1.0`` on
the default index depends on ``nvidia-standin`` (the CUDA build, as PyPI's torch on Linux
pulls in ``nvidia-*`` wheels), and ``smallnet 1.0+cpu`` sits on a CPU index laid out as
PyTorch's (``<base>/cpu/<project>/``). Both indexes are PEP 503 pages served on 127.0.0.1;
real ``uv pip compile`` and ``uv pip sync`` processes lock and install (slow: real venvs).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from eco_wheelhouse import Wheel, build_wheel, serve_index, write_index

from reprobridge_sdk.agent.builder import ENV_DIR, build_environment
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env import ensure_environment, lock_artifact
from reprobridge_sdk.env.lock import machine_has_gpu
from reprobridge_sdk.env.venv import EnvironmentBuildError, is_complete
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.locks.lockfile import LockError, read_lock
from reprobridge_sdk.model.build import DependencyFile, Gate, ImportUse, IntakeRecord, PythonEra

pytestmark = pytest.mark.slow

PY = "{}.{}".format(*sys.version_info[:2])
_PROBE = (
    "import importlib.util, smallnet; "
    "print(smallnet.__version__, importlib.util.find_spec('nvidia_standin') is not None)"
)


@dataclass(frozen=True)
class Indexes:
    root: Path
    url: str
    accelerator_base: str
    cpu: Wheel
    cuda: Wheel
    runtime: Wheel
    gpu_only: Wheel

    def environ(self) -> dict[str, str]:
        return {
            "REPROBRIDGE_INDEX_URL": self.url,
            "REPROBRIDGE_ACCELERATOR_INDEX_URL": self.accelerator_base,
        }


@pytest.fixture
def indexes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Indexes]:
    """The default index (CUDA build, its runtime, a GPU-only package) and the CPU index."""
    build = tmp_path / "build"
    cuda = build_wheel(build / "cuda", "smallnet", "1.0", ("nvidia-standin==1.0",))
    runtime = build_wheel(build / "cuda", "nvidia-standin", "1.0")
    gpu_only = build_wheel(build / "cuda", "gpuonly", "1.0", ("nvidia-standin==1.0",))
    cpu = build_wheel(build / "cpu", "smallnet", "1.0+cpu")
    # A distribution both indexes serve, the CPU index an older copy (as PyTorch's mirrors).
    helper_new = build_wheel(build / "cuda", "helper", "2.0")
    helper_old = build_wheel(build / "cpu", "helper", "1.0")
    root = tmp_path / "served"
    write_index(root, [cuda.path, runtime.path, gpu_only.path, helper_new.path])
    write_index(root / "whl", [cpu.path, helper_old.path])
    (root / "whl" / "simple").rename(root / "whl" / "cpu")  # PyTorch's layout: <base>/cpu/
    with serve_index(root) as url:
        found = Indexes(
            root,
            url,
            url.removesuffix("/simple") + "/whl",
            cpu,
            cuda,
            runtime,
            gpu_only,
        )
        for key, value in found.environ().items():
            monkeypatch.setenv(key, value)
        yield found


@pytest.fixture
def no_gpu() -> None:
    if machine_has_gpu():
        pytest.skip("auto targets the CPU build only on a machine without a GPU")


def _artifact(root: Path, requirements: str, accelerator: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "rra.yaml").write_text(
        f'rra_version: "1.0"\nenvironment:\n  python: "{PY}"\n'
        f"  requirements: requirements.in\n{accelerator}",
        "utf-8",
    )
    (root / "requirements.in").write_text(requirements, "utf-8")
    return root


def _manifest(root: Path) -> dict[str, object]:
    data = yamlio.load(root / "rra.yaml").data
    assert isinstance(data, dict)
    return data


def _pins(lock: Path) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    return {e.name: (e.version, e.hashes) for e in read_lock(lock, "requirements").entries}


def _installed(python: Path) -> list[str]:
    out = subprocess.run([str(python), "-c", _PROBE], capture_output=True, text=True, check=True)
    return out.stdout.split()


def _lock_by_hand(root: Path, text: str, accelerator: str) -> Path:
    """An artifact whose lock and ``resolved_for`` are written as a stranger might."""
    root.mkdir(parents=True)
    (root / "requirements.txt").write_text(text, "utf-8")
    (root / "rra.yaml").write_text(
        f'rra_version: "1.1"\nenvironment:\n  python: "{PY}"\n  lock:\n'
        "    path: requirements.txt\n    format: requirements\n"
        f"    sha256: {file_sha256(root / 'requirements.txt')}\n"
        f"    resolved_for: {{python: '{PY}', platform: linux-x86_64, "
        f"accelerator: {accelerator}}}\n",
        "utf-8",
    )
    return root


def _built_environments(cache: Path) -> list[Path]:
    envs = cache / "envs"
    return [p for p in envs.iterdir() if is_complete(p)] if envs.is_dir() else []


def test_the_default_lock_of_a_cpu_only_claim_takes_the_cpu_build(
    indexes: Indexes, no_gpu: None, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "smallnet\n")
    result = lock_artifact(art)
    assert result.accelerator == "cpu"
    assert _pins(art / "requirements.txt") == {
        "smallnet": ("1.0+cpu", (f"sha256:{indexes.cpu.sha256}",))
    }
    assert "reprobridge lock --accelerator cpu" in (art / "requirements.txt").read_text()
    manifest = _manifest(art)
    environment = manifest["environment"]
    assert isinstance(environment, dict)
    assert environment["lock"]["resolved_for"]["accelerator"] == "cpu"
    assert manifest["rra_version"] == "1.1"  # the field is 1.1's: the producer declares it
    assert not list(art.glob(".requirements.in*"))  # the CPU requirements were scratch
    python = ensure_environment(art, cache_dir=tmp_path / "cache", installer="uv")
    assert _installed(python) == ["1.0+cpu", "False"]


def test_a_cuda_target_takes_the_default_index_build_and_its_runtime(
    indexes: Indexes, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "smallnet\n")
    env = {**os.environ, **indexes.environ()}
    argv = [sys.executable, "-m", "reprobridge_sdk", "lock", str(art)]
    proc = subprocess.run(
        [*argv, "--accelerator", "cuda", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["resolved_for"]["accelerator"] == "cuda"
    assert _pins(art / "requirements.txt") == {
        "smallnet": ("1.0", (f"sha256:{indexes.cuda.sha256}",)),
        "nvidia-standin": ("1.0", (f"sha256:{indexes.runtime.sha256}",)),
    }
    python = ensure_environment(art, cache_dir=tmp_path / "cache", installer="uv")
    assert _installed(python) == ["1.0", "True"]


def test_a_declared_gpu_makes_auto_the_cuda_build(indexes: Indexes, tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", "smallnet\n", "  accelerator: {kind: cuda, gpus: 1}\n")
    assert lock_artifact(art).accelerator == "cuda"
    assert _pins(art / "requirements.txt")["smallnet"][0] == "1.0"


def test_an_unreachable_cpu_index_leaves_auto_the_default_build_with_l014(
    indexes: Indexes, no_gpu: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine that reaches the default index but not the CPU builds' one (a mirror of
    PyPI only): ``auto`` locks the default build and says so; an explicit ``cpu`` fails."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: connection refused
    monkeypatch.setenv("REPROBRIDGE_ACCELERATOR_INDEX_URL", f"http://127.0.0.1:{port}/whl")
    art = _artifact(tmp_path / "art", "smallnet\n")
    result = lock_artifact(art)
    assert result.accelerator == "cuda"
    assert [(f.code, f.file) for f in result.findings] == [("L014", "requirements.in")]
    assert _pins(art / "requirements.txt")["smallnet"][0] == "1.0"
    environment = _manifest(art)["environment"]
    assert isinstance(environment, dict)
    assert environment["lock"]["resolved_for"]["accelerator"] == "cuda"
    explicit = _artifact(tmp_path / "explicit", "smallnet\n")
    with pytest.raises(LockError) as caught:
        lock_artifact(explicit, accelerator="cpu")
    assert [f.code for f in caught.value.findings] == ["L010"]
    assert not (explicit / "requirements.txt").exists()


def test_a_cuda_only_pin_is_left_out_of_the_cpu_lock_with_l013(
    indexes: Indexes, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "smallnet\nnvidia-standin==1.0\n")
    result = lock_artifact(art, accelerator="cpu")
    assert [(f.code, f.file) for f in result.findings] == [("L013", "requirements.in")]
    assert set(_pins(art / "requirements.txt")) == {"smallnet"}


def test_a_package_without_a_cpu_build_is_l012_and_nothing_is_written(
    indexes: Indexes, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "gpuonly\n")
    before = (art / "rra.yaml").read_bytes()
    with pytest.raises(LockError) as caught:
        lock_artifact(art, accelerator="cpu")
    assert [(f.code, f.file) for f in caught.value.findings] == [("L012", "requirements.txt")]
    assert not (art / "requirements.txt").exists()
    assert (art / "rra.yaml").read_bytes() == before


def test_an_index_serving_a_cpu_build_that_does_not_match_its_hash_builds_nothing(
    indexes: Indexes, no_gpu: None, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "smallnet\n")
    lock_artifact(art)
    # The index now serves other bytes under the locked file's name (and page).
    forged = build_wheel(tmp_path / "forged", "smallnet", "1.0+cpu", ("nvidia-standin==1.0",))
    served = indexes.root / "whl" / "files" / forged.path.name
    served.write_bytes(forged.path.read_bytes())
    write_index(indexes.root / "whl", [served])
    (indexes.root / "whl" / "cpu" / "smallnet" / "index.html").write_text(
        (indexes.root / "whl" / "simple" / "smallnet" / "index.html").read_text()
    )
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError) as caught:
        ensure_environment(art, cache_dir=cache, installer="uv")
    assert [(f.code, f.file) for f in caught.value.findings] == [("E013", "requirements.txt")]
    assert _built_environments(cache) == []


def test_a_cpu_lock_whose_hash_names_the_cuda_wheel_builds_nothing(
    indexes: Indexes, tmp_path: Path
) -> None:
    art = _lock_by_hand(
        tmp_path / "art", f"smallnet==1.0+cpu --hash=sha256:{indexes.cuda.sha256}\n", "cpu"
    )
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError) as caught:
        ensure_environment(art, cache_dir=cache, installer="uv")
    assert [(f.code, f.file) for f in caught.value.findings] == [("E013", "requirements.txt")]
    assert _built_environments(cache) == []


def test_a_cpu_lock_that_pins_the_cuda_build_is_l012_before_any_install(
    indexes: Indexes, tmp_path: Path
) -> None:
    art = _lock_by_hand(
        tmp_path / "art",
        f"smallnet==1.0 --hash=sha256:{indexes.cuda.sha256}\n"
        f"nvidia-standin==1.0 --hash=sha256:{indexes.runtime.sha256}\n",
        "cpu",
    )
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError) as caught:
        ensure_environment(art, cache_dir=cache, installer="uv")
    assert [(f.code, f.file, f.line) for f in caught.value.findings] == [
        ("L012", "requirements.txt", 2)
    ]
    assert not (cache / "envs").exists() or _built_environments(cache) == []


def test_a_cpu_index_page_listing_the_cuda_wheels_hash_is_l012_at_lock_time(
    indexes: Indexes, tmp_path: Path
) -> None:
    page = indexes.root / "whl" / "cpu" / "smallnet" / "index.html"
    page.write_text(page.read_text().replace(indexes.cpu.sha256, indexes.cuda.sha256))
    art = _artifact(tmp_path / "art", "smallnet\n")
    with pytest.raises(LockError) as caught:
        lock_artifact(art, accelerator="cpu")
    # uv takes an index's hashes as they are listed: the lock names the CUDA file.
    assert [(f.code, f.file, f.line) for f in caught.value.findings] == [
        ("L012", "requirements.txt", 3)
    ]
    assert not (art / "requirements.txt").exists()


def test_a_pin_the_cpu_index_mirrors_only_in_an_older_version_still_resolves(
    indexes: Indexes, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "smallnet\nhelper==2.0\n")
    assert lock_artifact(art, accelerator="cpu").accelerator == "cpu"
    pins = _pins(art / "requirements.txt")
    assert {name: version for name, (version, _) in pins.items()} == {
        "smallnet": "1.0+cpu",
        "helper": "2.0",
    }
    python = ensure_environment(art, cache_dir=tmp_path / "cache", installer="uv")
    assert _installed(python) == ["1.0+cpu", "False"]


def test_the_build_agent_locks_the_cpu_build_on_a_machine_without_a_gpu(
    indexes: Indexes, no_gpu: None, tmp_path: Path
) -> None:
    """The sixth repository's last stop: a CUDA-only torch lock for a model that trains on a
    CPU. The Builder's resolution pins the default index's build and its runtime; the lock
    takes the CPU build and leaves the runtime out."""
    intake = IntakeRecord(
        inputs_digest="0" * 64,
        seconds=0,
        gate=Gate(passed=True),
        source="repo",
        repo_name="repo",
        commit="a" * 40,
        dependency_files=[
            DependencyFile(path="requirements.txt", kind="requirements", requirements=["smallnet"])
        ],
        imports=[ImportUse(module="smallnet", files=["train.py"])],
        python=PythonEra(syntax="3", commit_date="2030-01-01T00:00:00+00:00", target=PY),
    )
    record = build_environment(
        intake, tmp_path / "state", inputs_digest="0" * 64, cache_dir=tmp_path / "cache"
    )
    assert record.gate.passed, record.gate
    assert record.pins == ["nvidia-standin==1.0", "smallnet==1.0"]
    lock = tmp_path / "state" / ENV_DIR / "environment" / "requirements.lock"
    assert _pins(lock) == {"smallnet": ("1.0+cpu", (f"sha256:{indexes.cpu.sha256}",))}
    assert record.interpreter is not None
    assert _installed(Path(record.interpreter)) == ["1.0+cpu", "False"]


def test_requirements_that_name_the_cpu_build_lock_with_the_cpu_index(
    indexes: Indexes, no_gpu: None, tmp_path: Path
) -> None:
    art = _artifact(tmp_path / "art", "smallnet==1.0+cpu\n")  # as a CPU user's pip freeze
    assert lock_artifact(art).accelerator == "cpu"
    assert _pins(art / "requirements.txt")["smallnet"][0] == "1.0+cpu"
    with pytest.raises(LockError) as caught:  # the default index has no such build
        lock_artifact(art, accelerator="cuda", upgrade=True)
    assert [f.code for f in caught.value.findings] == ["L010"]
