"""The structural layer runs on jsonschema-rs: its errors, in the SDK's terms, agree with its
verdict, and the schemas' patterns mean what RE2 gives them (spec: manifest, "Patterns").

The reference reads ``pattern`` as ECMA-262 does (``$`` accepts no final newline, classes as
written), as the spec requires; python-jsonschema uses Python's ``re``, whose ``$`` matches
before a final newline, so it is not the reference for patterns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from _validate_strategies import mutated, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.extract.pattern import schema_pattern
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.validation import validate
from reprobridge_sdk.validation.structure import SCHEMA_RESOURCE, manifest_schema
from reprobridge_sdk.versions import FORMAT_VERSIONS, NEWEST_FORMAT

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = SCHEMA_RESOURCE.format(version=NEWEST_FORMAT)
SCHEMA = json.loads((REPO / "reprobridge_sdk" / SCHEMA_FILE).read_text("utf-8"))
REFERENCE = jsonschema_rs.Draft202012Validator(SCHEMA)


def _patterns(node: Any) -> set[str]:
    """Every ``pattern`` and ``patternProperties`` key of a schema."""
    found: set[str] = set()
    if isinstance(node, list):
        for item in node:
            found |= _patterns(item)
    elif isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            found.add(node["pattern"])
        if isinstance(node.get("patternProperties"), dict):
            found |= set(node["patternProperties"])
        for key, child in node.items():
            if key not in ("enum", "const", "default", "examples"):
                found |= _patterns(child)
    return found


PATTERNS = sorted(
    set().union(
        *(
            _patterns(json.loads((REPO / "schemas" / f"rra-{v}.schema.json").read_text("utf-8")))
            for v in FORMAT_VERSIONS
        )
    )
)


def test_package_schema_is_the_committed_schema() -> None:
    committed = REPO / "schemas" / f"rra-{NEWEST_FORMAT}.schema.json"
    assert json.loads(committed.read_text("utf-8")) == SCHEMA


def _readable() -> list[Path]:
    found = sorted(REPO.glob("validators/cases/*/rra.yaml"))
    found += sorted(REPO.glob("examples/*/rra.yaml"))
    found += sorted(REPO.glob("tests/validate/vectors/*/rra.yaml"))
    return [path for path in found if load_document(path).data is not None]


def test_there_are_manifests_to_compare() -> None:
    assert len(_readable()) >= 20


@pytest.mark.parametrize(
    "path", _readable(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_errors_exactly_when_invalid_on_every_shipped_manifest(path: Path) -> None:
    data = load_document(path).data
    assert (manifest_schema().errors(data) == []) == REFERENCE.is_valid(data)


def test_compiled_once() -> None:
    assert manifest_schema() is manifest_schema()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_errors_exactly_when_invalid(data: Any) -> None:
    """No invalid document loses all its errors in the conversion (union choices included)."""
    errors = manifest_schema().errors(data)
    assert (errors == []) == REFERENCE.is_valid(data)
    for error in errors:
        assert error.pointer == "" or error.pointer.startswith("/")
        assert error.message


@settings(max_examples=200, deadline=None)
@given(values)
def test_errors_exactly_when_invalid_on_arbitrary_values(data: Any) -> None:
    assert (manifest_schema().errors(data) == []) == REFERENCE.is_valid(data)


def test_the_schemas_have_patterns() -> None:
    assert len(PATTERNS) >= 10


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(PATTERNS),
    st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=16),
        st.from_regex(r"[a-z0-9x./:@-]{0,12}\n?", fullmatch=True),
    ),
)
def test_schema_patterns_mean_what_re2_gives_them(source: str, text: str) -> None:
    """jsonschema-rs's patterns (Rust ``regex``) answer as RE2 does on every schema pattern:
    non-ASCII text, anchors, a final newline and the empty string."""
    engine = jsonschema_rs.validator_for(
        {"type": "string", "pattern": source}, pattern_options=jsonschema_rs.RegexOptions()
    )
    assert engine.is_valid(text) == (schema_pattern(source).search(text) is not None)


def _findings(root: Path) -> list[Any]:
    return [item for artifact in validate(root).artifacts for item in artifact.findings]


def test_a_final_newline_does_not_satisfy_an_anchored_pattern(tmp_path: Path) -> None:
    """``$`` is the end of the string (RE2, ECMA-262), never before a final newline."""
    root = tmp_path / "a"
    example = REPO / "tests" / "validate" / "vectors" / "valid-minimal"
    root.mkdir()
    text = (example / "rra.yaml").read_text("utf-8")
    data = load_document(example / "rra.yaml").data
    ident = data["artifact"]["id"]
    (root / "rra.yaml").write_text(text.replace(f"id: {ident}", f'id: "{ident}\\n"', 1), "utf-8")
    found = [f for f in _findings(root) if f.path == "/artifact/id"]
    assert [f.code for f in found] == ["S004"]
    assert "does not match" in found[0].message


@pytest.mark.parametrize("spelling", [".inf", "-.inf", ".nan", "1e400"])
def test_a_number_json_cannot_carry_is_one_finding(tmp_path: Path, spelling: str) -> None:
    """The engine sees such a number as null; the loader's S004 is the only finding there."""
    example = REPO / "tests" / "validate" / "vectors" / "valid-minimal"
    text = (example / "rra.yaml").read_text("utf-8")
    assert "    year: 2024\n" in text
    root = tmp_path / "a"
    root.mkdir()
    (root / "rra.yaml").write_text(text.replace("year: 2024", f"year: {spelling}"), "utf-8")
    assert [(f.code, f.path) for f in _findings(root) if f.code.startswith("S")] == [
        ("S004", "/artifact/paper/year")
    ]
