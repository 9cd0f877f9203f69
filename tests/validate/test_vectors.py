"""Vector files: each tests/validate/vectors/<case>/ holds an artifact and expected.json.

expected.json lists every finding the validator must produce, as code, JSON pointer and the
1-based line and column in rra.yaml, so the positions are checked along with the codes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import reprobridge_sdk as rb

VECTORS = Path(__file__).parent / "vectors"
CASES = sorted(p.name for p in VECTORS.iterdir() if (p / "expected.json").is_file())


def test_there_are_vectors() -> None:
    assert len(CASES) >= 15
    assert "valid-minimal" in CASES


@pytest.mark.parametrize("case", CASES)
def test_vector(case: str) -> None:
    expected = json.loads((VECTORS / case / "expected.json").read_text("utf-8"))
    result = rb.validate(VECTORS / case)
    got = Counter((f.code, f.path, f.line, f.col) for f in result.findings)
    want = Counter((f["code"], f["path"], f["line"], f["col"]) for f in expected["findings"])
    assert got == want
    assert result.ok == all(
        rb.findings.code_info(f["code"]).severity.value != "error" for f in expected["findings"]
    )
    for item in result.findings:
        assert item.file.endswith("rra.yaml")
        assert item.spec is not None
        assert item.spec.startswith(rb.findings.SPEC_URL + "/")


@pytest.mark.parametrize(
    ("case", "code", "suggestion"),
    [
        ("misspelled-task-key", "S001", "metric"),
        ("enum-typo", "S004", "higher"),
        ("extractor-kind-unknown", "S004", "regex"),
        ("unknown-task-and-template", "R002", "acc"),
    ],
)
def test_did_you_mean(case: str, code: str, suggestion: str) -> None:
    result = rb.validate(VECTORS / case)
    hints = [f.hint for f in result.findings if f.code == code]
    assert hints
    assert hints[0] is not None
    assert f"{suggestion!r}" in hints[0]


def test_unknown_key_under_newer_minor_is_a_warning() -> None:
    result = rb.validate(VECTORS / "version-newer-minor-unknown-key")
    assert result.ok
    assert {(f.code, f.severity.value) for f in result.findings} == {
        ("V003", "warning"),
        ("S005", "warning"),
    }
    strict = rb.validate(VECTORS / "version-newer-minor-unknown-key", strict=True)
    assert not strict.ok
    assert strict.exit_code == 1
    assert {f.severity.value for f in strict.findings} == {"error"}


def test_unknown_major_stops_structural_checks() -> None:
    result = rb.validate(VECTORS / "version-unknown-major")
    # The manifest also misspells artifact.title, which is not reported under version 2.0.
    assert [f.code for f in result.findings] == ["V002"]
