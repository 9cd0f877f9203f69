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
    """One (line, col) per character of each logical line, built character by character.

    pip's reading: a line ending in a backslash that is not a comment line continues; its
    outer backslashes are dropped and pieces join with nothing between them; a comment line
    ends a continuation, joined after a space (col 0: not in the file); a comment is removed
    from the joined line.
    """
    result = []
    current_text: list[str] = []
    current_pos: list[tuple[int, int]] = []

    def flush() -> None:
        joined = "".join(current_text)
        kept = _COMMENT_RE.sub("", joined, count=1)
        if kept.strip():
            result.append((kept, current_pos[: len(kept)]))

    for number, physical in enumerate(text.splitlines(), start=1):
        comment = re.match(r"\s*#", physical) is not None
        if physical.endswith("\\") and not comment:
            lead = len(physical) - len(physical.lstrip("\\"))
            piece = physical.strip("\\")
            current_text.append(piece)
            current_pos.extend((number, lead + 1 + i) for i in range(len(piece)))
            continue
        if comment:
            current_text.append(" " + physical)
            current_pos.append((number, 1))  # the added space: clamped to column 1
            current_pos.extend((number, 1 + i) for i in range(len(physical)))
        else:
            current_text.append(physical)
            current_pos.extend((number, 1 + i) for i in range(len(physical)))
        flush()
        current_text, current_pos = [], []
    if current_text:
        flush()
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
