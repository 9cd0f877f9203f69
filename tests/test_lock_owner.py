"""Inter-process locks have one owner, ``io/filelock.py``: no other module of the package
imports ``fcntl`` (or takes a lock with ``flock``/``lockf``); each calls
:func:`reprobridge_sdk.io.filelock.file_lock`. Checked on the syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "reprobridge_sdk"
OWNER = "io/filelock.py"
_LOCKS = {"fcntl", "msvcrt"}
_CALLS = {"flock", "lockf", "locking"}


def _locking(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named = any(alias.name.split(".")[0] in _LOCKS for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            named = (node.module or "").split(".")[0] in _LOCKS
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            named = node.func.attr in _CALLS
        else:
            named = False
        if named:
            lines.append(node.lineno)
    return lines


def test_only_the_owner_takes_a_file_lock() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative == OWNER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{relative}:{line}" for line in _locking(tree)]
    assert found == []


def test_the_check_sees_a_lock() -> None:
    assert _locking(ast.parse("import fcntl\nfcntl.flock(fd, fcntl.LOCK_EX)\n")) == [1, 2]
    assert _locking(ast.parse((PACKAGE / OWNER).read_text(encoding="utf-8")))
