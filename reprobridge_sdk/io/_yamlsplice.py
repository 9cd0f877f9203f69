"""Line splicing of YAML text: the lines a re-emission changed, put into the original text.

Why not a library: ruamel re-emits a whole document; mapping the changed lines of two
re-emissions back onto the text as written keeps every other line's comments and spelling.
:mod:`reprobridge_sdk.io.yamlio` checks that the spliced text reads back to the edited data.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["splice", "style"]

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def style(text: str) -> tuple[tuple[int, int, int], bool]:
    """The indentation ``text`` uses (:func:`_guess_indent`) and whether its lines end in CRLF."""
    return _guess_indent(text), "\r\n" in text  # keep Windows line ends (YAML reads both)


def _guess_indent(text: str) -> tuple[int, int, int]:
    """Indentation of mappings, sequences and the dash offset used by ``text``."""
    lines = text.splitlines()
    mapping = 0
    for index, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        width = len(line) - len(stripped)
        if stripped.startswith("- "):
            parent = _previous_indent(lines, index)
            offset = max(width - parent, 0)
            rest = stripped[2:]
            inner = 2 + len(rest) - len(rest.lstrip(" "))
            return (mapping or 2, offset + inner, offset)
        if width and not mapping:
            mapping = width - _previous_indent(lines, index)
    return (mapping or 2, mapping or 2, 0)


def _previous_indent(lines: list[str], index: int) -> int:
    for line in reversed(lines[:index]):
        stripped = line.lstrip(" ")
        if stripped and not stripped.startswith("#"):
            return len(line) - len(stripped)
    return 0


def _lines(text: str) -> list[str]:
    """Lines ending with their ``\n`` (only ``\n`` ends a line in YAML's output)."""
    return _LINE.findall(text)


def splice(original: str, before: str, after: str) -> str | None:
    """Apply the line changes ``before`` -> ``after`` to ``original``; None if they do not map."""
    if original == before:
        return after
    orig, old, new = _lines(original), _lines(before), _lines(after)
    to_orig: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, orig, old, autojunk=False).get_matching_blocks():
        for offset in range(block.size):
            to_orig[block.b + offset] = block.a + offset
    result: list[str] = []
    cursor = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        where = _original_lines(to_orig, i1, i2)
        if where is None or where[0] < cursor:
            return None
        result.extend(orig[cursor : where[0]])
        result.extend(new[j1:j2])
        cursor = where[1]
    result.extend(orig[cursor:])
    return "".join(result)


def _original_lines(to_orig: dict[int, int], i1: int, i2: int) -> tuple[int, int] | None:
    """The lines ``[start, end)`` of the original that lines ``[i1, i2)`` of the re-emitted
    original stand for (an insertion: where it goes); None when they do not map."""
    if i1 < i2:
        if not all(index in to_orig for index in range(i1, i2)):
            return None
        start, end = to_orig[i1], to_orig[i2 - 1] + 1
        return (start, end) if end - start == i2 - i1 else None
    if i1 == 0:
        return 0, 0
    if i1 - 1 in to_orig:
        return to_orig[i1 - 1] + 1, to_orig[i1 - 1] + 1
    return None
