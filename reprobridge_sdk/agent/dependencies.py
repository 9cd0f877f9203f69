"""The repository's own dependency files, read for their requirement lines (never run).

One reader per kind, each returning the lines as written (pins kept):

* ``requirements*.txt``/``.in``: every line but comments and options (``-r``, ``-e``, ...).
* ``setup.py``: the ``install_requires`` keyword of the ``setup()`` call, when it is a
  literal list or tuple of strings, or a name bound once at module level to one; and
* ``setup.cfg``: ``[options] install_requires`` (one requirement a line), both read by
  :mod:`reprobridge_sdk.agent.packaging_metadata`.
* ``pyproject.toml``: ``[project] dependencies``.
* ``environment.yml``/``.yaml``: the ``pip`` section's lines (conda packages are not
  distributions of the index and are not read).
* ``Pipfile``: nothing is read (the kind is recorded).

A file that does not parse (syntax, TOML, YAML, a nesting too deep) gives no lines; it is
still listed. Files above 1 MiB are not read.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.agent.packaging_metadata import read_setup_cfg, read_setup_py
from reprobridge_sdk.model.build import DependencyFile, DependencyKind

__all__ = ["dependency_files", "requirement_lines"]

_MAX = 1024 * 1024
_KINDS: dict[str, DependencyKind] = {
    "setup.py": "setup.py",
    "setup.cfg": "setup.cfg",
    "pyproject.toml": "pyproject",
    "environment.yml": "conda",
    "environment.yaml": "conda",
    "Pipfile": "pipfile",
}


def requirement_lines(text: str) -> list[str]:
    """The requirement lines of a ``requirements.txt`` text."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out.append(line)
    return out


def _setup_py(text: str) -> list[str]:
    return list(read_setup_py(text).install_requires)


def _setup_cfg(text: str) -> list[str]:
    return list(read_setup_cfg(text).install_requires)


def _pyproject(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    project = data.get("project")
    deps = project.get("dependencies") if isinstance(project, dict) else None
    return [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []


def _conda(text: str) -> list[str]:
    try:
        data: Any = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):
        return []
    deps = data.get("dependencies") if isinstance(data, dict) else None
    out: list[str] = []
    for item in deps if isinstance(deps, list) else []:
        if isinstance(item, dict) and isinstance(item.get("pip"), list):
            out += [line for line in item["pip"] if isinstance(line, str)]
    return requirement_lines("\n".join(out))


_READERS = {
    "setup.py": _setup_py,
    "setup.cfg": _setup_cfg,
    "pyproject": _pyproject,
    "conda": _conda,
}


def dependency_files(root: Path, files: list[str]) -> list[DependencyFile]:
    """The dependency files among ``files`` (at most one folder deep) with their lines."""
    found: list[DependencyFile] = []
    for rel in files:
        name = Path(rel).name
        if rel.count("/") > 1:
            continue
        path = root / rel
        if re.fullmatch(r"requirements[\w.-]*\.(txt|in)", name):
            text = path.read_text("utf-8", "replace") if path.stat().st_size <= _MAX else ""
            found.append(
                DependencyFile(path=rel, kind="requirements", requirements=requirement_lines(text))
            )
        elif name in _KINDS:
            kind = _KINDS[name]
            reader = _READERS.get(kind)
            text = path.read_text("utf-8", "replace") if path.stat().st_size <= _MAX else ""
            lines = reader(text) if reader is not None else []
            found.append(DependencyFile(path=rel, kind=kind, requirements=lines))
    return found
