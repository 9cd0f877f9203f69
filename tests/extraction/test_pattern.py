"""Patterns with one meaning: the author dialect (RE2 subset of Python re) and schema patterns."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import jsonschema_rs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import Field, TypeAdapter, ValidationError

from reprobridge_sdk import ExtractionError
from reprobridge_sdk.extract.extraction import regex_matches
from reprobridge_sdk.extract.pattern import (
    PatternError,
    author_pattern,
    dialect_problem,
    schema_pattern,
)
from reprobridge_sdk.run.process import LandmarkPattern

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"acc=(\d+)", None),
        (r"(?i)^loss: (?P<v>[0-9.e+-]+)$", None),
        (r"\bepoch (\d+)/\d+\b", None),
        (r"[{,3}]", None),  # inside a class the text is literal to both
        (r"(a)\1", "dialect"),
        (r"(?P<x>a)(?P=x)", "dialect"),
        (r"(a)?(?(1)b|c)", "dialect"),
        (r"acc(?=uracy)", "dialect"),
        (r"(?<!val_)acc", "dialect"),
        (r"(?>a+)b", "dialect"),
        (r"a++", "dialect"),
        (r"acc\Z", "dialect"),
        (r"(?x) a c c", "dialect"),
        (r"(?a)\w", "dialect"),
        (r"a{,3}", "dialect"),
        (r"\\{,3}", "dialect"),  # an escaped backslash does not escape the brace
        (r"\u00e9", "dialect"),
        (r"[[:alpha:]]+", "dialect"),  # characters to Python, a POSIX class to RE2
        (r"(unclosed", "invalid"),
        (r"\pL", "invalid"),
        (r"*", "invalid"),
    ],
)
def test_dialect(pattern: str, reason: str | None) -> None:
    problem = dialect_problem(pattern)
    assert (problem[0] if problem else None) == reason
    if reason is None:
        assert author_pattern(pattern).pattern == pattern
    else:
        with pytest.raises(PatternError) as caught:
            author_pattern(pattern)
        assert caught.value.reason == reason


def test_classes_are_ascii(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("acc=\u0663\u0664\nacc=34\n", "utf-8")  # Arabic-Indic digits first
    assert regex_matches(log, r"acc=(\d+)", occurrence="all") == ("34",)


def test_catastrophic_backtracking_is_linear(tmp_path: Path) -> None:
    # Python's re takes exponential time on this line; RE2 answers in one pass.
    log = tmp_path / "log.txt"
    log.write_text("a" * 100_000 + "b\n", "utf-8")
    assert regex_matches(log, r"^(a+)+$", occurrence="all") == ()
    watcher_pattern = LandmarkPattern.compile("x", r"^(a+)+$")
    assert watcher_pattern.regex.search("a" * 100_000 + "b") is None


def test_dialect_error_carries_x004(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("acc acc 1\n", "utf-8")
    with pytest.raises(ExtractionError) as caught:
        regex_matches(log, r"(acc) \1 (\d)")
    assert caught.value.reason == "bad-regex"
    assert [item.code for item in caught.value.findings] == ["X004"]
    with pytest.raises(ExtractionError) as invalid:
        regex_matches(log, r"(acc")
    assert invalid.value.findings == ()


def test_landmark_outside_the_dialect_is_refused() -> None:
    with pytest.raises(PatternError) as caught:
        LandmarkPattern.compile("x", r"epoch(?=1)")
    assert caught.value.reason == "dialect"


# -- schema patterns: one meaning in RE2, ECMA-262 (jsonschema-rs) and Rust (pydantic) --------


def _schema_patterns() -> list[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            value = node.get("pattern")
            if isinstance(value, str):
                found.add(value)
            for key, item in node.items():
                if key == "patternProperties" and isinstance(item, dict):
                    found.update(item)
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in sorted((REPO / "schemas").glob("*.json")):
        walk(json.loads(path.read_text("utf-8")))
    return sorted(found)


SCHEMA_PATTERNS = _schema_patterns()
# Unicode-aware classes and "." mean different things in ECMA-262, Rust and Python.
_NOT_PORTABLE = re.compile(r"(?<!\\)(?:\\\\)*(?:\\[dDwWsSbB]|\.)")


def test_schema_patterns_were_found() -> None:
    assert len(SCHEMA_PATTERNS) >= 10


@pytest.mark.parametrize("pattern", SCHEMA_PATTERNS)
def test_schema_patterns_use_portable_classes(pattern: str) -> None:
    outside = re.sub(r"\[(?:\\.|[^\]\\])*\]", "[]", pattern)  # classes are explicit sets
    assert _NOT_PORTABLE.search(outside) is None


@cache
def _engines(pattern: str) -> tuple[Any, Any, Any]:
    ecma = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    rust = TypeAdapter(Annotated[str, Field(pattern=pattern)])
    return schema_pattern(pattern), ecma, rust


def _rust_accepts(adapter: Any, value: str) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


_PROBE_CHARS = st.sampled_from(list("a0-._/:@x\n\r \t\u0663\u00e9\u2028\ufeffA1fz~"))


@st.composite
def _probes(draw: st.DrawFn) -> tuple[str, str]:
    pattern = draw(st.sampled_from(SCHEMA_PATTERNS))
    base = draw(st.from_regex(pattern.replace("\\Z", "$"), fullmatch=False) | st.text(_PROBE_CHARS))
    edit = draw(st.sampled_from(["", "\n", "\r", " ", "\u0663", "\u2028"]))
    where = draw(st.sampled_from(["end", "start", "middle"]))
    if where == "end":
        value = base + edit
    elif where == "start":
        value = edit + base
    else:
        half = len(base) // 2
        value = base[:half] + edit + base[half:]
    return pattern, value


@settings(max_examples=300, deadline=None)
@given(_probes())
@example(("^[a-z0-9][a-z0-9._-]{0,63}$", "digits-logreg\n"))
@example(("^[0-9]+\\.[0-9]+(\\.[0-9]+)?$", "3.\u0661\u0661"))
def test_schema_patterns_mean_the_same_in_every_engine(probe: tuple[str, str]) -> None:
    pattern, value = probe
    ours, ecma, rust = _engines(pattern)
    expected = ours.search(value) is not None
    assert ecma.is_valid(value) is expected, (pattern, value)
    assert _rust_accepts(rust, value) is expected, (pattern, value)
