"""The validator returns findings and never raises, whatever the manifest holds."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _validate_strategies import mutated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reprobridge_sdk as rb
from reprobridge_sdk.findings import registry

VECTORS = Path(__file__).parent / "vectors"


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="rb-never-raises-"))
    shutil.copytree(VECTORS / "valid-minimal", root / "artifact")
    yield root / "artifact"
    shutil.rmtree(root)


def _check(result: rb.ValidationResult) -> None:
    known = registry()
    assert len(result.artifacts) == 1
    for item in result.findings:
        assert item.code in known
        assert item.file
    assert result.exit_code in (0, 1)


_SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text(workdir: Path, text: str) -> None:
    (workdir / "rra.yaml").write_bytes(text.encode("utf-8", "surrogatepass"))
    _check(rb.validate(workdir))


@_SETTINGS
@given(st.binary(max_size=400))
def test_arbitrary_bytes(workdir: Path, raw: bytes) -> None:
    (workdir / "rra.yaml").write_bytes(raw)
    _check(rb.validate(workdir))


@_SETTINGS
@given(mutated())
def test_arbitrary_manifests(workdir: Path, data: Any) -> None:
    (workdir / "rra.yaml").write_text(json.dumps(data, allow_nan=True), "utf-8")
    result = rb.validate(workdir)
    _check(result)


def test_unhashable_ids_are_structural_findings(workdir: Path) -> None:
    text = (VECTORS / "valid-minimal" / "rra.yaml").read_text("utf-8")
    text = text.replace(
        "    scope: scored\n", "    scope: scored\n    outputs: [{id: [a], path: x}]\n", 1
    )
    text = text.replace("  - id: acc\n", "  - id: {a: 1}\n", 1)
    (workdir / "rra.yaml").write_text(text, "utf-8")
    result = rb.validate(workdir)
    assert ("S003", "/launchers/0/outputs/0/id") in {(f.code, f.path) for f in result.findings}
    assert ("S003", "/tasks/0/id") in {(f.code, f.path) for f in result.findings}
