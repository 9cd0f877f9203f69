"""Extraction reasons are records (``extract/_errors.py:Reason``): the common ones in
``REASONS``, a kind's own in its module. Every reason the package raises is one of them, no
module maps a reason to a code by its own comparison or set of reasons (checked on the syntax
tree), and the record an error carries decides what sample replay and the auditor report."""

from __future__ import annotations

import ast
from pathlib import Path

from reprobridge_sdk import ExtractionError, validate
from reprobridge_sdk.extract import kinds
from reprobridge_sdk.extract._errors import REASONS, replayed
from tests.toy_study import make_artifact

PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
OWNER = "extract/_errors.py"


def _trees() -> list[tuple[str, ast.AST]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text("utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.relative_to(PACKAGE).as_posix().startswith("agent/")
    ]


def _raised(tree: ast.AST, name: str = "ExtractionError") -> set[str]:
    """The literal first arguments of ``name("reason", ...)`` calls."""
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def _reason_checks(tree: ast.AST) -> list[int]:
    """Lines that test a ``.reason`` against extraction reasons, or list reasons in a set."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "reason" for s in sides) and any(
                _names_reason(s) for s in sides
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.Set) and any(_names_reason(e) for e in node.elts):
            lines.append(node.lineno)
    return lines


def _names_reason(node: ast.AST) -> bool:
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return any(_names_reason(e) for e in node.elts)
    return isinstance(node, ast.Constant) and node.value in kinds.reasons()


def test_every_reason_raised_or_declared_is_known() -> None:
    raised = set().union(*(_raised(tree) for _, tree in _trees()))
    assert raised, "the check finds the raise sites"
    assert raised <= set(REASONS), sorted(raised - set(REASONS))  # a name: a common reason
    declared = [name for _, tree in _trees() for name in _raised(tree, "Reason")]
    assert len(declared) == len(set(declared)), "a reason is declared once"
    assert set(declared) == set(kinds.reasons())


def test_no_other_module_maps_reasons() -> None:
    found = [
        f"{rel}:{line}" for rel, tree in _trees() if rel != OWNER for line in _reason_checks(tree)
    ]
    assert found == [], "read the reason off the error (ExtractionError.why)"
    sample = 'if exc.reason == "no-plugin": pass\nx = {"bad-csv", "decode"}\ny = {"a": 1}\n'
    assert _reason_checks(ast.parse(sample)) == [1, 2]


def test_the_reason_gives_the_errors_finding() -> None:
    for name, entry in kinds.reasons().items():
        error = ExtractionError(entry, "message")
        assert error.reason == name and error.why is entry
        assert [f.code for f in error.findings] == ([entry.code] if entry.code else [])
    known = kinds.reasons()
    assert replayed(known["bad-csv"]) == "X001"
    assert replayed(known["missing-file"]) is None
    assert replayed(known["no-plugin"]) is None  # the semantic layer's X005


def test_a_sample_the_csv_extractor_cannot_read_is_x001(tmp_path: Path) -> None:
    """A reason the table gives to replay is reported on the sample (bad-csv: X001)."""
    extract = {"kind": "csv", "file": "log.txt", "column": "acc", "row": 0}
    root = make_artifact(tmp_path / "art", sample=True, acc_extract=extract)
    (root / "samples" / "log.txt").write_text("acc\n", "utf-8")  # a header, no data row
    found = [f for f in validate(root).findings if f.code.startswith("X")]
    assert [(f.code, f.path) for f in found] == [("X001", "/launchers/1/measurements/0/extract")]
