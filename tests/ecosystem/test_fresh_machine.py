"""Green on a fresh machine: deliberate dependency ranges, tested Pythons, both ends in CI.

The file checks (``pyproject.toml``, the README, ``.ci/run``) are read as data: a range
without a floor, a README that names other Pythons than ``requires-python`` allows, or a CI
script that stops testing the lowest or the newest dependency versions fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]


def _floor(specifier: SpecifierSet) -> Version | None:
    floors = [Version(s.version) for s in specifier if s.operator in (">=", "~=", "==")]
    return max(floors) if floors else None


def test_every_dependency_has_a_floor() -> None:
    groups = {"": PROJECT["dependencies"], **PROJECT["optional-dependencies"]}
    missing = [
        f"{group or 'runtime'}: {text}"
        for group, texts in groups.items()
        for text in texts
        if not (req := Requirement(text)).name.startswith("reprobridge")
        and _floor(req.specifier) is None
    ]
    assert missing == []


def test_runtime_dependencies_have_a_cap_or_say_why_not() -> None:
    text = (REPO / "pyproject.toml").read_text("utf-8")
    block = text[text.index("dependencies = [") : text.index("]", text.index("dependencies = ["))]
    uncapped = [
        line.strip()
        for line in block.splitlines()[1:]
        if line.strip().startswith('"') and "<" not in line.split("#")[0] and "#" not in line
    ]
    assert uncapped == []


def test_the_readme_names_the_tested_pythons_that_requires_python_allows() -> None:
    floor = _floor(SpecifierSet(PROJECT["requires-python"]))
    assert floor is not None
    readme = (REPO / "README.md").read_text("utf-8")
    tested = readme[readme.index("**Tested") :].split("\n- ")[0]
    named = [Version(v) for v in re.findall(r"\b3\.1[0-9](?:\.[0-9]+)?\b", tested)]
    assert named and min(named) == floor
    assert all(v in SpecifierSet(PROJECT["requires-python"]) for v in named)


def test_ci_runs_the_whole_suite_and_both_ends_of_the_ranges() -> None:
    script = (REPO / ".ci" / "run").read_text("utf-8")
    assert re.search(r"^python -m pip install -e '\.\[test\]' && python -m pytest$", script, re.M)
    assert re.search(r"for resolution in lowest-direct highest; do", script)
    assert '--resolution "$resolution"' in script
