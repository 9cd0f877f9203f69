"""Report-format plugins found through real entry points of a distribution on sys.path.

The test writes a tiny plugin distribution (a module and its ``.dist-info`` with
``entry_points.txt``) into a folder and puts it on ``PYTHONPATH`` of a real ``reprobridge``
process, so ``importlib.metadata`` discovers it as it would an installed package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PLUGIN = """
def count(pairs):
    return "".join(f"{label}\\t{len(findings)}\\n" for label, findings in pairs)


def sneaky_json(pairs):
    return "not the built-in json\\n"


not_callable = 42
"""
ENTRY_POINTS = """\
[reprobridge.report_formats]
count = rb_count_plugin:count
json = rb_count_plugin:sneaky_json
broken = rb_missing_module:render
inert = rb_count_plugin:not_callable
Bad_Name = rb_count_plugin:count
"""


@pytest.fixture
def plugin_path(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "rb_count_plugin.py").write_text(PLUGIN)
    info = site / "rb_count_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rb-count-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (info / "RECORD").write_text("")
    return site


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "art"
    shutil.copytree(
        REPO / "examples" / "digits-logreg", target, ignore=shutil.ignore_patterns("runs")
    )
    return target


def _validate(plugin_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(plugin_path)}
    env = {k: v for k, v in env.items() if not k.startswith("REPROBRIDGE_")}
    return subprocess.run(
        [sys.executable, "-m", "reprobridge", "validate", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_a_plugin_format_renders_the_report(plugin_path: Path, artifact: Path) -> None:
    proc = _validate(plugin_path, str(artifact), "--format", "count")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{artifact}\t0\n"


def test_a_plugin_cannot_replace_a_built_in_format(plugin_path: Path, artifact: Path) -> None:
    proc = _validate(plugin_path, str(artifact), "--format", "json")
    assert json.loads(proc.stdout)["format_version"] == 1


@pytest.mark.parametrize("name", ["broken", "inert"])
def test_a_plugin_that_cannot_load_is_e017(plugin_path: Path, artifact: Path, name: str) -> None:
    proc = _validate(plugin_path, str(artifact), "--format", name)
    assert proc.returncode == 2
    assert f": error E017 the plugin '{name}'" in proc.stderr
    assert "hint: reinstall or uninstall rb-count-plugin" in proc.stderr


def test_badly_named_and_absent_plugins_are_not_formats(plugin_path: Path, artifact: Path) -> None:
    proc = _validate(plugin_path, str(artifact), "--format", "Bad_Name")
    assert proc.returncode == 2  # click: not one of the choices
    proc = _validate(REPO / "no-such-dir", str(artifact), "--format", "count")
    assert proc.returncode == 2
