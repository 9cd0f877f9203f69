"""A real one-node Slurm cluster for the tests of the Slurm route.

CI starts the cluster with ``.ci/start-slurm``. Elsewhere a test module that needs it runs
where ``sinfo`` answers and is skipped, with the reason, where no Slurm controller is
reachable; under CI (``CI`` set) a missing cluster is a failure instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _slurm_answers() -> bool:
    if shutil.which("sinfo") is None:
        return False
    done = subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30, check=False)
    return done.returncode == 0 and bool(done.stdout.strip())


def require_slurm() -> None:
    """Skip the calling test module where no Slurm controller answers (fail under CI)."""
    if not _slurm_answers():
        if os.environ.get("CI"):
            pytest.fail("CI must start a Slurm cluster (.ci/start-slurm)", pytrace=False)
        pytest.skip("no Slurm controller answers on this machine", allow_module_level=True)
