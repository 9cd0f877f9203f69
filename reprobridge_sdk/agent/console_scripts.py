"""Console scripts of the repository's own package, read without running or installing it.

A README writes ``deepwalk --input g.adjlist --output g.emb``: the command exists only once
the package is installed. The build does not install the repository's package (the
environment is shared by every artifact with the same lock), so such a line is read as the
Python command the installed wrapper would run.

**Where they are declared** (read statically; ``setup.py`` is never executed), all merged,
the first declaration of a name kept: ``pyproject.toml`` ``[project.scripts]`` and
``[tool.poetry.scripts]``, ``setup.cfg`` ``[options.entry_points] console_scripts``, and a
literal ``setup(entry_points={"console_scripts": [...]})`` in ``setup.py`` (a dict literal,
or a module-level name bound once to one; the list may be a name bound to a list literal);
the last two are read by :mod:`reprobridge_sdk.agent.packaging_metadata`.

**An entry** is ``name = module:function`` (``function`` may be dotted: ``obj.method``). The
name is a word (letters, digits, ``.``, ``_``, ``-``), the module a dotted Python name whose
file is in the repository (at its root or under ``src/``); anything else, extras
(``[extra]``) included, is left out: the line stays unread, as before.

**The form** (the least surprising that needs no install):

* ``python -m <module>`` when running the module as a program calls the function: the module
  is a package's ``__main__`` (``python -m pkg``), or its source has an
  ``if __name__ == "__main__":`` block that calls it;
* otherwise ``python -c "import sys; from <module> import <head>; sys.argv[0] = '<name>';
  sys.exit(<function>())"``: what the installed wrapper itself runs.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobridge_sdk.agent.packaging_metadata import read_setup_cfg, read_setup_py
from reprobridge_sdk.io.safefs import UnsafeFileError, read_text

__all__ = ["ConsoleScript", "console_scripts"]

_MAX_FILE = 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_MODULE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_ENTRY = re.compile(r"^\s*(?P<module>[\w.]+)\s*:\s*(?P<function>[A-Za-z_][\w.]*)\s*$")


@dataclass(frozen=True)
class ConsoleScript:
    """One console script of the repository's package, and how it runs uninstalled."""

    name: str
    module: str
    function: str
    #: The module's file, from the repository root.
    file: str
    #: Where it is declared, e.g. ``setup.py entry_points``.
    source: str
    #: True: ``python -m`` calls the function (else the ``-c`` form).
    runs_as_main: bool

    @property
    def head(self) -> list[str]:
        """The interpreter's argv up to the script's own arguments."""
        if self.runs_as_main:
            return ["python", "-m", self.module.removesuffix(".__main__")]
        first = self.function.split(".", 1)[0]
        code = (
            f"import sys; from {self.module} import {first}; "
            f"sys.argv[0] = {self.name!r}; sys.exit({self.function}())"
        )
        return ["python", "-c", code]


def _read(root: Path, rel: str) -> str | None:
    try:
        return read_text(root / rel, root=root, max_bytes=_MAX_FILE)
    except (OSError, UnsafeFileError, UnicodeDecodeError):
        return None


def _pyproject(text: str) -> list[tuple[str, str, str]]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    out: list[tuple[str, str, str]] = []
    for keys, where in (
        (("project", "scripts"), "pyproject.toml [project.scripts]"),
        (("tool", "poetry", "scripts"), "pyproject.toml [tool.poetry.scripts]"),
    ):
        table: Any = data
        for key in keys:
            table = table.get(key) if isinstance(table, dict) else None
        if isinstance(table, dict):
            out += [(k, v, where) for k, v in table.items() if isinstance(v, str)]
    return out


def _setup_cfg(text: str) -> list[tuple[str, str, str]]:
    where = "setup.cfg [options.entry_points]"
    return [(name, target, where) for name, target in read_setup_cfg(text).console_scripts]


def _setup_py(text: str) -> list[tuple[str, str, str]]:
    where = "setup.py entry_points"
    return [(name, target, where) for name, target in read_setup_py(text).console_scripts]


def _module_file(root: Path, module: str) -> str | None:
    base = module.replace(".", "/")
    for prefix in ("", "src/"):
        for candidate in (f"{prefix}{base}.py", f"{prefix}{base}/__init__.py"):
            path = root / candidate
            if path.is_file() and not path.is_symlink():
                return candidate
    return None


def _calls_main(text: str, function: str, *, package_main: bool) -> bool:
    """Whether running ``text`` as ``__main__`` calls ``function``: in an
    ``if __name__ == "__main__":`` block, or (a package's ``__main__``) at the top level."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    for node in tree.body:
        guarded = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        if not guarded and not (package_main and isinstance(node, ast.Expr)):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and ast.unparse(sub.func) == function:
                return True
    return False


def console_scripts(root: Path) -> dict[str, ConsoleScript]:
    """The console scripts the packaging metadata at ``root`` declares, by name."""
    declared: list[tuple[str, str, str]] = []
    for rel, reader in (
        ("pyproject.toml", _pyproject),
        ("setup.cfg", _setup_cfg),
        ("setup.py", _setup_py),
    ):
        text = _read(root, rel)
        if text is not None:
            declared += reader(text)
    found: dict[str, ConsoleScript] = {}
    for name, target, source in declared:
        match = _ENTRY.match(target)
        if name in found or not _NAME.match(name) or match is None:
            continue
        module, function = match.group("module"), match.group("function")
        if not _MODULE.match(module) or module.endswith(".__init__"):
            continue
        file = _module_file(root, module)
        if file is None:
            continue
        main = not file.endswith("__init__.py") and _calls_main(
            _read(root, file) or "", function, package_main=module.endswith(".__main__")
        )
        found[name] = ConsoleScript(name, module, function, file, source, main)
    return found
