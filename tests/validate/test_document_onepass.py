"""The reader parses a manifest once: the depth walk runs only when the text could nest past
the composer's safe depth, and otherwise the converter reports Y005 at the very collection the
walk reports; the garbage collector is paused only while it composes, and always restored."""

from __future__ import annotations

import gc

import pytest

from reprobridge_sdk.io import document
from reprobridge_sdk.io.document import MAX_DEPTH, load_document


def _walked(text: str) -> tuple[int, int] | None:
    """Where the depth walk (the check that used to run first) puts Y005, if anywhere."""
    try:
        document._check_depth("m.yaml", text)
    except document._Fatal as fatal:
        return (fatal.item.line, fatal.item.col)
    return None


def _block(levels: int) -> str:
    return "a:\n" + "".join("  " * i + "b:\n" for i in range(1, levels)) + "  " * levels + "x\n"


DEEP = {
    "block mappings": _block(MAX_DEPTH + 2),
    "block sequences in mappings": "a:\n"
    + "".join("  " * i + "- b:\n" for i in range(MAX_DEPTH))
    + "  " * MAX_DEPTH
    + "  x\n",
    "flow": "a: " + "[" * (MAX_DEPTH + 3) + "]" * (MAX_DEPTH + 3) + "\n",
    "a deep collection key": "? " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n: 1\n",
    "after a duplicate key": "a: 1\na: 2\nb: " + "[" * 70 + "]" * 70 + "\n",
    "a compact nest on one long line": "a:\n  " + "- " * 150 + "x\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_y005_is_where_the_walk_puts_it(name: str) -> None:
    text = DEEP[name]
    where = _walked(text)
    assert where is not None
    doc = load_document(text.encode(), name="m.yaml")
    assert [(f.code, f.line, f.col) for f in doc.findings] == [("Y005", *where)]
    assert doc.data is None


def test_long_lines_of_prose_no_longer_trigger_the_walk() -> None:
    text = "title: " + "word " * 2000 + "\nurl: https://example.org/" + "a/b-c" * 300 + "\n"
    assert not document._composer_at_risk(text)
    doc = load_document(text.encode(), name="m.yaml")
    assert doc.findings == []
    assert doc.data is not None and doc.data["title"].startswith("word word")


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 401 + "]" * 401 + "\n",  # many flow brackets
        "a:\n  " + "- " * 450 + "x\n",  # a compact nest on one long line
        "a:\r" + " " * 500 + "b: 1\n",  # an old Mac line break inside a long line
    ],
)
def test_texts_that_could_be_deep_are_walked(text: str) -> None:
    assert document._composer_at_risk(text)


@pytest.mark.parametrize(
    "text", ["a: 1\n", "a: [1\n", "a: " + "[" * 300 + "\n", "- 1\n---\n- 2\n", _block(80)]
)
@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_restored_whatever_the_outcome(text: str, enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        load_document(text.encode(), name="m.yaml")
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
