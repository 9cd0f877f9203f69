"""The pydantic models: extension keys, unknown keys, kind-dependent fields."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from reprobridge_sdk.model import Launcher, Manifest, RefinedCode, Task

MINIMAL = {
    "rra_version": "1.0",
    "artifact": {"id": "demo", "title": "Demo", "license": "MIT", "paper": {"title": "P"}},
    "codebase": {
        "upstream": {"repository": "https://example.org/r.git", "commit": "a" * 40},
        "refined": {"kind": "directory", "path": "code"},
    },
    "environment": {"python": "3.11"},
    "tasks": [
        {
            "id": "t1",
            "dataset": "d",
            "metric": "accuracy",
            "published": {"value": 90.0},
            "direction": "higher",
            "kind": "full",
        }
    ],
    "launchers": [
        {
            "id": "main",
            "argv": ["python", "main.py"],
            "scope": "scored",
            "measurements": [{"task": "t1", "extract": {"kind": "regex", "pattern": r"acc=(\S+)"}}],
        }
    ],
}


def test_minimal_manifest_parses_with_defaults() -> None:
    manifest = Manifest.model_validate(MINIMAL)
    assert manifest.guide.path == "GUIDE.md"
    assert manifest.launcher("main").workdir == "."
    assert manifest.task("t1").statistic.seeds == 1
    extract = manifest.launchers[0].measurements[0].extract
    assert extract.kind == "regex"
    assert extract.occurrence == "last"


def test_extension_keys_are_kept_and_unknown_keys_rejected() -> None:
    task = Task.model_validate({**MINIMAL["tasks"][0], "x-notes": {"a": 1}})  # type: ignore[dict-item]
    assert task.extensions() == {"x-notes": {"a": 1}}
    with pytest.raises(ValidationError) as info:
        Task.model_validate({**MINIMAL["tasks"][0], "metrik": "f1"})  # type: ignore[dict-item]
    assert "metrik" in str(info.value)


def test_refined_kind_requires_its_fields() -> None:
    with pytest.raises(ValidationError):
        RefinedCode.model_validate({"kind": "directory"})


def test_an_empty_patch_series_is_the_upstream_commit() -> None:
    """Format 1.1: the model accepts it (validation reports V005 in a 1.0 document)."""
    assert RefinedCode.model_validate({"kind": "patches"}).patches == []
    assert RefinedCode.model_validate({"kind": "patches", "patches": []}).patches == []


def test_extractor_is_discriminated_by_kind() -> None:
    launcher = Launcher.model_validate(
        {
            "id": "l",
            "argv": ["x"],
            "scope": "smoke",
            "measurements": [
                {"task": "t1", "extract": {"kind": "json", "pointer": "/a/0", "output": "m"}}
            ],
        }
    )
    assert launcher.measurements[0].extract.kind == "json"
    with pytest.raises(ValidationError):
        Launcher.model_validate(
            {
                "id": "l",
                "argv": ["x"],
                "scope": "smoke",
                "measurements": [{"task": "t1", "extract": {"kind": "json", "pattern": "x"}}],
            }
        )


def test_dump_and_reload_is_identity() -> None:
    manifest = Manifest.model_validate(MINIMAL)
    again = Manifest.model_validate(manifest.model_dump(mode="json"))
    assert again == manifest


def test_a_default_given_to_one_field_of_a_shared_type_stays_with_that_field() -> None:
    """The guide's path defaults to GUIDE.md; a patch's path, of the same type, stays required.

    Some pydantic releases copied a default given with ``=`` onto the shared annotation.
    """
    from reprobridge_sdk.model import Guide
    from reprobridge_sdk.model.claims import AuthorPatch

    assert Guide().path == "GUIDE.md"
    with pytest.raises(ValidationError):
        AuthorPatch.model_validate({"why": "the data path was absolute"})
