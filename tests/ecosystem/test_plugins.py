"""Report-format plugins of a real plugin distribution pip-installed into a venv.

The distribution (``eco_plugins``, shared with the extractor and data-scheme plugin tests)
is built as a wheel and installed with pip into a venv made for the session; a real
``reprobridge`` process of that venv discovers it through ``importlib.metadata``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from eco_plugins import DISTRIBUTION, PluginVenv

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # the plugin venv is built with pip once per session


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "art"
    shutil.copytree(
        REPO / "examples" / "digits-logreg", target, ignore=shutil.ignore_patterns("runs")
    )
    return target


def _validate(python: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBRIDGE_")}
    return subprocess.run(
        [str(python), "-m", "reprobridge", "validate", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_a_plugin_format_renders_the_report(plugin_venv: PluginVenv, artifact: Path) -> None:
    proc = _validate(plugin_venv.python, str(artifact), "--format", "count")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{artifact}\t0\n"


def test_a_plugin_cannot_replace_a_built_in_format(plugin_venv: PluginVenv, artifact: Path) -> None:
    proc = _validate(plugin_venv.python, str(artifact), "--format", "json")
    assert json.loads(proc.stdout)["format_version"] == 1


@pytest.mark.parametrize("name", ["broken", "inert"])
def test_a_plugin_that_cannot_load_is_e017(
    plugin_venv: PluginVenv, artifact: Path, name: str
) -> None:
    proc = _validate(plugin_venv.python, str(artifact), "--format", name)
    assert proc.returncode == 2
    # a machine format was asked for: stdout holds nothing else, the finding goes to stderr
    assert f": E017 error the plugin '{name}'" in proc.stderr
    assert f"hint: reinstall or uninstall {DISTRIBUTION}" in proc.stderr


def test_badly_named_and_absent_plugins_are_not_formats(
    plugin_venv: PluginVenv, artifact: Path
) -> None:
    proc = _validate(plugin_venv.python, str(artifact), "--format", "Bad_Name")
    assert proc.returncode == 2  # click: not one of the choices
    proc = _validate(sys.executable, str(artifact), "--format", "count")  # not installed here
    assert proc.returncode == 2


def test_refused_report_formats_are_e026(plugin_venv: PluginVenv) -> None:
    from eco_plugins import on_path

    from reprobridge_sdk import plugins

    with on_path(plugin_venv):
        refused = sorted((f.code, f.path) for f in plugins.refusals((plugins.REPORT_FORMATS,)))
    assert refused == [
        ("E026", "/plugins/reprobridge.report_formats/Bad_Name"),
        ("E026", "/plugins/reprobridge.report_formats/json"),
    ]
