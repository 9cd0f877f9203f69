"""Every example manifest round-trips: loading and saving an untouched artifact changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reprobridge_sdk import api
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.io import yamlio

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    path.parent
    for base in (REPO / "examples", REPO / "spec" / "examples", REPO / "validators" / "cases")
    for path in base.glob("*/rra.yaml")
)


#: Readable manifests (cases of unreadable YAML are covered by the loader's own tests).
READABLE = [root for root in EXAMPLES if yamlio.load(root / "rra.yaml").ok]


@pytest.mark.parametrize("root", READABLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_text_round_trips_byte_identical(root: Path) -> None:
    doc = yamlio.load(root / "rra.yaml")
    text = (root / "rra.yaml").read_bytes().decode("utf-8")
    assert yamlio.dumps(doc) == text
    doc.changed = True  # force the re-emission path: it must splice back to the same text
    assert yamlio.dumps(doc) == text


def _loadable(root: Path) -> bool:
    """Loads, and has no semantic error that makes an edit ambiguous (duplicate ids), nor a
    1.1 addition in a 1.0 document (V005), which a save corrects by declaring 1.1 (tested in
    tests/authoring/test_upgrade.py), and read whole (a newer minor version's document with an
    unknown key or value is never rewritten: V008, tested in tests/api/test_forward.py)."""
    try:
        art = api.load(root)
    except ArtifactError:
        return False
    if art.forward is not None and art.forward.changed:
        return False
    findings = art.validate(check_files=False).findings
    return all(item.code not in ("R001", "V005") for item in findings)


LOADABLE = [root for root in EXAMPLES if _loadable(root)]


@pytest.mark.parametrize("root", LOADABLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_load_then_save_changes_nothing(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / root.name
    shutil.copytree(root, copy, symlinks=True)
    before = (copy / "rra.yaml").read_bytes()
    art = api.load(copy)
    assert art.save() is False
    assert (copy / "rra.yaml").read_bytes() == before


@pytest.mark.parametrize("root", LOADABLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_edit_one_field_changes_one_line(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / root.name
    shutil.copytree(root, copy, symlinks=True)
    before = (copy / "rra.yaml").read_bytes().decode("utf-8").split("\n")
    art = api.load(copy)
    art.manifest.artifact.title = "An edited title"
    assert art.save() is True
    after = (copy / "rra.yaml").read_bytes().decode("utf-8").split("\n")
    assert len(after) == len(before)
    differing = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(differing) == 1
    assert "An edited title" in differing[0][1]
    assert api.load(copy).manifest.artifact.title == "An edited title"
