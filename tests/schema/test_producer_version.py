"""The producer rule (spec: conformance, "Producer"): a producer writes the lowest
``rra_version`` whose additions the document uses.

The SDK's producers declare :func:`required_version` of the manifest they write (``save``
raises ``rra_version`` to it). Held here against the validator on every valid case of the
conformance suite that loads: declaring the required version gives no V005, and declaring
any lower one does.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from reprobridge_sdk import api, validate
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.model import required_version

CASES = Path(__file__).resolve().parents[2] / "validators" / "cases"
_VERSION_LINE = re.compile(r"^rra_version:.*$", re.MULTILINE)


def _valid_cases() -> dict[str, tuple[int, int]]:
    """Case name -> the version its manifest requires, for every valid case that loads
    (a newer-minor document, read with keys set aside, is left out: V008 forbids a rewrite)."""
    needed: dict[str, tuple[int, int]] = {}
    for case in sorted(p for p in CASES.iterdir() if (p / "rra.yaml").is_file()):
        found = validate(case)
        if not found.ok or any(f.code.startswith("V") for f in found.findings):
            continue
        try:
            needed[case.name] = required_version(api.load(case).manifest)
        except ArtifactError:
            continue
    return needed


NEEDED = _valid_cases()


def _declaring(case: str, version: str, tmp_path: Path, source: Path = CASES) -> Path:
    copy = tmp_path / case
    shutil.copytree(source / case, copy, symlinks=True)
    text = (copy / "rra.yaml").read_text("utf-8")
    assert len(_VERSION_LINE.findall(text)) == 1
    (copy / "rra.yaml").write_text(_VERSION_LINE.sub(f"rra_version: '{version}'", text), "utf-8")
    return copy


def test_the_valid_cases_include_documents_of_each_version() -> None:
    assert len(NEEDED) > 50
    assert {(1, 0), (1, 1)} <= set(NEEDED.values())


@pytest.mark.parametrize("case", sorted(NEEDED))
def test_the_required_version_is_the_lowest_the_validator_accepts(
    case: str, tmp_path: Path
) -> None:
    major, minor = NEEDED[case]
    declared = _declaring(case, f"{major}.{minor}", tmp_path / "needed")
    assert [f.path for f in validate(declared).findings if f.code == "V005"] == []
    if minor > 0:
        lower = _declaring(case, f"{major}.{minor - 1}", tmp_path / "lower")
        assert [f for f in validate(lower).findings if f.code == "V005"] != []


def test_a_1_1_field_set_to_its_default_is_written_under_1_1(tmp_path: Path) -> None:
    """``save`` writes a field that was set, even to its default value; the version it
    declares must cover it (``paper.authors: []`` is V005 in a 1.0 document)."""
    root = tmp_path / "artifact"
    shutil.copytree(CASES / "minimal-valid", root)
    art = api.load(root)
    assert art.manifest.rra_version == "1.0"
    art.manifest.artifact.paper.authors = []
    art.save()
    assert "authors: []" in (root / "rra.yaml").read_text("utf-8")
    assert api.load(root).manifest.rra_version == "1.1"
    assert validate(root).findings == []
    # declared 1.0, the same document is V005 at the field: the field is a 1.1 addition
    lower = _declaring("artifact", "1.0", tmp_path / "lower", source=tmp_path)
    assert [(f.code, f.path) for f in validate(lower).findings] == [
        ("V005", "/artifact/paper/authors")
    ]


def test_saving_a_1_0_document_unchanged_keeps_1_0(tmp_path: Path) -> None:
    root = tmp_path / "artifact"
    shutil.copytree(CASES / "full-featured", root)
    art = api.load(root)
    before = art.manifest.rra_version
    art.save()
    assert api.load(root).manifest.rra_version == before == "1.0"
