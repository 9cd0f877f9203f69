"""``check`` runs its steps with the SDK that was called, never another installation.

The clean shell has no ``PYTHONPATH``: a step started as ``python -m reprobridge_sdk`` would
import whatever SDK the interpreter has installed, which may be older than the one the author
runs from a checkout. Here the SDK called is a copy reached only through ``PYTHONPATH`` (the
interpreter has another one installed); the copy notes every process that imports it, and
the check's validation step must be among them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import reprobridge_sdk

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


def test_the_steps_import_the_sdk_that_was_called(tmp_path: Path) -> None:
    called = tmp_path / "called"
    shutil.copytree(
        Path(reprobridge_sdk.__file__).parent,
        called / "reprobridge_sdk",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    marker = tmp_path / "imports.txt"
    with (called / "reprobridge_sdk" / "__init__.py").open("a", encoding="utf-8") as init:
        init.write(
            f"\nwith open({str(marker)!r}, 'a', encoding='utf-8') as _seen:\n"
            "    _seen.write(' '.join(__import__('sys').argv) + '\\n')\n"
        )
    artifact = tmp_path / "digits-logreg"
    shutil.copytree(EXAMPLE, artifact, ignore=shutil.ignore_patterns("runs"))
    (artifact / "GUIDE.md").unlink()  # validation fails: the check stops after its step
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "check", str(artifact), "--no-sandbox"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(called)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = marker.read_text("utf-8").splitlines()
    assert any("check" in line for line in lines)  # the caller imported the copy
    steps = [line for line in lines if "--isolated" in line]
    assert steps and all("validate" in line for line in steps), lines
