"""``run_process(max_output=...)``: a process that prints without end is stopped, its log cut
at the cap, and a process within the cap is left alone."""

from __future__ import annotations

import sys
from pathlib import Path

from reprobridge_sdk.run.process import run_process

FLOOD = "import sys\nwhile True:\n    sys.stdout.write('y' * 8192 + '\\n')\n"


def test_a_flood_is_stopped_at_the_cap(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    outcome = run_process(
        [sys.executable, "-c", FLOOD],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        log_path=log,
        timeout=120,
        grace=1.0,
        max_output=100_000,
    )
    assert outcome.flooded and not outcome.timed_out
    assert log.stat().st_size == 100_000
    assert outcome.exit_code != 0  # stopped, not finished


def test_output_within_the_cap_is_kept_whole(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    outcome = run_process(
        [sys.executable, "-c", "print('x' * 999)"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        log_path=log,
        timeout=120,
        max_output=1000,
    )
    assert not outcome.flooded and outcome.exit_code == 0
    assert log.read_text() == "x" * 999 + "\n"
