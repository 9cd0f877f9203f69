"""The extraction cache and ``extract_many``: one read per file version, same answers."""

from __future__ import annotations

import gc
import json
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk import ExtractionError, extract_value
from reprobridge_sdk.extract.extraction import ExtractionCache, extract_many


def _extract(spec: dict[str, object], path: Path, cache: ExtractionCache | None) -> float:
    return extract_value(
        spec, log=path, files_base=path.parent, outputs={"out": path}, context={}, cache=cache
    ).value


def test_one_parse_per_file_for_many_extractors(tmp_path: Path) -> None:
    out = tmp_path / "metrics.json"
    out.write_text(json.dumps({f"t{i}": i / 10 for i in range(30)}))
    log = tmp_path / "log.txt"
    log.write_text("".join(f"t{i} = {i}\n" for i in range(30)))
    specs = [{"kind": "json", "output": "out", "pointer": f"/t{i}"} for i in range(30)]
    specs += [{"kind": "regex", "pattern": r"^t3 = (\d+)$"}] * 2
    cache = ExtractionCache()
    results = extract_many(
        specs, log=log, files_base=tmp_path, outputs={"out": out}, context={}, cache=cache
    )
    values = [r.value for r in results if not isinstance(r, ExtractionError)]
    assert values == [i / 10 for i in range(30)] + [3.0, 3.0]
    assert (cache.misses, cache.hits) == (2, 30)  # one JSON parse, one scan of the log


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    out.write_text('{"a": 1}')
    cache = ExtractionCache()
    spec = {"kind": "json", "output": "out", "pointer": "/a"}
    assert _extract(spec, out, cache) == 1.0
    out.write_text('{"a": 22}')  # another size: another version
    assert _extract(spec, out, cache) == 22.0
    stat = out.stat()
    out.write_text('{"a": 33}')  # same size: the modification time tells them apart
    os.utime(out, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert _extract(spec, out, cache) == 33.0
    assert cache.misses == 3


def test_errors_are_replayed_and_returned_in_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cache = ExtractionCache()
    specs = [{"kind": "json", "output": "out", "pointer": "/a"}] * 2
    results = extract_many(
        [*specs, {"kind": "json", "output": "gone"}],
        log=None,
        files_base=tmp_path,
        outputs={"out": bad},
        context={},
        cache=cache,
    )
    assert [r.reason for r in results if isinstance(r, ExtractionError)] == [
        "decode",
        "decode",
        "missing-file",
    ]
    assert [r.source for r in results if isinstance(r, ExtractionError)] == [
        "output:out",
        "output:out",
        "output:gone",
    ]
    assert (cache.misses, cache.hits) == (1, 1)


def test_missing_file_with_a_cache(tmp_path: Path) -> None:
    cache = ExtractionCache()
    results = extract_many(
        [{"kind": "regex", "pattern": "x=(\\d+)"}],
        log=tmp_path / "nothing.txt",
        files_base=tmp_path,
        outputs={},
        context={},
        cache=cache,
    )
    assert [(r.reason, r.source) for r in results if isinstance(r, ExtractionError)] == [
        ("missing-file", "log")
    ]


def test_the_cache_keeps_at_most_max_files(tmp_path: Path) -> None:
    cache = ExtractionCache(max_files=2)
    spec = {"kind": "json", "output": "out", "pointer": "/a"}
    paths = []
    for i in range(3):
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps({"a": i}))
        paths.append(path)
        assert _extract(spec, path, cache) == i
    assert _extract(spec, paths[0], cache) == 0  # dropped, parsed again
    assert (cache.misses, cache.hits) == (4, 0)


_CELLS = st.integers(min_value=-50, max_value=50)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from("abc"), _CELLS), min_size=0, max_size=6),
    row=st.integers(min_value=-8, max_value=8),
    key=st.sampled_from("abcd"),
)
def test_property_cached_csv_equals_streamed(
    rows: list[tuple[str, int]], row: int, key: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        path.write_text("name,score\n" + "".join(f"{n},{v}\n" for n, v in rows))
        cache = ExtractionCache()
        for spec in (
            {"kind": "csv", "output": "out", "column": "score", "row": row},
            {"kind": "csv", "output": "out", "column": "score", "where": {"name": key}},
            {"kind": "csv", "output": "out", "column": "nope"},
        ):
            outcomes = []
            for shared in (None, cache, cache):
                try:
                    outcomes.append(("ok", _extract(spec, path, shared)))
                except ExtractionError as exc:
                    outcomes.append((exc.reason, exc.message))
            assert outcomes[0] == outcomes[1] == outcomes[2]


def _open_files() -> int:
    """The process's open descriptors, after a collection: a file an earlier test left to
    the garbage collector (a cache in a reference cycle) is closed first, not while this
    test counts (it made the count drop mid-test, in some test orders)."""
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


def test_a_batch_keeps_few_files_open_and_rereads_a_replaced_one(tmp_path: Path) -> None:
    outs = []
    for index in range(40):
        out = tmp_path / f"m{index}.json"
        out.write_text(json.dumps({"acc": index}))
        outs.append(out)
    before = _open_files()
    cache = ExtractionCache()
    spec = {"kind": "json", "output": "out", "pointer": "/acc"}
    for index, out in enumerate(outs):
        assert _extract(spec, out, cache) == index
    assert _open_files() - before <= 16  # the least recently used are closed
    replaced = tmp_path / "new.json"
    replaced.write_text(json.dumps({"acc": 99}))
    replaced.replace(outs[-1])  # a new version under the same name: opened and read again
    assert _extract(spec, outs[-1], cache) == 99
    cache.close()
    assert _open_files() == before
    assert _extract(spec, outs[0], cache) == 0  # still usable after close()
    cache.close()
    results = extract_many(
        [spec], log=None, files_base=tmp_path, outputs={"out": outs[1]}, context={}
    )
    assert [r.value for r in results if not isinstance(r, ExtractionError)] == [1]
    assert _open_files() == before  # a batch's own cache closes its files


def test_a_dropped_cache_closes_its_files_without_a_collection(tmp_path: Path) -> None:
    """No reference cycle keeps a cache alive: dropping it closes its files at once, also
    while the collector is paused (as the audit pauses it)."""
    out = tmp_path / "m.json"
    out.write_text(json.dumps({"acc": 1}))
    before = _open_files()
    enabled = gc.isenabled()
    gc.disable()
    try:
        cache = ExtractionCache()
        assert _extract({"kind": "json", "output": "out", "pointer": "/acc"}, out, cache) == 1
        assert len(os.listdir("/proc/self/fd")) > before
        del cache
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        if enabled:
            gc.enable()
