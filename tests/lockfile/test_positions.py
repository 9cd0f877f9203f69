"""Positions in a requirements lock: the bisection over line starts gives exactly the
(line, col) of the straightforward table with one entry per character."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk.locks.lockfile import _logical_lines, check_lock

_COMMENT_RE = re.compile(r"(^|\s+)#.*$")


def _reference(text: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """One (line, col) per character of each logical line, built character by character."""
    result = []
    current_text: list[str] = []
    current_pos: list[tuple[int, int]] = []
    for number, physical in enumerate(text.splitlines(), start=1):
        stripped = _COMMENT_RE.sub("", physical)
        continued = stripped.rstrip().endswith("\\")
        if continued:
            stripped = stripped.rstrip()[:-1]
        current_text.append(stripped + " ")
        current_pos.extend((number, col) for col in range(1, len(stripped) + 2))
        if not continued:
            joined = "".join(current_text)
            if joined.strip():
                result.append((joined, current_pos))
            current_text, current_pos = [], []
    if current_text and "".join(current_text).strip():
        result.append(("".join(current_text), current_pos))
    return result


_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            ["numpy==2.1.0 \\", "    --hash=sha256:ab", "# comment", "", "  \\", "x # y \\"]
        ),
        st.text(alphabet=" \\#-=abc\t", max_size=12),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(_LINES, st.integers(min_value=-3, max_value=80))
def test_bisection_matches_the_per_character_table(lines: list[str], offset: int) -> None:
    text = "\n".join(lines)
    got = _logical_lines(text)
    expected = _reference(text)
    assert [logical.text for logical in got] == [joined for joined, _ in expected]
    for logical, (_, positions) in zip(got, expected, strict=True):
        for index in range(len(positions)):
            assert logical.at(index) == positions[index]
        assert logical.at(offset) == positions[min(max(offset, 0), len(positions) - 1)]


def test_position_of_a_bad_hash_on_a_continuation_line(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text(
        "numpy==2.1.0 \\\n    --hash=sha256:00 \\\n    --hash=md5:zz\n", encoding="utf-8"
    )
    found = [(f.code, f.line, f.col) for f in check_lock(lock)]
    assert found == [("L002", 1, 1), ("L003", 2, 5), ("L003", 3, 5)]
