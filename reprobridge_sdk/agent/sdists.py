"""Source distributions whose build needs requirements they do not declare.

Many old research packages ship only a source distribution whose ``setup.py`` imports
numpy (or Cython) at its top level, to build C extensions against it, and declares neither
as a build requirement; in an isolated build that import fails. Which distributions failed
to build is read from the structured part of the resolver's error, never its prose: the
``name==version`` (or ``name@version``, or an sdist's file name) it names. What each one
needs is read from the source distribution itself, fetched from the index:

* the modules its ``setup.py`` imports at its top level (also under a top-level ``if``;
  not under a ``try`` that catches the import's failure), less the standard library, the
  build backend (setuptools, distutils), its own modules, and what its ``pyproject.toml``
  ``build-system.requires`` declares, each mapped to its distribution
  (:data:`~reprobridge_sdk.agent.distributions.IMPORT_TO_DISTRIBUTION`);
* whether it compiles anything (C, C++, Cython or Fortran sources, or ``Extension``/
  ``cythonize``/``numpy.distutils`` in ``setup.py``): then a C compiler must be here
  (:func:`compiler`).

When the distribution cannot be fetched, a ``No module named 'X'`` (Python's own words) in
the error names the one module it needs.
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from reprobridge_sdk.agent.distributions import IMPORT_TO_DISTRIBUTION

__all__ = ["BuildNeeds", "build_needs", "compiler", "failed_builds", "read_needs"]

#: Modules a legacy ``setup.py`` build has without declaring them (the default backend).
_BACKEND = frozenset({"setuptools", "distutils", "pkg_resources", "_distutils_hack"})
_COMPILED = frozenset({".c", ".cc", ".cpp", ".cxx", ".pyx", ".pxd", ".f", ".f90"})
_COMPILES = re.compile(r"\bExtension\s*\(|\bcythonize\b|numpy\.distutils|\bext_modules\b")
_SDIST = re.compile(r"\.(tar\.gz|tgz|tar\.bz2|zip)$")
#: ``name==version`` or ``name@version`` as resolvers name a distribution, or an sdist file.
_NAMED = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)"
    r"(?:\s*(?:==|@)\s*v?|-)(?P<version>\d[A-Za-z0-9.+!_]*?)"
    r"(?=\.tar\.gz|\.tgz|\.tar\.bz2|\.zip|[`'\"\s,;:)]|$)"
)
_NO_MODULE = re.compile(r"No module named '(?P<module>[A-Za-z_]\w*)")
#: Bounds of what is read from the index: the sdist, and one member of it.
_MAX_SDIST = 64 << 20
_MAX_MEMBER = 2 << 20
_TIMEOUT = 60


@dataclass(frozen=True)
class BuildNeeds:
    """What one source distribution's build needs and does not declare."""

    name: str
    version: str
    #: The distributions to supply to its build.
    requirements: tuple[str, ...]
    #: It compiles extensions: its build needs a C compiler.
    compiled: bool
    #: How it was found: ``setup.py imports numpy, Cython``.
    evidence: str


def failed_builds(error: str) -> list[tuple[str, str]]:
    """``(name, version)`` of each distribution the error names with an exact version, in
    order, without repeats: the candidates whose build may have failed."""
    found: list[tuple[str, str]] = []
    for match in _NAMED.finditer(error):
        try:
            version = str(Version(match.group("version").rstrip(".")))
        except InvalidVersion:
            continue
        pair = (canonicalize_name(match.group("name")), version)
        if pair not in found:
            found.append(pair)
    return found[:8]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _fetch(url: str, limit: int) -> bytes:
    if urllib.parse.urlsplit(url).scheme not in {"http", "https"}:
        raise OSError(f"{url} is not an http(s) URL")  # an index page may link anywhere
    request = urllib.request.Request(url, headers={"Accept": "text/html"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: S310 - http(s) index
        data: bytes = response.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{url} is larger than {limit} bytes")
    return data


def _sdist_url(index: str, name: str, version: str) -> tuple[str, str | None] | None:
    """The URL (and sha256, when the index gives it) of ``name``'s sdist of ``version``."""
    page = f"{index.rstrip('/')}/{name}/"
    links = _Links()
    links.feed(_fetch(page, 16 << 20).decode("utf-8", "replace"))
    for href in links.hrefs:
        url, _, fragment = href.partition("#")
        file = PurePosixPath(urllib.request.url2pathname(url.split("?")[0])).name
        stem = _SDIST.sub("", file)
        if stem == file or "-" not in stem:
            continue
        project, _, release = stem.rpartition("-")
        try:
            same = canonicalize_name(project) == name and Version(release) == Version(version)
        except InvalidVersion:
            continue
        if same:
            digest = fragment.partition("=")[2] if fragment.startswith("sha256=") else None
            return urllib.parse.urljoin(page, url), digest
    return None


def _members(data: bytes, url: str) -> dict[str, bytes | None]:
    """The archive's members below its top folder: the files this module reads, with their
    bytes (``setup.py``, ``pyproject.toml``), every other one as None."""
    out: dict[str, bytes | None] = {}
    wanted = {"setup.py", "pyproject.toml"}
    if url.split("?", maxsplit=1)[0].endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                inner = PurePosixPath(info.filename)
                rel = "/".join(inner.parts[1:])
                read = rel in wanted and info.file_size <= _MAX_MEMBER
                out[rel] = archive.read(info) if read else None
        return out
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive:
            rel = "/".join(PurePosixPath(member.name).parts[1:])
            handle = (
                archive.extractfile(member)
                if member.isfile() and rel in wanted and member.size <= _MAX_MEMBER
                else None
            )
            out[rel] = handle.read() if handle is not None else None
    return out


def _top_imports(source: str) -> list[str]:
    """The top-level modules ``source`` imports when it runs: at module level and under a
    top-level ``if``, not under a ``try`` (an optional import) nor in a function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a Python 2 setup.py: its unindented import lines
        lines = re.findall(r"^(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", source, re.M)
        return [(a or b).split(".")[0] for a, b in lines]
    modules: list[str] = []
    body = list(tree.body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.Import):
            modules += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module.split(".")[0])
        elif isinstance(node, ast.If):
            body += [*node.body, *node.orelse]
    return list(dict.fromkeys(modules))


def _setup_requires(source: str) -> list[str]:
    """The names of ``setup(setup_requires=[...])`` written as literals: the build backend
    asks for them itself, unbounded by the code's era, so they are supplied (and pinned)
    with the rest."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else None
        called = node.func.id if isinstance(node.func, ast.Name) else called
        for keyword in node.keywords if called == "setup" else []:
            if keyword.arg != "setup_requires" or not isinstance(
                keyword.value, ast.List | ast.Tuple
            ):
                continue
            for item in keyword.value.elts:
                try:
                    text = item.value if isinstance(item, ast.Constant) else None
                    names.append(Requirement(text).name if isinstance(text, str) else "")
                except InvalidRequirement:
                    continue
    return [n for n in dict.fromkeys(names) if n]


def _declared(pyproject: bytes | None) -> set[str]:
    if pyproject is None:
        return set()
    try:
        requires = tomllib.loads(pyproject.decode("utf-8"))["build-system"]["requires"]
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, KeyError, TypeError):
        return set()
    names: set[str] = set()
    for line in requires if isinstance(requires, list) else []:
        try:
            names.add(canonicalize_name(Requirement(str(line)).name))
        except InvalidRequirement:
            continue
    return names


def read_needs(name: str, version: str, members: dict[str, bytes | None]) -> BuildNeeds:
    """What the source distribution with these ``members`` needs and does not declare."""
    setup = (members.get("setup.py") or b"").decode("utf-8", "replace")
    own = {PurePosixPath(rel).parts[0].removesuffix(".py") for rel in members if rel}
    declared = _declared(members.get("pyproject.toml"))
    needed: list[str] = []
    modules: list[str] = []
    for module in _top_imports(setup):
        if module in sys.stdlib_module_names or module in _BACKEND or module in own:
            continue
        distribution = IMPORT_TO_DISTRIBUTION.get(module, module)
        if canonicalize_name(distribution) in declared or distribution in needed:
            continue
        needed.append(distribution)
        modules.append(module)
    asked = [
        name
        for name in _setup_requires(setup)
        if canonicalize_name(name) not in {canonicalize_name(n) for n in needed}
    ]
    compiled = any(PurePosixPath(rel).suffix.lower() in _COMPILED for rel in members) or bool(
        _COMPILES.search(setup)
    )
    evidence = f"its setup.py imports {', '.join(modules)} at its top level" if modules else ""
    if modules and asked:  # only with an undeclared import: setup_requires alone builds
        evidence += f", and asks for {', '.join(asked)} (setup_requires)"
        needed += asked
    return BuildNeeds(name, version, tuple(needed), compiled, evidence)


def build_needs(error: str, index: str) -> list[BuildNeeds]:
    """The source distributions the resolver's ``error`` names that need build requirements
    they do not declare, read from each one fetched from ``index``; when none can be
    fetched, the module a ``No module named`` of the error names, for the first one named."""
    found: list[BuildNeeds] = []
    unread: list[tuple[str, str]] = []
    for name, version in failed_builds(error):
        try:
            located = _sdist_url(index, name, version)
            if located is None:
                continue
            data = _fetch(located[0], _MAX_SDIST)
            if located[1] and hashlib.sha256(data).hexdigest() != located[1]:
                continue
            members = _members(data, located[0])
        except (OSError, ValueError, tarfile.TarError, zipfile.BadZipFile, EOFError):
            unread.append((name, version))
            continue
        needs = read_needs(name, version, members)
        if needs.requirements:
            found.append(needs)
    missing = _NO_MODULE.search(error)
    if not found and unread and missing and missing.group("module") not in sys.stdlib_module_names:
        module = missing.group("module")
        name, version = unread[0]
        distribution = IMPORT_TO_DISTRIBUTION.get(module, module)
        found.append(
            BuildNeeds(name, version, (distribution,), False, f"its build failed without {module}")
        )
    return found


_ASK_CC = "import sysconfig; print(sysconfig.get_config_var('CC') or '')"


def compiler(python: str | os.PathLike[str]) -> str | None:
    """The C compiler a build with interpreter ``python`` would call (``$CC``, else the one
    the interpreter was built with), when it is here; None when it is not."""
    configured = os.environ.get("CC", "").strip()
    if not configured:
        try:
            proc = subprocess.run(
                [str(python), "-c", _ASK_CC],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )
            configured = proc.stdout.strip()
        except (OSError, subprocess.TimeoutExpired):  # as version_of: the interpreter did not run
            configured = ""
        configured = configured or "cc"
    command = configured.split()[0]
    return shutil.which(command)
