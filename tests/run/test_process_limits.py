"""``run_process(limits=...)``: a committee's or a bench's budget bounds the process and its
children (the one owner of these limits).

``memory`` is the address space of each process (an allocation past it raises
``MemoryError`` in Python), ``cpus`` the cores it may run on, ``cpu_seconds`` its CPU time
and ``max_file`` the largest file it may write; a child inherits them. Running out of memory
is read from the process's result (:func:`out_of_memory`).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.run.process import (
    TMP_SIZE,
    ResourceLimits,
    ended_by,
    out_of_memory,
    run_process,
)

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


SPIN = "while True:\n    pass\n"
WRITE = "open('big', 'wb').write(b'x' * (4 << 20))\nprint('written')\n"


def test_cpu_time_past_the_budget_ends_the_process_by_sigxcpu(tmp_path: Path) -> None:
    code, _text = _run(tmp_path, SPIN, ResourceLimits(cpu_seconds=1))
    assert ended_by(code) == signal.SIGXCPU


def test_a_file_past_the_budget_is_refused(tmp_path: Path) -> None:
    """A program is ended by SIGXFSZ (here a shell's ``head``: the shell reports 128 + 25);
    Python ignores that signal, so its write fails with EFBIG instead."""
    outcome = run_process(
        ["/bin/sh", "-c", "head -c 4194304 /dev/zero > big"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        log_path=tmp_path / "sh.txt",
        timeout=120,
        limits=ResourceLimits(max_file=1 << 20),
    )
    assert ended_by(outcome.exit_code) == signal.SIGXFSZ
    assert (tmp_path / "big").stat().st_size == 1 << 20
    code, text = _run(tmp_path, WRITE, ResourceLimits(max_file=1 << 20))
    assert code != 0 and "File too large" in text and "written" not in text
    assert _run(tmp_path, WRITE, ResourceLimits(max_file=8 << 20)) == (0, "written\n")


def test_the_sandbox_tmp_is_the_memory_bound_or_a_gibibyte() -> None:
    assert ResourceLimits().tmp_size == TMP_SIZE == 1 << 30
    assert ResourceLimits(memory=256 << 20).tmp_size == 256 << 20
    # a size asked for (run --sandbox-tmp) wins over both; it bounds no process
    assert ResourceLimits(memory=256 << 20, tmp=64 << 20).tmp_size == 64 << 20
    assert ResourceLimits(tmp=2 << 30).tmp_size == 2 << 30
    assert ResourceLimits(tmp=64 << 20).preexec() is None


def test_a_signal_is_read_from_the_process_or_the_sandbox_status() -> None:
    assert ended_by(-9) == ended_by(128 + 9) == signal.SIGKILL
    assert ended_by(0) is ended_by(1) is ended_by(None) is ended_by(128) is None
    assert ended_by(255) is None  # an exit status a program chose, not a signal


#: Kills itself as the kernel's out-of-memory killer would: the OOM killer itself cannot be
#: triggered safely on a shared machine, and what the runner sees is the same SIGKILL.
KILLED = "import os, signal\nprint('working', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n"


def test_out_of_memory_is_read_from_the_result_not_only_the_log(tmp_path: Path) -> None:
    code, text = _run(tmp_path, KILLED, None)
    assert (ended_by(code), text) == (signal.SIGKILL, "working\n")
    assert out_of_memory(code, tmp_path / "log.txt")  # nothing in the log says so
    code, _text = _run(tmp_path, ALLOCATE, ResourceLimits(memory=256 * 2**20))
    assert out_of_memory(code, tmp_path / "log.txt")  # exit 1: its MemoryError says why


def test_a_log_that_only_talks_of_memory_is_no_out_of_memory(tmp_path: Path) -> None:
    """A hostile or chatty program that prints the markers but succeeds, or fails another
    way with none of them, is not out of memory; an unreadable log is not either."""
    boast = "print('MemoryError: out of memory (not really)')\n"
    code, _text = _run(tmp_path, boast, None)
    assert code == 0 and not out_of_memory(code, tmp_path / "log.txt")
    code, _text = _run(tmp_path, "raise SystemExit(3)\n", None)
    assert not out_of_memory(code, tmp_path / "log.txt")
    assert not out_of_memory(1, tmp_path / "missing.txt")
