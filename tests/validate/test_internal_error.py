"""An exception that escapes a command exits 3 with one line; the traceback only on request.

An internal error is a bug we do not know of, so no real input provokes one: these tests
inject one (a command's library call raises) in a real child process.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from reprobridge_sdk.cli import DEBUG_VAR, EXIT_INTERNAL

_SCRIPT = """
import sys
import reprobridge_sdk.cli._schema as command

def broken(name):
    raise RuntimeError("injected failure")

command.packaged_schema_text = broken
from reprobridge_sdk.cli import main
main(sys.argv[1:])
"""


def _run(*args: str, debug_env: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != DEBUG_VAR}
    if debug_env is not None:
        env[DEBUG_VAR] = debug_env
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )


def test_internal_error_exits_3_with_one_line() -> None:
    proc = _run("schema")
    assert proc.returncode == EXIT_INTERNAL == 3
    assert proc.stdout == ""
    first, hint = proc.stderr.splitlines()
    assert "RuntimeError: injected failure" in first
    assert "(at -c:" not in first and "in broken)" in first  # the frame that raised
    assert DEBUG_VAR in hint
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "env"), [(("--debug", "schema"), None), (("schema",), "1"), (("schema",), "true")]
)
def test_debug_shows_the_traceback(args: tuple[str, ...], env: str | None) -> None:
    proc = _run(*args, debug_env=env)
    assert proc.returncode == EXIT_INTERNAL
    assert proc.stderr.startswith("Traceback (most recent call last):")
    assert proc.stderr.splitlines()[-1].endswith("in broken)")


def test_usage_errors_keep_exit_2() -> None:
    proc = _run("schema", "--write", "--check")
    assert proc.returncode == 2
