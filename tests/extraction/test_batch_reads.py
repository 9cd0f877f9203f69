"""A held file (the auditor's descriptor of a file it has just hashed) read through a batch's
cache: for any extractor, transform and file, the value and the error are those of one
``extract_value`` without a cache, however often the batch reads it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk import ExtractionError, extract_value
from reprobridge_sdk.extract._opened import OpenedFile
from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import Transform

Outcome = tuple[str, Any]


def _held(path: Path) -> OpenedFile:
    """The file opened as the auditor hands it over: pinned, its hashed bytes held."""
    handle = safefs.open_regular(path, root=path.parent, allow_links=False)
    return OpenedFile(path, handle, resolve=True, pinned=True, data=path.read_bytes())


def _outcome(read: Any) -> Outcome:
    try:
        value = read()
    except ExtractionError as exc:
        return "error", (exc.reason, str(exc))
    return "value", repr(value)  # repr: -0.0 and 0.0, NaN and NaN told apart / equal


def _read(spec: dict[str, Any], path: Path, opened: OpenedFile, **kw: Any) -> Outcome:
    return _outcome(
        lambda: (
            extract_value(
                {**spec, "output": None, "file": None},
                log=path,
                files_base=path.parent,
                outputs={},
                context={},
                root=path.parent,
                opened=opened,
                **kw,
            ).mean
        )
    )


def _both(spec: dict[str, Any], path: Path, transform: Transform | None) -> tuple[Outcome, ...]:
    """One read without a cache, then two reads of the held file through one cache."""
    with _held(path) as opened:
        alone = _read(spec, path, opened, transform=transform)
    with _held(path) as opened:
        cache = ExtractionCache()
        first = _read(spec, path, opened, transform=transform, cache=cache)
        again = _read(spec, path, opened, transform=transform, cache=cache)
    return alone, first, again


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
def test_json_pointers_read_alike_alone_and_in_a_batch(
    tmp_path: Path, pointer: str, transform: Transform | None
) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(DOCUMENT))
    general, first, again = _both({"kind": "json", "pointer": pointer}, path, transform)
    assert first == again == general


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
def test_every_kind_and_failure_reads_alike_alone_and_in_a_batch(
    tmp_path: Path, spec: dict[str, Any], name: str, text: str, transform: Transform | None
) -> None:
    path = tmp_path / name
    path.write_text(text)
    general, first, again = _both(spec, path, transform)
    assert first == again == general


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


def test_a_failed_parse_fails_again_from_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text("{not json")
    with _held(path) as opened:
        cache = ExtractionCache()
        for _ in range(2):
            outcome = _read({"kind": "json", "pointer": "/a"}, path, opened, cache=cache)
            assert outcome[0] == "error" and outcome[1][0] == "decode"
        assert (cache.misses, cache.hits) == (1, 1)
