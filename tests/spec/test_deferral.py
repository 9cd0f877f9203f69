"""Normative text defines its rules itself (spec/README.md, "normative"; conformance.md §16).

A second implementation is written from the text alone, so no normative sentence may defer to
the reference implementation (its SDK, auditor, runner, tooling or "the reference" numbers), to
a Python version, to Python's ``re`` or to CPython and its limits. Informative text (notes,
examples, informative sections, the building part) may describe them. The normative text is
read by the convention that ``test_normative.py`` implements; code spans and quoted strings
are data (an ``implementation: 'CPython'`` field value), not deferrals, and are left out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.spec.test_normative import PARTS, normative_lines

#: What a deferral looks like, with a name for the message.
DEFERRALS: dict[str, re.Pattern[str]] = {
    "the reference implementation": re.compile(
        r"\breference (?:implementation|SDK|auditor|runner|tooling|validator|loader|build agent)"
        r"s?\b|\bthe reference(?: limits| numbers?)?(?::|\)| opens| uses)",
        re.IGNORECASE,
    ),
    "a Python version": re.compile(r"\b(?:C?Python|py)\s*3(?:\.[0-9]+)?\b", re.IGNORECASE),
    "Python's re": re.compile(r"\bPython(?:'s)?\s+(?:`re`|re\b|regular expressions?)"),
    "CPython": re.compile(r"\bCPython\b"),
    "CPython's limits": re.compile(r"\bint_info\b|\bmax_str_digits\b|\brecursionlimit\b"),
}
_IN_CODE = frozenset({"Python's re", "CPython's limits"})
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+(?=[A-Z(*])")


def _sentences(text: str) -> list[tuple[int, str]]:
    """Normative sentences of a part: ``(first line, sentence)``, paragraphs joined."""
    out: list[tuple[int, str]] = []
    paragraph: list[str] = []
    start = 0
    for number, line in [*normative_lines(text), (0, "")]:
        if not line.strip() or line.lstrip().startswith(("#", "|", "<a id=")):
            if paragraph:
                joined = " ".join(paragraph)
                out += [(start, s) for s in _SENTENCE_END.split(joined)]
            paragraph = []
            if line.lstrip().startswith("|"):  # a table row is a sentence of its own
                out.append((number, line))
            continue
        if not paragraph:
            start = number
        paragraph.append(line.strip())
    return out


def deferrals(text: str) -> list[tuple[int, str, str]]:
    """``(line, what, sentence)`` for every normative sentence of ``text`` that defers."""
    found: list[tuple[int, str, str]] = []
    for line, sentence in _sentences(text):
        bare = _QUOTED.sub("''", _CODE_SPAN.sub("``", sentence))
        for what, pattern in DEFERRALS.items():
            # a module or a limit is named in a code span: those two look at the whole text
            if pattern.search(sentence if what in _IN_CODE else bare):
                found.append((line, what, sentence))
    return found


def test_the_check_finds_each_kind_of_deferral() -> None:
    text = "\n\n".join(
        [
            "The exact rendering is that of the reference implementation.",
            "A plugin MUST return within the time limit (30 seconds in the reference SDK).",
            "MUST refuse more members than its caps (the reference: 100,000 members).",
            "The dialect is the subset of Python `re` syntax that RE2 also accepts.",
            "An integer of more than CPython's `int_info` digits is S004.",
            "Readers MUST behave as Python 3.11 does.",
            "> **Note (informative).** The reference SDK uses Python 3.12 and CPython's re.",
            "```text\nthe reference implementation, CPython 3.11\n```",
            "The runtime records `implementation: 'CPython'` as a value.",
            "Each task has reference observations and a reference run.",
        ]
    )
    found = {(what, sentence.split()[1]) for _line, what, sentence in deferrals(text)}
    assert found == {
        ("the reference implementation", "exact"),
        ("the reference implementation", "plugin"),
        ("the reference implementation", "refuse"),
        ("Python's re", "dialect"),
        ("CPython", "integer"),
        ("CPython's limits", "integer"),
        ("a Python version", "MUST"),
    }


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.name)
def test_no_normative_sentence_defers_to_an_implementation(part: Path) -> None:
    found = [f"{part.name}:{line}: {what}: {s}" for line, what, s in deferrals(part.read_text())]
    assert found == []
