"""The in-house schema evaluator accepts and rejects exactly as jsonschema-rs (2020-12).

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
from _validate_strategies import EXAMPLE, mutated, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.validation._evaluator import SchemaCompileError, compile_schema
from reprobridge_sdk.validation.structure import SCHEMA_RESOURCE, _schema_json, manifest_schema
from reprobridge_sdk.versions import FORMAT_VERSIONS, NEWEST_FORMAT

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = SCHEMA_RESOURCE.format(version=NEWEST_FORMAT)
SCHEMA = json.loads((REPO / "reprobridge_sdk" / SCHEMA_FILE).read_text("utf-8"))
REFERENCE = jsonschema_rs.Draft202012Validator(SCHEMA)


def test_package_schema_is_the_committed_schema() -> None:
    committed = REPO / "schemas" / f"rra-{NEWEST_FORMAT}.schema.json"
    assert json.loads(committed.read_text("utf-8")) == SCHEMA


def _manifests() -> list[Path]:
    found = sorted(REPO.glob("validators/cases/*/rra.yaml"))
    found += sorted(REPO.glob("examples/*/rra.yaml"))
    found += sorted(REPO.glob("tests/validate/vectors/*/rra.yaml"))
    return found


def _readable() -> list[Path]:
    """The shipped manifests that load as YAML (the others give no data to compare)."""
    return [path for path in _manifests() if load_document(path).data is not None]


def test_there_are_manifests_to_compare() -> None:
    assert len(_readable()) >= 20
    # The manifests left out are exactly those whose reading reports a YAML finding (Y...).
    for path in set(_manifests()) - set(_readable()):
        codes = [f.code for f in load_document(path).findings]
        assert codes, path
        assert all(code.startswith("Y") for code in codes), (path, codes)


@pytest.mark.parametrize(
    "path", _readable(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_same_verdict_on_every_shipped_manifest(path: Path) -> None:
    data = load_document(path).data
    assert manifest_schema().is_valid(data) == REFERENCE.is_valid(data)
    assert (manifest_schema().errors(data) == []) == REFERENCE.is_valid(data)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "date"},
        {"if": {"type": "string"}},
        {"prefixItems": [{"type": "string"}]},
        {"properties": {"a": {"uniqueItems": True}}},
        {"$ref": "https://example.org/other.json"},
        {"type": "decimal"},
    ],
)
def test_unknown_keywords_fail_at_compile_time(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaCompileError):
        compile_schema(schema)


def test_compiled_once() -> None:
    assert manifest_schema() is manifest_schema()


# --------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_same_verdict_as_jsonschema(data: Any) -> None:
    errors = manifest_schema().errors(data)
    assert (errors == []) == REFERENCE.is_valid(data)
    assert manifest_schema().is_valid(data) == REFERENCE.is_valid(data)


@settings(max_examples=200, deadline=None)
@given(values)
def test_same_verdict_on_arbitrary_values(data: Any) -> None:
    assert manifest_schema().is_valid(data) == REFERENCE.is_valid(data)


# ------------------------------------------------------- generated validity = the closures

_CLOSURES = {
    version: compile_schema(_schema_json(version), specialise_after=None)
    for version in FORMAT_VERSIONS
}
#: Every predicate generated at its first call.
_EAGER = {
    version: compile_schema(_schema_json(version), specialise_after=1)
    for version in FORMAT_VERSIONS
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.sampled_from(FORMAT_VERSIONS))
def test_generated_validity_is_the_closures_verdict(data: Any, version: str) -> None:
    """The generated predicates (and the tag filter of unions) answer as the closures alone,
    and the errors built on top of them are the same records in the same order."""
    fast, closures = _EAGER[version], _CLOSURES[version]
    assert fast.is_valid(data) == closures.is_valid(data)
    assert fast.errors(data) == closures.errors(data)


@settings(max_examples=200, deadline=None)
@given(values, st.sampled_from(FORMAT_VERSIONS))
def test_generated_validity_on_arbitrary_values(data: Any, version: str) -> None:
    assert _EAGER[version].is_valid(data) == _CLOSURES[version].is_valid(data)


_EXTRACT = {"task": "t", "extract": {"kind": "json", "pointer": "/a"}}


@pytest.mark.parametrize(
    "extract",
    [
        {"kind": "json", "pointer": "/a"},  # the tag names the one valid branch
        {"pointer": "/a"},  # no tag: no tagged branch can be valid
        {"kind": 3, "pointer": "/a"},  # a tag that is not a string
        {"kind": "csv", "pointer": "/a"},  # the tag of another branch than the fields'
        {"kind": "x-mine", "pointer": "/a"},  # an extension kind: the patterned branch
        {"kind": "regex", "pattern": "a", "pointer": "/a"},
        ["kind", "json"],
    ],
)
@pytest.mark.parametrize("version", FORMAT_VERSIONS)
def test_tag_filter_changes_no_verdict(extract: Any, version: str) -> None:
    """A union's tag only skips branches that cannot be valid: the verdict, the errors and
    the reference's verdict agree for a tag that is right, absent, not a string or wrong."""
    measurement = {"$ref": "#/$defs/Measurement", "$defs": _schema_json(version)["$defs"]}
    data = {**_EXTRACT, "extract": extract}
    fast = compile_schema(measurement, specialise_after=1)
    closures = compile_schema(measurement, specialise_after=None)
    reference = jsonschema_rs.Draft202012Validator(measurement).is_valid(data)
    assert fast.is_valid(data) == closures.is_valid(data) == reference
    assert fast.errors(data) == closures.errors(data)
    assert (fast.errors(data) == []) == reference


def test_predicates_generated_midway_through_a_document() -> None:
    """With the default threshold, the first tasks are checked by the closures and the
    later ones by the generated predicates: a broken task on either side of the switch
    gives the same errors as the closures alone, and the predicates are in place after."""
    task = EXAMPLE["tasks"][0]
    tasks = [{**task, "id": f"t{index}"} for index in range(300)]
    tasks[10] = {**tasks[10], "direction": "up"}
    tasks[150] = {**tasks[150], "reference": {"observations": [{"value": "x"}]}}
    tasks[299] = {**tasks[299], "x-note": 1, "surplus": True, "kind": None}
    data = {**EXAMPLE, "tasks": tasks}
    version = EXAMPLE["rra_version"]
    fresh = compile_schema(_schema_json(version))
    assert fresh.errors(data) == _CLOSURES[version].errors(data)
    assert not fresh.is_valid(data)
    specialiser = fresh._specialiser
    assert specialiser is not None
    assert "def " + specialiser.ident("#/$defs/Task") in "\n".join(specialiser.source.lines)


def test_threads_sharing_one_compiled_schema_while_it_specialises() -> None:
    """Threads that cross the generation threshold together get the closures' answers."""
    from concurrent.futures import ThreadPoolExecutor

    task = EXAMPLE["tasks"][0]
    tasks = [{**task, "id": f"t{index}"} for index in range(200)]
    tasks[150] = {**tasks[150], "direction": "up"}
    data = {**EXAMPLE, "tasks": tasks}
    version = EXAMPLE["rra_version"]
    expected = _CLOSURES[version].errors(data)
    shared = compile_schema(_schema_json(version), specialise_after=8)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: shared.errors(data), range(16)))
    assert all(result == expected for result in results)
    assert shared.is_valid(data) is False


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [
            "^[a-z0-9][a-z0-9._-]{0,63}$",
            "^(/[\\s\\S]*)?$",
            "^x-",
            "^[0-9]{4}-[0-9]{2}-[0-9]{2}",
            "^\\w+$",
            ".",
            "é$",
            "^$",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
)
def test_pattern_memo_searches_as_the_regex_on_text(source: str, text: str) -> None:
    """The memoised search (on the text's UTF-8 bytes) answers as the RE2 program on the
    text itself, for non-ASCII text, classes, anchors and the empty string."""
    from reprobridge_sdk.extract.pattern import schema_pattern
    from reprobridge_sdk.validation._keywords import _cached_search

    assert _cached_search(source)(text) == (schema_pattern(source).search(text) is not None)
