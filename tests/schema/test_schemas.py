"""The committed JSON Schemas: fresh, valid 2020-12, and agreeing with an independent validator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.schema import (
    SCHEMAS,
    SchemaSpec,
    check_schemas,
    generate_schema,
    register_schema,
    render_schema,
    resolve_name,
)
from reprobridge_sdk.validation._engine import compile_schema

REPO = Path(__file__).resolve().parents[2]
PACKAGE_SCHEMAS = REPO / "reprobridge_sdk" / "_data" / "schemas"
NAMES = ["rra-1.0", "evidence-1.0"]


@pytest.mark.parametrize("name", NAMES)
def test_committed_copies_equal_a_fresh_generation(name: str) -> None:
    fresh = render_schema(name)
    assert (REPO / "schemas" / f"{name}.schema.json").read_text("utf-8") == fresh
    assert (PACKAGE_SCHEMAS / f"{name}.schema.json").read_text("utf-8") == fresh


def test_check_schemas_reports_nothing_stale() -> None:
    assert check_schemas() == []


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_valid_2020_12_with_header(name: str) -> None:
    schema = generate_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://reprobridge.org/schemas/{name}.schema.json"
    assert schema["title"]
    assert "reprobridge schema --write" in schema["$comment"]
    assert list(schema["$defs"]) == sorted(schema["$defs"])


@pytest.mark.parametrize("name", NAMES)
def test_generation_is_deterministic(name: str) -> None:
    first = render_schema(name)
    assert first.endswith("}\n")
    assert render_schema(name) == first
    # In a fresh interpreter too (pydantic caches nothing that changes the output).
    code = (
        f"from reprobridge_sdk.schema import render_schema; print(render_schema({name!r}), end='')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out == first


def test_registry_resolves_aliases_and_accepts_new_schemas() -> None:
    assert resolve_name("manifest").name == "rra-1.0"
    assert resolve_name("evidence").name == "evidence-1.0"
    assert resolve_name("rra-1.0.schema.json").name == "rra-1.0"
    spec = register_schema(
        "test-record-1.0", "reprobridge_sdk.model.evidence:FileDigest", title="A test record"
    )
    try:
        assert isinstance(spec, SchemaSpec)
        schema = generate_schema("test-record-1.0")
        assert schema["$id"] == "https://reprobridge.org/schemas/test-record-1.0.schema.json"
        assert schema["required"] == ["path", "sha256", "size"]
    finally:
        del SCHEMAS["test-record-1.0"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_prints_checks_and_lists() -> None:
    printed = _cli("schema")
    assert printed.returncode == 0
    assert json.loads(printed.stdout)["$id"].endswith("/rra-1.0.schema.json")
    assert printed.stdout == render_schema("rra-1.0")
    evidence = _cli("schema", "evidence")
    assert json.loads(evidence.stdout)["$id"].endswith("/evidence-1.0.schema.json")
    assert _cli("schema", "--check").returncode == 0
    listed = _cli("schema", "--list").stdout.split()
    assert "rra-1.0" in listed
    assert "evidence-1.0" in listed
    assert "rra-1.1" in listed  # the format 1.1 draft, next to 1.0
    assert "evidence-1.1" in listed
    unknown = _cli("schema", "no-such-schema")
    assert unknown.returncode == 2
    assert unknown.stdout == ""
    assert "'no-such-schema'" in unknown.stderr  # the name it does not know


def _check_jsonschema(
    files: list[Path], schema: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Errors per file from the independent ``check-jsonschema`` CLI (one call for all)."""
    schema = schema or REPO / "schemas" / "rra-1.0.schema.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--schemafile",
            str(schema),
            "-o",
            "json",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(proc.stdout)
    assert report.get("parse_errors", []) == []
    errors: dict[str, list[dict[str, Any]]] = {str(path): [] for path in files}
    for error in report.get("errors", []):
        errors[error["filename"]].append(error)
    return errors


def _example_manifests() -> list[Path]:
    found = sorted((REPO / "examples").glob("**/rra.yaml"))
    found += sorted((REPO / "spec" / "examples").glob("**/rra.yaml"))
    return [path for path in found if "invalid" not in path.parts]


def test_independent_validator_accepts_examples_and_the_scaffold(tmp_path: Path) -> None:
    scaffold(tmp_path / "scaffold", InitOptions(id="scaffold", title="Scaffold"))
    manifests = [tmp_path / "scaffold" / "rra.yaml", *_example_manifests()]
    by_version: dict[str, list[Path]] = {}
    for path in manifests:  # each against the schema of the version it declares
        version = str(load_document(path).data.get("rra_version"))
        by_version.setdefault(version, []).append(path)
    assert set(by_version) <= {"1.0", "1.1"}
    for version, files in by_version.items():
        errors = _check_jsonschema(files, REPO / "schemas" / f"rra-{version}.schema.json")
        assert {name: found for name, found in errors.items() if found} == {}


#: The case tag of what the schema alone cannot judge (validators/README.md, "Tag").
BEYOND_SCHEMA = "beyond-schema"


def _structural_cases() -> list[tuple[Path, str, bool]]:
    """(case, declared version, expected verdict) of every case not tagged beyond-schema."""
    cases = []
    for expected in sorted((REPO / "validators" / "cases").glob("*/expected.json")):
        data = json.loads(expected.read_text("utf-8"))
        if BEYOND_SCHEMA in data["tags"]:
            continue
        version = load_document(expected.parent / "rra.yaml").data.get("rra_version")
        cases.append((expected.parent, str(version), data["valid"]))
    return cases


def test_independent_validator_agrees_with_the_sdk_on_structural_cases(tmp_path: Path) -> None:
    scaffold(tmp_path / "valid", InitOptions(id="valid", title="Valid"))
    broken = tmp_path / "broken"
    broken.mkdir()
    text = (tmp_path / "valid" / "rra.yaml").read_text("utf-8")
    (broken / "rra.yaml").write_text(text.replace("metric:", "metrik:"), "utf-8")
    cases = [(tmp_path / "valid", "1.0", True), (broken, "1.0", False), *_structural_cases()]
    assert len(cases) >= 50
    verdicts = {}
    for version in sorted({version for _, version, _ in cases}):
        name = f"rra-{version}" if version in ("1.0", "1.1") else "rra-1.0"
        mine = [(case, valid) for case, v, valid in cases if v == version]
        errors = _check_jsonschema(
            [case / "rra.yaml" for case, _ in mine], REPO / "schemas" / f"{name}.schema.json"
        )
        schema = compile_schema(json.loads(render_schema(name)))
        for case, valid in mine:
            document = load_document(case / "rra.yaml")
            assert not document.fatal, case
            sdk_accepts = schema.is_valid(document.data)
            independent_accepts = not errors[str(case / "rra.yaml")]
            verdicts[case.name] = (sdk_accepts, independent_accepts, valid)
    assert verdicts["valid"] == (True, True, True)
    assert verdicts["broken"] == (False, False, False)
    assert {name: v for name, v in verdicts.items() if not v[0] == v[1] == v[2]} == {}
