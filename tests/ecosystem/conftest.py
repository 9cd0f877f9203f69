"""The ecosystem tests import their helpers (``eco_*`` modules) from this folder."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


import pytest
from eco_plugins import PluginVenv, install_plugin_venv


@pytest.fixture(scope="session")
def plugin_venv(tmp_path_factory: pytest.TempPathFactory) -> PluginVenv:
    """A venv with the test plugin distribution pip-installed (built once per session)."""
    return install_plugin_venv(tmp_path_factory.mktemp("plugin-venv"))
