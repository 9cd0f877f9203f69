"""The audit reads the manifest once: its validation reuses the loaded document, with the
same findings as a fresh validation."""

from __future__ import annotations

from pathlib import Path

from reprobridge_sdk.audit import audit, load_artifact
from reprobridge_sdk.findings import Severity
from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.validation import validate_artifact


def test_validation_with_the_loaded_document_equals_a_fresh_one(toy: Path) -> None:
    (toy / "environment" / "requirements.lock").write_text("numpy==1.0\n")
    facts = load_artifact(toy)
    assert facts.document is not None
    args = (toy.as_posix(), toy, toy / MANIFEST_NAME)
    fresh = validate_artifact(*args)
    reused = validate_artifact(*args, document=facts.document)
    assert reused == fresh
    assert {f.code for f in fresh if f.severity is Severity.ERROR} >= {"F005"}
    result = audit(toy)
    errors = [(f.code, f.file, f.line, f.path) for f in result.findings if f.code != "A012"]
    assert errors == [
        (f.code, f.file or None, f.line or None, f.path)
        for f in fresh
        if f.severity is Severity.ERROR
    ]
