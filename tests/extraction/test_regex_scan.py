"""Regex extraction: first/last/all line scans, the reverse scan and the literal pre-filter."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk import ExtractionError
from reprobridge_sdk.extract import _linescan
from reprobridge_sdk.extract.extraction import line_safe, regex_matches, required_literal
from reprobridge_sdk.extract.pattern import PATTERNS, author_pattern


def _naive(data: bytes, pattern: str, group: int | str) -> list[str]:
    """Reference: split the whole file into lines and search each one (same engine, RE2)."""
    rx = author_pattern(pattern)
    text = data.decode("utf-8", "replace")
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()
    found = []
    for line in lines:
        match = rx.search(line.removesuffix("\r"))
        if match is not None and match.group(group) is not None:
            found.append(match.group(group))
    return found


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "log.txt"
    path.write_bytes(data)
    return path


LOG = b"start\nacc=0.10\nnoise acc=x\r\nacc=0.20\r\nacc=0.30 end\ntail\n"


@pytest.mark.parametrize(
    ("occurrence", "expected"),
    [("first", ("0.10",)), ("last", ("0.30",)), ("all", ("0.10", "0.20", "0.30"))],
)
def test_occurrences(tmp_path: Path, occurrence: str, expected: tuple[str, ...]) -> None:
    path = _write(tmp_path, LOG)
    assert regex_matches(path, r"acc=([\d.]+)", occurrence=occurrence) == expected


def test_named_group_and_crlf_anchor(tmp_path: Path) -> None:
    path = _write(tmp_path, b"x 1\r\nscore 7\r\nscore 8\r\n")
    assert regex_matches(path, r"^score (?P<v>\d+)$", group="v") == ("8",)
    assert regex_matches(path, r"^score (?P<v>\d+)$", group="v", occurrence="first") == ("7",)


def test_last_line_without_newline(tmp_path: Path) -> None:
    path = _write(tmp_path, b"acc=1\nacc=2")
    assert regex_matches(path, r"acc=(\d)", chunk_size=1) == ("2",)
    assert regex_matches(path, r"acc=(\d)", occurrence="all", chunk_size=3) == ("1", "2")


def test_non_utf8_log_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, b"\xff\xfe garbage \x80\nacc=\xc3(0.5\n\xe9t\xe9 acc=0.7\n")
    assert regex_matches(path, r"acc=([\d.]+)", occurrence="all") == ("0.7",)
    assert regex_matches(path, r"acc=\W*([\d.]+)", occurrence="first") == ("0.5",)


def test_empty_and_nothing_matches(tmp_path: Path) -> None:
    assert regex_matches(_write(tmp_path, b""), r"acc=(\d)") == ()
    path = _write(tmp_path, b"loss=1\n" * 1000)
    assert regex_matches(path, r"acc=(\d)", chunk_size=64) == ()
    assert regex_matches(path, r"(\d)x", occurrence="all", chunk_size=64) == ()


def test_group_that_did_not_take_part_skips_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b"a=1\nb=2\n")
    assert regex_matches(path, r"a=(\d)|b=(\d)", group=1) == ("1",)


@pytest.mark.parametrize(
    ("pattern", "group"), [("(unclosed", 1), (r"acc=(\d)", 2), (r"acc=(\d)", "name")]
)
def test_bad_regex(tmp_path: Path, pattern: str, group: int | str) -> None:
    with pytest.raises(ExtractionError) as info:
        regex_matches(_write(tmp_path, LOG), pattern, group=group)
    assert info.value.reason == "bad-regex"


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"acc=(\d+)", "acc="),
        (r"^eval (?P<v>[\d.]+) done", "eval "),
        (r"(?i)acc (\d)", None),
        (r"\d+", None),
        (r"(?:top1|top5)=(\d)", "top"),
        (r"a(?i:b)c", "a"),
        (r"(?x) acc = (\d)", "acc="),
    ],
)
def test_required_literal(pattern: str, literal: str | None) -> None:
    assert required_literal(pattern) == literal


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"(?i)ACCURACY: (\d+)", "accuracy: "),
        (r"(?i)LOSS=(\d)", "lo"),
        (r"(?i)^key=(\d)", "ey="),
        (r"(?i)Ünits=(\d)", "n"),
        (r"acc=(\d)", "acc="),
    ],
)
def test_required_literal_folded(pattern: str, literal: str | None) -> None:
    assert required_literal(pattern, fold=True) == literal


def test_long_line_is_matched_in_segments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reprobridge_sdk.extract import extraction

    monkeypatch.setattr(extraction, "MAX_LINE", 64)
    data = b"acc=1\n" + b"x" * 500 + b"\nacc=2\n" + b"y" * 500 + b"\n" + b"z" * 300
    path = _write(tmp_path, data)
    for chunk in (7, 16, 100):
        assert regex_matches(path, r"acc=(\d)", chunk_size=chunk) == ("2",)
        assert regex_matches(path, r"acc=(\d)", occurrence="all", chunk_size=chunk) == ("1", "2")


_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "acc=1",
                "acc=22",
                "acc=",
                "xacc=3y",
                "",
                "noise",
                "acc=4\r",
                "é acc=5",
                "ACC=6 acc=7",
                "Lo\u017fs=8",
                "LOSS=9",
                "\u212aey=3",
                "key=4",
            ]
        ),
        st.binary(max_size=12).map(lambda b: b.decode("latin-1")),
    ),
    max_size=40,
)
_PATTERNS = [
    r"acc=(\d+)",
    r"(\d)",
    r"^acc=(\d+)$",
    r"(?i)ACC=(\d)",
    r"(?i)^acc=(\d*)$",
    r"(x?)",
    r"\b(\w+)\b$",
    r"[^=]*=(\d)",
    r"acc=(\d)|(y)",
    r"(\d)(\s|$)",
    r"(?i)LOSS=(\d)",
    r"(?i)^key=(\d)",
]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=_LINES,
    trailing=st.booleans(),
    chunk=st.integers(min_value=1, max_value=64),
    pattern=st.sampled_from(_PATTERNS),
)
def test_reverse_scan_equals_forward_naive(
    tmp_path: Path, lines: list[str], trailing: bool, chunk: int, pattern: str
) -> None:
    data = "\n".join(lines).encode("utf-8", "surrogateescape")
    if trailing:
        data += b"\n"
    path = tmp_path / "prop.log"
    path.write_bytes(data)
    naive = _naive(data, pattern, 1)
    rx = author_pattern(pattern)
    strategies: list[str | None] = [None, "line"]
    if required_literal(pattern):
        strategies.append("literal")
    if line_safe(pattern):
        strategies.append("chunk")
    for strategy in strategies:
        for occurrence, expected in (
            ("last", naive[-1:]),
            ("all", naive),
            ("first", naive[:1]),
        ):
            got = _linescan.scan(path, rx, 1, occurrence, chunk, strategy=strategy)
            assert got == tuple(expected), (strategy, occurrence)
    assert regex_matches(path, pattern, occurrence="last", chunk_size=chunk) == tuple(naive[-1:])
    # The adaptive switch from the literal pre-filter to a full scan, at its first hit.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_linescan, "_DENSE", 1 << 40)
        patch.setattr(_linescan, "_SLACK", 0)
        patch.setattr(_linescan, "SMALL_FILE", -1)  # a small file is scanned line by line
        for occurrence, expected in (("last", naive[-1:]), ("all", naive)):
            got = _linescan.scan(path, rx, 1, occurrence, chunk)
            assert got == tuple(expected), ("adaptive", occurrence)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=_LINES,
    chunk=st.integers(min_value=1, max_value=64),
    window=st.integers(min_value=1, max_value=40),
    max_line=st.integers(min_value=4, max_value=40),
    pattern=st.sampled_from([p for p in _PATTERNS if required_literal(p)]),
)
def test_the_mapped_literal_search_equals_the_line_scan(  # noqa: PLR0917 - drawn by hypothesis
    tmp_path: Path, lines: list[str], chunk: int, window: int, max_line: int, pattern: str
) -> None:
    """'all' with a literal searches the mapped file window by window and hands long lines to
    the chunked reader: with tiny windows and a tiny MAX_LINE it still gives the line scan's
    answer (the line scan cuts long lines into the same segments)."""
    path = tmp_path / "mapped.log"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    rx = author_pattern(pattern)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_linescan, "_WINDOW", window)
        patch.setattr(_linescan, "MAX_LINE", max_line)
        patch.setattr(_linescan, "SMALL_FILE", -1)  # a small file is scanned line by line
        expected = _linescan.scan(path, rx, 1, "all", chunk, strategy="line")
        assert _linescan.scan(path, rx, 1, "all", chunk, strategy="literal") == expected
        assert _linescan.scan(path, rx, 1, "all", chunk) == expected


@pytest.mark.parametrize(
    ("pattern", "safe"),
    [
        (r"acc=(\d+)", True),
        (r"(?i)^acc=([0-9.]+)$", True),
        (r"\b(\w+)\b", True),
        (r"x.*(\d)", True),
        (r"[^\n]*(\d)", True),
        (r"acc=\s*(\d)", False),
        (r"[^=]*=(\d)", False),
        (r"(?s)x.*(\d)", False),
        (r"x(?s:.)(\d)", False),
        (r"\A(\d)", False),
        (r"(\d)\Z", False),
        (r"(?<=a)(\d)", False),
        (r"a\n(\d)", False),
        (r"(\D)", False),
        (r"(\W)", False),
        (r"([\x00-\x7f])", False),
        (r"(unclosed", False),
    ],
)
def test_line_safe(pattern: str, safe: bool) -> None:
    assert line_safe(pattern) is safe


@pytest.mark.parametrize("strategy", [None, "line", "chunk"])
def test_empty_match_pattern_and_one_byte_chunks(tmp_path: Path, strategy: str | None) -> None:
    # A chunk that holds only the final LF has no line; it must not yield an empty match.
    path = _write(tmp_path, b"xacc=3y\n")
    assert _linescan.scan(path, author_pattern(r"(x?)"), 1, "last", 1, strategy=strategy) == ("x",)
    assert _linescan.scan(path, author_pattern(r"(x?)"), 1, "all", 1, strategy=strategy) == ("x",)


def test_a_small_file_is_scanned_line_by_line_without_the_patterns_facts(tmp_path: Path) -> None:
    """A file of at most SMALL_FILE bytes costs a few lines: the scan derives none of the
    pattern's facts (required literal, line safety) for it, and reads what the other
    strategies read; a larger file takes the fastest exact strategy, whose facts it derives."""
    pattern = r"^small_scan_acc=(?P<v>[0-9.]+)$"
    rx = author_pattern(pattern)
    entry = PATTERNS.entry(pattern)
    small = _write(tmp_path, b"noise\nsmall_scan_acc=0.5\nsmall_scan_acc=0.75\ntail\n")
    for occurrence, expected in (("last", ("0.75",)), ("all", ("0.5", "0.75"))):
        assert _linescan.scan(small, rx, "v", occurrence, 64) == expected
        for strategy in ("line", "literal", "chunk"):
            assert _linescan.scan(small, rx, "v", occurrence, 64, strategy=strategy) == expected
    entry.derived.clear()
    assert _linescan.scan(small, rx, "v", "all", 64) == ("0.5", "0.75")
    assert entry.derived == {}
    large = tmp_path / "large.log"
    large.write_bytes(b"noise line\n" * (_linescan.SMALL_FILE // 8) + b"small_scan_acc=0.9\n")
    assert _linescan.scan(large, rx, "v", "all", 64) == ("0.9",)
    assert entry.derived  # the literal and line safety, derived once for the pattern
