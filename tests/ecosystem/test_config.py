"""Settings: flags over environment over file; E016 for bad files and variables; colour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.config import color_enabled, find_config, load_settings, read_config
from reprobridge_sdk.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"


def _e016(exc: pytest.ExceptionInfo[UsageError]) -> tuple[str, str, int, int, str | None]:
    [item] = exc.value.findings
    return item.code, Path(item.file).name, item.line, item.col, item.hint


def test_defaults_without_any_source(tmp_path: Path) -> None:
    settings = load_settings(start=tmp_path, environ={})
    assert (settings.select, settings.ignore, settings.strict) == ((), (), False)
    assert (settings.executor, settings.cache_dir, settings.report_format) == (
        "local",
        None,
        "text",
    )
    assert settings.config_file is None or settings.config_file.parent not in tmp_path.parents


def test_pyproject_table_is_read_and_relative_paths_follow_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.reprobridge]\nselect = ["s", "R010"]\nstrict = true\n'
        'executor = "dask"\ncache-dir = "cache"\n\n[tool.reprobridge.report]\nformat = "sarif"\n'
    )
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    settings = load_settings(start=sub, environ={})
    assert settings.config_file == tmp_path / "pyproject.toml"
    assert settings.select == ("S", "R010")
    assert settings.strict is True
    assert settings.executor == "dask"
    assert settings.cache_dir == tmp_path / "cache"
    assert settings.report_format == "sarif"
    assert settings.origins["strict"] == f"file:{tmp_path / 'pyproject.toml'}"


def test_reprobridge_toml_wins_over_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.reprobridge]\nstrict = true\n")
    (tmp_path / "reprobridge.toml").write_text("strict = false\nignore = ['R']\n")
    assert find_config(tmp_path) == tmp_path / "reprobridge.toml"
    settings = load_settings(start=tmp_path, environ={})
    assert (settings.strict, settings.ignore) == (False, ("R",))


def test_a_pyproject_without_the_table_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "reprobridge.toml").write_text("strict = true\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "reprobridge-user"\n')
    assert find_config(inner) == tmp_path / "reprobridge.toml"


def test_flags_over_environment_over_file(tmp_path: Path) -> None:
    (tmp_path / "reprobridge.toml").write_text(
        'select = ["S"]\nignore = ["R010"]\nstrict = true\nexecutor = "local"\n'
    )
    env = {
        "REPROBRIDGE_SELECT": "R,S",
        "REPROBRIDGE_STRICT": "no",
        "REPROBRIDGE_EXECUTOR": "dask",
        "REPROBRIDGE_IGNORE": "",  # empty: as if unset
    }
    settings = load_settings({"select": ("L",), "ignore": ()}, start=tmp_path, environ=env)
    assert settings.select == ("L",)
    assert settings.ignore == ("R010",)
    assert settings.strict is False
    assert settings.executor == "dask"
    assert settings.origins == {
        "select": "flag",
        "ignore": f"file:{tmp_path / 'reprobridge.toml'}",
        "strict": "env:REPROBRIDGE_STRICT",
        "executor": "env:REPROBRIDGE_EXECUTOR",
    }
    assert load_settings({"strict": True}, start=tmp_path, environ=env).strict is True


@pytest.mark.parametrize(
    ("text", "line", "col", "hint"),
    [
        ("[tool.reprobridge]\n  ignores = ['R010']\n", 2, 3, "did you mean 'ignore'?"),
        ("[tool.reprobridge]\nstrict = 'maybe'\n", 2, 1, "true or false"),
        ("[tool.reprobridge]\nselect = ['Q999']\n", 2, 1, None),
        ("[tool.reprobridge]\nexecutor = 'Rm -rf'\n", 2, 1, 'a lower-case name such as "local"'),
        ("[tool.reprobridge]\ncache-dir = ''\n", 2, 1, "a directory path, relative or absolute"),
        ("[tool.reprobridge.report]\nformat = 'pdf'\n", 2, 1, None),
        ("[tool.reprobridge]\nstrict = tru\n", 2, 10, "fix the TOML syntax (https://toml.io)"),
        ("[tool.reprobridge]\nselect = [\n", 3, 1, "fix the TOML syntax (https://toml.io)"),
    ],
)
def test_bad_files_raise_e016_with_position(
    tmp_path: Path, text: str, line: int, col: int, hint: str | None
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as info:
        read_config(path)
    code, name, got_line, got_col, got_hint = _e016(info)
    assert (code, name, got_line, got_col) == ("E016", "pyproject.toml", line, col)
    if hint is not None:
        assert got_hint == hint


def test_hostile_config_files(tmp_path: Path) -> None:
    """Binary junk, a non-table tool entry and a huge nesting are errors, not tracebacks."""
    path = tmp_path / "reprobridge.toml"
    path.write_bytes(b"strict = true\n\xff\xfe\x00\n")
    with pytest.raises(UsageError) as info:
        read_config(path)
    assert _e016(info)[0:4] == ("E016", "reprobridge.toml", 2, 1)  # at the first bad byte
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool]\nreprobridge = "strict"\n')
    with pytest.raises(UsageError) as info:
        read_config(pyproject)
    assert _e016(info)[0] == "E016"
    path.write_text("report = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(UsageError) as info:
        read_config(path)
    assert _e016(info)[0] == "E016"


def test_a_user_configuration_place_that_cannot_be_looked_into_holds_none(
    tmp_path: Path,
) -> None:
    """A configuration home another user owns (EACCES) or a name the system refuses
    (ENAMETOOLONG, which root meets too) is no file: the command goes on, as git does."""
    unreachable = tmp_path / ("x" * 300)
    assert find_config(tmp_path, environ={"XDG_CONFIG_HOME": str(unreachable)}) is None
    env = {**os.environ, "XDG_CONFIG_HOME": str(unreachable)}
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", str(EXAMPLE)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr


def test_a_bad_environment_variable_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        load_settings(start=tmp_path, environ={"REPROBRIDGE_STRICT": "perhaps"})
    [item] = info.value.findings
    assert item.code == "E016"
    assert "$REPROBRIDGE_STRICT" in item.message


def test_validate_reads_the_configuration_and_flags_override_it(tmp_path: Path) -> None:
    art = tmp_path / "art"
    import shutil

    shutil.copytree(EXAMPLE, art, ignore=shutil.ignore_patterns("runs", ".venv"))
    (tmp_path / "reprobridge.toml").write_text("[report]\nformat = 'json'\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBRIDGE_")}
    cli = [sys.executable, "-m", "reprobridge", "validate", "art"]
    proc = subprocess.run(cli, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert json.loads(proc.stdout)["format_version"] == 1
    proc = subprocess.run(
        [*cli, "--format", "github"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.stdout.splitlines()[-1].startswith("1 artifact checked")
    (tmp_path / "reprobridge.toml").write_text("[report]\nformats = 'json'\n")
    proc = subprocess.run(cli, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 2
    assert "reprobridge.toml:2:1: E016 error" in proc.stdout
    assert "hint: did you mean 'report.format'?" in proc.stdout


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("environ", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),  # an empty NO_COLOR is as if unset (no-color.org)
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": "0"}, False, True),  # any non-empty value forces (force-color.org)
        ({"FORCE_COLOR": ""}, False, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_color_follows_no_color_and_force_color(
    environ: dict[str, str], tty: bool, expected: bool
) -> None:
    assert color_enabled(_Stream(tty), environ) is expected


def test_the_run_display_keeps_colour_with_an_empty_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reprobridge_sdk.run.progress import LiveProgress

    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert LiveProgress(_Stream(False), live=False).color is True  # type: ignore[arg-type]
    monkeypatch.setenv("NO_COLOR", "1")
    assert LiveProgress(_Stream(True), live=False).color is False  # type: ignore[arg-type]


def test_a_huge_pyproject_above_is_not_read_whole(tmp_path: Path) -> None:
    """Every folder above the working one is looked at: a pyproject.toml of 8 GiB (sparse, so
    it costs no disk) is read only up to the configuration limit, and reported as E016."""
    pyproject = tmp_path / "pyproject.toml"
    with pyproject.open("wb") as handle:
        handle.truncate(8 << 30)
    here = tmp_path / "work"
    here.mkdir()
    assert find_config(here) == pyproject
    with pytest.raises(UsageError) as info:
        read_config(pyproject)
    assert _e016(info)[0:2] == ("E016", "pyproject.toml")
