"""An artifact never configures its own check (security.md, configuration).

The two attacks first: an artifact's ``pyproject.toml`` whose ``ignore`` list hides its own
F003/F006 under ``cd ART && reprobridge validate .``, and a ``reprobridge.toml`` whose
``cache-dir`` points the runner at an environment the artifact ships. Then the rules that
replace the old search: the user's own project above the artifact still applies, the user's
configuration directory, ``--isolated``, ``--config FILE``, trees a command distrusts, and
the N030 notes of the committee-grade commands. Real processes, real files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from toy_study import make_artifact

from reprobridge_sdk import config
from reprobridge_sdk.config import choose_config, distrust, find_config, load_settings

CLI = [sys.executable, "-m", "reprobridge_sdk"]
IGNORE_ALL = '[tool.reprobridge]\nignore = ["F", "A", "X", "C"]\n'


@pytest.fixture(autouse=True)
def _fresh_choice() -> Iterator[None]:
    """Each test starts, and leaves the process, with the default choice of configuration."""
    choose_config()
    yield
    choose_config()


def _cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, check=False, cwd=cwd, env=env
    )


def _notes(text: str, code: str) -> list[str]:
    """The files named by the ``code`` lines of ``text`` (``FILE: CODE severity message``):
    stdout, or stderr when stdout holds a machine format."""
    return [
        line.split(": ", 1)[0]
        for line in text.splitlines()
        if f" {code} " in line and not line.startswith(" ")
    ]


def _hostile(root: Path) -> Path:
    """The toy with a link out of it (F003) and so a stale tree digest (F006)."""
    art = make_artifact(root)
    (art / "code" / "leak").symlink_to("/etc/hostname")
    return art


def _codes(stdout: str) -> set[str]:
    return {f["code"] for a in json.loads(stdout)["artifacts"] for f in a["findings"]}


def test_an_artifacts_own_ignore_list_does_not_hide_its_findings(tmp_path: Path) -> None:
    art = _hostile(tmp_path / "ART")
    (art / "pyproject.toml").write_text(IGNORE_ALL)
    done = _cli("validate", ".", "--format", "json", cwd=art)
    assert done.returncode == 1
    assert {"F003", "F006"} <= _codes(done.stdout)
    assert _notes(done.stderr, "N030") == [str(art / "pyproject.toml")]
    # from a directory inside the artifact too
    inside = _cli("validate", "..", "--format", "json", cwd=art / "code")
    assert {"F003", "F006"} <= _codes(inside.stdout)
    # the control: the same file, named by the user, does hide them
    named = _cli("--config", "pyproject.toml", "validate", ".", "--format", "json", cwd=art)
    assert (named.returncode, _codes(named.stdout) & {"F003", "F006"}) == (0, set())


def test_an_artifacts_cache_dir_does_not_choose_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    art = make_artifact(tmp_path / "ART")
    (art / "reprobridge.toml").write_text('cache-dir = "shipped"\n')
    env = {k: v for k, v in os.environ.items() if k != "REPROBRIDGE_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    done = _cli("run", ".", "smoke", "--seeds", "0", cwd=art, env=env)
    assert done.returncode == 0, done.stderr
    assert not (art / "shipped").exists()
    assert (tmp_path / "xdg-cache" / "reprobridge" / "envs").is_dir()
    assert _notes(done.stderr, "N030") == [str(art / "reprobridge.toml")]  # a notice
    monkeypatch.chdir(art)
    settings = load_settings(environ={})
    assert (settings.cache_dir, settings.skipped) == (None, (art / "reprobridge.toml",))


def test_the_users_project_above_the_artifact_still_applies(tmp_path: Path) -> None:
    (tmp_path / "reprobridge.toml").write_text('ignore = ["G003"]\n')
    art = make_artifact(tmp_path / "submissions" / "ART")
    (art / "pyproject.toml").write_text(IGNORE_ALL)
    settings = load_settings(start=art / "code", environ={})
    assert settings.config_file == tmp_path / "reprobridge.toml"
    assert settings.ignore == ("G003",)
    assert settings.skipped == (art / "pyproject.toml",)


def test_the_users_configuration_directory_is_the_last_place(tmp_path: Path) -> None:
    user = tmp_path / "xdg" / "reprobridge" / "reprobridge.toml"
    user.parent.mkdir(parents=True)
    user.write_text("strict = true\n")
    project = tmp_path / "project"
    project.mkdir()
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert find_config(project, environ=environ) == user
    assert load_settings(start=project, environ=environ).strict is True
    (project / "reprobridge.toml").write_text("strict = false\n")
    assert load_settings(start=project, environ=environ).config_file == project / "reprobridge.toml"


def test_isolated_reads_no_file_and_excludes_config(tmp_path: Path) -> None:
    art = _hostile(tmp_path / "ART")
    (tmp_path / "reprobridge.toml").write_text('ignore = ["F"]\n')
    plain = _cli("validate", "ART", "--format", "json", cwd=tmp_path)
    assert _codes(plain.stdout) & {"F003", "F006"} == set()  # the user's own file applies
    isolated = _cli("--isolated", "validate", "ART", "--format", "json", cwd=tmp_path)
    assert {"F003", "F006"} <= _codes(isolated.stdout)
    both = _cli("--isolated", "--config", "reprobridge.toml", "validate", "ART", cwd=tmp_path)
    assert both.returncode == 2
    assert art.is_dir()


def test_a_distrusted_tree_configures_nothing(tmp_path: Path) -> None:
    """``build`` distrusts its source repository, which holds no rra.yaml yet."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[tool.reprobridge]\ncache-dir = "envs"\n')
    assert load_settings(start=repo, environ={}).cache_dir == repo / "envs"
    distrust(repo)
    settings = load_settings(start=repo, environ={})
    assert (settings.cache_dir, settings.skipped) == (None, (repo / "pyproject.toml",))
    choose_config()  # a new invocation forgets it
    assert config._choice.untrusted == ()


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "--table"],
        ["audit", "--table", "--curation"],
        ["review", "--no-sandbox", "--env", "current"],
    ],
)
def test_a_committee_table_says_it_ignores_an_artifacts_settings(
    tmp_path: Path, command: list[str]
) -> None:
    art = make_artifact(tmp_path / "ART")
    (art / "pyproject.toml").write_text(IGNORE_ALL)
    (art / "reprobridge.toml").write_text('cache-dir = "shipped"\n')
    done = _cli(*command, str(art), "--format", "json", cwd=tmp_path)
    assert done.returncode in {0, 1}, done.stderr
    assert sorted(_notes(done.stderr, "N030")) == [
        str(art / "pyproject.toml"),
        str(art / "reprobridge.toml"),
    ]
