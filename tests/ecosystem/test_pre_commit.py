"""The ``reprobridge-validate`` hook, run by the real pre-commit on a git repository (slow).

The hook's repository is this checkout as it is, uncommitted changes included, committed into
a scratch repository (as ``pre-commit try-repo`` does) and named by the project's
``.pre-commit-config.yaml`` at that commit, as a user's ``repo:`` entry would be: both runs of
the test then share one hook environment. pre-commit installs it from the package index: the
one ``REPROBRIDGE_INDEX_URL`` names when it is set, as for the other slow tests (``.ci/run
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
HOOK = "reprobridge-validate"


def test_the_hooks_file_declares_the_validate_hook() -> None:
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == (
        "reprobridge-validate",
        "reprobridge validate",
        "python",
    )


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def _hook_repository(target: Path) -> str:
    """This checkout's files (tracked and new, not ignored) committed into ``target``; the
    commit id."""
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the checkout is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git("init", "-q", cwd=target)
    _git("add", "-A", cwd=target)
    _git("commit", "-q", "--no-verify", "-m", "the checkout under test", cwd=target)
    return _git("rev-parse", "HEAD", cwd=target).strip()


def test_the_hook_passes_a_valid_artifact_and_fails_a_broken_one(tmp_path: Path) -> None:
    identity = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), **identity}
    index = os.environ.get("REPROBRIDGE_INDEX_URL")
    if index:  # pip installs the hook environment (and its build backend) from that index
        env["PIP_INDEX_URL"] = index
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in identity.items():
            patch.setenv(name, value)
        rev = _hook_repository(hooks)
        project = tmp_path / "project"
        shutil.copytree(
            REPO / "examples" / "digits-logreg",
            project / "digits",
            ignore=shutil.ignore_patterns("runs", "__pycache__"),
        )
        config = {"repos": [{"repo": str(hooks), "rev": rev, "hooks": [{"id": HOOK}]}]}
        (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), "utf-8")
        _git("init", "-q", cwd=project)
        _git("add", "-A", cwd=project)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
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
    # one hook environment served both runs
    assert len(list((tmp_path / "pre-commit-home").glob("repo*/py_env-*"))) == 1
