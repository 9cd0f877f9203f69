"""The process's pattern cache: each author pattern is checked and compiled once.

A manifest of thousands of launchers used to push its own patterns out of small caches
between one layer and the next (each pattern dialect-checked about twice, compiled about five
times). The counts here are the cache's own statistics (``PATTERNS.info()``), taken around a
real validation and a real audit of an artifact the benchmarks generate, with the cache's
capacity set far below the artifact's patterns, as the old caches were.
"""

from __future__ import annotations

import json
import random
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobridge_sdk.audit import audit
from reprobridge_sdk.extract._facts import line_safe, required_literal
from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.extract.pattern import (
    PATTERNS,
    PatternCache,
    PatternError,
    author_pattern,
    dialect_problem,
)
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.validation import validate_artifact
from reprobridge_sdk.validation.replay import check_replay

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _synthetic import grow_example  # noqa: E402


@pytest.fixture
def small_cache() -> Iterator[None]:
    """The process's cache, emptied, with room for 4 patterns until a validation sizes it."""
    capacity = PATTERNS.capacity
    PATTERNS.clear()
    PATTERNS.capacity = 4
    try:
        yield
    finally:
        PATTERNS.clear()
        PATTERNS.capacity = capacity


def _patterns(root: Path) -> set[str]:
    data = json.loads((root / "rra.yaml").read_text("utf-8"))
    found = set()
    for launcher in data["launchers"]:
        found |= {landmark["pattern"] for landmark in launcher.get("landmarks", [])}
        found |= {
            m["extract"]["pattern"]
            for m in launcher["measurements"]
            if m["extract"]["kind"] == "regex"
        }
    return found


def test_validation_and_audit_check_and_compile_each_pattern_once(
    tmp_path: Path, small_cache: None
) -> None:
    grown = grow_example(tmp_path / "a", 60, random.Random(1))
    distinct = _patterns(grown.root)
    assert len(distinct) == 20 + 6  # one regex a scored launcher, six shared landmarks
    findings = validate_artifact("a", grown.root, grown.root / "rra.yaml")
    assert [f.code for f in findings] == []
    info = PATTERNS.info()
    assert info.capacity >= len(distinct)  # sized to the artifact by the validation
    assert info.checks == len(distinct)
    # One RE2 program per pattern: each extractor's literal ("logreg_accuracy_pN=") finds its
    # sample's line, so replay needs no chunk-search program. Parsed once, by the check: the
    # scan's literal and line safety come from the check's parse tree.
    assert info.compiles == len(distinct)
    assert info.parses == len(distinct)
    after_validation = info

    report = audit(grown.root)
    assert {t.id: t.attempts[0].verdict for t in report.tasks} == grown.verdicts
    info = PATTERNS.info()
    assert info.checks == after_validation.checks  # the audit checked nothing again
    assert info.compiles == after_validation.compiles  # and compiled nothing again
    assert info.parses == after_validation.parses  # nor parsed
    assert info.hits > after_validation.hits


def test_a_pattern_outside_the_dialect_is_checked_once_and_refused_each_time() -> None:
    cache = PatternCache()
    entry = cache.entry("(a)\\1")
    assert entry.problem() is not None and entry.problem() == cache.entry("(a)\\1").problem()
    with pytest.raises(PatternError) as caught:
        entry.compiled(multiline=False)
    assert caught.value.reason == "dialect"
    with pytest.raises(PatternError):
        entry.compiled(multiline=True)
    assert cache.info()[:4] == (1, 1, 1, 0)  # hits, misses, checks, compiles
    assert cache.info().parses == 0  # a backreference is named on the text, not parsed


def test_an_invalid_pattern_is_invalid_not_a_dialect_problem() -> None:
    cache = PatternCache()
    problem = cache.entry("(unclosed").problem()
    assert problem is not None and problem[0] == "invalid"
    assert cache.entry("(unclosed").problem() is problem
    assert cache.info().checks == 1 and cache.info().compiles == 0


def test_the_cache_evicts_the_least_recently_used_beyond_its_capacity() -> None:
    cache = PatternCache(capacity=2)
    for pattern in ("a", "b", "a", "c"):
        cache.entry(pattern).problem()
    assert cache.info().size == 2
    cache.entry("a")  # still there: used after b
    assert cache.info().hits == 2
    cache.entry("b")  # evicted: made again
    assert cache.info().misses == 4
    cache.fit(10)
    assert cache.info().capacity == 74
    cache.fit(1)  # never shrinks
    assert cache.info().capacity == 74


def test_the_module_functions_answer_from_the_process_cache(small_cache: None) -> None:
    pattern = "^loss=(?P<value>[0-9.]+)$"
    regex = author_pattern(pattern)
    assert author_pattern(pattern) is regex
    assert author_pattern(pattern, multiline=True) is author_pattern(pattern, multiline=True)
    assert dialect_problem(pattern) is None
    assert required_literal(pattern) == "loss="
    assert line_safe(pattern) is True
    assert required_literal(pattern) == "loss="
    info = PATTERNS.info()
    assert (info.misses, info.checks, info.compiles, info.parses) == (1, 1, 2, 1)
    with pytest.raises(PatternError):
        author_pattern("(?<=x)y")
    assert dialect_problem("(?<=x)y") is not None
    assert PATTERNS.info().checks == 2
    # refused before it was parsed (a lookbehind is named on the text): parsed once, when a
    # scan's fact is first asked of it
    assert PATTERNS.info().parses == 1
    assert line_safe("(?<=x)y") is False and line_safe("(?<=x)y") is False
    assert required_literal("(?<=x)y") == "y"
    assert PATTERNS.info().parses == 2
    # a pattern that does not parse has no literal and is not line-safe; still one parse
    assert required_literal("(unclosed") is None and line_safe("(unclosed") is False
    assert PATTERNS.info().parses == 3


@pytest.mark.parametrize(
    "pattern",
    [
        "^loss=(?P<value>[0-9.]+)$",
        "(?i)Accuracy: ([0-9.]+)",
        "(?s)a.b",
        "x\\s+(\\d+)",
        "(?:top1|top5)=([0-9])",
        "[^a]+(b)",
        "(?<=x)y",
        "(a)\\1",
        "[[:alpha:]]",
        "(unclosed",
    ],
)
def test_the_facts_from_the_checks_tree_equal_a_fresh_parse(
    pattern: str, small_cache: None
) -> None:
    """A scan's facts of a pattern are the same whether its dialect check ran first (its tree
    reused) or not: the tree is not changed by the check."""
    import re._parser as parser

    from reprobridge_sdk.extract._facts import _line_safe, _required_literal

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "[[:alpha:]]": a nested set
        try:
            fresh = parser.parse(pattern)
        except re.error:
            fresh = None
    expected = (_required_literal(fresh, False), _required_literal(fresh, True), _line_safe(fresh))
    dialect_problem(pattern)  # the check first: its tree is kept
    got = (required_literal(pattern), required_literal(pattern, fold=True), line_safe(pattern))
    assert got == expected
    PATTERNS.clear()
    later = (line_safe(pattern), required_literal(pattern, fold=True), required_literal(pattern))
    assert later == expected[::-1]


def test_a_scan_compiles_the_chunk_program_only_when_it_searches_a_region(
    tmp_path: Path, small_cache: None
) -> None:
    """The chunk-search program is made on first use: a sparse literal pattern never needs
    it; a literal on every line hands over to the chunk search, which compiles it once."""
    from reprobridge_sdk.extract import _linescan

    sparse = tmp_path / "sparse.log"
    sparse.write_text("".join(f"step {i}\n" for i in range(200)) + "loss=0.5\n")
    rx = author_pattern("^loss=([0-9.]+)$")
    assert _linescan.scan(sparse, rx, 1, "last") == ("0.5",)
    assert _linescan.scan(sparse, rx, 1, "all") == ("0.5",)
    assert PATTERNS.info().compiles == 1
    dense = tmp_path / "dense.log"
    dense.write_text("".join(f"loss={i}\n" for i in range(5000)))
    expected = tuple(str(i) for i in range(5000))
    assert _linescan.scan(dense, rx, 1, "all", 4096) == expected
    assert _linescan.scan(dense, rx, 1, "all", 4096, strategy="line") == expected
    assert _linescan.scan(dense, rx, 1, "last", 4096) == ("4999",)
    assert PATTERNS.info().compiles == 2  # the chunk program, once


def test_replay_reads_and_parses_each_sample_file_once(tmp_path: Path) -> None:
    grown = grow_example(tmp_path / "a", 30, random.Random(2))
    doc = load_document(grown.root / "rra.yaml", name="a/rra.yaml", root=grown.root)
    cache = ExtractionCache()
    try:
        assert check_replay(doc, grown.root, cache=cache) == []
        # 11 samples (10 scored, 1 smoke), each with a log scanned by one regex and a
        # metrics file parsed once: two misses a sample; the second JSON pointer hits.
        assert (cache.misses, cache.hits) == (22, 11)
    finally:
        cache.close()
