"""Atomic writes have one owner (``io/_fs.py`` over ``io/safefs.py``): no other module of the
package renames a file or directory into place or makes its own temporary file to do so.
Checked on the syntax tree: a call of ``os.replace``/``os.rename``/``tempfile.mkstemp``, or
a one-argument ``.replace(x)``/``.rename(x)`` (a path's; ``str.replace`` takes two).
``agent/`` joins with the build agent's issue."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "reprobridge_sdk"
OWNERS = {"io/_fs.py", "io/safefs.py"}
#: Renames that are not writes of a new file: the reason for each.
ALLOWED = {
    # a download resumes from its ``.part`` file; the finished, verified file is renamed
    "env/data.py",
}
NOT_YET = ("agent/",)
_CALLS = {("os", "replace"), ("os", "rename"), ("tempfile", "mkstemp")}


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


def test_only_the_owner_renames_into_place() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in OWNERS | ALLOWED or rel.startswith(NOT_YET):
            continue
        found += [f"{rel}:{line}" for line in _renames(ast.parse(path.read_text("utf-8")))]
    assert found == [], "write through reprobridge_sdk.io._fs (atomic_open, atomic_directory)"


def test_the_check_sees_a_rename() -> None:
    code = "import os\nos.replace(a, b)\nPath(t).replace(target)\nstaging.rename(x)\n"
    assert _renames(ast.parse(code)) == [2, 3, 4]
    assert _renames(ast.parse("s.replace('a', 'b')\nreplace(plan, literal=None)\n")) == []
