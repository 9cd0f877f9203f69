"""JSON Pointer has one owner: ``reprobridge_sdk/io/pointer.py`` (issue 25, "one owner").

Walks the syntax tree of every module of the package, ``agent/`` included, and fails when a
module other than the owner writes the escape or unescape of a reference token: a string
constant ``"~0"`` or ``"~1"`` used in code (a call's argument, a comparison, an f-string),
which is what escaping by hand needs. Docstrings and comments are not code and may mention
the escapes.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "reprobridge_sdk"
OWNER = PACKAGE / "io" / "pointer.py"
ESCAPES = ("~0", "~1")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the constant nodes that are docstrings (the first statement of a body)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def escapes_by_hand(source: str) -> list[int]:
    """Lines of ``source`` with a string constant holding ``~0`` or ``~1`` in code."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and any(escape in node.value for escape in ESCAPES)
    )


def test_only_the_owner_escapes_a_pointer() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != OWNER and (lines := escapes_by_hand(path.read_text("utf-8")))
    }
    assert offenders == {}


def test_the_owner_escapes() -> None:
    assert escapes_by_hand(OWNER.read_text("utf-8"))


def test_the_check_sees_each_way_of_escaping_by_hand() -> None:
    for source in (
        'k.replace("~", "~0").replace("/", "~1")',
        't.replace("~1", "/").replace("~0", "~")',
        'ESC = {"~": "~0", "/": "~1"}',
        'f"{a}~1{b}"',
        're.sub("~1", "/", token)',
    ):
        assert escapes_by_hand(source), source
    assert not escapes_by_hand('"""Escapes ``~0`` and ``~1``."""\nx = 1\n')


def test_the_owner_round_trips_and_walks() -> None:
    from reprobridge_sdk.io.pointer import (
        PointerError,
        escape_pointer,
        from_loc,
        pointer_of,
        resolve,
        tokens_of,
        unescape_pointer,
        walk,
    )

    for token in ("a", "a/b", "~", "~1", "~01", "/~", ""):
        assert unescape_pointer(escape_pointer(token)) == token
    data = {"a/b": [{"~k": 1}], "": 2}
    pointer = pointer_of(["a/b", 0, "~k"])
    assert pointer == "/a~1b/0/~0k"
    assert tokens_of(pointer) == ("a/b", "0", "~k")
    assert walk(data, pointer) == 1
    assert walk(data, "/") == 2
    assert resolve(data, "/a~1b/01/~0k") is None  # a leading zero names no item
    assert resolve(data, "/missing", "none") == "none"
    for bad in ("no-slash", "/a~1b/5", "/a~1b/0/~0k/deeper"):
        try:
            walk(data, bad)
        except PointerError as exc:
            assert bad in str(exc)
        else:
            raise AssertionError(bad)
    # a pydantic location: the discriminator's tag is skipped, keys are escaped
    items = {"m": [{"kind": "regex", "p/q": 1}]}
    assert from_loc(items, ("m", 0, "regex", "p/q")) == "/m/0/p~1q"
