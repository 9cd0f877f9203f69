"""``reprobridge init --from SOURCE``: a scaffold around an imported repository.

Reads the imported checkout for requirements, the Python version and README command lines
(written as comments for candidate launchers); :class:`IntakeResult` says what was found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.codebase import ImportResult, import_code
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.io import reading
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.model import MANIFEST_NAME

__all__ = ["IntakeResult", "readme_commands", "scaffold_from"]

_COMMAND = re.compile(
    r"^\s*(?:\$\s+)?((?:python3?|bash|sh|accelerate launch|torchrun)\s+\S.*?)\s*\\?$"
)
_READMES = ("README.md", "README.rst", "README.txt", "README")
_REQUIREMENTS = ("requirements.in", "requirements.txt")
#: The largest ``pyproject.toml`` read (a stranger's repository).
_MAX_TOML = 4 * 1024 * 1024


@dataclass
class IntakeResult:
    """What ``init --from`` found in the repository."""

    imported: ImportResult
    requirements_from: str | None = None
    python_from: str | None = None
    python: str | None = None
    commands: list[str] = field(default_factory=list)


def readme_commands(text: str) -> list[str]:
    """Candidate command lines of a README (in order, without duplicates)."""
    found: list[str] = []
    in_block = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_block = not in_block
            continue
        if not (in_block or stripped.startswith("$ ") or line.startswith("    ")):
            continue
        match = _COMMAND.match(line)
        if match and match.group(1) not in found:
            found.append(match.group(1))
    return found


def _project_table(checkout: Path) -> dict[str, Any] | None:
    """The ``[project]`` table of the checkout's ``pyproject.toml``; ``None`` when there is no
    such file, it is not UTF-8 TOML, it nests too deeply for the TOML reader (a stranger's
    file: RecursionError), or ``project`` is not a table."""
    try:  # a regular file inside the checkout, bounded
        raw = reading.read_bytes(checkout / "pyproject.toml", root=checkout, max_bytes=_MAX_TOML)
        data = reading.parse_toml(reading.decode(raw))
    except reading.Unreadable:
        return None
    project = data.get("project")
    return project if isinstance(project, dict) else None


def _python_of(checkout: Path) -> tuple[str, str] | None:
    version_file = checkout / ".python-version"
    if version_file.is_file():
        match = re.match(r"^\s*(\d+\.\d+)", version_file.read_text("utf-8", "replace"))
        if match:
            return match.group(1), ".python-version"
    project = _project_table(checkout)
    if project is not None:
        spec = project.get("requires-python")
        if isinstance(spec, str):
            versions = re.findall(r">=?\s*(\d+\.\d+)", spec)
            if versions:
                return min(versions, key=lambda v: tuple(map(int, v.split(".")))), "pyproject.toml"
    return None


def _requirements_of(checkout: Path) -> tuple[str, str] | None:
    for name in _REQUIREMENTS:
        path = checkout / name
        if path.is_file():
            return path.read_text("utf-8", "replace"), name
    project = _project_table(checkout)
    if project is not None:
        deps = project.get("dependencies")
        if isinstance(deps, list) and all(isinstance(d, str) for d in deps):
            return "".join(f"{d}\n" for d in deps), "pyproject.toml"
    return None


def scaffold_from(
    directory: str | Path,
    options: InitOptions,
    source: str,
    *,
    commit: str | None = None,
    as_: Literal["directory", "patches"] = "patches",
    force: bool = False,
) -> IntakeResult:
    """Scaffold ``directory`` around ``source`` (see the module docstring)."""
    root = Path(directory)
    art = scaffold(root, options, force=force)
    imported = import_code(art, source, commit=commit, as_=as_, force=True)
    checkout = imported.checkout
    result = IntakeResult(imported=imported)
    art = load(root)
    requirements = _requirements_of(checkout)
    if requirements is not None:
        text, result.requirements_from = requirements
        header = f"# Declared requirements, from {result.requirements_from} of the upstream.\n"
        target = art.manifest.environment.requirements or "environment/requirements.in"
        atomic_write_text(art.path(target), header + text)
    python = _python_of(checkout)
    if python is not None:
        result.python, result.python_from = python
        environment = art.manifest.environment
        environment.python = result.python
        art.manifest.environment = environment
        art.save()
    for name in _READMES:
        readme = checkout / name
        if readme.is_file():
            result.commands = readme_commands(readme.read_text("utf-8", "replace"))
            break
    if result.commands:
        manifest = root / MANIFEST_NAME
        lines = [
            "",
            "# Candidate launchers from the upstream's README (make launchers of them; their",
            "# working directory is the checkout, code/):",
            *[f"#   {command}" for command in result.commands],
            "",
        ]
        atomic_write_text(manifest, manifest.read_text("utf-8").rstrip("\n") + "\n".join(lines))
    return result
