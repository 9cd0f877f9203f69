"""``setup.cfg`` and ``setup.py`` read once for what the build agent needs of them.

Three readers used to parse these files each on their own: the requirements
(:mod:`reprobridge_sdk.agent.dependencies`), the distribution's name and version
(:mod:`reprobridge_sdk.agent.own_distribution`) and the console scripts
(:mod:`reprobridge_sdk.agent.console_scripts`). This module parses a file's text once and
returns all three (:class:`SetupMetadata`); the parse of a text is cached, so the three
callers of one build share it. Nothing is run: ``setup.py`` is read as a syntax tree.

**setup.cfg** (one :class:`configparser.ConfigParser`, no interpolation):

* ``[metadata] name`` and ``version``; a version ``attr: pkg.__version__`` or
  ``file: VERSION`` is a pointer (``("attr"|"file", value)``), not a version;
* ``[options] install_requires``, one requirement a line;
* ``[options.entry_points] console_scripts``, ``name = module:function`` lines.

**setup.py**: literals only, a keyword's value being a literal or a module-level name bound
once to one (``REQUIRES = [...]`` then ``install_requires=REQUIRES``):

* ``name`` and ``version`` of the first ``setup()`` call (``setup`` or ``setuptools.setup``)
  that names the distribution with a constant;
* ``install_requires`` of the first call of any name whose value is a list or tuple of
  strings (``setup(**dict(install_requires=[...]))`` counts);
* ``entry_points={"console_scripts": [...]}`` of the first ``setup()`` call that gives the
  list (a dict literal, or a name bound to one; the list may be a bound name too).

A value built at run time (``find_requirements()``, ``open("VERSION").read()``) is not
read: the field stays empty. **Hostile text** never raises: a file that does not parse
(syntax, a null byte, nesting too deep, duplicate sections) or larger than
:data:`MAX_TEXT` characters gives empty fields and ``error`` says why. Decoding is the
caller's (a caller may read a non-UTF-8 file with replacement characters).
"""

from __future__ import annotations

import ast
import configparser
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MAX_TEXT", "SetupMetadata", "read_setup_cfg", "read_setup_py"]

#: Characters of a file read at most (a larger file gives empty fields and an error).
MAX_TEXT = 1024 * 1024
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclass(frozen=True)
class SetupMetadata:
    """What a ``setup.cfg`` or a ``setup.py`` declares (empty: nothing literal)."""

    #: Whether the file names the distribution (``name`` may still be no valid name).
    has_name: bool = False
    #: As written: a string from ``setup.cfg``, any constant from ``setup.py``.
    name: object = None
    #: As written; None when absent, or when ``version_pointer`` gives it.
    version: object = None
    #: ``("attr", "pkg.__version__")`` or ``("file", "VERSION")`` (``setup.cfg`` only).
    version_pointer: tuple[str, str] | None = None
    #: The requirement lines as written (stripped, empty ones dropped).
    install_requires: tuple[str, ...] = ()
    #: ``(name, "module:function")`` as written, in order.
    console_scripts: tuple[tuple[str, str], ...] = ()
    #: Why the file was not read (does not parse, too large); None when it was.
    error: str | None = None


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _entry(line: str) -> tuple[str, str]:
    name, _, target = line.partition("=")
    return name.strip(), target.strip()


@lru_cache(maxsize=8)
def read_setup_cfg(text: str) -> SetupMetadata:
    """The metadata a ``setup.cfg`` text declares, parsed once."""
    if len(text) > MAX_TEXT:
        return SetupMetadata(error=f"larger than {MAX_TEXT} characters")
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
        name = parser.get("metadata", "name", fallback=None)
        version = parser.get("metadata", "version", fallback=None)
        requires = parser.get("options", "install_requires", fallback="")
        scripts = parser.get("options.entry_points", "console_scripts", fallback="")
    except (configparser.Error, RecursionError, MemoryError) as exc:
        return SetupMetadata(error=_first_line(exc))
    version = version.strip() if version else None
    pointer = None
    if version is not None and version.startswith(("attr:", "file:")):
        kind, _, value = version.partition(":")
        pointer, version = (kind, value.strip().split(",")[0]), None
    return SetupMetadata(
        has_name=name is not None,
        name=name.strip() if name is not None else None,
        version=version,
        version_pointer=pointer,
        install_requires=tuple(line.strip() for line in requires.split("\n") if line.strip()),
        console_scripts=tuple(_entry(line) for line in scripts.splitlines() if "=" in line),
    )


def _called(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _strings(node: ast.expr) -> tuple[str, ...] | None:
    """The strings of a list or tuple literal of strings, else None."""
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
    if len(values) != len(node.elts) or not all(isinstance(v, str) for v in values):
        return None
    return tuple(str(v).strip() for v in values)


class _SetupPy:
    """One walk of a ``setup.py`` tree, each field taken where it is first found."""

    def __init__(self, tree: ast.Module) -> None:
        self.bound: dict[str, ast.expr] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    self.bound[target.id] = node.value
        self.named: dict[str, object] | None = None
        self.requires: tuple[str, ...] | None = None
        self.scripts: tuple[tuple[str, str], ...] | None = None
        for call in ast.walk(tree):
            if isinstance(call, ast.Call):
                self._call(call)

    def value(self, node: ast.expr) -> ast.expr:
        return self.bound.get(node.id, node) if isinstance(node, ast.Name) else node

    def _call(self, call: ast.Call) -> None:
        for keyword in call.keywords:
            if self.requires is None and keyword.arg == "install_requires":
                found = _strings(self.value(keyword.value))
                self.requires = tuple(line for line in found if line) if found else found
        if _called(call.func) != "setup":
            return
        if self.named is None:
            values: dict[str, object] = {
                keyword.arg: value.value
                for keyword in call.keywords
                if keyword.arg in {"name", "version"}
                and isinstance(value := self.value(keyword.value), ast.Constant)
            }
            self.named = values if "name" in values else None
        if self.scripts is None:
            self.scripts = self._scripts(call)

    def _scripts(self, call: ast.Call) -> tuple[tuple[str, str], ...] | None:
        for keyword in call.keywords:
            points = self.value(keyword.value) if keyword.arg == "entry_points" else None
            if not isinstance(points, ast.Dict):
                continue
            for key, entries in zip(points.keys, points.values, strict=True):
                if not (isinstance(key, ast.Constant) and key.value == "console_scripts"):
                    continue
                listed = self.value(entries)
                if not isinstance(listed, ast.List | ast.Tuple):
                    continue
                return tuple(
                    _entry(item.value)
                    for item in listed.elts
                    if isinstance(item, ast.Constant)
                    and isinstance(item.value, str)
                    and "=" in item.value
                )
        return None


@lru_cache(maxsize=8)
def read_setup_py(text: str) -> SetupMetadata:
    """The metadata a ``setup.py`` text declares in literals, parsed once (never run)."""
    if len(text) > MAX_TEXT:
        return SetupMetadata(error=f"larger than {MAX_TEXT} characters")
    try:
        read = _SetupPy(ast.parse(text))
    except _PARSE_ERRORS as exc:
        return SetupMetadata(error=_first_line(exc))
    named = read.named or {}
    return SetupMetadata(
        has_name="name" in named,
        name=named.get("name"),
        version=named.get("version"),
        install_requires=read.requires or (),
        console_scripts=read.scripts or (),
    )
