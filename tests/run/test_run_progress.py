"""The live progress display on a real pseudo-terminal, and NO_COLOR."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path


def _run_on_pty(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        args, stdin=secondary, stdout=secondary, stderr=secondary, env=env, close_fds=True
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO once the terminal's last writer is gone
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    return process.wait(timeout=120), b"".join(chunks)


def test_live_status_line_with_colour_on_a_terminal(toy: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "reprobridge_sdk",
        "run",
        "--no-validate",
        str(toy),
        "slow",
        "-j",
        "3",
    ]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    code, out = _run_on_pty([*command, "--env", "current"], env)
    assert code == 0
    assert b"\r\x1b[K" in out  # the status line is redrawn in place
    assert b"runs: " in out
    assert b"\x1b[32mok\x1b[0m" in out


def test_no_color_on_a_terminal(toy: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "reprobridge_sdk",
        "run",
        "--no-validate",
        str(toy),
        "slow",
        "-j",
        "3",
    ]
    code, out = _run_on_pty([*command, "--env", "current"], {**os.environ, "NO_COLOR": "1"})
    assert code == 0
    assert b"\x1b[32m" not in out
    assert b"runs: " in out
