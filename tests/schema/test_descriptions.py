"""Every property of the format's schemas says what it means, from one source of notes.

The format's schemas: the manifest, the evidence record, the claims file and the audit
reports. (The build agent's phase records and the signing predicates are not yet covered.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk.model._fieldnotes import EXAMPLES, NOTES

REPO = Path(__file__).resolve().parents[2]
MANIFEST_SCHEMAS = sorted((REPO / "schemas").glob("rra-1.*.schema.json"))
FORMAT_SCHEMAS = sorted(
    path
    for pattern in ("rra-1.*", "evidence-1.*", "claims-1.*", "audit-*")
    for path in (REPO / "schemas").glob(f"{pattern}.schema.json")
)


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = [(f"Manifest.{key}", prop) for key, prop in schema.get("properties", {}).items()]
    for name, definition in schema.get("$defs", {}).items():
        for key, prop in definition.get("properties", {}).items():
            out.append((f"{name}.{key}", prop))
    return out


def test_the_format_schemas_are_found() -> None:
    assert len(FORMAT_SCHEMAS) >= 7


@pytest.mark.parametrize("path", FORMAT_SCHEMAS, ids=lambda p: p.name)
def test_every_format_property_has_a_description(path: Path) -> None:
    schema = json.loads(path.read_text("utf-8"))
    undescribed = [name for name, prop in _properties(schema) if not prop.get("description")]
    assert undescribed == []


@pytest.mark.parametrize("path", MANIFEST_SCHEMAS, ids=lambda p: p.name)
def test_notes_and_examples_reach_the_schema(path: Path) -> None:
    props = dict(_properties(json.loads(path.read_text("utf-8"))))
    for key, examples in EXAMPLES.items():
        if key in props:
            assert props[key]["examples"] == examples
    # A note is used only where the model has no description of its own.
    used = [key for key, note in NOTES.items() if key in props]
    assert used
    assert all(props[key]["description"] for key in used)
