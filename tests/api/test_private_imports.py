"""Tests use the public API where one exists (``reprobridge_sdk.PUBLIC_API``).

Checked on the syntax tree of every module under ``tests/``: an import of a private name
fails when the public API offers the same object under a public name; the message says
which. A name is private when it or a part of its module's name starts with an underscore
(``from reprobridge_sdk.x._y import name``, ``from reprobridge_sdk.x import _name``), or when
its module is not a stable one (``from reprobridge_sdk.model.task import Task``, where
``reprobridge_sdk.model`` offers ``Task``). A private name that the public API does not offer
stays importable: a test of an internal may reach it.

The package keeps the rule across its parts: a module does not import another part's
underscore name that the public API offers (a part may use its own private names; ``agent/``
joins with the build agent's issue).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from reprobridge_sdk import PUBLIC_API

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "reprobridge_sdk"
NOT_YET = ("agent/",)


def _underscore(module: str, name: str) -> bool:
    return any(part.startswith("_") for part in (*module.split("."), name))


def _private(module: str, name: str) -> bool:
    return _underscore(module, name) or module not in PUBLIC_API


def private_imports(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """``(line, module, name)`` of each import of a private name of the package."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "reprobridge_sdk":
                continue
            for alias in node.names:
                if _private(node.module, alias.name):
                    yield node.lineno, node.module, alias.name


def _named(value: object) -> bool:
    """Whether ``value`` is the same thing wherever it is found (a constant may coincide)."""
    return inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value)


@cache
def _offered() -> dict[int, list[str]]:
    """The public names of each object that the public API offers, by the object's id."""
    found: dict[int, list[str]] = {}
    for module, names in PUBLIC_API.items():
        imported = importlib.import_module(module)
        for name in names:
            found.setdefault(id(getattr(imported, name)), []).append(f"{module}.{name}")
    return found


def public_names(module: str, name: str) -> list[str]:
    """The public names under which the API offers ``module.name``; [] when it does not."""
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return []
    offered = _offered().get(id(value), [])
    if not _named(value):
        offered = [item for item in offered if item.endswith(f".{name}")]
    # the nearest first: reprobridge_sdk.model.Task for reprobridge_sdk.model.task.Task
    return sorted(offered, key=lambda item: -len(_common(item, module)))


def _common(public: str, module: str) -> list[str]:
    shared = []
    for mine, theirs in zip(public.split(".")[:-1], module.split("."), strict=False):
        if mine != theirs:
            break
        shared.append(mine)
    return shared


def test_no_test_imports_a_private_name_that_the_public_api_offers() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for line, module, name in private_imports(tree):
            public = public_names(module, name)
            if public:
                where = path.relative_to(TESTS.parent).as_posix()
                found.append(f"{where}:{line}: {module}.{name} is public as {public[0]}")
    assert found == [], "import the public name:\n" + "\n".join(found)


def test_no_part_of_the_package_imports_another_parts_private_name_the_api_offers() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(NOT_YET):
            continue
        own = "reprobridge_sdk." + rel.split("/")[0].removesuffix(".py")
        for line, module, name in private_imports(ast.parse(path.read_text("utf-8"))):
            if module == own or module.startswith(f"{own}.") or not _underscore(module, name):
                continue
            public = public_names(module, name)
            if public:
                found.append(f"{rel}:{line}: {module}.{name} is public as {public[0]}")
    assert found == [], "import the public name:\n" + "\n".join(found)


def test_the_check_sees_a_private_name() -> None:
    code = (
        "from reprobridge_sdk.model._base import SpecModel\n"
        "from reprobridge_sdk.api import _manifest_data, load\n"
        "from reprobridge_sdk import model\n"
        "from ._support import helper\n"
        "from other._private import x\n"
        "from reprobridge_sdk.model.task import Task\n"
    )
    assert list(private_imports(ast.parse(code))) == [
        (1, "reprobridge_sdk.model._base", "SpecModel"),
        (2, "reprobridge_sdk.api", "_manifest_data"),
        (6, "reprobridge_sdk.model.task", "Task"),
    ]


def test_the_check_knows_what_the_public_api_offers() -> None:
    assert "reprobridge_sdk.model.SpecModel" in public_names(
        "reprobridge_sdk.model._base", "SpecModel"
    )
    assert "reprobridge_sdk.ExtractionError" in public_names(
        "reprobridge_sdk.extract._errors", "ExtractionError"
    )
    # private and not offered: a test of the internal may import it
    assert public_names("reprobridge_sdk.api", "_manifest_data") == []
    assert public_names("reprobridge_sdk.model._fieldnotes", "NOTES") == []
    # a constant is offered only under its own name, not where an equal value lives
    assert public_names("reprobridge_sdk.model._base", "ID_PATTERN") == [
        "reprobridge_sdk.model.ID_PATTERN"
    ]
    assert public_names("reprobridge_sdk.no_such_module", "x") == []
    # the nearest public name first
    assert public_names("reprobridge_sdk.model.evidence", "EvidenceRecord")[0] == (
        "reprobridge_sdk.model.EvidenceRecord"
    )
    assert public_names("reprobridge_sdk.model.task", "Task") == ["reprobridge_sdk.model.Task"]
