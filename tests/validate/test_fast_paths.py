"""The validator's fast paths give the findings, pointers and positions of the slow ones.

On a large generated manifest (block YAML and JSON text, with errors planted at known
places), validation with the fast paths (data converted without positions, positions computed
only when a finding asks; the schema evaluator asking validity before forming pointers;
pattern results memoised) gives exactly the findings of the full converter, which records
every position while it converts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import reprobridge_sdk as rb
from reprobridge_sdk.io import document
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.validation.structure import manifest_schema

TASKS = 800


def _manifest(tasks: int) -> dict[str, Any]:
    items = [
        {
            "id": f"t{t}",
            "dataset": "synthetic",
            "metric": "score",
            "statistic": {"aggregate": "mean", "seeds": 3},
            "published": {"value": 50.0 + t % 7},
            "direction": "higher",
            "kind": "full",
            "reference": {
                "observations": [
                    {"value": 50.0 + t % 7 + k / 10, "provenance": {"source": "ref"}}
                    for k in range(5)
                ]
            },
        }
        for t in range(tasks)
    ]
    launchers = [
        {
            "id": f"l{k}",
            "argv": ["python", "code/main.py", "--seed", "{seed}"],
            "scope": "scored",
            "seeds": [0, 1, 2],
            "outputs": [{"id": "metrics", "path": "metrics.json"}],
            "measurements": [
                {"task": f"t{t}", "extract": {"kind": "json", "output": "metrics", "pointer": "/a"}}
                for t in range(k * 10, min(tasks, k * 10 + 10))
            ],
        }
        for k in range(tasks // 10)
    ]
    return {
        "rra_version": "1.0",
        "artifact": {"id": "big", "title": "big", "license": "MIT", "paper": {"title": "p"}},
        "codebase": {
            "upstream": {"repository": "https://example.org/x.git", "commit": "b" * 40},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": "3.11", "lock": {"path": "r.lock", "format": "requirements"}},
        "tasks": items,
        "launchers": launchers,
    }


def _planted(manifest: dict[str, Any]) -> set[tuple[str, str]]:
    """Plant errors in the manifest; the (code, pointer) findings they must give."""
    tasks = manifest["tasks"]
    tasks[10]["metirc"] = tasks[10].pop("metric")
    tasks[300]["direction"] = "up"
    tasks[700]["statistic"]["seeds"] = "3"
    manifest["launchers"][50]["scope"] = "everything"
    manifest["launchers"][3]["seeds"] = [0, 1, "two"]
    return {
        ("S001", "/tasks/10/metirc"),
        ("S002", "/tasks/10/metric"),
        ("S004", "/tasks/300/direction"),
        ("S003", "/tasks/700/statistic/seeds"),
        ("S004", "/launchers/50/scope"),
        ("S003", "/launchers/3/seeds/2"),
    }


def _texts() -> dict[str, str]:
    manifest = _manifest(TASKS)
    planted = _manifest(TASKS)
    _planted(planted)
    block = yaml.safe_dump(planted, sort_keys=False)
    return {
        "valid block YAML": yaml.safe_dump(manifest, sort_keys=False),
        "valid JSON text": json.dumps(manifest, indent=1),
        "block YAML with errors": block,
        "JSON text with errors": json.dumps(planted, indent=1),
        # A duplicate key: the loader's finding sends the document down the full converter.
        "with a duplicate key": block.replace(
            "  dataset: synthetic\n", "  dataset: a\n  dataset: b\n", 1
        ),
    }


TEXTS = _texts()


def _findings(root: Path) -> list[tuple[str, str, int, int, str]]:
    result = rb.validate(root, check_files=False)
    return sorted((f.code, f.path, f.line, f.col, f.message) for f in result.findings)


def _full_converter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force the slow path: the converter that records every position while converting."""

    def never(root: Any) -> Any:
        raise document._NotPlain

    monkeypatch.setattr(document, "_plain", never)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_positions_and_data_equal_the_full_converters(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = TEXTS[name].encode()
    fast = load_document(raw, name="rra.yaml")
    assert (fast._positions is None) == ("duplicate" not in name)  # lazy unless a finding
    fast_positions, fast_keys = dict(fast.positions), dict(fast.key_positions)
    _full_converter(monkeypatch)
    slow = load_document(raw, name="rra.yaml")
    assert slow._positions is not None
    assert fast.data == slow.data
    assert [(f.code, f.path, f.line, f.col) for f in fast.findings] == [
        (f.code, f.path, f.line, f.col) for f in slow.findings
    ]
    assert fast_positions == slow.positions
    assert fast_keys == slow.key_positions
    assert len(fast_positions) > 40 * TASKS


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_findings_equal_the_slow_paths(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rra.yaml").write_text(TEXTS[name], "utf-8")
    fast = _findings(tmp_path)
    if "errors" in name:
        assert _planted(_manifest(TASKS)) <= {(code, path) for code, path, *_ in fast}
    _full_converter(monkeypatch)
    assert _findings(tmp_path) == fast


def test_validity_alone_agrees_with_the_errors() -> None:
    """The evaluator's validity-only mode (no pointers, no errors) is its full mode's verdict,
    on every task and launcher of the planted manifest, valid or not."""
    planted = _manifest(TASKS)
    _planted(planted)
    schema = manifest_schema("1.0")
    assert not schema.is_valid(planted)
    assert schema.is_valid(_manifest(TASKS)) == (schema.errors(_manifest(TASKS)) == [])
    whole = {(e.keyword, e.pointer) for e in schema.errors(planted)}
    valid = _manifest(10)
    for part in ("tasks", "launchers"):
        for index, item in enumerate(planted[part]):
            single = {**valid, part: [item]}
            bad = {p for _, p in whole if p.startswith(f"/{part}/{index}/")}
            assert schema.is_valid(single) == (not bad), (part, index)
