"""Atomic writes have one owner, ``io/atomic.py``: every module writes a file or a directory
atomically through it (``atomic_open``, ``atomic_write_*``, ``atomic_directory``), and only it
reaches the safe file layer's descriptor-level writer (``io/safefs/``). No other module
renames a file or directory into place or makes its own temporary file to do so.

Checked on the syntax tree: a call of ``os.replace``/``os.rename``/``tempfile.mkstemp``/
``tempfile.NamedTemporaryFile``, a one-argument ``.replace(x)``/``.rename(x)`` (a path's;
``str.replace`` takes two), and any use of ``safefs.atomic_open``/``safefs.atomic_write_bytes``
(an attribute or an import). ``agent/`` joins with the build agent's issue."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "reprobridge_sdk"
OWNER = "io/atomic.py"
#: The descriptor-level writer the owner is built on.
BELOW = "io/safefs/__init__.py"
#: Renames that are not writes of a new file: the reason for each.
ALLOWED = {
    # a download resumes from its ``.part`` file; the finished, verified file is renamed
    "env/data.py",
}
NOT_YET = ("agent/",)
_CALLS = {
    ("os", "replace"),
    ("os", "rename"),
    ("tempfile", "mkstemp"),
    ("tempfile", "NamedTemporaryFile"),
}
_WRITERS = {"atomic_open", "atomic_write_bytes"}


def _renames(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        module = func.value.id if isinstance(func.value, ast.Name) else None
        named = (module, func.attr) in _CALLS
        one_path = func.attr in {"replace", "rename"} and len(node.args) == 1
        if named or (one_path and not node.keywords):
            lines.append(node.lineno)
    return lines


def _below(tree: ast.AST) -> list[int]:
    """Lines that reach the safe file layer's atomic writer around the owner."""
    lines = []
    for node in ast.walk(tree):
        attribute = (
            isinstance(node, ast.Attribute)
            and node.attr in _WRITERS
            and isinstance(node.value, ast.Name)
            and node.value.id == "safefs"
        )
        imported = (
            isinstance(node, ast.ImportFrom)
            and (node.module or "").endswith("safefs")
            and any(alias.name in _WRITERS for alias in node.names)
        )
        if attribute or imported:
            lines.append(getattr(node, "lineno", 0))
    return lines


def _modules() -> list[tuple[str, ast.AST]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(NOT_YET):
            found.append((rel, ast.parse(path.read_text("utf-8"))))
    return found


def test_only_the_owner_renames_into_place() -> None:
    found = []
    for rel, tree in _modules():
        if rel not in {OWNER, BELOW} | ALLOWED:
            found += [f"{rel}:{line}" for line in _renames(tree)]
    assert found == [], "write through reprobridge_sdk.io.atomic (atomic_open, atomic_directory)"


def test_only_the_owner_calls_the_safe_file_layers_writer() -> None:
    found = []
    for rel, tree in _modules():
        if rel != OWNER:
            found += [f"{rel}:{line}" for line in _below(tree)]
    assert found == [], "write through reprobridge_sdk.io.atomic, not io.safefs directly"


def test_the_check_sees_a_rename() -> None:
    code = "import os\nos.replace(a, b)\nPath(t).replace(target)\nstaging.rename(x)\n"
    assert _renames(ast.parse(code)) == [2, 3, 4]
    assert _renames(ast.parse("tempfile.NamedTemporaryFile(dir=d, delete=False)\n")) == [1]
    assert _renames(ast.parse("s.replace('a', 'b')\nreplace(plan, literal=None)\n")) == []


def test_the_check_sees_the_writer_below() -> None:
    code = (
        "from reprobridge_sdk.io.safefs import atomic_open\n"
        "safefs.atomic_write_bytes(p, b'')\n"
        "from .safefs import read_bytes\n"
        "atomic_write_bytes(p, b'')\n"
    )
    assert _below(ast.parse(code)) == [1, 2]
