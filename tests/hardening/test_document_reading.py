"""The one reader of document files (``io/reading.py``) and the readers that stand on it."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from reprobridge_sdk.authoring.batch import load_batch
from reprobridge_sdk.bench.judge import load_results
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.io import reading
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.locks.lockfile import check_lock

_PARSERS = {("tomllib", "loads"), ("safefs", "load_json"), ("safefs", "loads_json")}
PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"


def _problem(call: object) -> reading.Unreadable:
    with pytest.raises(reading.Unreadable) as caught:
        call()  # type: ignore[operator]
    return caught.value


def test_each_problem_of_a_file_is_named_and_located(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    assert _problem(lambda: reading.read_json(path)).problem == "missing"
    os.mkfifo(tmp_path / "fifo")
    assert _problem(lambda: reading.read_json(tmp_path / "fifo")).problem == "unsafe"
    path.write_bytes(b"{}" + b" " * 100)
    too_large = _problem(lambda: reading.read_json(path, max_bytes=10))
    assert (too_large.problem, too_large.size) == ("too-large", 102)
    bad = _problem(lambda: reading.decode(b'a = 1\nb = "\xc3\xa9\xff"\n'))
    assert (bad.problem, bad.line, bad.col, bad.offset) == ("encoding", 2, 7, 13)
    assert bad.message == "byte 0xff at offset 13 is not valid UTF-8"
    syntax = _problem(lambda: reading.parse_json(b'{\n  "a": }'))
    assert (syntax.problem, syntax.line, syntax.col, syntax.malformed) == ("syntax", 2, 8, True)
    deep = _problem(lambda: reading.parse_json(b"[" * 300 + b"]" * 300, name="x.json"))
    assert (deep.problem, deep.message, deep.malformed) == (
        "too-deep",
        "x.json nests deeper than 256 levels",
        False,
    )


def test_a_repeated_json_key_is_refused_only_when_asked() -> None:
    raw = b'{"a": {"k": 1, "k": 2}}'
    assert reading.parse_json(raw) == {"a": {"k": 2}}
    repeated = _problem(lambda: reading.parse_json(raw, unique_keys=True))
    assert (repeated.problem, repeated.message) == ("duplicate-key", "duplicate key 'k'")


def test_toml_positions_depth_and_the_end_of_the_text() -> None:
    assert reading.parse_toml(reading.decode("\ufeffa = 1\n".encode())) == {"a": 1}
    twice = _problem(lambda: reading.parse_toml("a = 1\na = 2\n"))
    assert (twice.problem, twice.line, twice.col) == ("syntax", 2, 6)
    assert "(at" not in twice.message
    cut = _problem(lambda: reading.parse_toml('a = 1\nb = "open'))
    assert (cut.problem, cut.line) == ("syntax", 2)
    assert _problem(lambda: reading.parse_toml("a = " + "[" * 80 + "]" * 80)).problem == "too-deep"
    assert _problem(lambda: reading.parse_toml("a = " + "[" * 5000 + "]" * 5000)).problem == (
        "too-deep"
    )


def test_the_readers_keep_their_codes_on_hostile_files(tmp_path: Path) -> None:
    """Every reader maps the owner's problems to its own code, never a traceback."""
    os.mkfifo(tmp_path / "fifo.toml")
    with pytest.raises(UsageError) as caught:
        load_batch(tmp_path / "fifo.toml")  # read through the safe file layer: no hang
    assert caught.value.findings[0].code == "A090"
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(UsageError) as caught:
        load_batch(deep)
    assert caught.value.findings[0].code == "A090"
    results = tmp_path / "results.json"
    results.write_text('{"bench_results_version": "1.0", "results": [], "results": []}')
    with pytest.raises(ArtifactError) as judged:
        load_results(results)
    assert judged.value.findings[0].code == "A072"
    assert "duplicate key 'results'" in judged.value.message
    lock = tmp_path / "pylock.toml"
    lock.write_bytes(b'lock-version = "1.0"\n\xff\n')
    assert [(f.code, f.line) for f in check_lock(lock)] == [("L003", 2)]
    manifest = tmp_path / "rra.yaml"
    manifest.write_bytes(b"a: 1\nb: \xff\n")
    found = load_document(manifest).findings
    assert [(f.code, f.line, f.col) for f in found] == [("Y007", 2, 4)]


def test_no_other_module_parses_json_or_toml_files_of_users() -> None:
    """The readers of documents read through the owner: no module outside ``io/`` calls
    ``tomllib.loads`` or the safe file layer's JSON functions (``agent/`` excepted, whose
    owner is another change)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("io/", "agent/")):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                pair = (node.value.id, node.attr)
                if pair in _PARSERS:
                    offenders.append(f"{rel}:{node.lineno}")
    assert offenders == [], offenders


def test_a_json_results_file_round_trips_through_the_owner(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"a": [1, 2]}))
    assert reading.read_json(path, unique_keys=True) == {"a": [1, 2]}
