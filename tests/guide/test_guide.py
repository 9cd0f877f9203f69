"""The guide: records rendered between markers, hand-written text kept, G001-G003."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk.guide import (
    BEGIN_MARKER,
    END_MARKER,
    check_guide,
    clip,
    render_block,
    render_records,
    update_guide_text,
    write_guide,
)
from reprobridge_sdk.io.document import load_document

VECTORS = Path(__file__).parent / "vectors"


def _records() -> dict[str, Any]:
    data = load_document(VECTORS / "records.yaml").data
    assert isinstance(data, dict)
    return data


def test_render_matches_the_golden_file() -> None:
    assert render_records(_records()) == (VECTORS / "records.md").read_text("utf-8")


def test_render_leaves_out_empty_sections_and_says_when_there_is_nothing() -> None:
    only = render_records({"pitfalls": [{"id": "p", "summary": "S"}]})
    assert only.startswith("### Pitfalls\n")
    assert "###" not in only[3:]
    assert "###" not in render_records({})


def test_update_keeps_hand_written_text_and_is_idempotent() -> None:
    text = f"# Title\n\nBefore.\n\n{BEGIN_MARKER}\nstale\n{END_MARKER}\n\nAfter.\n"
    updated = update_guide_text(text, _records())
    assert updated.startswith("# Title\n\nBefore.\n\n" + BEGIN_MARKER)
    assert updated.endswith(END_MARKER + "\n\nAfter.\n")
    assert "stale" not in updated
    assert render_records(_records()) in updated
    assert update_guide_text(updated, _records()) == updated


def test_update_appends_a_block_without_markers() -> None:
    assert update_guide_text("# Title", {}) == "# Title\n\n" + render_block({})
    assert update_guide_text("", {}) == render_block({})


def test_update_replaces_to_the_end_after_a_lone_begin_marker() -> None:
    text = f"# T\n{BEGIN_MARKER}\nhalf a block\n"
    assert update_guide_text(text, {}) == "# T\n" + render_block({})


def test_check_guide_codes(tmp_path: Path) -> None:
    records = _records()
    missing = check_guide(tmp_path, records)
    assert [(f.code, f.path) for f in missing] == [("G001", "/guide/path")]

    guide = tmp_path / "GUIDE.md"
    guide.write_text("# Guide\n\nNo block here.\n", "utf-8")
    assert [(f.code, f.path) for f in check_guide(tmp_path, records)] == [("G003", "")]

    assert write_guide(tmp_path, records) is True
    assert check_guide(tmp_path, records) == []
    assert guide.read_text("utf-8").startswith("# Guide\n\nNo block here.\n")

    changed = dict(records, pitfalls=[{"id": "new", "summary": "Another pitfall"}])
    stale = check_guide(tmp_path, changed)
    assert [(f.code, f.path, f.file, f.line) for f in stale] == [("G002", "", "GUIDE.md", 5)]


def test_check_guide_ignores_paths_left_to_the_file_checks(tmp_path: Path) -> None:
    assert check_guide(tmp_path, {"path": "../outside.md"}) == []
    assert check_guide(tmp_path, {"path": "/etc/passwd"}) == []


def _reprobridge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_renders_and_checks(tmp_path: Path) -> None:
    manifest = "rra_version: '1.0'\nartifact: {title: CLI guide}\nguide:\n"
    records = (VECTORS / "records.yaml").read_text("utf-8")
    manifest += "".join(f"  {line}\n" for line in records.splitlines())
    (tmp_path / "rra.yaml").write_text(manifest, "utf-8")
    checked = _reprobridge("guide", str(tmp_path), "--check")
    assert checked.returncode == 1
    assert "G001" in checked.stdout
    assert not (tmp_path / "GUIDE.md").exists()

    assert _reprobridge("guide", str(tmp_path)).returncode == 0
    text = (tmp_path / "GUIDE.md").read_text("utf-8")
    assert text.startswith("# CLI guide\n")
    assert render_records(_records()) in text
    assert _reprobridge("guide", str(tmp_path / "rra.yaml"), "--check").returncode == 0

    (tmp_path / "GUIDE.md").write_text(text + "\nNotes kept.\n", "utf-8")
    (tmp_path / "rra.yaml").write_text(manifest.replace("100 epochs", "200 epochs"), "utf-8")
    stale = _reprobridge("guide", str(tmp_path), "--check")
    assert stale.returncode == 1
    assert "G002" in stale.stdout
    assert _reprobridge("guide", str(tmp_path)).returncode == 0
    final = (tmp_path / "GUIDE.md").read_text("utf-8")
    assert "200 epochs" in final
    assert final.endswith("\nNotes kept.\n")


def test_cli_on_a_directory_without_manifest_is_a_usage_error(tmp_path: Path) -> None:
    result = _reprobridge("guide", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"cannot read {tmp_path / 'rra.yaml'}" in result.stderr


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=10,
)
_sections = st.sampled_from(
    ["path", "ambiguities", "changes", "discrepancies", "pitfalls", "open_choices", "id"]
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_sections, _json, max_size=6))
def test_render_and_update_never_raise_on_arbitrary_plain_data(guide: dict[str, Any]) -> None:
    rendered = render_records(guide)
    assert rendered.endswith("\n")
    text = update_guide_text("# T\n", guide)
    assert update_guide_text(text, guide) == text


@pytest.mark.parametrize("value", [None, [], "text", 3])
def test_render_accepts_non_mappings(value: Any) -> None:
    assert render_records(value).endswith("\n")


# --------------------------------------------------------------------------- hostile records

_HOSTILE = {
    "pitfalls": [
        {
            "id": "p1",
            "summary": "<script>alert(1)</script> <img src=x onerror=alert(1)>",
            "remedy": "[click](javascript:alert(1)) and ![x](javascript:alert(2)) \\[y](z)",
            "tasks": ["t1", "`<b>`", f"a {END_MARKER} b"],
        }
    ],
    "ambiguities": [
        {"id": "a1", "source": f"{END_MARKER}\n{BEGIN_MARKER}", "gap": "g", "resolution": "r"}
    ],
}


def test_record_text_cannot_inject_html_or_links() -> None:
    block = render_records(_HOSTILE)
    assert "<" not in block
    assert ">" not in block
    assert "](" not in block.replace("\\]\\(", "").replace("\\](", "")
    assert "[click]" not in block


def test_markers_inside_a_record_do_not_break_the_block(tmp_path: Path) -> None:
    root = tmp_path
    write_guide(root, _HOSTILE, title="T")
    first = (root / "GUIDE.md").read_bytes()
    assert first.count(END_MARKER.encode()) == 1
    assert first.count(BEGIN_MARKER.encode()) == 1
    assert write_guide(root, _HOSTILE, title="T") is False
    assert (root / "GUIDE.md").read_bytes() == first
    assert check_guide(root, _HOSTILE) == []


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_repeated_guide_is_idempotent_for_any_text(tmp_path_factory: Any, text: str) -> None:
    root = tmp_path_factory.mktemp("g")
    records = {"pitfalls": [{"id": text or "x", "summary": text, "tasks": [text]}]}
    write_guide(root, records, title=text)
    first = (root / "GUIDE.md").read_text("utf-8")
    write_guide(root, records, title=text)
    assert (root / "GUIDE.md").read_text("utf-8") == first
    assert check_guide(root, records) == []
    assert "<" not in render_records(records)


@pytest.mark.parametrize(
    ("text", "limit", "clipped"),
    [
        ("short enough", 80, "short enough"),
        ("x" * 80, 80, "x" * 80),  # at the limit: whole
        # a change's summary, cut after a whole word instead of inside "explicit"
        (
            "Python 2 implicit relative imports of the package neuralfingerprint made explicit",
            80,
            "Python 2 implicit relative imports of the package neuralfingerprint made...",
        ),
        ("one, two, three, four", 12, "one, two..."),  # no separator left before the dots
        ("a " + "y" * 40, 20, "a " + "y" * 15 + "..."),  # no break in the second half
        ("z" * 300, 200, "z" * 197 + "..."),
    ],
)
def test_a_long_line_is_clipped_after_a_whole_word(text: str, limit: int, clipped: str) -> None:
    assert clip(text, limit) == clipped
    assert len(clip(text, limit)) <= limit
