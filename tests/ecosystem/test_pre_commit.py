"""The ``reprobridge-validate`` hook, run by the real pre-commit on a git repository (slow).

``pre-commit try-repo`` installs this checkout (with its uncommitted changes) into a hook
environment of its own, as a user's ``repo:`` entry would, from the package index: the one
``REPROBRIDGE_INDEX_URL`` names when it is set, as for the other slow tests (``.ci/run
--wheelhouse`` points it at a local index that holds the package's dependencies and build
backend), else the public one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_the_hooks_file_declares_the_validate_hook() -> None:
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == (
        "reprobridge-validate",
        "reprobridge validate",
        "python",
    )


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_hook_passes_a_valid_artifact_and_fails_a_broken_one(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(
        REPO / "examples" / "digits-logreg",
        project / "digits",
        ignore=shutil.ignore_patterns("runs", "__pycache__"),
    )
    _git("init", "-q", cwd=project)
    _git("add", "-A", cwd=project)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    index = os.environ.get("REPROBRIDGE_INDEX_URL")
    if index:  # pip installs the hook environment (and its build backend) from that index
        env["PIP_INDEX_URL"] = index
    pre_commit = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "reprobridge-validate"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*pre_commit, "--all-files", "--color", "never"],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=900,
        )

    clean = run()
    assert clean.returncode == 0, clean.stdout + clean.stderr
    manifest = project / "digits" / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("  title:", "  titel:", 1))
    _git("add", "-A", cwd=project)
    broken = run()
    assert broken.returncode == 1
    assert "digits/rra.yaml" in broken.stdout
    assert " S001 " in broken.stdout
