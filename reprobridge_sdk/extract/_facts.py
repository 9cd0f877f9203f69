"""What a line scan derives from an author pattern: the literal every match contains, and
whether no match can span a line break (the facts behind :mod:`._linescan`'s literal
pre-filter and chunk search). Each is computed once per pattern, from the parse tree its
dialect check kept (:class:`~reprobridge_sdk.extract.pattern.PatternCache`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .pattern import PATTERNS

__all__ = ["line_safe", "required_literal"]

#: Characters found on most lines of a log: a literal made only of them filters little.
_COMMON = frozenset(" \t.,:;=-_/()[]'\"0123456789")


def _uncommon(text: str) -> bool:
    return any(char not in _COMMON for char in text)


def required_literal(pattern: str, *, fold: bool = False) -> str | None:
    """The longest literal text every match of ``pattern`` contains, or ``None`` (computed
    once per pattern in the process's pattern cache, from the parse tree of its dialect
    check: parsing the pattern costs more than many short scans)."""
    return PATTERNS.derive(pattern, ("literal", fold), lambda tree: _required_literal(tree, fold))


def _required_literal(parsed: Any, fold: bool) -> str | None:
    """The longest literal text every match of the pattern parsed as ``parsed`` contains, or
    ``None`` (also when it does not parse: ``parsed`` is None).

    Only top-level concatenation (and plain groups in it) is considered. A case-insensitive
    pattern has none, unless ``fold``: then the literal is lower-case ASCII without the
    letters ``i``, ``s`` and ``k`` (the only ASCII letters that non-ASCII characters match
    case-insensitively: U+0130, U+0131, U+017F, U+212A), so every matching line, lower-cased
    as bytes, contains it. Used to pre-filter lines with a fast byte search.
    """
    if parsed is None:
        return None
    ignorecase = bool(parsed.state.flags & re.IGNORECASE)
    if ignorecase and not fold:
        return None
    runs = _Runs(ignorecase)
    runs.walk(parsed)
    return runs.best or None


class _Runs:
    """The literal runs of a concatenation; the best is the longest (uncommon ones first)."""

    def __init__(self, ignorecase: bool) -> None:
        self.ignorecase = ignorecase
        self.best = ""
        self.run: list[str] = []

    def flush(self) -> None:
        text = "".join(self.run)
        if (len(text), _uncommon(text)) > (len(self.best), _uncommon(self.best)):
            self.best = text
        self.run.clear()

    def literal(self, code: int) -> None:
        char = chr(code)
        if self.ignorecase:
            char = char.lower()
            if not char.isascii() or char in "isk":
                char = "\n"
        if char in "\r\n":
            self.flush()
        else:
            self.run.append(char)

    def walk(self, items: Any) -> None:
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                self.literal(arg)
            elif name == "SUBPATTERN":
                self.flush()
                if not arg[1] & re.IGNORECASE:
                    self.walk(arg[-1])
                    self.flush()
            elif name != "AT":
                self.flush()
        self.flush()


_NEWLINE_CATEGORIES = {"CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD"}


def line_safe(pattern: str) -> bool:
    """Whether no match of ``pattern`` can span or look across a line break (computed once
    per pattern, like :func:`required_literal`)."""
    return PATTERNS.derive(pattern, "line-safe", _line_safe)


def _line_safe(parsed: Any) -> bool:
    """Whether no match of the pattern parsed as ``parsed`` can span or look across a line
    break (not when it does not parse: ``parsed`` is None).

    Then searching a whole chunk with ``re.MULTILINE`` finds, in each line, the same first
    match as searching the line alone. Conservative: anything that may match or inspect a
    newline (``\\s``, ``\\D``, ``\\W``, negated classes, ``.`` under DOTALL, ``\\A``,
    ``\\Z``, look-behind, a literal newline, unknown constructs) makes it unsafe.
    """
    if parsed is None or parsed.state.flags & re.DOTALL:
        return False
    return _safe(parsed)


def _safe(items: Any) -> bool:
    """Whether every node of a parsed sequence is line-safe (:data:`_SAFE`; unknown: not)."""
    for op, arg in items:
        check = _SAFE.get(str(op))
        if check is None or not check(arg):
            return False
    return True


def _class_item_safe(name: str, arg: Any) -> bool:
    """One item of a character class (``[...]``): it must not match a newline."""
    if name == "LITERAL":
        return bool(arg != 10)
    if name == "RANGE":
        return not arg[0] <= 10 <= arg[1]
    if name == "CATEGORY":
        return str(arg) not in _NEWLINE_CATEGORIES
    return False  # NEGATE, or anything unknown


#: Each node of the ``re`` parser's tree and when it is line-safe, given its argument.
_SAFE: dict[str, Callable[[Any], bool]] = {
    "LITERAL": lambda arg: arg != 10,
    "NOT_LITERAL": lambda arg: arg == 10,
    "ANY": lambda _arg: True,  # not under DOTALL (checked first)
    "IN": lambda arg: all(_class_item_safe(str(op), item) for op, item in arg),
    "AT": lambda arg: str(arg) not in ("AT_BEGINNING_STRING", "AT_END_STRING"),
    "SUBPATTERN": lambda arg: not arg[1] & re.DOTALL and _safe(arg[-1]),
    "MAX_REPEAT": lambda arg: _safe(arg[2]),
    "MIN_REPEAT": lambda arg: _safe(arg[2]),
    "POSSESSIVE_REPEAT": lambda arg: _safe(arg[2]),
    "BRANCH": lambda arg: all(_safe(branch) for branch in arg[1]),
    "ASSERT": lambda arg: arg[0] >= 0 and _safe(arg[1]),
    "ASSERT_NOT": lambda arg: arg[0] >= 0 and _safe(arg[1]),
    "ATOMIC_GROUP": _safe,
    "GROUPREF": lambda _arg: True,
    "GROUPREF_EXISTS": lambda arg: _safe(arg[1]) and (arg[2] is None or _safe(arg[2])),
}
