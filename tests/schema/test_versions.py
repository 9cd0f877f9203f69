"""Format versions: the ``since`` marker, the schema of each version, V005 and S006.

The models describe the newest version; a field or value added later than 1.0 is marked with
``since()``. The marker is a ``$comment`` (the one annotation ajv accepts in strict mode), the
1.0 schema is the newest with the marked additions removed, and validation of an older document
that uses an addition reports V005 at it. The schema here is a small one written for the test,
evaluated by the real evaluator: the committed schemas have no 1.1 field of their own yet.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk import validate
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.schema import generate_schema, restrict_to_version
from reprobridge_sdk.validation._engine import compile_schema
from reprobridge_sdk.validation.structure import additions_of, version_addition
from reprobridge_sdk.versions import (
    FORMAT_VERSIONS,
    NEWEST_FORMAT,
    parse_since,
    parse_version,
    since,
)

REPO = Path(__file__).resolve().parents[2]

NEWEST: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "resources": {"type": "object", **since("1.1")},
        "mode": {"enum": ["fast", "slow", "exact"], **since("1.1", values=("exact",))},
    },
    "required": ["name", "resources"],
}


def test_the_marker_is_a_comment_and_reads_back() -> None:
    assert since("1.1") == {"$comment": "since 1.1"}
    assert since("1.1", values=("a", "b")) == {"$comment": 'since 1.1: ["a", "b"]'}
    assert parse_since("since 1.1") == ((1, 1), None)
    assert parse_since('since 1.12: ["a"]') == ((1, 12), ("a",))
    assert parse_since("generated, do not edit") is None
    assert parse_since(None) is None
    with pytest.raises(ValueError):
        since("01.1")


@pytest.mark.parametrize(
    ("text", "version"),
    [("1.0", (1, 0)), ("1.10", (1, 10)), ("01.0", None), ("1.00", None), ("1.0\n", None)],
)
def test_a_version_is_ascii_digits_without_leading_zeros(
    text: str, version: tuple[int, int] | None
) -> None:
    assert parse_version(text) == version
    assert parse_version("\u0661.\u0660") is None  # Arabic-Indic digits are not versions


def test_the_older_schema_has_no_later_addition() -> None:
    older = copy.deepcopy(NEWEST)
    restrict_to_version(older, (1, 0))
    assert set(older["properties"]) == {"name", "mode"}
    assert older["required"] == ["name"]
    assert older["properties"]["mode"]["enum"] == ["fast", "slow"]
    assert "$comment" not in older["properties"]["mode"]
    same = copy.deepcopy(NEWEST)
    restrict_to_version(same, (1, 1))
    assert same == NEWEST


def test_an_older_document_using_an_addition_gets_v005_at_it(tmp_path: Path) -> None:
    older = copy.deepcopy(NEWEST)
    restrict_to_version(older, (1, 0))
    path = tmp_path / "doc.yaml"
    path.write_text("name: n\nresources: {}\nmode: exact\nmood: 1\n", "utf-8")
    doc = load_document(path, name="doc.yaml")
    additions = additions_of(NEWEST, "1.0")
    found = []
    for error in compile_schema(older).errors(doc.data):
        item = version_addition(doc, error, "1.0", additions)
        found.append((item.code, item.path, item.line) if item else (error.keyword, error.pointer))
    assert sorted(found, key=str) == sorted(
        [
            ("V005", "/resources", 2),
            ("V005", "/mode", 3),
            ("additionalProperties", "/mood"),  # not an addition: S001 as before
        ],
        key=str,
    )


def test_the_committed_schemas_are_one_per_version() -> None:
    for version in FORMAT_VERSIONS:
        for kind in ("rra", "evidence"):
            committed = json.loads((REPO / "schemas" / f"{kind}-{version}.schema.json").read_text())
            assert committed == generate_schema(f"{kind}-{version}")
    newest = generate_schema(f"rra-{NEWEST_FORMAT}")
    oldest = generate_schema("rra-1.0")
    restricted = copy.deepcopy(newest)
    restrict_to_version(restricted, (1, 0))
    for key in ("properties", "required"):
        assert restricted.get(key) == oldest.get(key)


def test_a_1_1_document_may_use_an_empty_patch_series() -> None:
    cases = REPO / "validators" / "cases"
    # C005: the upstream is not in the cache, so the (empty) series is not checked offline
    found = [(f.code, f.path) for f in validate(cases / "empty-patch-series").findings]
    assert found == [("C005", "/codebase/upstream")]
    found = [(f.code, f.path) for f in validate(cases / "empty-patch-series-under-1-0").findings]
    assert sorted(found) == [("C005", "/codebase/upstream"), ("V005", "/codebase/refined/patches")]


def test_a_newer_minor_unknown_value_is_a_warning() -> None:
    result = validate(REPO / "validators" / "cases" / "newer-minor-with-unknown-value")
    got = sorted((f.code, f.path, f.severity.value) for f in result.findings)
    assert got == [("S006", "/tasks/0/direction", "warning"), ("V003", "/rra_version", "warning")]
    assert result.ok
