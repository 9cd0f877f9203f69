"""``run_process(limits=...)``: a committee's budget bounds the process and its children.

``memory`` is the address space of each process (an allocation past it raises
``MemoryError`` in Python), ``cpus`` the cores it may run on; a child inherits both.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.run.process import ResourceLimits, run_process

ALLOCATE = "bytearray(512 * 2**20)\nprint('allocated')\n"
CORES = "import os\nprint('cores', len(os.sched_getaffinity(0)))\n"
CHILD = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', sys.argv[1]], check=True)\n"


def _run(tmp_path: Path, code: str, limits: ResourceLimits | None, *args: str) -> tuple[int, str]:
    log = tmp_path / "log.txt"
    log.unlink(missing_ok=True)
    outcome = run_process(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        log_path=log,
        timeout=120,
        limits=limits,
    )
    assert outcome.exit_code is not None
    return outcome.exit_code, log.read_text()


def test_memory_past_the_budget_is_refused(tmp_path: Path) -> None:
    code, text = _run(tmp_path, ALLOCATE, ResourceLimits(memory=256 * 2**20))
    assert code != 0
    assert "MemoryError" in text
    assert "allocated" not in text
    # a child of the process has the same bound
    code, text = _run(tmp_path, CHILD, ResourceLimits(memory=256 * 2**20), ALLOCATE)
    assert code != 0
    assert "MemoryError" in text


def test_memory_within_the_budget_is_granted(tmp_path: Path) -> None:
    assert _run(tmp_path, ALLOCATE, ResourceLimits(memory=2 * 2**30)) == (0, "allocated\n")
    assert _run(tmp_path, ALLOCATE, None) == (0, "allocated\n")


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_cores_are_bounded(tmp_path: Path) -> None:
    assert _run(tmp_path, CORES, ResourceLimits(cpus=1)) == (0, "cores 1\n")
    available = len(os.sched_getaffinity(0))
    assert _run(tmp_path, CORES, ResourceLimits(cpus=4096)) == (0, f"cores {available}\n")
    assert _run(tmp_path, CHILD, ResourceLimits(cpus=1), CORES) == (0, "cores 1\n")


def test_no_limits_run_no_code_in_the_child() -> None:
    assert ResourceLimits().preexec() is None
