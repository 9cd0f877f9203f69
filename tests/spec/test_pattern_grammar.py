"""The pattern grammar's verdicts (spec manifest.md, "pattern grammar"): X004 for each construct
of another regex language the text lists, R016 for other text the grammar does not produce,
and the same verdict whatever the Python version (``\\z``, ``a*+`` and ``a\\1`` once depended on
it)."""

from __future__ import annotations

import pytest

from reprobridge_sdk.extract.pattern import dialect_problem

#: Each construct the text lists as X004, written as the spec writes it.
FOREIGN = (
    r"(a)\1",
    r"a\1",
    r"[\1]",
    r"(?P<n>a)(?P=n)",
    r"(?(1)a|b)",
    r"a(?=b)",
    r"a(?!b)",
    r"(?<=a)b",
    r"(?<!a)b",
    r"(?>a)",
    r"(?#note)a",
    r"a*+",
    r"a++",
    r"a?+",
    r"a{2}+",
    r"a\Z",
    r"a\z",
    r"\u0041",
    r"\U00000041",
    r"\N{EM DASH}",
    r"(?x)a",
    r"(?a)\w",
    r"(?L)a",
    r"(?u)a",
    r"(?U)a",
    r"(?i-x:a)",
    r"[[:alpha:]]",
    r"[^[:digit:]]",
    r"[a--b]",
    r"[a&&b]",
    r"a{,3}",
    r"a{1001}",
    r"a{2,1001}",
)
#: Text the grammar does not produce and that names no foreign construct: R016.
INVALID = (r"(", r"a)", r"[z-a]", r"*a", r"\pL", r"\p{Greek}", r"\Qa\E", r"\x{41}", r"(?<n>a)")
#: Sentences of the grammar.
VALID = (
    r"final accuracy: ([0-9.]+)",
    r"\d+\.\d+",
    r"(?P<value>[0-9]+)",
    r"(?i)acc(?:uracy)?",
    r"(?s-i:a.b)",
    r"a{0,3}?",
    r"a{1000}",
    r"\A\w+$",
    r"\\1",
    r"a\+\+",
    r"[+]+",
    r"x}+",
    r"\[[a]",
    r"[a[]",
)


@pytest.mark.parametrize("pattern", FOREIGN)
def test_a_construct_of_another_language_is_x004(pattern: str) -> None:
    problem = dialect_problem(pattern)
    assert problem is not None and problem[0] == "dialect", problem


@pytest.mark.parametrize("pattern", INVALID)
def test_other_text_outside_the_grammar_is_r016(pattern: str) -> None:
    problem = dialect_problem(pattern)
    assert problem is not None and problem[0] == "invalid", problem


@pytest.mark.parametrize("pattern", VALID)
def test_a_sentence_of_the_grammar_is_accepted(pattern: str) -> None:
    assert dialect_problem(pattern) is None
