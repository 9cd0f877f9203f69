"""Extractor kinds are a registry (``extract/kinds/__init__.py:KINDS``): every layer knows
every registered kind, no layer dispatches on a kind's name by itself, and a new kind is one
module plus one table entry (``tsv_kind.py``): validated, extracted and replayed."""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from reprobridge_sdk import ExtractionError, extract_value, model, plugins
from reprobridge_sdk.extract import kinds
from reprobridge_sdk.findings import registry
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.model._fieldnotes import NOTES
from reprobridge_sdk.validation.replay import check_replay, replay_samples
from reprobridge_sdk.validation.semantic import check_semantics
from tests.extraction import tsv_kind

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "reprobridge_sdk"
VECTORS = REPO / "tests" / "extraction" / "vectors" / "cases.json"


def _tags() -> set[str]:
    """The tags of the model's discriminated union of extractors."""
    union = typing.get_args(model.Extractor)[0]
    return {
        meta.tag
        for branch in typing.get_args(union)
        for meta in getattr(branch, "__metadata__", ())
        if hasattr(meta, "tag")
    }


def _schema_kinds(path: Path) -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            kind = node.get("properties", {}).get("kind") if "properties" in node else None
            if isinstance(kind, dict) and isinstance(kind.get("const"), str):
                found.add(kind["const"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text("utf-8")))
    return found


@pytest.mark.parametrize("kind", sorted(kinds.KINDS))
def test_every_layer_knows_the_kind(kind: str, tmp_path: Path) -> None:
    entry = kinds.KINDS[kind]
    assert entry.name == kind
    # the model: a class with that literal kind, in the union of extractors, with its notes
    cls = getattr(model, entry.model)
    assert typing.get_args(cls.model_fields["kind"].annotation) == (kind,)
    assert kind in _tags()
    assert f"{entry.model}.kind" in NOTES
    # the schemas (both copies), the plugin registry, the reasons' codes
    for schemas in (REPO / "schemas", PACKAGE / "_data" / "schemas"):
        assert kind in _schema_kinds(schemas / "rra-1.1.schema.json"), schemas
    assert kind in plugins.BUILT_IN[plugins.EXTRACTORS]  # no plugin may take its name
    for reason in entry.reasons:
        assert reason.code is None or reason.code in registry()
        assert kinds.reasons()[reason.name] is reason
    # extraction dispatches it (an empty file fails for the kind's own reason, not as unknown)
    (tmp_path / "f").write_text("", "utf-8")
    spec = {"kind": kind, "file": "f", "pattern": "(x)", "pointer": "/a", "column": "a", "key": "a"}
    with pytest.raises(ExtractionError) as caught:
        extract_value(spec, log=None, files_base=tmp_path, outputs={}, context={}, root=tmp_path)
    assert caught.value.why in entry.reasons
    # the spec, the extraction vectors and the conformance cases use it
    assert f"`{kind}`" in (REPO / "spec" / "manifest.md").read_text("utf-8")
    vectors = json.loads(VECTORS.read_text("utf-8"))["cases"]
    assert any(case["extract"].get("kind") == kind for case in vectors)
    cases = (REPO / "validators" / "cases").glob("*/rra.yaml")
    assert any(f"kind: {kind}".encode() in path.read_bytes() for path in cases)


def test_the_plugin_registry_reserves_exactly_the_built_in_kinds() -> None:
    assert plugins.BUILT_IN[plugins.EXTRACTORS] == set(kinds.KINDS)
    assert _tags() - {"x"} == set(kinds.KINDS)


def _names_kind(node: ast.AST) -> bool:
    """``kind``, ``x.kind`` or ``x.get("kind")``."""
    if isinstance(node, ast.Name):
        return "kind" in node.id
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and any(isinstance(a, ast.Constant) and a.value == "kind" for a in node.args)
    )


def _dispatches(tree: ast.AST) -> list[int]:
    """Lines comparing a kind with a built-in kind's name (``kind == "csv"``, ``in``)."""
    names = set(kinds.KINDS)
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        elts = [e for s in sides for e in (s.elts if isinstance(s, (ast.Tuple, ast.Set)) else [s])]
        if any(isinstance(e, ast.Constant) and e.value in names for e in elts) and any(
            _names_kind(s) for s in sides
        ):
            lines.append(node.lineno)
    return lines


def test_no_layer_dispatches_on_a_kind_by_name() -> None:
    """A layer asks the table; an ``if kind == "regex"`` elsewhere would miss a new kind."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("agent/", "extract/kinds/")):
            continue
        found += [f"{rel}:{line}" for line in _dispatches(ast.parse(path.read_text("utf-8")))]
    assert found == []
    sample = 'if spec.get("kind") == "csv": pass\nif m.kind in ("regex", "json"): pass\n'
    assert _dispatches(ast.parse(sample)) == [1, 2]
    assert _dispatches(ast.parse('if fmt == "json": pass')) == []


def test_an_unregistered_kind_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\n", "utf-8")
    with pytest.raises(ExtractionError) as caught:
        extract_value(
            {"kind": "tsv", "file": "f"}, log=None, files_base=tmp_path, outputs={}, context={}
        )
    assert caught.value.reason == "bad-extractor"


# -- a new kind: one module (tsv_kind.py) and one table entry ----------------------------------


@pytest.fixture
def tsv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "KINDS", {**kinds.KINDS, "tsv": tsv_kind.KIND})


def _artifact(root: Path, expected: float, row_pattern: str | None = None) -> Path:
    extract: dict[str, Any] = {"kind": "tsv", "output": "m", "column": "acc"}
    if row_pattern is not None:
        extract["row_pattern"] = row_pattern
    launcher = {
        "id": "run",
        "seeds": [1],
        "outputs": [{"id": "m", "path": "m.tsv"}],
        "measurements": [{"task": "acc", "extract": extract}],
        "samples": [
            {"log": "s/log.txt", "outputs": {"m": "s/m.tsv"}, "expected": {"acc": expected}}
        ],
    }
    (root / "s").mkdir(exist_ok=True)
    (root / "s" / "log.txt").write_text("done\n", "utf-8")
    (root / "rra.yaml").write_text(yaml.safe_dump({"launchers": [launcher]}), "utf-8")
    return root


def _codes(root: Path) -> list[tuple[str, str]]:
    doc = load_document(root / "rra.yaml", root=root)
    found = check_semantics(doc) + check_replay(doc, root)
    return [(f.code, f.path) for f in found if f.code[0] in "RX" and f.code != "R006"]


@pytest.mark.usefixtures("tsv")
def test_a_kind_registered_in_a_test_is_validated_extracted_and_replayed(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "m.tsv").write_text("epoch\tacc\n1\t0.5\n2\t0.75\n", "utf-8")
    got = extract_value(
        {"kind": "tsv", "file": "s/m.tsv", "column": "acc"},
        log=None,
        files_base=tmp_path,
        outputs={},
        context={},
        root=tmp_path,
        transform={"scale": 100.0},
    )
    assert got.value == 75.0
    extract = "/launchers/0/measurements/0/extract"
    # extraction and replay: the right value passes, another is X003
    assert _codes(_artifact(tmp_path, 0.75)) == []
    assert _codes(_artifact(tmp_path, 0.5)) == [("X003", "/launchers/0/samples/0/expected/acc")]
    (good,) = replay_samples(yaml.safe_load((tmp_path / "rra.yaml").read_text()), tmp_path)
    assert good.value == 0.75
    # the kind's semantic rule (its pattern: R016), and its row selection
    assert _codes(_artifact(tmp_path, 0.5, "^(1")) == [("R016", f"{extract}/row_pattern")]
    assert _codes(_artifact(tmp_path, 0.5, "^1$")) == []
    # its own reason (bad-tsv) and a common one (no-match) are the replay layer's X001
    (tmp_path / "s" / "m.tsv").write_text("epoch\tloss\n1\t0.5\n", "utf-8")
    assert _codes(_artifact(tmp_path, 0.75)) == [("X001", extract)]
    (tmp_path / "s" / "m.tsv").write_text("epoch\tacc\n", "utf-8")
    assert _codes(_artifact(tmp_path, 0.75)) == [("X001", extract)]
    (tmp_path / "s" / "m.tsv").write_text("epoch\tacc\n1\t95%\n", "utf-8")
    assert _codes(_artifact(tmp_path, 0.75)) == [("X002", extract)]
