"""``reprobridge init --from SOURCE``: a scaffold around an imported repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from authoring_support import make_paper_repo, reprobridge, run_git

from reprobridge_sdk import api
from reprobridge_sdk.authoring.intake import readme_commands


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))


def test_init_from_finds_code_requirements_python_and_readme_commands(tmp_path: Path) -> None:
    repo = tmp_path / "paper"
    make_paper_repo(repo)
    (repo / "requirements.txt").write_text("numpy>=1.26\n", "utf-8")
    (repo / ".python-version").write_text("3.11.9\n", "utf-8")
    run_git("add", "-A", cwd=repo)
    run_git("commit", "-q", "-m", "deps", cwd=repo)
    commit = run_git("rev-parse", "HEAD", cwd=repo)
    done = reprobridge(
        "init",
        str(tmp_path / "art"),
        "--yes",
        "--from",
        str(repo),
        "--commit",
        commit,
        cwd=tmp_path,
        env={"REPROBRIDGE_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    root = tmp_path / "art"
    art = api.load(root)
    assert art.manifest.codebase.upstream.commit == commit
    assert art.manifest.codebase.upstream.repository == repo.resolve().as_uri()
    assert art.manifest.codebase.refined.kind == "patches"
    assert art.manifest.environment.python == "3.11"
    assert (root / "environment" / "requirements.in").read_text("utf-8").splitlines()[-1] == (
        "numpy>=1.26"
    )
    assert (root / "code" / "train.py").is_file()
    text = (root / "rra.yaml").read_text("utf-8")
    assert "#   python train.py --seed 1" in text.splitlines()
    # still a manifest the SDK reads, whose remaining placeholders init named
    assert "/codebase/upstream/commit" not in done.stdout
    assert "/artifact/paper/title" in done.stdout


def test_readme_commands_come_from_code_blocks_and_prompts() -> None:
    text = (
        "# Paper\n\nInstall with pip.\n\n```bash\npip install -r requirements.txt\n"
        "python train.py --epochs 10\npython train.py --epochs 10\n```\n\n"
        "$ bash scripts/eval.sh ckpt/\n\nWe used python for everything.\n"
    )
    assert readme_commands(text) == ["python train.py --epochs 10", "bash scripts/eval.sh ckpt/"]


@pytest.mark.parametrize(
    "pyproject",
    [
        "project = 1\n",  # not a table
        "[project]\nrequires-python = " + "[" * 5000 + "]" * 5000 + "\n",  # past the recursion
        "[project]\ndependencies = 'numpy'\nrequires-python = 3.11\n",  # wrong types
        "[project\n",  # not TOML
    ],
)
def test_init_from_a_hostile_pyproject_keeps_the_scaffold_values(
    tmp_path: Path, pyproject: str
) -> None:
    from reprobridge_sdk.authoring.intake import scaffold_from
    from reprobridge_sdk.authoring.scaffold import InitOptions

    repo = tmp_path / "paper"
    make_paper_repo(repo)
    for name in ("requirements.txt", "requirements.in", ".python-version"):
        (repo / name).unlink(missing_ok=True)  # pyproject.toml is the only place left to read
    (repo / "pyproject.toml").write_text(pyproject, "utf-8")
    run_git("add", "-A", cwd=repo)
    run_git("commit", "-q", "-m", "pyproject", cwd=repo)
    result = scaffold_from(tmp_path / "art", InitOptions(id="tiny", title="Tiny"), str(repo))
    assert (result.python, result.python_from, result.requirements_from) == (None, None, None)
    assert api.load(tmp_path / "art").manifest.codebase.upstream.commit == run_git(
        "rev-parse", "HEAD", cwd=repo
    )
