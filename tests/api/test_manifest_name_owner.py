"""The manifest's file name has one owner, ``reprobridge_sdk.versions.MANIFEST_NAME``.

Checked on the syntax tree: no other module of the package spells ``"rra.yaml"`` as a
string of its own (a docstring or a longer message may mention it). ``agent/`` joins with
the build agent's issue.
"""

from __future__ import annotations

import ast
from pathlib import Path

from reprobridge_sdk.versions import MANIFEST_NAME

PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
OWNER = "versions.py"
NOT_YET = ("agent/",)


def spelled(tree: ast.AST) -> list[int]:
    """Lines with a string constant that is exactly the manifest's file name."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == MANIFEST_NAME
    ]


def test_only_the_owner_spells_the_manifest_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel != OWNER and not rel.startswith(NOT_YET):
            found += [f"{rel}:{line}" for line in spelled(ast.parse(path.read_text("utf-8")))]
    assert found == [], "import MANIFEST_NAME from reprobridge_sdk.versions"


def test_the_check_sees_the_name() -> None:
    code = 'NAME = "rra.yaml"\nroot / "rra.yaml"\n"""About rra.yaml."""\nf"{root}/rra.yaml"\n'
    assert spelled(ast.parse(code)) == [1, 2]
