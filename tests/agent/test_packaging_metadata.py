"""``setup.cfg`` and ``setup.py`` read once for requirements, name and version, and console
scripts: the one reader the three callers share, and hostile files (never run, never a
traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.agent.console_scripts import console_scripts
from reprobridge_sdk.agent.dependencies import dependency_files
from reprobridge_sdk.agent.own_distribution import own_distribution
from reprobridge_sdk.agent.packaging_metadata import (
    MAX_TEXT,
    SetupMetadata,
    read_setup_cfg,
    read_setup_py,
)

_SETUP_PY = """\
from setuptools import setup, find_packages

REQUIRES = ["numpy>=1.20", " scipy ", ""]
SCRIPTS = ["mytool = mypkg.cli:main", "broken"]
setup(
    name="mypkg",
    version="1.2",
    packages=find_packages(),
    install_requires=REQUIRES,
    entry_points={"console_scripts": SCRIPTS},
)
"""

_SETUP_CFG = """\
[metadata]
name = mypkg
version = attr: mypkg.__version__

[options]
install_requires =
    numpy>=1.20
    scipy

[options.entry_points]
console_scripts =
    mytool = mypkg.cli:main
"""


def test_one_parse_of_setup_py_gives_all_three() -> None:
    read = read_setup_py(_SETUP_PY)
    assert read == SetupMetadata(
        has_name=True,
        name="mypkg",
        version="1.2",
        install_requires=("numpy>=1.20", "scipy"),
        console_scripts=(("mytool", "mypkg.cli:main"),),
    )
    # the parse of a text is shared: the three callers of one build parse it once
    assert read_setup_py(_SETUP_PY) is read


def test_one_parse_of_setup_cfg_gives_all_three() -> None:
    read = read_setup_cfg(_SETUP_CFG)
    assert read == SetupMetadata(
        has_name=True,
        name="mypkg",
        version=None,
        version_pointer=("attr", "mypkg.__version__"),
        install_requires=("numpy>=1.20", "scipy"),
        console_scripts=(("mytool", "mypkg.cli:main"),),
    )
    assert read_setup_cfg(_SETUP_CFG) is read


def test_the_three_callers_read_the_same_setup_py(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("", "utf-8")
    (tmp_path / "mypkg" / "cli.py").write_text("def main():\n    return 0\n", "utf-8")
    (tmp_path / "setup.py").write_text(_SETUP_PY, "utf-8")
    [found] = dependency_files(tmp_path, ["setup.py"])
    assert found.requirements == ["numpy>=1.20", "scipy"]
    distribution, problems = own_distribution(tmp_path)
    assert problems == [] and distribution is not None
    assert (distribution.name, distribution.version) == ("mypkg", "1.2")
    assert list(console_scripts(tmp_path)) == ["mytool"]


def test_values_built_at_run_time_are_not_read() -> None:
    text = (
        "import setuptools\n"
        "def requirements():\n    return open('requirements.txt').read().split()\n"
        "NAME = 'my' + 'pkg'\n"
        "setuptools.setup(name=NAME, version=open('VERSION').read(),\n"
        "    install_requires=requirements(), entry_points=make_entry_points())\n"
    )
    read = read_setup_py(text)
    assert read == SetupMetadata()
    assert read.error is None


def test_a_requirement_list_with_a_computed_item_is_not_read() -> None:
    text = "import os\nsetup(name='x', install_requires=['numpy', os.environ['DEP']])\n"
    read = read_setup_py(text)
    assert (read.name, read.install_requires) == ("x", ())


def test_the_first_setup_call_that_names_the_distribution_counts() -> None:
    text = (
        "if False:\n    setup(version='9')\n"
        "setup(name='real', version='2.0', install_requires=('a',))\n"
        "setup(name='later', install_requires=['b'])\n"
    )
    read = read_setup_py(text)
    assert (read.name, read.version, read.install_requires) == ("real", "2.0", ("a",))


def test_a_name_that_is_no_string_is_still_reported_as_declared() -> None:
    # own_distribution turns it into B052; the reader only says what is written
    read = read_setup_py("setup(name=None, version=3)\n")
    assert (read.has_name, read.name, read.version) == (True, None, 3)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("setup(name='x',\n", "'(' was never closed"),
        ("setup(name='x')\x00\n", "source code string cannot contain null bytes"),
        ("x = " + "(" * 300 + ")" * 300 + "\n", "too many nested parentheses"),
    ],
)
def test_a_setup_py_that_does_not_parse_gives_nothing_and_says_why(text: str, error: str) -> None:
    read = read_setup_py(text)
    assert (read.has_name, read.install_requires, read.console_scripts) == (False, (), ())
    assert read.error is not None and error in read.error


def test_a_deeply_nested_setup_py_never_raises() -> None:
    text = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    read = read_setup_py(text)
    assert read.install_requires == () and read.error is not None


@pytest.mark.parametrize(
    "text",
    [
        "[metadata]\nname = a\n[metadata]\nname = b\n",
        "name = outside any section\n",
        "[metadata\nname = a\n",
    ],
)
def test_a_setup_cfg_that_does_not_parse_gives_nothing_and_says_why(text: str) -> None:
    read = read_setup_cfg(text)
    assert (read.has_name, read.install_requires, read.console_scripts) == (False, (), ())
    assert read.error


def test_a_huge_file_is_not_parsed() -> None:
    text = "# " + "x" * MAX_TEXT + "\nsetup(name='x')\n"
    assert read_setup_py(text).error == f"larger than {MAX_TEXT} characters"
    assert read_setup_cfg("[metadata]\nname = x\n#" + "x" * MAX_TEXT).has_name is False


def test_a_non_utf8_setup_py_is_read_as_the_dependency_reader_decodes_it(tmp_path: Path) -> None:
    # the requirements reader decodes with replacement characters; the name reader, which
    # writes what it reads into a file name, skips a file that is not UTF-8
    (tmp_path / "setup.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# Autor: J\xfcrgen\nsetup(name='x', install_requires=['a'])\n"
    )
    [found] = dependency_files(tmp_path, ["setup.py"])
    assert found.requirements == ["a"]
    assert own_distribution(tmp_path) == (None, [])
    assert console_scripts(tmp_path) == {}


def test_a_malformed_setup_cfg_is_one_b052_from_the_name_reader(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = a\n[metadata]\n", "utf-8")
    [found] = dependency_files(tmp_path, ["setup.cfg"])
    assert found.requirements == []
    distribution, problems = own_distribution(tmp_path)
    assert distribution is None and [p.code for p in problems] == ["B052"]
    assert problems[0].message.startswith("setup.cfg: does not parse: While reading from")
    assert console_scripts(tmp_path) == {}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_any_text_gives_metadata_never_a_traceback(text: str) -> None:
    for read in (read_setup_py(text), read_setup_cfg(text)):
        assert isinstance(read, SetupMetadata)
        assert all(isinstance(line, str) for line in read.install_requires)
        assert read.has_name or read.name is None
