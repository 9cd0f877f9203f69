"""The YAML document loader: Y findings with positions, core schema, limits, positions law."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import _guards, document
from reprobridge_sdk.io._events import _from_events
from reprobridge_sdk.io._jsontext import _from_json
from reprobridge_sdk.io.document import (
    MAX_ALIAS_NODES,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    Document,
    load_document,
)
from reprobridge_sdk.io.pointer import escape_pointer

BOMB = b"\n".join(
    [b"a: &a [x, x, x, x, x, x, x, x, x]"]
    + [
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]".encode()
        for i in range(8)
    ]
)


def _codes(doc: Document) -> list[tuple[str, str, int, int]]:
    return [(f.code, f.path, f.line, f.col) for f in doc.findings]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"a: [1, 2\n", [("Y001", "", 2, 1)]),
        (b"a: 1\nb: 'x\n", [("Y001", "", 3, 1)]),
        (b"- 1\n- 2\n", [("Y002", "", 1, 1)]),
        (b"just text\n", [("Y002", "", 1, 1)]),
        (b"", [("Y002", "", 1, 1)]),
        (b"a: 1\nb:\n  c: 2\n  c: 3\n", [("Y003", "/b/c", 4, 3)]),
        (b"a: &x [*x]\n", [("Y004", "", 1, 4)]),
        (b"a: !!binary aGk=\n", [("Y008", "/a", 1, 4)]),
        (b"a:\n  b: !!python/object:os.system x\n", [("Y008", "/a/b", 2, 6)]),
        (b"a: !!set {x}\n", [("Y008", "/a", 1, 4)]),
        (b"a: !!int abc\n", [("Y008", "/a", 1, 4)]),
        (b"a: !local x\n", [("Y008", "/a", 1, 4)]),
        (b"a:\n  1: x\n", [("Y009", "/a", 2, 3)]),
        (b"a:\n  [1]: x\n", [("Y009", "/a", 2, 3)]),
        (b"a:\n  null: x\n", [("Y009", "/a", 2, 3)]),
        (b"a: 1\nb: caf\xe9\n", [("Y007", "", 2, 7)]),
        ("a: 1\nb: \u00e9t\u00e9 ".encode() + b"\xff\n", [("Y007", "", 2, 8)]),
        (b"a: \xff\n", [("Y007", "", 1, 4)]),
    ],
)
def test_findings_and_positions(source: bytes, expected: list[tuple[str, str, int, int]]) -> None:
    doc = load_document(source, name="m.yaml")
    assert _codes(doc) == expected
    assert all(f.file == "m.yaml" for f in doc.findings)


def test_core_schema_scalars() -> None:
    text = (
        b"a: yes\nb: on\nc: 1e3\nd: 012\ne: 0o17\nf: 0x1F\ng: 2024-01-01\nh: ~\ni: .inf\n"
        b"j: -.inf\nk: TRUE\nl: '1'\nm: 1:20\nn: !!str 12\no: !!float 3\np: 1.5\nq: .nan\n"
    )
    doc = load_document(text, name="m.yaml")
    # JSON has no NaN or infinity: S004 where they are written, the value read as a float.
    assert _codes(doc) == [("S004", "/i", 9, 4), ("S004", "/j", 10, 4), ("S004", "/q", 17, 4)]
    assert doc.unrepresentable == {"/i", "/j", "/q"}
    data = doc.data
    assert data["a"] == "yes"
    assert data["b"] == "on"
    assert data["c"] == 1000.0
    assert data["d"] == 12
    assert data["e"] == 15
    assert data["f"] == 31
    assert data["g"] == "2024-01-01"
    assert data["h"] is None
    assert data["i"] == math.inf
    assert data["j"] == -math.inf
    assert data["k"] is True
    assert data["l"] == "1"
    assert data["m"] == "1:20"
    assert data["n"] == "12"
    assert data["o"] == 3.0
    assert data["p"] == 1.5
    assert math.isnan(data["q"])


def test_integers_of_more_than_4300_digits_are_s004() -> None:
    doc = load_document(
        b"a: " + b"1" * 5000 + b"\nb: -" + b"2" * 5000 + b"\nc: 0x" + b"f" * 5000, name="m"
    )
    assert [(f.code, f.path, f.line) for f in doc.findings] == [
        ("S004", "/a", 1),
        ("S004", "/b", 2),
        ("S004", "/c", 3),
    ]
    assert doc.data == {"a": math.inf, "b": -math.inf, "c": math.inf}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("9" * MAX_INT_DIGITS, int("9" * MAX_INT_DIGITS)),
        ("-" + "9" * MAX_INT_DIGITS, -int("9" * MAX_INT_DIGITS)),
        ("9" * (MAX_INT_DIGITS + 1), None),
        ("0x" + "f" * 3571, int("f" * 3571, 16)),  # 4,300 decimal digits
        ("0x" + "f" * 3572, None),  # 4,301
        ("!!float " + "9" * 5000, None),
        ("1e400", None),
        ("-1e400", None),
    ],
    ids=["4300", "-4300", "4301", "hex-4300", "hex-4301", "float-tag", "1e400", "-1e400"],
)
def test_the_integer_limit_is_4300_decimal_digits(text: str, value: int | None) -> None:
    doc = load_document(f"a: {text}\n".encode(), name="m")
    if value is None:
        assert [(f.code, f.path) for f in doc.findings] == [("S004", "/a")]
        assert math.isinf(doc.data["a"])
    else:
        assert doc.findings == []
        assert doc.data["a"] == value


def test_merge_key_is_an_ordinary_key() -> None:
    doc = load_document(b"base: &b {x: 1}\nother:\n  <<: *b\n", name="m.yaml")
    assert doc.data == {"base": {"x": 1}, "other": {"<<": {"x": 1}}}


def test_alias_bomb_stops_before_expanding() -> None:
    doc = load_document(BOMB, name="m.yaml")
    assert [f.code for f in doc.findings] == ["Y004"]
    assert doc.data is None
    assert doc.findings[0].line >= 1


def test_moderate_aliases_expand() -> None:
    doc = load_document(b"a: &a {k: [1, 2]}\nb: *a\nc: [*a, *a]\n", name="m.yaml")
    assert doc.findings == []
    assert doc.data["c"] == [{"k": [1, 2]}, {"k": [1, 2]}]
    # Aliased values map to the anchor's position.
    assert doc.positions["/b/k/1"] == (1, 15)
    assert MAX_ALIAS_NODES >= 10_000


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500, 100_000])
def test_deep_flow_nesting(depth: int) -> None:
    doc = load_document(b"a: " + b"[" * depth + b"]" * depth, name="m.yaml")
    assert [f.code for f in doc.findings] == ["Y005"]
    assert doc.data is None


_OPENERS = st.lists(st.sampled_from(["[", "{a: "]), min_size=1, max_size=8)


@given(depth=st.integers(min_value=MAX_DEPTH + 1, max_value=3_000), openers=_OPENERS)
@example(depth=1_001, openers=["["])  # libyaml's own flow limit: Y001 from PyYAML 6.0.4
@example(depth=100_000, openers=["["])
@example(depth=5_000, openers=["{a: "])
@example(depth=1_500, openers=["[", "{a: "])
@settings(max_examples=20, deadline=None)
def test_depth_finding_does_not_depend_on_the_yaml_build(depth: int, openers: list[str]) -> None:
    levels = [openers[index % len(openers)] for index in range(depth)]
    closers = "".join("]" if opener == "[" else "}" for opener in reversed(levels))
    doc = load_document(f"a: {''.join(levels)}{closers}\n".encode(), name="m.yaml")
    assert [f.code for f in doc.findings] == ["Y005"]
    # The first level past the limit: the mapping is level 1, so flow level MAX_DEPTH.
    assert (doc.findings[0].line, doc.findings[0].col) == (
        1,
        4 + sum(len(opener) for opener in levels[: MAX_DEPTH - 1]),
    )
    assert doc.data is None


def test_a_syntax_error_before_deep_nesting_stays_y001() -> None:
    doc = load_document(b"a: [1, 2\nb: ]\nc: " + b"[" * 5_000 + b"]" * 5_000, name="m.yaml")
    assert [(f.code, f.line) for f in doc.findings] == [("Y001", 2)]


def test_deep_block_nesting() -> None:
    lines = [" " * i + f"k{i}:" for i in range(MAX_DEPTH + 5)]
    doc = load_document(("\n".join(lines) + " 1\n").encode(), name="m.yaml")
    assert [f.code for f in doc.findings] == ["Y005"]


def test_depth_at_the_limit_is_fine() -> None:
    depth = MAX_DEPTH - 1
    doc = load_document(b"a: " + b"[" * depth + b"]" * depth, name="m.yaml")
    assert doc.findings == []


def test_too_large_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "rra.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)
    doc = load_document(path)
    assert [(f.code, f.line) for f in doc.findings] == [("Y006", 1)]
    assert load_document(b"#" * (MAX_BYTES + 1), name="x").findings[0].code == "Y006"


def test_locate_falls_back_to_ancestors() -> None:
    doc = load_document(b"a:\n  b: 1\n  c: [x, y]\n", name="m.yaml")
    assert doc.locate("/a/b") == (2, 6)
    assert doc.locate("/a/b", key=True) == (2, 3)
    assert doc.locate("/a/missing") == doc.locate("/a")
    assert doc.locate("/a/c/1") == (3, 10)
    assert doc.locate("/zzz") == (1, 1)
    assert doc.text.startswith("a:")


def test_pointer_escaping() -> None:
    doc = load_document(b"'a/b':\n  '~c': 1\n", name="m.yaml")
    assert doc.positions[f"/{escape_pointer('a/b')}/{escape_pointer('~c')}"] == (2, 9)


def test_bom_is_ignored() -> None:
    doc = load_document(b"\xef\xbb\xbfa: 1\n", name="m.yaml")
    assert doc.data == {"a": 1}


# --------------------------------------------------------------------------- properties

# Positions count characters, not bytes: keys and strings mix ASCII with two-, three- and
# four-byte UTF-8 characters and a combining mark (no line breaks: positions name lines).
_LETTERS = "abcdefghij_\u00e9\u00df\u03a9\u4e2d\u6587\U0001f600\u0301"
_keys = st.text(alphabet=_LETTERS, min_size=1, max_size=8).map(lambda s: "k" + s)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(alphabet=_LETTERS + "klmnop ", min_size=0, max_size=12).map(lambda s: "s" + s),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys, inner, min_size=1, max_size=4)
    ),
    max_leaves=25,
)
_documents = st.dictionaries(_keys, _json, min_size=1, max_size=5)


def _walk(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    out = [(pointer, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_walk(item, f"{pointer}/{escape_pointer(key)}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_walk(item, f"{pointer}/{index}"))
    return out


def _at(text: str, position: tuple[int, int]) -> str:
    line, col = position
    return text.splitlines()[line - 1][col - 1 :]


@settings(max_examples=60, deadline=None)
@given(_documents)
def test_positions_round_trip_json_text(data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=1, ensure_ascii=False)
    doc = load_document(text.encode(), name="m.json")
    assert doc.findings == []
    assert doc.data == data
    for pointer, value in _walk(data):
        rest = _at(text, doc.positions[pointer])
        if isinstance(value, dict):
            assert rest.startswith("{")
        elif isinstance(value, list):
            assert rest.startswith("[")
        else:
            assert rest.startswith(json.dumps(value, ensure_ascii=False))


@settings(max_examples=60, deadline=None)
@given(_documents)
def test_positions_round_trip_block_yaml(data: dict[str, Any]) -> None:
    text = yaml.safe_dump(
        data, default_flow_style=False, sort_keys=False, width=10_000, allow_unicode=True
    )
    doc = load_document(text.encode(), name="m.yaml")
    assert doc.findings == []
    assert doc.data == data
    for pointer, value in _walk(data):
        if pointer and not isinstance(value, (dict, list)):
            rest = _at(text, doc.positions[pointer])
            dumped = yaml.safe_dump(value, width=10_000, allow_unicode=True).splitlines()[0]
            assert rest.startswith(dumped)
        if pointer and pointer.rsplit("/", 1)[-1].startswith("k"):
            key = pointer.rsplit("/", 1)[-1]
            assert _at(text, doc.key_positions[pointer]).startswith(key)


@example(".nan")
@example("a: [.inf, -.Inf, " + "9" * 4301 + "]")
@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_loads_without_raising(text: str) -> None:
    doc = load_document(text.encode("utf-8", "surrogatepass"), name="m.yaml")
    assert isinstance(doc.findings, list)
    if doc.data is None:
        assert doc.findings
    for item in doc.findings:
        # Y codes, and S004 for numbers JSON cannot carry (.nan, .inf, overlong integers)
        assert item.code.startswith("Y") or (item.code, item.path in doc.unrepresentable) == (
            "S004",
            True,
        )
        assert item.line >= 1


@example(b".nan")
@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_load_without_raising(raw: bytes) -> None:
    doc = load_document(raw, name="m.yaml")
    for item in doc.findings:
        assert item.code.startswith("Y") or item.path in doc.unrepresentable


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"\xfe\xff\x00a", b"# only a comment\n", b""])
def test_a_finding_on_a_document_with_no_node_is_located_without_a_traceback(
    tmp_path: Path, raw: bytes
) -> None:
    path = tmp_path / "doc.yaml"
    path.write_bytes(raw)
    doc = load_document(path)
    assert doc.data is None and doc.findings
    # another component's finding about this file (the claims reader's B001)
    item = doc.finding("B001", "not a claims document", path="")
    assert (item.code, item.path) == ("B001", "")


@pytest.mark.parametrize("depth", [65, 401, 5_000, 200_000])
def test_a_deep_json_text_is_y005_never_a_crash(depth: int) -> None:
    """A JSON text that json itself reads (or refuses as too deep) is bounded like any YAML."""
    doc = load_document(b'{"a": ' + b"[" * depth + b"]" * depth + b"}", name="m.json")
    assert [f.code for f in doc.findings] == ["Y005"]
    assert doc.data is None


def test_a_shallow_json_text_of_many_brackets_reads_with_positions() -> None:
    items = ",\n".join(f'{{"id": "t{i}", "v": [{i}, [{i}]]}}' for i in range(500))
    doc = load_document(f'{{"tasks": [\n{items}\n]}}'.encode(), name="m.json")
    assert doc.findings == []
    assert doc.data["tasks"][499] == {"id": "t499", "v": [499, [499]]}
    probes = ["", "/tasks", "/tasks/499/v/1/0", "/tasks/499/id", "/tasks/499/missing/deeper"]
    probes += ["/tasks/500", "/tasks/01", "/nothing", "no-slash", "/tasks/7/v/0/x"]
    found = {(p, key): doc.locate(p, key=key) for p in probes for key in (False, True)}
    assert found[("/tasks/499/v/1/0", False)] == (501, 28)
    assert found[("/tasks/499/id", True)] == (501, 2)
    assert found[("/tasks/499/missing/deeper", True)] == (501, 1)
    # the node graph's answers are the full converter's maps' answers
    assert doc.positions["/tasks/499/v/1/0"] == (501, 28)
    assert {(p, key): doc.locate(p, key=key) for p, key in found} == found


def test_a_clean_block_document_locates_as_the_converters_maps() -> None:
    """Read from events (no finding): each position, found in the graph composed on first
    use, is the one the full converter records."""
    text = "a:\n  b: [1, {c: x}]\n  'd/e~': |\n    text\nlist:\n  - k: 1\n  -\n    - deep\n"
    doc = load_document(text.encode(), name="m.yaml")
    assert doc.findings == []
    probes = ["", "/a", "/a/b/1/c", "/a/d~1e~0", "/list/0/k", "/list/1/0", "/list/2", "/a/zz"]
    found = {(p, key): doc.locate(p, key=key) for p in probes for key in (False, True)}
    assert found[("/a/b/1/c", False)] == (2, 14)
    assert found[("/a/d~1e~0", True)] == (3, 3)
    assert doc.positions["/list/1/0"] == (8, 7)
    assert {(p, key): doc.locate(p, key=key) for p, key in found} == found


@settings(max_examples=80, deadline=None)
@given(_documents, st.sampled_from(["json", "block", "flow-leaves"]), st.data())
def test_the_text_locator_answers_as_the_converters_maps(
    data: dict[str, Any], style: str, draw: st.DataObject
) -> None:
    """A document read without a finding locates each pointer in its text (no graph); every
    answer, for values, keys, missing pointers and their ancestors, is the one the full
    converter's maps give once every position is computed."""
    if style == "json":
        text = json.dumps(data, indent=1, ensure_ascii=False)
    else:
        flow = None if style == "flow-leaves" else False
        text = yaml.safe_dump(data, allow_unicode=True, default_flow_style=flow, sort_keys=False)
    pointers = [pointer for pointer, _ in _walk(data)]
    probes = pointers + [p + "/missing" for p in pointers[:5]] + ["/nothing/0", "", "x"]
    probes = draw.draw(st.permutations(probes))
    located = load_document(text.encode(), name="m.yaml")
    assert located.findings == []
    found = {(p, key): located.locate(p, key=key) for p in probes for key in (False, True)}
    assert located._positions is None  # answered from the text, not from the maps
    mapped = load_document(text.encode(), name="m.yaml")
    assert mapped.positions  # every position computed: locate answers from the maps
    assert {(p, key): mapped.locate(p, key=key) for p, key in found} == found


# -- the two readers: libyaml's events and the node converter read every text the same ------

#: Plain scalars of every core-schema spelling (and near misses that stay strings).
_PLAIN = st.sampled_from(
    [
        *("0x1F", "0o17", "012", "+12", "-0", "1e3", "1E-2", ".5", "1.", "-.5", "1_000", "0b101"),
        *("~", "null", "Null", "", "true", "False", "tRUE", "yes", "on", "2024-05-01", "12:30:00"),
        *(".nan", ".inf", "-.Inf", "9" * 4301, "-" + "9" * 4300, "3", "-0.5", "63.42", "1,000"),
    ]
)


def _typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it (``==`` holds ``1``, ``1.0`` and ``True``
    equal; the readers must not)."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


def _both_readings(text: str) -> tuple[Any, Document]:
    """The event reader's data (None where it leaves the text to the converter) and the
    document the node converter reads from the same text."""
    events = _from_events(text)
    converted = Document("m.yaml", text, _positions={}, _key_positions={})
    try:
        root = document._compose("m.yaml", text)
    except (_guards._Fatal, yaml.YAMLError):  # Y001, Y004-Y006, Y011
        converted.findings.append(finding("Y001", "not read", file="m.yaml"))
        return events, converted
    if root is None:  # an empty document: Y002
        converted.findings.append(finding("Y002", "empty", file="m.yaml"))
    else:
        document._convert(converted, root)
    return events, converted


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        _documents.map(lambda data: json.dumps(data, indent=1, ensure_ascii=False)),
        _documents.map(lambda data: yaml.safe_dump(data, allow_unicode=True, sort_keys=False)),
        st.lists(st.tuples(_keys, _PLAIN), min_size=1, max_size=6).map(
            lambda items: "".join(f"{key}: {value}\n" for key, value in items)
        ),
        st.lists(_PLAIN, min_size=1, max_size=6).map(lambda items: f"a: [{', '.join(items)}]\n"),
        st.text(alphabet="ab:- \n[]{},&*!'\"#0.1x", max_size=60),
    )
)
def test_the_event_reader_reads_as_the_node_converter(text: str) -> None:
    """Whenever the event reader gives data, the node converter reads the same data, with the
    same types, and finds nothing; where the converter has a finding, the events give up."""
    events, converted = _both_readings(text)
    if converted.findings:
        assert events is None
        return
    if events is None:  # an alias or an explicit tag: the converter reads it alone
        return
    assert _typed(events) == _typed(converted.data)


# -- the JSON reader: whenever it gives data, the event reader gives the same ----------------

#: Between JSON's tokens: its four whitespace characters, line breaks of each kind.
_GAPS = st.sampled_from(["", " ", "  ", "\t", "\n", "\r\n", "\r", "\n\t ", " " * 40])
#: Strings YAML reads otherwise than JSON, or refuses, among ordinary ones: escapes, a
#: surrogate pair, raw NEL, LS, DEL and non-characters, a quote, long keys near YAML's limit.
_ODD = st.sampled_from(
    [
        'a"b',
        "c\\d",
        "\u0085",
        "\u2028",
        "\x7f",
        "\ufffe",
        "\U0001f600",
        "\x01",
        "e/f",
        "#",
        "- x",
        ": y",
        "k" * 995,
        "k" * 1030,
        "\u00e9" * 300,
    ]
)


def _json_text(value: Any, gap: Any, ascii_only: bool) -> str:
    """``value`` as JSON text with a drawn gap around every token (keys, colons, commas)."""
    if isinstance(value, dict):
        items = [
            f"{gap()}{json.dumps(key, ensure_ascii=ascii_only)}{gap()}:{gap()}"
            f"{_json_text(item, gap, ascii_only)}{gap()}"
            for key, item in value.items()
        ]
        return "{" + ",".join(items) + gap() + "}"
    if isinstance(value, list):
        return "[" + ",".join(gap() + _json_text(item, gap, ascii_only) for item in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


_odd_keys = st.one_of(_keys, _ODD)
_odd_json = st.recursive(
    st.one_of(_scalars, _ODD, st.sampled_from([10**20, -0.0, 1e300, 2.5e-8, 1e-320])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_odd_keys, inner, min_size=1, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_odd_keys, _odd_json, min_size=1, max_size=5),
    st.lists(_GAPS, min_size=1, max_size=8),
    st.booleans(),
)
@example({"k": 1}, ["\n"], False)
@example({"k" * 1022: 1}, [""], False)
@example({"k" * 1020: 1}, [" ", "  "], False)
def test_the_json_reader_reads_as_the_event_reader(
    data: dict[str, Any], gaps: list[str], ascii_only: bool
) -> None:
    """Whenever the JSON reader gives data, the event reader gives the same data with the same
    types (so the node converter too, above); a gap, an odd string or a key YAML refuses
    makes it give up, never read otherwise."""
    turn = iter(range(10**9))
    text = _json_text(data, lambda: gaps[next(turn) % len(gaps)], ascii_only)
    read = _from_json(text)
    if read is not None:
        events = _from_events(text)
        assert events is not None
        assert _typed(read) == _typed(events)


@settings(max_examples=60, deadline=None)
@given(_documents, st.sampled_from([None, 1, 2]), st.booleans())
def test_the_json_reader_reads_ordinary_json_text(
    data: dict[str, Any], indent: int | None, ascii_only: bool
) -> None:
    """What programs write (``json.dumps``, any indent) is read by the JSON reader, not
    handed on: the property above is not held by giving up. (A character beyond the BMP
    written as an escaped surrogate pair is the exception: libyaml refuses it, Y001.)"""
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    read = _from_json(text)
    if ascii_only and any(ord(c) > 0xFFFF for c in json.dumps(data, ensure_ascii=False)):
        assert read is None and _from_events(text) is None
        return
    assert read is not None
    assert _typed(read) == _typed(_from_events(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',  # a key twice: Y003
        '{"a": 1e400}',  # too large for a double: S004
        '{"a": NaN}',
        '{"a": ' + "9" * 4301 + "}",
        '{"a": ' + "[" * 64 + "]" * 64 + "}",  # Y005
        '{"k"\n: 1}',  # YAML takes no line break before a key's colon
        '{"' + "k" * 1023 + '": 1}',  # nor a key of more than 1,024 characters
        '{"a": "\u0085"}',  # a raw NEL YAML folds into a space
        '{"a": "\\ud83d\\ude00"}',  # a surrogate pair libyaml refuses
        "[1]",  # Y002
    ],
)
def test_the_json_reader_gives_up_where_yaml_reads_otherwise(text: str) -> None:
    assert _from_json(text) is None
    doc = load_document(text.encode(), name="m.json")
    assert doc.findings or doc.data == _from_events(text)


def test_a_finding_in_a_json_text_is_located_by_the_event_readers_spans() -> None:
    """A JSON manifest read by json keeps no spans; the first position asked for reads them."""
    items = ",\n".join(f'{{"id": "t{i}", "v": [{i}]}}' for i in range(300))
    doc = load_document(f'{{"tasks": [\n{items}\n]}}'.encode(), name="m.json")
    assert doc.findings == [] and doc._spans is None
    assert doc.locate("/tasks/299/v/0") == (301, 22)
    assert doc._spans and doc._positions is None  # found from the spans, not the maps
    assert doc.positions["/tasks/299/v/0"] == (301, 22)
