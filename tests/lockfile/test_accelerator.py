"""What in a lock betrays the CUDA build, and the CPU form of declared requirements (no I/O)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobridge_sdk.env import lock_artifact
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.locks.accelerator import (
    borrowed_hashes,
    cpu_requirements,
    cuda_entries,
    is_cuda_entry,
    variant_findings,
)
from reprobridge_sdk.locks.lockfile import Lock, LockEntry

_H1, _H2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64


@pytest.mark.parametrize(
    ("name", "version", "platform", "cuda"),
    [
        ("torch", "2.5.1", "linux-x86_64", True),  # PyPI's Linux build is the CUDA one
        ("torch", "2.5.1", "windows-amd64", True),
        ("torch", "2.5.1", "darwin-arm64", False),  # PyPI's macOS build has no CUDA
        ("torch", "2.5.1+cpu", "linux-x86_64", False),
        ("torchvision", "0.20.1+cu121", "darwin-arm64", True),
        ("torchaudio", "2.5.1+rocm6.2", "linux-x86_64", True),
        ("nvidia-cublas-cu12", "12.4.5.8", "linux-x86_64", True),
        ("triton", "3.1.0", "linux-x86_64", True),
        ("cupy-cuda12x", "13.3.0", "linux-x86_64", True),
        ("numpy", "2.1.3", "linux-x86_64", False),
        ("jax", "0.4.35", "linux-x86_64", False),
        ("jax-cuda12-plugin", "0.4.35", "linux-x86_64", True),
        ("jax-cuda12-pjrt", "0.4.35", "linux-x86_64", True),
        ("jaxlib", "0.4.7+cuda11.cudnn86", "linux-x86_64", True),
        ("jaxlib", "0.4.35", "linux-x86_64", False),
        ("smallnet", "1.0+cpu", None, False),
    ],
)
def test_a_cuda_build_is_told_by_its_name_its_local_version_or_its_platform(
    name: str, version: str, platform: str | None, cuda: bool
) -> None:
    assert is_cuda_entry(LockEntry(name, version), platform) is cuda


def test_only_a_cpu_lock_reports_its_cuda_builds_with_their_lines() -> None:
    lock = Lock(
        "requirements",
        (
            LockEntry("numpy", "2.1.3", (_H1,), line=3),
            LockEntry("torch", "2.5.1", (_H2,), line=5),
            LockEntry("nvidia-nccl-cu12", "2.21.5", (_H2,), line=7),
        ),
    )
    assert [e.name for e in cuda_entries(lock, "linux-x86_64")] == ["torch", "nvidia-nccl-cu12"]
    found = variant_findings(lock, "cpu", file="requirements.txt", platform="linux-x86_64")
    assert [(f.code, f.file, f.line, f.col) for f in found] == [
        ("L012", "requirements.txt", 5, 1),
        ("L012", "requirements.txt", 7, 1),
    ]
    assert variant_findings(lock, "cuda", file="requirements.txt") == []
    assert variant_findings(lock, None, file="requirements.txt") == []


def test_a_cpu_pin_with_the_hash_of_another_cuda_pin_is_l012() -> None:
    cuda = Lock(
        "requirements",
        (LockEntry("torch", "2.5.1", (_H1,)), LockEntry("filelock", "3.16.1", (_H2,))),
    )
    cpu = Lock(
        "requirements",
        (
            LockEntry("torch", "2.5.1+cpu", (_H1,), line=4),  # the CUDA file's hash
            LockEntry("filelock", "3.16.1", (_H2,), line=6),  # the same file on both: fine
        ),
    )
    found = borrowed_hashes(cpu, cuda, file="requirements.txt")
    assert [(f.code, f.line) for f in found] == [("L012", 4)]


def test_cpu_requirements_drop_cuda_only_pins_and_cut_cuda_local_versions() -> None:
    text = (
        "# the study's requirements\n"
        "torch==2.1.0+cu118  # as the README says\n"
        "torchvision==0.16.0+cu118 ; sys_platform == 'linux'\n"
        "nvidia-cudnn-cu11==8.7.0.84\n"
        "-r more.in\n"
        "numpy>=1.26\n"
    )
    cpu, changed = cpu_requirements(text)
    assert cpu.splitlines() == [
        "# the study's requirements",
        "torch==2.1.0",
        "torchvision==0.16.0 ; sys_platform == 'linux'",
        "-r more.in",
        "numpy>=1.26",
    ]
    assert changed == [
        "torch==2.1.0+cu118",
        "torchvision==0.16.0+cu118 ; sys_platform == 'linux'",
        "nvidia-cudnn-cu11==8.7.0.84",
    ]


def test_an_unknown_accelerator_target_is_l011(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text(
        'rra_version: "1.0"\nenvironment:\n  python: "3.11"\n  requirements: r.in\n', "utf-8"
    )
    (tmp_path / "r.in").write_text("six\n", "utf-8")
    with pytest.raises(UsageError) as caught:
        lock_artifact(tmp_path, accelerator="gpu")  # type: ignore[arg-type]
    assert [f.code for f in caught.value.findings] == ["L011"]


def test_jax_gpu_extras_become_the_cpu_extra() -> None:
    cpu, changed = cpu_requirements("jax[cuda12]==0.4.35\njax[cuda12_pip,foo]>=0.4\njax[cpu]\n")
    assert cpu.splitlines() == ["jax[cpu]==0.4.35", "jax[cpu,foo]>=0.4", "jax[cpu]"]
    assert changed == ["jax[cuda12]==0.4.35", "jax[cuda12_pip,foo]>=0.4"]
