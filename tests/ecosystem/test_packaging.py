"""The distribution: its name, `python -m reprobridge`, extras, E015 and shell completion."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from importlib.metadata import metadata, packages_distributions, requires, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from reprobridge_sdk import DISTRIBUTION
from reprobridge_sdk.errors import MissingExtraError, require_extra


def _run(
    *argv: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, check=False, env=env, cwd=cwd, timeout=120
    )


def test_the_distribution_is_named_reprobridge() -> None:
    assert DISTRIBUTION == "reprobridge"
    assert metadata(DISTRIBUTION)["Name"] == "reprobridge"


@pytest.mark.parametrize("module", ["reprobridge", "reprobridge_sdk"])
def test_python_dash_m_runs_the_command_line(module: str) -> None:
    proc = _run(sys.executable, "-m", module, "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["python", "-m", module, version(DISTRIBUTION)]


def test_the_console_script_reports_the_distribution_version() -> None:
    script = Path(sys.executable).with_name("reprobridge")
    proc = _run(str(script), "--version")
    assert proc.stdout.split() == ["reprobridge", version(DISTRIBUTION)]


def test_extras_and_runtime_dependencies() -> None:
    reqs = [Requirement(text) for text in requires(DISTRIBUTION) or []]
    runtime = {r.name.lower() for r in reqs if r.marker is None or "extra" not in str(r.marker)}
    assert "jsonschema" not in runtime  # only the tests import it
    assert "fissix" not in runtime  # only the build agent imports it: the extra 'agent'
    extras = set(metadata(DISTRIBUTION).get_all("Provides-Extra") or [])
    assert {"agent", "pip-tools", "signing", "dask", "slurm", "s3", "gcs", "all", "test"} <= extras

    def names(extra: str) -> set[str]:
        return {
            r.name.lower().replace("_", "-")
            for r in reqs
            if r.marker is not None and r.marker.evaluate({"extra": extra})
        }

    assert "pip-tools" in names("pip-tools")
    assert "cryptography" in names("signing")
    assert {"dask", "distributed"} <= names("dask")
    assert "dask-jobqueue" in names("slurm")
    assert {"fsspec", "s3fs"} <= names("s3")
    assert {"fsspec", "gcsfs"} <= names("gcs")
    assert "fissix" in names("agent")
    for extra in extras - {"all", "test"}:
        assert names(extra) <= names("all"), extra  # `all` brings every extra


def _imported_outside_agent() -> set[str]:
    """Top-level names of the modules imported anywhere in the package outside ``agent/``."""
    package = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
    found: set[str] = set()
    for path in package.rglob("*.py"):
        if path.is_relative_to(package / "agent"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.partition(".")[0])
    return found


def test_every_runtime_dependency_is_needed_outside_the_build_agent() -> None:
    """A dependency that only ``agent/`` imports belongs in the extra 'agent', not in the lean
    install that validate, run and audit need."""
    reqs = [Requirement(text) for text in requires(DISTRIBUTION) or []]
    runtime = {canonicalize_name(r.name) for r in reqs if r.marker is None}
    providers = packages_distributions()
    imported = {
        canonicalize_name(dist)
        for module in _imported_outside_agent()
        for dist in providers.get(module, [])
    }
    assert runtime, "no runtime dependency read"
    assert runtime <= imported, runtime - imported


def test_require_extra_names_the_extra_to_install() -> None:
    with pytest.raises(MissingExtraError) as info:
        require_extra("reprobridge_no_such_module", "hf", feature="hf:// data sources")
    assert info.value.extra == "hf"
    [item] = info.value.findings
    assert (item.code, item.path, item.hint) == (
        "E015",
        "/extras/hf",
        "pip install 'reprobridge[hf]'",
    )


def test_require_extra_returns_the_module_when_installed() -> None:
    assert require_extra("json", "none") is sys.modules["json"]


def test_an_import_error_inside_an_installed_extra_is_not_disguised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_extra_mod.py").write_text("import reprobridge_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as info:
        require_extra("broken_extra_mod", "x")
    assert info.value.name == "reprobridge_missing_dependency"


def test_lock_with_pip_tools_missing_names_the_extra(tmp_path: Path) -> None:
    """pip-tools is made unimportable in a real subprocess (``sys.modules`` entry ``None``)."""
    art = tmp_path / "art"
    art.mkdir()
    (art / "rra.yaml").write_text(
        'rra_version: "1.0"\nenvironment:\n'
        f'  python: "{sys.version_info[0]}.{sys.version_info[1]}"\n'
        "  requirements: requirements.in\n"
    )
    (art / "requirements.in").write_text("six\n")
    code = (
        "import sys; sys.modules['piptools'] = None\n"
        "from reprobridge_sdk.cli import main\n"
        f"main(['lock', {str(art)!r}, '--resolver', 'pip-tools'])\n"
    )
    proc = _run(sys.executable, "-c", code)
    assert proc.returncode == 2
    assert "E015" in proc.stdout
    assert "hint: pip install 'reprobridge[pip-tools]'" in proc.stdout
    assert not (art / "requirements.txt").exists()


def test_shell_completion_through_click() -> None:
    script = str(Path(sys.executable).with_name("reprobridge"))
    env = {**os.environ, "_REPROBRIDGE_COMPLETE": "bash_source"}
    source = _run(script, env=env)
    assert source.returncode == 0
    assert "_REPROBRIDGE_COMPLETE=bash_complete" in source.stdout
    env = {
        **os.environ,
        "_REPROBRIDGE_COMPLETE": "bash_complete",
        "COMP_WORDS": "reprobridge vali",
        "COMP_CWORD": "1",
    }
    proc = _run(script, env=env)
    assert proc.stdout.split() == ["plain,validate"]
    # python -m reprobridge answers to the same variable.
    env = {**os.environ, "_REPROBRIDGE_COMPLETE": "zsh_source"}
    proc = _run(sys.executable, "-m", "reprobridge", env=env)
    assert "_REPROBRIDGE_COMPLETE=zsh_complete" in proc.stdout
