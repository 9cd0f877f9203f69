"""The committed schemas under other engines: ajv (strict, ECMA-262) and jsonschema-rs.

Every committed schema compiles under ajv with ``strict: true`` (no non-standard keyword;
the one custom annotation, ``x-rra-since``, is declared), and on every *structural*
conformance case, ajv, jsonschema-rs and the SDK's evaluator give the verdict the case
expects. The structural cases are selected by their metadata: those without the tag
``beyond-schema`` (validators/README.md, "Tag"), whose data every YAML 1.2 loader reads alike
and whose verdict the schema alone gives.

ajv is an npm package. CI (``.ci/run``) installs ``ajv`` and ``ajv-formats`` and sets
``REPROBRIDGE_REQUIRE_AJV=1``, so there a missing ajv fails; elsewhere the ajv tests skip,
saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.schema import SCHEMAS
from reprobridge_sdk.validation._engine import compile_schema

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("ajv_validate.js")
SCHEMA_FILES = sorted((REPO / "schemas").glob("*.schema.json"))
#: The case tag of what the schema alone cannot judge (validators/README.md, "Tag").
BEYOND_SCHEMA = "beyond-schema"


def _ajv_available() -> str | None:
    """None when node can load ajv and ajv-formats, else why not."""
    node = shutil.which("node")
    if node is None:
        return "node is not installed"
    probe = subprocess.run(
        [node, "-e", "require('ajv/dist/2020'); require('ajv-formats')"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if probe.returncode != 0:
        return "the npm packages ajv and ajv-formats are not installed (NODE_PATH)"
    return None


_WHY_NOT = _ajv_available()


@pytest.fixture(scope="module")
def ajv() -> str:
    if _WHY_NOT is not None:
        if os.environ.get("REPROBRIDGE_REQUIRE_AJV") == "1":
            pytest.fail(f"ajv is required here: {_WHY_NOT}")
        pytest.skip(f"ajv is not available: {_WHY_NOT}; CI installs it")
    node = shutil.which("node")
    assert node is not None
    return node


def _ajv_verdicts(node: str, schema: Path, instances: list[Any]) -> list[bool]:
    proc = subprocess.run(
        [node, str(SCRIPT), str(schema)],
        input=json.dumps(instances),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    verdicts: list[bool] = json.loads(proc.stdout)
    return verdicts


@pytest.mark.parametrize("schema", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_schema_compiles_under_ajv_strict(ajv: str, schema: Path) -> None:
    assert _ajv_verdicts(ajv, schema, [{}]) in ([True], [False])


def test_no_schema_uses_the_openapi_discriminator() -> None:
    for path in SCHEMA_FILES:
        assert '"discriminator"' not in path.read_text("utf-8"), path.name


def _cases() -> list[tuple[str, Any, Path, bool]]:
    """(case name, plain data, schema file, expected verdict) of every structural case."""
    out = []
    files = {spec.name: REPO / "schemas" / spec.filename for spec in SCHEMAS.values()}
    for expected_file in sorted((REPO / "validators" / "cases").glob("*/expected.json")):
        expected = json.loads(expected_file.read_text("utf-8"))
        if BEYOND_SCHEMA in expected["tags"]:
            continue
        document = load_document(expected_file.parent / "rra.yaml")
        version = document.data.get("rra_version") if isinstance(document.data, dict) else None
        schema = files.get(f"rra-{version}") if isinstance(version, str) else None
        name = expected_file.parent.name
        out.append((name, document.data, schema or files["rra-1.0"], expected["valid"]))
    return out


CASES = _cases()


def test_there_are_structural_cases_of_both_verdicts() -> None:
    assert len(CASES) >= 50
    assert {valid for *_, valid in CASES} == {True, False}


def test_the_schema_alone_gives_each_structural_case_its_verdict() -> None:
    verdicts = _sdk_and_rs()
    assert {n: verdicts[n][0] for n, *_, valid in CASES if verdicts[n][0] != valid} == {}


def _sdk_and_rs() -> dict[str, tuple[bool, bool]]:
    compiled: dict[Path, Any] = {}
    rs: dict[Path, Any] = {}
    verdicts = {}
    for name, data, schema, _ in CASES:
        if schema not in compiled:
            text = json.loads(schema.read_text("utf-8"))
            compiled[schema] = compile_schema(text)
            rs[schema] = jsonschema_rs.validator_for(text)
        verdicts[name] = (compiled[schema].is_valid(data), rs[schema].is_valid(data))
    return verdicts


def test_jsonschema_rs_agrees_with_the_sdk_on_every_case() -> None:
    verdicts = _sdk_and_rs()
    assert {name: v for name, v in verdicts.items() if v[0] != v[1]} == {}
    assert any(v[0] for v in verdicts.values()) and not all(v[0] for v in verdicts.values())


def test_ajv_agrees_with_the_sdk_on_every_case(ajv: str) -> None:
    verdicts = _sdk_and_rs()
    by_schema: dict[Path, list[tuple[str, Any]]] = {}
    for name, data, schema, _ in CASES:
        by_schema.setdefault(schema, []).append((name, data))
    differ = {}
    for schema, items in by_schema.items():
        answers = _ajv_verdicts(ajv, schema, [data for _, data in items])
        for (name, _), answer in zip(items, answers, strict=True):
            if answer != verdicts[name][0]:
                differ[name] = (verdicts[name][0], answer)
    assert differ == {}
