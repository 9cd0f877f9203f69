"""Round-trip YAML: byte-identical untouched documents, minimal edits, safety, positions."""

from __future__ import annotations

import copy
import difflib
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.io import yamlio

FIXTURES = Path(__file__).parent / "fixtures"
FILES = sorted(FIXTURES.glob("*.yaml"))


def _changed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _comments(text: str) -> list[str]:
    return [line[line.index("#") :] for line in text.splitlines() if "#" in line]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_untouched_document_round_trips_byte_identical(path: Path, tmp_path: Path) -> None:
    text = path.read_text("utf-8")
    doc = yamlio.load(path)
    assert doc.ok
    assert yamlio.dumps(doc) == text
    assert yamlio.update(doc, copy.deepcopy(doc.data)) is False
    target = tmp_path / path.name
    yamlio.save(doc, target)
    assert target.read_bytes() == path.read_bytes()


def test_plain_data_matches_the_validator_view() -> None:
    doc = yamlio.load(FIXTURES / "indent4.yaml")
    artifact = doc.data["artifact"]
    assert artifact["date"] == "2024-05-01"
    assert artifact["yes_no"] == "yes"
    assert artifact["octal"] == 12
    assert yamlio.to_plain(doc.tree) == doc.data


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_editing_one_value_changes_one_line_and_keeps_comments(path: Path) -> None:
    text = path.read_text("utf-8")
    doc = yamlio.load(path)
    data = copy.deepcopy(doc.data)
    data["artifact"]["id"] = "edited"
    assert yamlio.update(doc, data) is True
    out = yamlio.dumps(doc)
    changed = _changed_lines(text, out)
    assert len(changed) == 2
    assert changed[0].startswith("-") and changed[1].startswith("+")
    assert "edited" in changed[1]
    assert _comments(out) == _comments(text)
    assert yamlio.loads(out).data == data


def test_edits_keep_quoting_flow_style_and_block_scalars() -> None:
    text = (FIXTURES / "commented.yaml").read_text("utf-8")
    doc = yamlio.loads(text)
    data = copy.deepcopy(doc.data)
    data["artifact"]["title"] = "New 'title'"
    data["launchers"][0]["argv"].append("--fast")
    data["launchers"][0]["seeds"] = [1, 2, 3, 4]
    data["tasks"][0]["published"]["value"] = 0.96
    yamlio.update(doc, data)
    out = yamlio.dumps(doc)
    assert yamlio.loads(out).data == data
    lines = out.splitlines()
    assert "  title: 'New ''title'''" in lines
    assert '    argv: ["python", \'train.py\', --seed, "{seed}", --fast]' in lines
    assert "    seeds: [1, 2, 3, 4]" in lines
    # the comment stays in its column
    assert "      value: 0.96     # trailing zeros kept" in lines
    assert "      A literal block" in lines
    assert _comments(out) == _comments(text)
    assert len(_changed_lines(text, out)) == 8


def test_adding_and_removing_keys_and_items_by_id() -> None:
    text = (FIXTURES / "commented.yaml").read_text("utf-8")
    doc = yamlio.loads(text)
    data = copy.deepcopy(doc.data)
    data["tasks"].insert(0, {"id": "t0", "dataset": "iris", "metric": "acc"})
    del data["launchers"][0]["env"]
    data["artifact"]["version"] = "1.2"
    data["x-extra"] = {"note": "multi\nline"}
    yamlio.update(doc, data)
    out = yamlio.dumps(doc)
    reread = yamlio.loads(out)
    assert reread.data == data
    assert list(reread.data["artifact"]) == ["id", "title", "license", "paper", "version"]
    assert "  # the only task" in out.splitlines()
    assert "    env:" not in out
    # the task that stayed keeps its position in the text relative to its comment
    assert out.index("  # the only task") < out.index("  - id: t1")


def test_reordering_a_list_of_records_moves_them() -> None:
    doc = yamlio.loads("items:\n  - id: a\n    v: 1  # one\n  - id: b\n    v: 2  # two\n")
    data = {"items": [{"id": "b", "v": 2}, {"id": "a", "v": 1}]}
    yamlio.update(doc, data)
    out = yamlio.dumps(doc)
    assert yamlio.loads(out).data == data
    assert out.index("id: b") < out.index("id: a")


def test_positions_are_one_based_line_and_column() -> None:
    doc = yamlio.load(FIXTURES / "commented.yaml")
    assert doc.locate("/artifact/title") == (7, 10)
    assert doc.locate("/launchers/0/argv/1") == (26, 22)
    assert doc.locate("/tasks/0/metric", key=True) == (15, 5)
    assert doc.locate("/tasks/0/no/such/key") == doc.locate("/tasks/0")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("a: 1\na: 2\n", "Y003"),
        ("a: [1, 2\n", "Y001"),
        ("- 1\n- 2\n", "Y002"),
        ("a: !python/object:os.system x\n", "Y008"),
        (b"a: \xff\xfe\n", "Y007"),
        (
            "a: &x [1,2]\n"
            + "".join(
                f"b{i}: &x{i} [*x, *x, *x, *x, *x, *x, *x, *x, *x]\n".replace(
                    "*x", f"*x{i - 1}" if i else "*x"
                )
                for i in range(12)
            ),
            "Y004",
        ),
        ("a: " + "[" * 200 + "]" * 200 + "\n", "Y005"),
    ],
    ids=["duplicate", "syntax", "not-mapping", "tag", "utf8", "alias-bomb", "deep"],
)
def test_unsafe_or_broken_input_gives_located_findings(text: str | bytes, code: str) -> None:
    doc = yamlio.loads(text, name="bad.yaml")
    assert not doc.ok or code == "Y002"
    assert code in [item.code for item in doc.findings]
    assert all(item.file == "bad.yaml" for item in doc.findings)
    if not doc.ok and doc.tree is None:
        with pytest.raises(ArtifactError):
            yamlio.update(doc, {"a": 1})


def test_save_is_atomic_and_refreshes_positions(tmp_path: Path) -> None:
    target = tmp_path / "rra.yaml"
    target.write_text("a: 1  # keep\nb: 2\n", "utf-8")
    doc = yamlio.load(target)
    yamlio.update(doc, {"z": 0, "a": 1, "b": 3})
    yamlio.save(doc, target)
    assert target.read_text("utf-8") == "z: 0\na: 1  # keep\nb: 3\n"
    assert not doc.changed
    assert doc.locate("/b") == (3, 4)
    assert [p.name for p in tmp_path.iterdir()] == ["rra.yaml"]


def test_new_documents_have_header_comments_and_flow_lists() -> None:
    text = yamlio.dumps_data({"a": {"b": [1, 2]}, "c": "x\ny\n"}, header="first\n\nsecond")
    assert text.splitlines()[:3] == ["# first", "#", "# second"]
    assert "  b: [1, 2]" in text.splitlines()
    assert yamlio.loads(text).data == {"a": {"b": [1, 2]}, "c": "x\ny\n"}


# -- the round-trip laws ---------------------------------------------------------------------

# Strings biased toward what breaks YAML writers: indicators, blanks at either end, tab, CR,
# NEL and the Unicode line and zero-width characters, number-, bool- and null-like words.
_TRICKY = list(":?-#&*!|>'\"%@`,[]{} \t\r\n\x85\u2028\u2029\u200b\u00e9\u4e2d\U0001f600~.0e")
_WORDS = st.sampled_from(
    [
        *("1_000", "0b101", "-0x1F", "0o17", "0x1F", "012", "+1", "1e3", "1.5", ".5", "-.inf"),
        *(".nan", ".NaN", ".inf", "yes", "no", "on", "off", "y", "n", "Yes", "true", "False"),
        *("null", "Null", "~", "", "<<", "=", "2024-05-01", "12:30:00", "---", "...", "- x"),
        *("? x", ": x", "-", "?", ":", "?A", ":0", "a: b", "a #b", "a:", "#x", "&a", "*a", "!t"),
    ]
)
_text = st.one_of(
    st.text(st.sampled_from(_TRICKY), max_size=8),
    st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufeff"), max_size=20
    ),
    _WORDS,
    st.tuples(_WORDS, st.sampled_from(_TRICKY), _WORDS).map("".join),
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([10**4300 - 1, -(10**4300 - 1), 2**64, -(2**63)])
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON's numbers: finite
    | _text
)
_keys = _text | st.just("<<")


def _trees(leaves: Any) -> Any:
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4)
        ),
        max_leaves=12,
    )


_documents = st.dictionaries(_keys, _trees(_scalars), max_size=5)


@settings(deadline=None)
@given(_documents)
@example({"a": [":0"]})  # was written `a: [:0]`, a syntax error
@example({"a": ["?A"]})  # was written `a: [?A]`, read back as [{"A": None}]
@example({"?A": "?A", ":0": ["-", "- x", "---", "\t", "a\rb", "x\x85", "\u2028"]})
@example({"a": ["1_000", "0b101", "-0x1F", "yes", "2024-05-01", ".nan", "~", ""]})
def test_law_dump_then_load_gives_the_same_data(data: dict[str, Any]) -> None:
    text = yamlio.dumps_data(data)
    doc = yamlio.loads(text)
    assert doc.ok, doc.findings
    assert doc.data == data
    assert yamlio.to_plain(doc.tree) == data  # the round-trip reader reads it the same
    assert yamlio.dumps(doc) == text


@settings(deadline=None)
@given(_documents, _documents)
@example({"a": "x"}, {"a": ["?A", ":0"], "?b": {":c": "- d"}})
def test_law_update_then_dump_gives_the_new_data(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    doc = yamlio.loads(yamlio.dumps_data(first))
    yamlio.update(doc, second)
    out = yamlio.dumps(doc)
    reread = yamlio.loads(out)
    assert reread.ok, reread.findings
    assert reread.data == second


def test_numbers_survive_restructuring_edits() -> None:
    first = {"i": None, "n": [None, None, [False], {"k": [None, 6.453955775143405e16]}]}
    second = {"n": [None, None, None, {"k": [None, 6.453955775143405e16]}]}
    doc = yamlio.loads(yamlio.dumps_data(first))
    yamlio.update(doc, second)
    assert yamlio.loads(yamlio.dumps(doc)).data == second


def _replace_leaves(value: Any, draw: Any) -> Any:
    if isinstance(value, dict):
        return {key: _replace_leaves(item, draw) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_leaves(item, draw) for item in value]
    return draw(_scalars) if draw(st.booleans()) else value


@settings(deadline=None)
@given(_documents, st.data())
def test_law_scalar_edits_read_back_and_touch_only_their_lines(
    first: dict[str, Any], data: st.DataObject
) -> None:
    second = _replace_leaves(first, data.draw)
    text = yamlio.dumps_data(first)
    doc = yamlio.loads(text)
    yamlio.update(doc, second)
    out = yamlio.dumps(doc)
    assert yamlio.loads(out).data == second
    if doc._tree is None:  # edited in the text: the line count is unchanged
        assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize("value", ["?\u200b", "?A", ":0", "- x", "\t", "x\x85", "1_000"])
@pytest.mark.parametrize("text", ["a: x\nb: [y]\n", "a: 'x'\nb: ['y']\n", 'a: "x"\nb: ["y"]\n'])
def test_scalar_edits_to_indicator_strings_read_back(text: str, value: str) -> None:
    # '?\u200b' once went through an unchecked fallback and read back as a mapping.
    doc = yamlio.loads(text)
    assert yamlio.update(doc, {"a": value, "b": [value]}) is True
    out = yamlio.dumps(doc)
    reread = yamlio.loads(out)
    assert reread.ok, reread.findings
    assert reread.data == {"a": value, "b": [value]}
    assert yamlio.to_plain(reread.tree) == reread.data


@pytest.mark.parametrize(
    "data",
    [{"a": {1: "x"}}, {"a": math.inf}, {"a": [math.nan]}, {"a": 10**4300}],
    ids=["int-key", "inf", "nan", "4301-digits"],
)
def test_data_the_format_cannot_hold_is_an_error_not_a_different_document(data: Any) -> None:
    with pytest.raises(ArtifactError):
        yamlio.dumps_data(data)


def test_scalar_edit_rewrites_only_the_value_span() -> None:
    text = "a: 1   # one\nb: [x, 'y', \"z\"]  # flow\nc: plain text\n"
    doc = yamlio.loads(text)
    yamlio.update(doc, {"a": 2.5, "b": ["x, w", "y'", 'z"'], "c": "other: text"})
    assert doc._tree is None  # no round-trip tree was needed
    assert yamlio.dumps(doc) == (
        "a: 2.5   # one\nb: ['x, w', 'y''', \"z\\\"\"]  # flow\nc: 'other: text'\n"
    )


# -- one reading: the validator's loader and the round-trip tree agree on every scalar ------

#: (plain scalar, its reading). The spec's table of readings (manifest, "YAML") lists these.
READINGS: list[tuple[str, Any]] = [
    ("1_000", "1_000"),
    ("0b101", "0b101"),
    ("-0x1F", "-0x1F"),
    ("+0o17", "+0o17"),
    ("0x1F", 31),
    ("0o17", 15),
    ("012", 12),
    ("+12", 12),
    ("-0", 0),
    ("1e3", 1000.0),
    ("1E-2", 0.01),
    (".5", 0.5),
    ("1.", 1.0),
    ("yes", "yes"),
    ("No", "No"),
    ("on", "on"),
    ("y", "y"),
    ("True", True),
    ("FALSE", False),
    ("tRUE", "tRUE"),
    ("~", None),
    ("null", None),
    ("NULL", None),
    ("", None),
    ("2024-05-01", "2024-05-01"),
    ("12:30:00", "12:30:00"),
    ("1,000", "1,000"),
    ("0x", "0x"),
    ("<<", "<<"),
    ("9" * 4300, int("9" * 4300)),
]


@pytest.mark.parametrize(("text", "value"), READINGS, ids=[text[:12] for text, _ in READINGS])
def test_both_readers_read_a_scalar_the_same(text: str, value: Any) -> None:
    flow = bool(text) and "," not in text  # in a flow list "" is no item, "," two items
    doc = yamlio.loads(f"a: {text}\nb: [{text}]\n" if flow else f"a: {text}\n")
    assert doc.ok, doc.findings
    assert doc.data == ({"a": value, "b": [value]} if flow else {"a": value})
    assert type(doc.data["a"]) is type(value)
    plain = yamlio.to_plain(doc.tree)
    assert plain == doc.data
    assert type(plain["a"]) is type(value)


@pytest.mark.parametrize("text", [".nan", ".NaN", ".inf", "-.Inf", "+.INF", "9" * 4301, "1e400"])
def test_numbers_json_cannot_carry_are_s004_and_never_edited(text: str) -> None:
    doc = yamlio.loads(f"a: {text}\nb: x\n")
    assert [(f.code, f.path) for f in doc.findings] == [("S004", "/a")]
    with pytest.raises(ArtifactError):  # once a ValueError from ruamel for 5,000 digits
        yamlio.update(doc, {"a": 1, "b": "y"})


def test_an_unrelated_edit_keeps_1_000_a_string() -> None:
    doc = yamlio.loads("a: 1_000  # kept\nb: 0b101\nc: [x]\n")
    assert yamlio.update(doc, {"a": "1_000", "b": "0b101", "c": ["x", {"k": 1}]}) is True
    out = yamlio.dumps(doc)
    assert out.startswith("a: 1_000  # kept\nb: 0b101\n")
    assert yamlio.loads(out).data == {"a": "1_000", "b": "0b101", "c": ["x", {"k": 1}]}
