"""GPU checks (E007-E010) and the GPU part of the snapshot, with a recorded ``nvidia-smi``.

Why not the real thing: this project's test machines have no NVIDIA GPU and no driver, so the
real ``nvidia-smi`` cannot run here. Instead, a stand-in ``nvidia-smi`` (and ``nvcc``) is put
first on PATH: a real executable that prints what the real tools print on a machine with two
A100 GPUs (driver 535.104.05, CUDA 12.2), recorded below, or a variant of it. Everything from
the lookup on PATH to the parsing of the CSV and of the banner runs for real.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.env import capture_snapshot
from reprobridge_sdk.env.check import check_accelerator
from reprobridge_sdk.env.snapshot import gpu_info
from reprobridge_sdk.model import Accelerator, GpuInfo

# `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,nounits`
CSV_TWO_A100 = (
    "NVIDIA A100-SXM4-40GB, 40960, 535.104.05\nNVIDIA A100-SXM4-40GB, 40960, 535.104.05\n"
)
# The first lines of plain `nvidia-smi` (the table of processes is left out).
BANNER = """\
Mon Nov 30 12:00:00 2026
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
"""
# `nvcc --version`
NVCC_12_4 = """\
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Tue_Feb_27_16:19:38_PST_2024
Cuda compilation tools, release 12.4, V12.4.99
Build cuda_12.4.r12.4/compiler.33961263_0
"""


def _tool(bin_dir: Path, name: str, *, query: str = "", plain: str = "", code: int = 0) -> None:
    """An executable ``name`` printing ``query`` for ``--query-gpu=...`` and ``plain`` else."""
    script = bin_dir / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"query, plain = {query!r}, {plain!r}\n"
        "asked = any(a.startswith('--query-gpu=') for a in sys.argv[1:])\n"
        "sys.stdout.write(query if asked else plain)\n"
        f"sys.exit({code})\n",
        "utf-8",
    )
    script.chmod(0o755)


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory first on PATH with a stand-in ``nvcc`` that prints no version (no toolkit)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "nvcc", plain="")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return bin_dir


def _codes(accelerator: Accelerator) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in check_accelerator(accelerator)]


def test_snapshot_lists_the_gpus(fake_bin: Path) -> None:
    _tool(fake_bin, "nvidia-smi", query=CSV_TWO_A100, plain=BANNER)
    expected = GpuInfo(
        name="NVIDIA A100-SXM4-40GB", memory_mb=40960, driver="535.104.05", cuda="12.2"
    )
    assert gpu_info() == [expected, expected]
    assert capture_snapshot().gpus == [expected, expected]


def test_snapshot_tolerates_unknown_memory_and_blank_lines(fake_bin: Path) -> None:
    _tool(fake_bin, "nvidia-smi", query="\nTesla T4, [N/A], 470.82\n, 1, 2\nbad line\n")
    assert gpu_info() == [GpuInfo(name="Tesla T4", memory_mb=None, driver="470.82", cuda=None)]


def test_a_failing_nvidia_smi_means_no_gpu(fake_bin: Path) -> None:
    _tool(fake_bin, "nvidia-smi", query=CSV_TWO_A100, plain=BANNER, code=9)
    assert gpu_info() == []
    assert _codes(Accelerator(kind="cuda", gpus=1)) == [("E007", "/environment/accelerator")]
    (item,) = check_accelerator(Accelerator(kind="cuda", gpus=1))
    assert "nvidia-smi lists no GPU" in item.message  # not "is not installed": it is there


def test_enough_gpus_memory_and_cuda_pass(fake_bin: Path) -> None:
    _tool(fake_bin, "nvidia-smi", query=CSV_TWO_A100, plain=BANNER)
    assert _codes(Accelerator(kind="cuda", gpus=2, gpu_memory_gb=40, cuda="12.2")) == []
    assert _codes(Accelerator(kind="cuda", gpus=1, gpu_memory_gb=16, cuda="11.8")) == []


def test_too_few_gpus_too_little_memory_and_an_old_driver(fake_bin: Path) -> None:
    _tool(fake_bin, "nvidia-smi", query=CSV_TWO_A100, plain=BANNER)
    found = check_accelerator(Accelerator(kind="cuda", gpus=4, gpu_memory_gb=80, cuda="12.4"))
    assert [(f.code, f.path) for f in found] == [
        ("E008", "/environment/accelerator/gpus"),
        ("E010", "/environment/accelerator/gpu_memory_gb"),
        ("E010", "/environment/accelerator/gpu_memory_gb"),
        ("E009", "/environment/accelerator/cuda"),
    ]
    assert "2 visible" in found[0].message
    assert "40960 MB" in found[1].message
    assert "the driver reports 12.2" in found[3].message


def test_the_toolkit_version_wins_over_the_driver(fake_bin: Path) -> None:
    _tool(fake_bin, "nvidia-smi", query=CSV_TWO_A100, plain=BANNER)
    _tool(fake_bin, "nvcc", plain=NVCC_12_4)
    assert _codes(Accelerator(kind="cuda", gpus=2, cuda="12.4")) == []
    (item,) = check_accelerator(Accelerator(kind="cuda", gpus=2, cuda="12.5"))
    assert (item.code, item.path) == ("E009", "/environment/accelerator/cuda")
    assert "nvcc reports 12.4" in item.message


def test_a_cuda_version_that_cannot_be_read(fake_bin: Path) -> None:
    # A driver banner without "CUDA Version" and no toolkit version: E009, cannot be read.
    _tool(fake_bin, "nvidia-smi", query=CSV_TWO_A100, plain="NVIDIA-SMI has failed\n")
    (item,) = check_accelerator(Accelerator(kind="cuda", gpus=1, cuda="12.2"))
    assert (item.code, item.path) == ("E009", "/environment/accelerator/cuda")
    assert "cannot be read" in item.message
