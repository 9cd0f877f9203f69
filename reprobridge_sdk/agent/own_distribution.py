"""The repository's own distribution: its name and version, read without running anything,
and the metadata-only ``.dist-info`` that makes them discoverable without installing it.

A launcher makes the repository's package importable through ``PYTHONPATH`` (the Planner's
convenience), not by an editable install: the locked environment is shared by every artifact
with the same lock and must not point into one checkout. Code that reads its own
distribution's metadata (``importlib.metadata.version(__name__)``, ``pkg_resources.
get_distribution``) then stops with ``PackageNotFoundError`` (``DistributionNotFound``):
the package imports, but nothing says it is installed. A folder on ``sys.path`` that holds
``<name>-<version>.dist-info/METADATA`` is what ``importlib.metadata`` and ``pkg_resources``
look for, so writing that folder beside the package is enough.

**When.** Only when a smoke run fails with that error for the repository's own distribution
(the fix rule ``own-distribution-metadata`` of :mod:`reprobridge_sdk.agent.fixes`), not up
front whenever metadata exists, nor when the import closure merely imports
``importlib.metadata`` or ``pkg_resources``: a static reading cannot tell ``version(__name__)``
from ``version("torch")``, and a change made without need would sit in every artifact's
patch series as an unexplained file. Gated like every fix (the error must be gone), the
change is recorded with the traceback that called for it; it costs one smoke run that stops
at import time.

**Name and version**, read statically (``setup.py`` is never executed), from the first of
these that names the distribution: ``pyproject.toml`` ``[project]``, then ``[tool.poetry]``,
then ``setup.cfg`` ``[metadata]``, then a literal ``setup(name=..., version=...)`` in
``setup.py`` (a string, or a module-level name bound once to one); the last two are read by
:mod:`reprobridge_sdk.agent.packaging_metadata`. The version, in order:

1. the literal of that same source (not one declared dynamic: ``[project] dynamic``, or
   ``[tool.poetry-dynamic-versioning] enable``), or its static pointer: ``[tool.setuptools.
   dynamic] version = {attr = ...}``, ``setup.cfg`` ``version = attr: pkg.__version__``
   (the module's literal assignment) or ``file: VERSION`` (the file's first line);
2. the literal ``__version__`` of the package that carries the distribution's name
   (``<name>/__init__.py`` or ``src/<name>/__init__.py``);
3. ``0+unknown``, a local version that sorts before every release.

:attr:`OwnDistribution.version_source` records which. Every version is a PEP 440 version,
written normalised (as an installer would); anything else (a newline, a path separator, a
placeholder) is B052 (a warning) and the next step is tried.

**Hostile metadata.** A file that does not parse, a name that is not a valid distribution
name (PEP 508: letters, digits, ``.``, ``_``, ``-``, alphanumeric at both ends), or a version
that is not one: B052 (a warning), never a traceback; with no valid name there is no fix.
The ``.dist-info`` folder is written only where nothing is: an existing file, folder or link
of that name, a link among the folders on the way, or a path the repository's ``.gitignore``
hides (the change could not be recorded) is B053 (a warning) and no fix. The name and version
reach the metadata and the folder's name only after validation, so no line and no path
component can be injected.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.agent.packaging_metadata import read_setup_cfg, read_setup_py
from reprobridge_sdk.io.safefs import UnsafeFileError, read_text
from reprobridge_sdk.model.build import BuildFinding

__all__ = [
    "UNKNOWN_VERSION",
    "OwnDistribution",
    "dist_info_files",
    "missing_distribution",
    "own_distribution",
    "place_problem",
    "self_package_files",
]

#: The version of a distribution whose metadata gives none: a local version before any release.
UNKNOWN_VERSION = "0+unknown"
#: PEP 508's distribution name.
_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)
_MAX_NAME = 200
_MAX_FILE = 1024 * 1024
#: The messages of importlib.metadata (and its backport) and of pkg_resources.
_MISSING = (
    re.compile(r"^No package metadata was found for (?P<name>[A-Za-z0-9._-]+)"),
    re.compile(r"^The '(?P<name>[A-Za-z0-9._-]+)[^']*' distribution was not found"),
)
_MISSING_TYPES = {"PackageNotFoundError", "DistributionNotFound"}


@dataclass(frozen=True)
class OwnDistribution:
    """The repository's distribution as its packaging metadata gives it."""

    #: As the metadata writes it (validated).
    name: str
    #: Normalised PEP 440.
    version: str
    #: Where the name comes from, e.g. ``pyproject.toml [tool.poetry]``.
    source: str
    #: Where the version comes from, e.g. ``ngboost/__init__.py __version__``, or
    #: ``none: 0+unknown``.
    version_source: str

    @property
    def folder_name(self) -> str:
        """``<name>-<version>.dist-info``, the name as the wheel format spells it."""
        return f"{canonicalize_name(self.name).replace('-', '_')}-{self.version}.dist-info"

    @property
    def import_name(self) -> str:
        """The package name that usually carries the distribution's name."""
        return canonicalize_name(self.name).replace("-", "_")

    def metadata(self) -> str:
        """The ``METADATA`` file: the three fields ``importlib.metadata`` needs."""
        return f"Metadata-Version: 2.1\nName: {self.name}\nVersion: {self.version}\n"


# --------------------------------------------------------------------------- reading


def _read(root: Path, rel: str) -> str | None:
    """A file of the repository as text, or None (absent, a link out, too big, not UTF-8)."""
    try:
        return read_text(root / rel, root=root, max_bytes=_MAX_FILE)
    except (OSError, UnsafeFileError, UnicodeDecodeError):
        return None


def _bad(rel: str, what: str) -> BuildFinding:
    return build_finding(
        "B052",
        f"{rel}: {what}",
        hint="correct the packaging metadata, or record the distribution's metadata by hand",
    )


def _valid_version(text: object, where: str, findings: list[BuildFinding]) -> str | None:
    if not isinstance(text, str):
        findings.append(_bad(where, f"the version is not a string ({type(text).__name__})"))
        return None
    try:
        return str(Version(text))
    except InvalidVersion:
        findings.append(_bad(where, f"{text[:80]!r} is not a PEP 440 version"))
        return None


def _literal_version(root: Path, module: str) -> tuple[str, object] | None:
    """``(file, value)`` of ``__version__`` (or the attribute ``module``'s last part names)
    bound to a literal string at the top of a module of the repository."""
    parts = module.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    *mod, attr = parts
    for base in (".", "src"):
        for rel in (f"{'/'.join(mod)}.py", f"{'/'.join(mod)}/__init__.py"):
            path = str(PurePosixPath(base) / rel)
            text = _read(root, path)
            if text is None:
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError):
                return None
            for node in tree.body:
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign)
                    else []
                )
                value = getattr(node, "value", None)
                if any(isinstance(t, ast.Name) and t.id == attr for t in targets) and isinstance(
                    value, ast.Constant
                ):
                    return path, value.value
            return None
    return None


def _from_attr(
    root: Path, module: str, where: str, findings: list[BuildFinding]
) -> tuple[str, str] | None:
    found = _literal_version(root, module)
    if found is None:
        return None
    path, value = found
    version = _valid_version(value, path, findings)
    return (version, f"{path} {module.rsplit('.', 1)[-1]} ({where})") if version else None


def _from_file(root: Path, rel: str, findings: list[BuildFinding]) -> tuple[str, str] | None:
    rel = rel.strip()
    if not rel or rel.startswith("/") or ".." in PurePosixPath(rel).parts:
        findings.append(_bad("setup.cfg", f"version file {rel[:80]!r} is not in the repository"))
        return None
    text = _read(root, rel)
    if text is None:
        return None
    version = _valid_version(text.strip(), rel, findings)
    return (version, rel) if version else None


def _table(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return data


#: (name, version or None, version's source, dynamic pointer: ("attr"|"file", value) or None)
_Declared = tuple[object, object, str, "tuple[str, str] | None"]


def _pyproject(text: str, findings: list[BuildFinding]) -> list[_Declared]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        findings.append(_bad("pyproject.toml", f"does not parse: {str(exc)[:200]}"))
        return []
    out: list[_Declared] = []
    project = _table(data, "project")
    if "name" in project:
        dynamic = project.get("dynamic")
        is_dynamic = isinstance(dynamic, list) and "version" in dynamic
        attr = _table(data, "tool", "setuptools", "dynamic", "version").get("attr")
        pointer = ("attr", attr) if is_dynamic and isinstance(attr, str) else None
        out.append(
            (
                project["name"],
                None if is_dynamic else project.get("version"),
                "pyproject.toml [project]",
                pointer,
            )
        )
    poetry = _table(data, "tool", "poetry")
    if "name" in poetry:
        versioning = _table(data, "tool", "poetry-dynamic-versioning")
        dynamic_poetry = versioning.get("enable") is True
        out.append(
            (
                poetry["name"],
                None if dynamic_poetry else poetry.get("version"),
                "pyproject.toml [tool.poetry]",
                None,
            )
        )
    return out


def _setup_cfg(text: str, findings: list[BuildFinding]) -> list[_Declared]:
    read = read_setup_cfg(text)
    if read.error is not None:
        findings.append(_bad("setup.cfg", f"does not parse: {read.error}"))
        return []
    if not read.has_name:
        return []
    return [(read.name, read.version, "setup.cfg [metadata]", read.version_pointer)]


def _setup_py(text: str) -> list[_Declared]:
    read = read_setup_py(text)
    return [(read.name, read.version, "setup.py setup()", None)] if read.has_name else []


def _declared(root: Path, findings: list[BuildFinding]) -> list[_Declared]:
    out: list[_Declared] = []
    for rel, reader in (("pyproject.toml", _pyproject), ("setup.cfg", _setup_cfg)):
        text = _read(root, rel)
        if text is not None:
            out += reader(text, findings)
    text = _read(root, "setup.py")
    if text is not None:
        out += _setup_py(text)
    return out


def own_distribution(root: Path) -> tuple[OwnDistribution | None, list[BuildFinding]]:
    """The repository's distribution at ``root``, or None; and B052 warnings on the way."""
    findings: list[BuildFinding] = []
    for name, literal, source, pointer in _declared(root, findings):
        if not isinstance(name, str) or len(name) > _MAX_NAME or not _NAME.fullmatch(name):
            shown = name[:80] if isinstance(name, str) else type(name).__name__
            findings.append(_bad(source, f"{shown!r} is not a valid distribution name"))
            continue
        found: tuple[str, str] | None = None
        if literal is not None:
            version = _valid_version(literal, source, findings)
            found = (version, f"{source} version") if version else None
        elif pointer is not None and pointer[0] == "attr":
            found = _from_attr(root, pointer[1], f"{source} attr", findings)
        elif pointer is not None:
            found = _from_file(root, pointer[1], findings)
        if found is None:
            import_name = canonicalize_name(name).replace("-", "_")
            found = _from_attr(root, f"{import_name}.__version__", "its package", findings)
        version, version_source = found or (UNKNOWN_VERSION, f"none: {UNKNOWN_VERSION}")
        return OwnDistribution(name, version, source, version_source), findings
    return None, findings


# --------------------------------------------------------------------------- the failure


def missing_distribution(exc_type: str, message: str) -> str | None:
    """The distribution a ``PackageNotFoundError``/``DistributionNotFound`` names, or None."""
    if exc_type not in _MISSING_TYPES:
        return None
    for pattern in _MISSING:
        match = pattern.match(message.strip())
        if match:
            return match.group("name")
    return None


def place_problem(root: Path, folder: str, distribution: OwnDistribution) -> BuildFinding | None:
    """B053 when ``folder/<name>-<version>.dist-info`` cannot be written as a new folder of
    the repository at ``root``; None when it can."""
    rel = str(PurePosixPath(folder) / distribution.folder_name)
    why = None
    current = root
    for part in PurePosixPath(folder).parts:
        current = current / part
        if part in {"..", "/"} or current.is_symlink():
            why = f"{folder!r} is a link or leaves the repository"
            break
    if why is None and os.path.lexists(root / rel):
        kind = (
            "link" if (root / rel).is_symlink() else "folder" if (root / rel).is_dir() else "file"
        )
        why = f"a {kind} of that name is in the repository"
    if why is None and _ignored(root, f"{rel}/METADATA"):
        why = "the repository's .gitignore hides it, so the change could not be recorded"
    if why is None:
        return None
    return build_finding(
        "B053",
        f"{rel} is not written: {why}",
        hint=(
            f"make {distribution.name} discoverable by hand and record it with "
            "'reprobridge code record --kind convenience'"
        ),
    )


def _ignored(root: Path, rel: str) -> bool:
    """True when the repository's ``.gitignore`` hides the file ``rel``."""
    if not (root / ".git").exists():
        return False
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", rel],
        cwd=root,
        capture_output=True,
        check=False,
        env=env,
    )
    return done.returncode == 0


def dist_info_files(folder: str, distribution: OwnDistribution) -> dict[str, str]:
    """The files to write (relative to the repository) for ``distribution`` in ``folder``."""
    path = PurePosixPath(folder) / distribution.folder_name / "METADATA"
    return {str(path): distribution.metadata()}


#: The package that stands for the repository under the name its code imports it by.
_SELF_PACKAGE = '''"""The repository under the name its code imports it by (the folder its authors
checked it out into): this package's modules are those of the repository root, so
``{name}.<module>`` imports ``<module>`` of the root, its code unchanged."""

import os

__path__ = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
'''


def self_package_files(root: Path, name: str) -> dict[str, str] | None:
    """``<name>/__init__.py`` at the root of the repository at ``root``: a package whose
    modules are the root's (its ``__path__`` is the root), so code that imports the
    repository as ``name`` (its authors' checkout folder) runs as written from a launcher
    with the root on ``PYTHONPATH``. Each module keeps the one name its code gives it, and
    a module beside the script (``training/training.py``) never stands in for a package of
    the root (``training/``), as it does once the imports are written from the root.

    None when that file cannot be a new file of the repository: ``name`` is not an ASCII
    identifier, something of that name is at the root, or ``.gitignore`` hides it (the
    change could not be recorded).
    """
    rel = f"{name}/__init__.py"
    if not (name.isidentifier() and name.isascii()):
        return None
    if os.path.lexists(root / name) or os.path.lexists(root / f"{name}.py"):
        return None
    if _ignored(root, rel):
        return None
    return {rel: _SELF_PACKAGE.format(name=name)}
