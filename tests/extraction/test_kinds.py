"""Extractor kinds are a registry (``extract/kinds.py:KINDS``): every layer knows every
registered kind (a test fails when one does not), and a new file kind is one reader module
plus one table entry: registered here, it is validated, extracted and replayed."""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk import ExtractionError, extract_value, model, plugins
from reprobridge_sdk.extract import kinds
from reprobridge_sdk.extract._errors import REASONS
from reprobridge_sdk.model._fieldnotes import NOTES
from reprobridge_sdk.validation.replay import replay_samples

REPO = Path(__file__).resolve().parents[2]
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
    # the model: a class with that literal kind, in the union of extractors, with its notes
    cls = getattr(model, entry.model)
    assert typing.get_args(cls.model_fields["kind"].annotation) == (kind,)
    assert kind in _tags()
    assert f"{entry.model}.kind" in NOTES
    # the schemas (both copies), the plugin registry, the reasons
    for schemas in (REPO / "schemas", REPO / "reprobridge_sdk" / "_data" / "schemas"):
        assert kind in _schema_kinds(schemas / "rra-1.1.schema.json"), schemas
    assert kind in plugins.BUILT_IN[plugins.EXTRACTORS]  # no plugin may take its name
    assert set(entry.reasons) <= set(REASONS)
    # extraction dispatches it (an empty file fails for the kind's own reason, not as unknown)
    assert (entry.reader is None) == (kind == "regex")
    (tmp_path / "f").write_text("", "utf-8")
    spec = {"kind": kind, "file": "f", "pattern": "(x)", "pointer": "/a", "column": "a", "key": "a"}
    with pytest.raises(ExtractionError) as caught:
        extract_value(spec, log=None, files_base=tmp_path, outputs={}, context={}, root=tmp_path)
    assert caught.value.reason != "bad-extractor"
    # the spec, the extraction vectors and the conformance cases use it
    assert f"`{kind}`" in (REPO / "spec" / "manifest.md").read_text("utf-8")
    vectors = json.loads(VECTORS.read_text("utf-8"))["cases"]
    assert any(case["extract"].get("kind") == kind for case in vectors)
    cases = (REPO / "validators" / "cases").glob("*/rra.yaml")
    assert any(f"kind: {kind}".encode() in path.read_bytes() for path in cases)


def test_the_plugin_registry_reserves_exactly_the_built_in_kinds() -> None:
    assert plugins.BUILT_IN[plugins.EXTRACTORS] == set(kinds.KINDS)


def test_an_unregistered_kind_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\n", "utf-8")
    with pytest.raises(ExtractionError) as caught:
        extract_value(
            {"kind": "tsv", "file": "f"}, log=None, files_base=tmp_path, outputs={}, context={}
        )
    assert caught.value.reason == "bad-extractor"
    assert kinds.reader("tsv") is None


# -- a new kind: one reader module (below) and one table entry ---------------------------------


def read_tsv(path: Any, spec: Mapping[str, Any], entries: Any = None) -> tuple[float, str]:
    """A tab-separated file with a header row: the last row's ``column``."""
    del entries
    text = path.read_bytes(1 << 20).decode("utf-8")
    lines = [line.split("\t") for line in text.splitlines() if line]
    if not lines or spec["column"] not in lines[0]:
        raise ExtractionError("no-match", f"{path.name}: no column {spec['column']!r}")
    if len(lines) < 2:
        raise ExtractionError("no-match", f"{path.name}: no data row")
    raw = lines[-1][lines[0].index(spec["column"])]
    try:
        return float(raw), raw
    except ValueError:
        raise ExtractionError("not-number", f"{path.name}: {raw!r} is not a number") from None


@pytest.fixture
def tsv(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = kinds.Kind("TsvExtractor", f"{__name__}:read_tsv", ("no-match", "not-number"))
    monkeypatch.setattr(kinds, "KINDS", {**kinds.KINDS, "tsv": entry})


def _manifest(expected: float) -> dict[str, Any]:
    return {
        "launchers": [
            {
                "id": "run",
                "seeds": [1],
                "measurements": [
                    {"task": "acc", "extract": {"kind": "tsv", "output": "m", "column": "acc"}}
                ],
                "samples": [
                    {"log": "s/log.txt", "outputs": {"m": "s/m.tsv"}, "expected": {"acc": expected}}
                ],
            }
        ]
    }


@pytest.mark.usefixtures("tsv")
def test_a_kind_registered_in_a_test_is_extracted_and_replayed(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "log.txt").write_text("done\n", "utf-8")
    (tmp_path / "s" / "m.tsv").write_text("epoch\tacc\n1\t0.5\n2\t0.75\n", "utf-8")
    got = extract_value(
        {"kind": "tsv", "file": "s/m.tsv", "column": "acc"},
        log=None,
        files_base=tmp_path,
        outputs={},
        context={},
        root=tmp_path,
    )
    assert got.value == 0.75
    (good,) = replay_samples(_manifest(0.75), tmp_path)
    assert good.ok and good.value == 0.75
    (wrong,) = replay_samples(_manifest(0.5), tmp_path)
    assert not wrong.ok and wrong.value == 0.75  # X003 in validation
    (tmp_path / "s" / "m.tsv").write_text("epoch\tacc\n", "utf-8")
    (failed,) = replay_samples(_manifest(0.75), tmp_path)
    assert failed.error is not None and failed.error.reason == "no-match"  # X001
