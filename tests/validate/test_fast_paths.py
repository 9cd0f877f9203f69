"""The validator's fast paths give the findings, pointers and positions of the slow ones.

On a large generated manifest (block YAML and JSON text, with errors planted at known
places), validation with the fast paths (a JSON text read by json; data converted without
positions, positions computed only when a finding asks; the schema evaluator asking validity
before forming pointers; pattern results memoised) gives exactly the findings of the full
converter over YAML nodes, which records every position while it converts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

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
    """Force the slow path: YAML nodes, converted by the converter that records every
    position while converting."""

    def never(root: Any) -> Any:
        raise document._NotPlain

    monkeypatch.setattr(document, "_plain", never)
    monkeypatch.setattr(document, "_json_subset", lambda text: None)
    monkeypatch.setattr(document, "_from_events", lambda text, spans=None: None)


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


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(min_codepoint=0, max_codepoint=0x2030), max_size=12)
)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


def _yaml_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "_json_subset", lambda text: None)


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(st.text(max_size=6), _JSON, max_size=5),
    indent=st.sampled_from([None, 0, 1, 2]),
    compact=st.booleans(),
)
def test_json_texts_read_as_yaml_reads_them(
    data: dict[str, Any], indent: int | None, compact: bool
) -> None:
    """A JSON text gives the data, findings and positions of the YAML reader, whether or not
    it falls in the subset that json reads (escapes, non-ASCII text, NaN, ... fall back)."""
    separators = (",", ":") if compact else None
    text = json.dumps(data, indent=indent, separators=separators, allow_nan=True)
    fast = load_document(text.encode(), name="m.json")
    with pytest.MonkeyPatch.context() as patch:
        _yaml_only(patch)
        slow = load_document(text.encode(), name="m.json")
    assert [(f.code, f.path, f.line, f.col) for f in fast.findings] == [
        (f.code, f.path, f.line, f.col) for f in slow.findings
    ]
    assert json.dumps(fast.data, sort_keys=True) == json.dumps(slow.data, sort_keys=True)
    assert fast.positions == slow.positions
    assert fast.key_positions == slow.key_positions


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',  # duplicate key: Y003 from the YAML reader
        '{"a": NaN}',
        '{"a": 1e400}',
        '{"a": ' + "[" * 70 + "]" * 70 + "}",
        '{"a": ' + "[" * 64 + "]" * 64 + "}",  # a collection at depth 64: Y005
        '{"a":\n 1}',
        '{"a"\n: 1}',
        '{"' + "k" * 1100 + '": 1}',
        '{"a": "tab\there"}',
        '{"a": "caf\u00e9"}',
        "[1, 2]",
        '{"a": 1} # comment',
    ],
)
def test_texts_outside_the_subset_read_as_yaml_reads_them(text: str) -> None:
    assert document._json_subset(text) is None
    doc = load_document(text.encode(), name="m.json")
    with pytest.MonkeyPatch.context() as patch:
        _yaml_only(patch)
        slow = load_document(text.encode(), name="m.json")
    assert [(f.code, f.line, f.col) for f in doc.findings] == [
        (f.code, f.line, f.col) for f in slow.findings
    ]


def test_the_deepest_nesting_allowed_is_in_the_subset() -> None:
    text = '{"a": ' + "[" * 63 + "]" * 63 + ', "b": "[[[[{{"}'
    assert document._json_subset(text) == json.loads(text)


def test_the_benchmarks_json_manifest_is_in_the_subset() -> None:
    text = TEXTS["valid JSON text"]
    assert document._json_subset(text) == json.loads(text)
