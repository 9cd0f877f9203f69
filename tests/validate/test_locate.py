"""The reader's fast paths give the reference path's data and positions, exactly.

A document read without a finding is converted without a node graph (``json`` for the JSON
subset, libyaml's events for other YAML) and its positions are found one pointer at a time
(:class:`reprobridge_sdk.io._locate.Locator`). The reference is the full converter over
composed nodes, which records every position while it converts. Compared here, on every
conformance case's manifest, on hostile YAML and on generated documents: the data, the
findings, and ``locate`` of every pointer the reference knows and of pointers it does not
(below a scalar, past an array's end, ``01``, ``~2``, an unknown key), with and without
``key=True``, each asked of a fresh locator (the single-pointer walk) and all asked of one
(its caches and the walk that records everything).
"""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.io import _locate, document
from reprobridge_sdk.io.document import Document, load_document

CASES = Path(__file__).resolve().parents[2] / "validators" / "cases"


def _reference(text: str) -> Document:
    """The full converter's document: every position recorded while converting."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(document, "_json_subset", lambda text: None)
        patch.setattr(document, "_from_events", lambda text, spans=None: None)

        def never(root: Any) -> Any:
            raise document._NotPlain

        patch.setattr(document, "_plain", never)
        return load_document(text.encode(), name="m.yaml")


def _probes(known: set[str], size: int) -> list[str]:
    every = sorted(known)
    most = 300 if size > 1_000_000 else 1500
    sample = every[:: max(1, len(every) // most)]  # spread over the text
    probes = set(sample) | {"/nope", "/a~2", "/~", "/0", "/01", "/-", "/a/b/c", "x"}
    for pointer in sample[:: max(1, len(sample) // 300)]:
        probes |= {f"{pointer}/0", f"{pointer}/01", f"{pointer}/zz~0", f"{pointer}/1/x"}
        probes.add(f"{pointer}/999999")
    return sorted(probes)


def _compare(text: str) -> None:
    fast = load_document(text.encode(), name="m.yaml")
    slow = _reference(text)
    assert [(f.code, f.path, f.line, f.col) for f in fast.findings] == [
        (f.code, f.path, f.line, f.col) for f in slow.findings
    ]
    assert json.dumps(fast.data, sort_keys=True) == json.dumps(slow.data, sort_keys=True)
    if fast._positions is not None or not fast.text:  # nothing is located lazily
        return
    assert slow._positions is not None and slow._key_positions is not None
    probes = _probes(set(slow._positions), len(text))
    expected = {(p, k): slow.locate(p, key=k) for p in probes for k in (False, True)}
    for (pointer, key), where in expected.items():
        assert fast.locate(pointer, key=key) == where, (pointer, key)
    shared = _fresh(fast, spans=False)
    for (pointer, key), where in expected.items():
        assert shared.locate(pointer, key=key) == where, (pointer, key)
    # a fresh locator per pointer walks the text each time: fewer on large texts and on
    # aliases (each hands over to the full converter's positions)
    fresh = 10 if len(text) > 100_000 or "*" in text else 200
    for (pointer, key), where in list(expected.items())[:: max(1, len(expected) // fresh)]:
        assert _fresh(fast).locate(pointer, key=key) == where, (pointer, key)
    assert fast.locate("/tasks/0/id", key=True) == slow.locate("/tasks/0/id", key=True)


def _fresh(doc: Document, *, spans: bool = True) -> _locate.Locator:
    """A new locator of the document's text (with or without the spans of its tasks)."""
    scratch = Document(doc.name, doc.text)
    return _locate.Locator(
        doc.text,
        json_text=doc._json_text,
        loader=document._Loader,
        spans=doc._spans if spans else None,
        fallback=lambda: (scratch.positions, scratch.key_positions),
    )


def _case_texts() -> dict[str, str]:
    texts = {}
    for path in sorted(CASES.glob("*/rra.yaml")):
        raw = path.read_bytes()
        try:
            texts[path.parent.name] = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue  # not UTF-8 (Y007): tested below, by bytes
    return texts


CASE_TEXTS = _case_texts()


@pytest.mark.parametrize("name", sorted(CASE_TEXTS))
def test_conformance_manifests(name: str) -> None:
    text = CASE_TEXTS[name]
    _compare(text)
    if len(text) < 1_000_000 and _json_able(text):  # the same data as JSON text
        _compare(json.dumps(yaml.safe_load(text)))


def _json_able(text: str) -> bool:
    if "*" in text:  # aliases: expanded, a bomb would not end
        return False
    try:
        data = yaml.safe_load(text)
        json.dumps(data, allow_nan=False)
    except (yaml.YAMLError, ValueError, TypeError):
        return False
    return isinstance(data, dict)


HOSTILE = {
    "anchors and aliases": "a: &x {k: 1, l: [1, 2]}\nb: *x\nc: *x\n",
    "an anchored scalar": "a: &x hello\nb: *x\nc: [*x, *x]\n",
    "an anchor without alias": "a: &x [1, 2]\nb: 3\n",
    "an alias as a key": "a: &k key\n*k : v\n",
    "merge keys": "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
    "a merge key without alias": "a:\n  <<: {x: 1}\n  y: 2\n",
    "duplicate keys": "a: 1\nb: 2\na: 3\n",
    "duplicate nested keys": "a:\n  x: 1\n  x: [1]\nb: 2\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "an explicit document": "--- \na: 1\n...\n",
    "a directive": "%YAML 1.1\n---\na: 1\n",
    "tabs in values": "a: 'x\ty'\nb:\t1\nc: \"\\t\"\n",
    "a tab as indentation": "a:\n\tb: 1\n",
    "a very long line": "a: " + "word " * 5000 + "\nb: [" + ", ".join(["1"] * 3000) + "]\n",
    "a very long key": "k" * 1100 + ": 1\nb: 2\n",
    "deep block nesting": "a:\n"
    + "".join("  " * i + "b:\n" for i in range(1, 60))
    + "  " * 60
    + "x\n",
    "deep flow nesting": "a: " + "[" * 62 + "]" * 62 + "\nb: 1\n",
    "nesting past the limit": "a: " + "[" * 70 + "]" * 70 + "\n",
    "CRLF line ends": "a: 1\r\nb:\r\n  - x\r\n  - {k: v}\r\nc: 'q'\r\n",
    "CR line ends": "a: 1\rb: [1, 2]\r",
    "a BOM": "\ufeffa: 1\nb: [x, y]\n",
    "unicode": "caf\u00e9: \u65e5\u672c\nb: ['\U0001f600', \"e\u0301\"]\nc: \u2028x\n",
    "unicode values": "caf\u00e9: \u65e5\u672c\nb: ['\U0001f600', \"e\u0301\"]\nc: d\n",
    "explicit tags": "a: !!str 1\nb: !!int '2'\nc: !!float 3\nd: !custom x\ne: !!binary aGk=\n",
    "non-string keys": "1: a\ntrue: b\nnull: c\n[1]: d\n? {x: 1}\n: e\n",
    "an empty key": ": a\nb: 1\n",
    "complex keys": "? a\n: 1\n? |\n  block\n: 2\n",
    "numbers JSON cannot carry": "a: .nan\nb: -.inf\nc: 1e400\nd: " + "9" * 4400 + "\n",
    "core schema words": "a: yes\nb: on\nc: 012\nd: 0o17\ne: 0x1F\nf: 1_000\ng: ~\nh:\n"
    "i: 2024-05-01\n",
    "block scalars": "a: |\n  one\n  two\nb: >-\n  folded\n  text\nc: x\n",
    "comments": "# head\na: 1 # one\n# mid\nb: [1, # in flow\n  2]\n",
    "flow mappings": "a: {x: 1, 'y': [2, {z: 3}], \"w\": }\nb: {}\nc: []\n",
    "quoted keys with slashes": "'a/b': {'~c': 1, '~1': 2}\n\"x~0\": 3\n",
    "plain multi-line": "a: one\n  two\n  three\nb: 1\n",
    "a sequence at the top": "- a\n- b\n",
    "a scalar document": "just text\n",
    "an empty document": "",
    "only a comment": "# nothing\n",
    "a syntax error": "a: [1, 2\nb: 3\n",
    "a bad indent": "a:\n  b: 1\n c: 2\n",
    # collections two levels down: located on their spans alone
    "spans with CRLF": "tasks:\r\n- id: a\r\n  x: {k: [1, 2]}\r\n- id: b\r\n  y:\r\n  - 1\r\n",
    "spans after wide characters": "t\u00e9: x\ntasks:\n- {\u65e5: [1, {a: b}], c: d}\n"
    "- e: \u00e9\U0001f600\n  f: [1]\n",
    "spans with comments": "tasks:\n- id: a # c\n# at column 0\n  x:\n    - 1\n"
    "      # deeper\n    - 2\n- id: b\n",
    "spans of multi-line scalars": "tasks:\n- a: one\n    two\n  b: 'q\n    r'\n  c: 1\n",
    "spans in flow": "{tasks: [{a: 1, b: [2]}, {c: {d: e}}], x: y}\n",
    "spans of block scalars": "tasks:\n- a: |\n    text\n     more\n  b: >\n    f\n\n  c: 2\n",
    "spans in mappings": "a:\n  b:\n    c: 1\n    d: [2]\n  e: {f: g}\n  h:\n  - 1\n",
    "spans with tabs": "tasks:\n- a: 'x\ty'\n  b:\t1\n  c: [1,\t2]\n",
    "spans of compact nests": "tasks:\n- - - a: 1\n      b: 2\n  - c\n- x: 1\n",
    "JSON with escapes": '{"a": "x\\ny", "b\\u00e9": [1, 2]}',
    "JSON with a duplicate": '{"a": 1, "b": {"c": 2}, "a": 3}',
    "JSON compact": '{"a":1,"b":[{"c":"d"},[],{}],"e":{"f":null,"g":true}}',
    "JSON on lines": '{\n "a": [\n  1,\n  {"b": 2}\n ],\n "c": "d"\n}\n',
}


# Read without a finding, so their positions are located lazily (the case is not vacuous).
LAZY = {
    "CRLF line ends",
    "CR line ends",
    "a BOM",
    "anchors and aliases",
    "an alias as a key",
    "merge keys",
    "a very long line",
    "deep block nesting",
    "deep flow nesting",
    "tabs in values",
    "unicode values",
    "JSON compact",
    "JSON with escapes",
    *(name for name in HOSTILE if name.startswith("spans")),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_yaml(name: str) -> None:
    text = HOSTILE[name]
    if name in LAZY:
        doc = load_document(text.encode(), name="m.yaml")
        assert doc._positions is None and not doc.findings
    _compare(text)


@pytest.mark.parametrize(
    "raw", [b"a: 1\nb: \xff\n", b"\xef\xbb\xbfa: 1\n", "a: \u00e9\n".encode("latin-1")]
)
def test_bytes_that_may_not_be_utf8(raw: bytes) -> None:
    fast = load_document(raw, name="m.yaml")
    assert fast.fatal == any(f.code == "Y007" for f in fast.findings)
    if not fast.fatal:
        _compare(fast.text)


def test_the_event_converter_reads_block_manifests_and_leaves_findings_alone() -> None:
    manifest = {
        "rra_version": "1.0",
        "tasks": [{"id": f"t{i}", "value": i / 3, "ok": i % 2 == 0, "n": None} for i in range(50)],
        "launchers": [{"argv": ["python", "-c", "print('x: y')"], "seeds": [0, 1]}],
    }
    text = yaml.safe_dump(manifest, sort_keys=False)
    assert document._from_events(text) == manifest
    assert document._from_events(yaml.safe_dump(manifest, default_flow_style=True)) == manifest
    for name in ("anchors and aliases", "duplicate keys", "two documents", "explicit tags"):
        assert document._from_events(HOSTILE[name]) is None, name
    assert document._from_events("a: " + "[" * 70 + "]" * 70 + "\n") is None
    assert document._from_events("- a\n") is None
    assert document._from_events("a: [1, 2\n") is None


def test_a_lazy_document_locates_without_computing_every_position() -> None:
    text = yaml.safe_dump({"a": [{"b": i} for i in range(100)], "c": {"d": "e"}})
    doc = load_document(text.encode(), name="m.yaml")
    assert doc._positions is None
    slow = _reference(text)
    assert doc.locate("/a/99/b", key=True) == slow.locate("/a/99/b", key=True) == (101, 3)
    assert doc.locate("/a/99/zz", key=True) == slow.locate("/a/99", key=True) == (101, 3)
    assert doc.locate("/c/d") == slow.locate("/c/d") == (103, 6)
    assert doc._positions is None


_KEYS = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x17F), max_size=5)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(min_codepoint=0x09, max_codepoint=0x2030), max_size=10)
)


def _nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """One more level of collections over ``inner`` (three levels in all, written out)."""
    return _SCALARS | st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4)


_DATA = _nest(_nest(_nest(_SCALARS)))


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(_KEYS, _DATA, min_size=1, max_size=5),
    style=st.sampled_from(["block", "flow", "json", "json-indented", "json-compact"]),
)
@example(data={"a/b": {"~": [[], {}]}}, style="block")
@example(data={"": {"0": [None, ""]}}, style="json-compact")
def test_generated_documents(data: dict[str, Any], style: str) -> None:
    if style == "block":
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    elif style == "flow":
        text = yaml.safe_dump(data, default_flow_style=True, allow_unicode=True, width=40)
    elif style == "json":
        text = json.dumps(data)
    elif style == "json-indented":
        text = json.dumps(data, indent=1)
    else:
        text = json.dumps(data, separators=(",", ":"))
    _compare(text)


@pytest.mark.parametrize("name", ["anchors and aliases", "spans with CRLF", "JSON compact"])
def test_a_located_document_is_freed_without_the_collector(name: str) -> None:
    """The locator holds no reference back to its document (no cycle for the collector)."""
    doc = load_document(HOSTILE[name].encode(), name="m.yaml")
    assert doc._positions is None
    ref = weakref.ref(doc)
    gc.disable()
    try:
        assert doc.locate("/b/k/zz", key=True) != (0, 0)
        del doc
        assert ref() is None
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "value",
    [
        "3",
        "-0",
        "012",
        "-0.5",
        "00.10",
        "63.4226",
        "1.",
        ".5",
        "+1",
        "1e3",
        "-1E-3",
        "0x1F",
        "0o17",
        "1_000",
        "1" * 400 + ".5",
        "9" * 4301,
        "-" + "9" * 4300,
        ".inf",
        "-.NaN",
        "1.5.2",
    ],
)
def test_plain_numbers_read_as_the_core_schema_reads_them(value: str) -> None:
    _compare(f"a: {value}\nb: [{value}, x]\n")
