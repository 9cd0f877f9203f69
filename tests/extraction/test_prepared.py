"""``prepare`` and ``read_prepared`` (the auditor's hot path): for any extractor, transform and
file, the value and the error are those of ``extract_value(...).mean`` given the same opened
file and cache, however often the prepared extractor is read."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk.extract._documents import pointer_tokens
from reprobridge_sdk.extract._opened import NOT_PARSED, OpenedFile
from reprobridge_sdk.extract.extraction import (
    ExtractionCache,
    ExtractionError,
    Prepared,
    extract_value,
    prepare,
    read_prepared,
)
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import Transform
from reprobridge_sdk.model.launcher import JsonExtractor

Outcome = tuple[str, Any]


def _held(path: Path) -> OpenedFile:
    """The file opened as the auditor hands it over: pinned, its hashed bytes held."""
    handle = safefs.open_regular(path, root=path.parent, allow_links=False)
    return OpenedFile(path, handle, resolve=True, pinned=True, data=path.read_bytes())


def _read_once(prepared: Prepared, path: Path) -> Outcome:
    with _held(path) as opened:
        cache = ExtractionCache()
        return _outcome(lambda: read_prepared(prepared, opened, source="log", cache=cache))


def _outcome(read: Any) -> Outcome:
    try:
        value = read()
    except ExtractionError as exc:
        return "error", (exc.reason, str(exc))
    return "value", repr(value)  # repr: -0.0 and 0.0, NaN and NaN told apart / equal


def _both(spec: dict[str, Any], path: Path, transform: Transform | None) -> tuple[Outcome, ...]:
    """The outcome of extract_value and of read_prepared, each with a fresh cache and the
    file opened once, and read_prepared's second reading (the cache's entry)."""
    with _held(path) as opened:
        cache = ExtractionCache()
        general = _outcome(
            lambda: (
                extract_value(
                    {**spec, "output": None, "file": None},
                    log=path,
                    files_base=path.parent,
                    outputs={},
                    context={},
                    cache=cache,
                    root=path.parent,
                    transform=transform,
                    opened=opened,
                ).mean
            )
        )
    with _held(path) as opened:
        cache = ExtractionCache()
        prepared = prepare({**spec, "output": None, "file": None}, transform)
        assert prepared is not None
        first = _outcome(lambda: read_prepared(prepared, opened, source="log", cache=cache))
        again = _outcome(lambda: read_prepared(prepared, opened, source="log", cache=cache))
    return general, first, again


DOCUMENT = {
    "acc": 0.75,
    "zero": -0.0,
    "int": 7,
    "huge": 1e308,
    "text": "0.5",
    "pct": "95%",
    "flag": True,
    "none": None,
    "list": [1.5, {"x": 2.5}],
    "a/b": 3.25,
    "m~n": 4.5,
    "": {"": 5.5},
    "nested": {"deep": {"er": 6.25}},
}

POINTERS = [
    "/acc",
    "/zero",
    "/int",
    "/huge",
    "/text",
    "/pct",
    "/flag",
    "/none",
    "/list",
    "/list/0",
    "/list/1/x",
    "/list/01",
    "/list/9",
    "/list/-1",
    "/a~1b",
    "/m~0n",
    "/",
    "//",
    "/nested/deep/er",
    "/nested/deep/er/more",
    "/nested/missing",
    "/missing",
    "",
    "acc",
    "/acc/0",
]

ALL = {"kind": "regex", "pattern": r"acc=(\S+)", "occurrence": "all"}
TRANSFORMS = [None, Transform(scale=100.0), Transform(scale=-1.0, offset=0.0, round=2)]


@pytest.mark.parametrize("pointer", POINTERS)
@pytest.mark.parametrize("transform", TRANSFORMS, ids=["none", "scale", "round"])
def test_json_pointers_give_the_value_or_error_of_extract_value(
    tmp_path: Path, pointer: str, transform: Transform | None
) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(DOCUMENT))
    general, first, again = _both({"kind": "json", "pointer": pointer}, path, transform)
    assert first == again == general


@pytest.mark.parametrize("pointer", [p for p in POINTERS if p == "" or p.startswith("/")])
def test_a_typed_json_extractor_reads_as_its_mapping(tmp_path: Path, pointer: str) -> None:
    """A model's pointer is read off its field (no dump): what its mapping says."""
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(DOCUMENT))
    model = JsonExtractor(kind="json", output="metrics", pointer=pointer)
    typed, plain = prepare(model), prepare({**model.model_dump(), "output": None})
    assert typed is not None and plain is not None
    assert (typed.pointer, typed.tokens, typed.where) == (plain.pointer, plain.tokens, plain.where)
    outcomes = [_read_once(prepared, path) for prepared in (typed, plain)]
    assert outcomes[0] == outcomes[1]


def test_minus_zero_is_the_mean_of_one_value(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text('{"z": -0.0, "i": -0}')
    for pointer in ("/z", "/i"):
        general, first, _ = _both({"kind": "json", "pointer": pointer}, path, None)
        assert first == general == ("value", "0.0")


@pytest.mark.parametrize(
    ("spec", "name", "text"),
    [
        ({"kind": "json", "pointer": "/a"}, "bad.json", "{not json"),
        ({"kind": "json", "pointer": "/a"}, "deep.json", "[" * 300 + "]" * 300),
        ({"kind": "regex", "pattern": r"acc=(\S+)"}, "log.txt", "acc=0.5\nacc=0.625\n"),
        (
            {"kind": "regex", "pattern": r"acc=(\S+)", "occurrence": "all"},
            "l.txt",
            "acc=1\nacc=2\n",
        ),
        ({"kind": "regex", "pattern": r"acc=(\S+)", "occurrence": "all"}, "l.txt", "acc=-0\n"),
        ({"kind": "regex", "pattern": r"nothing=(\S+)"}, "log.txt", "acc=0.5\n"),
        ({"kind": "regex", "pattern": r"acc=(\S+"}, "log.txt", "acc=0.5\n"),
        ({"kind": "csv", "column": "acc", "row": -1}, "m.csv", "acc\n0.1\n0.25\n"),
        ({"kind": "csv", "column": "loss", "row": 0}, "m.csv", "acc\n0.1\n"),
        ({"kind": "yaml", "key": "acc"}, "m.yaml", "acc: 0.125\n"),
        ({"kind": "yaml", "key": "acc"}, "m.yaml", "acc: [\n"),
        ({"kind": "toml", "key": "acc"}, "m.toml", "acc = 1\n"),
    ],
)
@pytest.mark.parametrize("transform", TRANSFORMS, ids=["none", "scale", "round"])
def test_other_kinds_and_failures_are_those_of_extract_value(
    tmp_path: Path, spec: dict[str, Any], name: str, text: str, transform: Transform | None
) -> None:
    path = tmp_path / name
    path.write_text(text)
    general, first, again = _both(spec, path, transform)
    assert first == again == general


def test_a_plugin_kind_is_not_prepared() -> None:
    assert prepare({"kind": "x-custom", "output": None, "file": None}) is None


_KEYS = st.text(alphabet="ab/~01", max_size=3)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet="0123456789.e-+nafi ", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(document=_JSON, pointer=st.lists(_KEYS, max_size=3).map(lambda ks: "/".join(["", *ks])))
def test_property_any_document_and_pointer(document: Any, pointer: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "doc.json"
        path.write_text(json.dumps(document))
        general, first, again = _both({"kind": "json", "pointer": pointer}, path, None)
    assert first == again == general


@given(pointer=st.text(alphabet="ab/~01", max_size=8))
def test_pointer_tokens_are_none_only_for_a_pointer_without_a_leading_slash(pointer: str) -> None:
    tokens = pointer_tokens(pointer)
    if pointer and not pointer.startswith("/"):
        assert tokens is None
    else:
        assert tokens is not None
        assert len(tokens) == pointer.count("/")


def test_a_pinned_file_keeps_its_document_an_unpinned_one_asks_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text('{"a": 1.5, "b": 2.5}')
    first, second = (
        prepare({"kind": "json", "pointer": "/a"}),
        prepare({"kind": "json", "pointer": "/b"}),
    )
    assert first is not None and second is not None
    with _held(path) as opened:
        cache = ExtractionCache()
        assert read_prepared(first, opened, source="log", cache=cache) == 1.5
        assert (cache.misses, cache.hits) == (1, 0)
        assert read_prepared(second, opened, source="log", cache=cache) == 2.5
        assert (cache.misses, cache.hits) == (1, 0)  # the file's own document
        assert opened.document == {"a": 1.5, "b": 2.5}
    handle = safefs.open_regular(path, root=tmp_path)
    with OpenedFile(path, handle, resolve=True) as unpinned:  # its version may change
        cache = ExtractionCache()
        for prepared in (first, second, first):
            read_prepared(prepared, unpinned, source="log", cache=cache)
        assert (cache.misses, cache.hits) == (1, 2)
        assert unpinned.document is NOT_PARSED


def test_a_failed_parse_is_not_kept_and_fails_again(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text("{not json")
    prepared = prepare({"kind": "json", "pointer": "/a"})
    assert prepared is not None
    with _held(path) as opened:
        cache = ExtractionCache()
        for _ in range(2):
            with pytest.raises(ExtractionError) as caught:
                read_prepared(prepared, opened, source="log", cache=cache)
            assert (caught.value.reason, caught.value.source) == ("decode", "log")
        assert opened.document is NOT_PARSED
