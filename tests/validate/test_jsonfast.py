"""The JSON fast path decides as the regular-expression implementation it replaced.

``_json_subset`` was rewritten for speed (C-speed checks instead of one alternation regex,
hooks only where a number may be out of range, nesting peeled from the quotes and brackets).
The implementation it replaced is kept here, unchanged, as the oracle: for every text the
new function returns the same decision (None or data) and the same data, types and order
included. The texts are generated JSON-ish, with every hostile case the rules name.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reprobridge_sdk.io._guards import MAX_DEPTH
from reprobridge_sdk.io._jsonfast import _json_subset, _nests_past, _structure
from reprobridge_sdk.io._yamlcore import MAX_INT_DIGITS, _int

# ---- the oracle: the implementation before the rewrite, verbatim but for its names --------

_ORACLE_NOT_JSON_SUBSET = re.compile(
    r'[^\x20-\x7e\n]|\\|^ *:|: *$| {64,}:|"[^"\n]{900,}"', re.MULTILINE
)


class _OracleNotSubset(Exception):
    """The text is outside the subset (the oracle's way out of its hooks)."""


def _oracle(text: str) -> dict[str, Any] | None:
    if not text.lstrip(" \n").startswith("{") or _ORACLE_NOT_JSON_SUBSET.search(text):
        return None

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(items)
        if len(result) != len(items):
            raise _OracleNotSubset
        return result

    def number(value: str) -> float:
        result = float(value)
        if not math.isfinite(result):
            raise _OracleNotSubset
        return result

    def integer(value: str) -> int:
        exact = _int(value)
        if exact is None:
            raise _OracleNotSubset
        return exact

    def constant(value: str) -> Any:
        raise _OracleNotSubset

    try:
        data = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_float=number,
            parse_int=integer,
            parse_constant=constant,
        )
    except (_OracleNotSubset, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or _oracle_bracket_depth(text) > MAX_DEPTH:
        return None
    return data


_ORACLE_JSON_STRING = re.compile(r'"[^"]*"')
_ORACLE_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_ORACLE_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _oracle_bracket_depth(text: str) -> int:
    brackets = _ORACLE_NOT_BRACKET.sub("", _ORACLE_JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_ORACLE_BRACKET_STEP.__getitem__, brackets)), default=0)


def _same(text: str) -> tuple[str, str]:
    """Both decisions as JSON text: None is ``null``; an int, a float and a bool differ, and
    so do the keys' order and a float's last digit."""
    return json.dumps(_json_subset(text)), json.dumps(_oracle(text))


# ---- generated JSON-ish texts ---------------------------------------------------------------
# A text is built from clean parts, which keep it in the subset (so that the data is compared,
# not only the rejections); a hostile text has one bad part put in at a drawn place, at any
# depth, so that it comes near the subset with one rule broken (some bad parts break none:
# those near misses must be read).

_CLEAN_SPACES = ["", "", " ", "\n", "\n ", " " * 63]
_BAD_SPACES = [" \n", " " * 64, "\t", "\r\n", "\r"]
# Around a key's ':' (a line feed there puts the key and its ':' or value on two lines).
_CLEAN_COLON_SPACES = ["", "", " ", " " * 63]
_BAD_COLON_SPACES = [" " * 64, " \n", "\n", "\n ", "  \n", " " * 65, "\t"]
# Long parts by short names (a strategy's repr lists them).
_BIG = {
    "<1e308 digits>": "1" + "0" * 308,
    "<1e308 digits.0>": "1" + "0" * 308 + ".0",
    "<199 nines.5e99>": "9" * 199 + ".5e99",
    "<199 digits>": "1" * 199,
    "<200 digits>": "1" * 200,
    "<max digits>": "1" * MAX_INT_DIGITS,
    "<-max digits>": "-" + "1" * MAX_INT_DIGITS,
    "<max+1 digits>": "1" * (MAX_INT_DIGITS + 1),
    "<-max+1 digits>": "-" + "1" * (MAX_INT_DIGITS + 1),
    "<310 digits.5>": "1" * 310 + ".5",
    "<400 digits.0>": "1" * 400 + ".0",
    "<10 digits.400 digits>e99": "1" * 10 + "." + "1" * 400 + "e99",
    "<899 x>": "x" * 899,
    "<899 with ':'>": "x" * 300 + ":" + "x" * 598,
    "<899 [>": "[" * 899,
    "<900 x>": "x" * 900,
    "<1100 x>": "x" * 1100,
    "<900 [>": "[" * 900,
}
_CLEAN_NUMBERS = ["0", "-0", "7", "-12", "1.5", "-0.25", "1e5", "1E+05", "2.5e-05", "1e99"]
_CLEAN_NUMBERS += ["9e-99", "1e308", "1.7976931348623157e308", "1e-999", "1e0001", "0.1e001"]
_CLEAN_NUMBERS += ["<1e308 digits>", "<1e308 digits.0>", "<199 nines.5e99>", "<199 digits>"]
_CLEAN_NUMBERS += ["<200 digits>", "true", "false", "null"]
# Numbers out of range first (drawn more often), then integers at the limit (read, unless a
# quote follows on their line: a run of 900), then texts that are not JSON numbers.
_BAD_NUMBERS = ["1e309", "1e999", "-1e400", "1e+999", "1E400", "<310 digits.5>"]
_BAD_NUMBERS += ["<400 digits.0>", "<10 digits.400 digits>e99", "<max+1 digits>"]
_BAD_NUMBERS += ["<-max+1 digits>", "<max digits>", "<-max digits>", "NaN", "Infinity"]
_BAD_NUMBERS += ["-Infinity", "01", "1.", "+1", "0x1F", ".5"]
# What goes between a string's quotes: ':' and brackets, digits and exponents (clean); a raw
# quote (which ends the string early) or an escaped one, non-ASCII, controls (bad).
_CLEAN_PIECES = ["a", "b", ":", " :", ": ", "[", "]", "{", "}", "{seed}", "e", "1e999", " "]
_CLEAN_PIECES += ["0e-000", "NaN"]
_BAD_PIECES = ['"', '\\"', "\\n", "\\\\", "\u00e9", "\u2028", "\t", "\r", "\x7f", "\x00", "\n"]
_CLEAN_LONG = ["<899 x>", "<899 with ':'>", "<899 [>"]
_BAD_LONG = ["<900 x>", "<1100 x>", "<900 [>"]
_CLEAN_KEYS = ['"a"', '"b"', '"a:b"', '"[{"', '"k"', '"}"', '"c"', '"d"', '"e"', '"f"', '"g"']
# Outside any string: a run of numbers on one line, under 900 characters or not.
_CLEAN_ARRAYS = [300, 449]
_BAD_ARRAYS = [450, 451, 600]
# n brackets around a scalar in the top object nest n + 1 deep (64 is the most).
_CLEAN_DEPTHS = [1, 20, 58]
_BAD_DEPTHS = [64, 63, 65, 62, 2000]
#: The bad parts by kind.
_BAD: dict[str, list[Any]] = {
    "spaces": _BAD_SPACES,
    "colon": _BAD_COLON_SPACES,
    "numbers": _BAD_NUMBERS,
    "pieces": _BAD_PIECES,
    "long": _BAD_LONG,
    "duplicate": ["in the top object", "nested"],
    "arrays": _BAD_ARRAYS,
    "deep": _BAD_DEPTHS,
    "top": ["array", "number", "string", "lead tab", "lead BOM", "lead CR"],
}


def _sample(parts: list[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(parts).map(lambda part: _BIG.get(part, part))


def _array(items: list[tuple[str, str]]) -> str:
    return "[" + ",".join(space + item for space, item in items) + "]"


def _object(items: list[tuple[str, str, str, str, str]]) -> str:
    return "{" + ",".join(f"{s1}{key}{s2}:{s3}{value}" for s1, key, s2, s3, value in items) + "}"


def _key(item: tuple[str, ...]) -> str:
    return item[1]


def _nested(value: str, depth: int, kind: str) -> str:
    if kind == "[":
        return "[" * depth + value + "]" * depth
    return '{"n":' * depth + value + "}" * depth


def _numbers_on_a_line(count: int) -> str:
    return '["s",' + ",".join(["1"] * count) + ',"t"]'


_SPACES = _sample(_CLEAN_SPACES)
_COLON = _sample(_CLEAN_COLON_SPACES)
_STRINGS = st.one_of(
    st.lists(_sample(_CLEAN_PIECES), max_size=3).map("".join), _sample(_CLEAN_LONG)
).map(lambda inner: f'"{inner}"')
_KEYS = st.one_of(_sample(_CLEAN_KEYS), _STRINGS)
_SCALARS = st.one_of(
    _sample(_CLEAN_NUMBERS),
    _sample(_CLEAN_NUMBERS),
    _STRINGS,
    _sample(_CLEAN_ARRAYS).map(_numbers_on_a_line),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(st.tuples(_SPACES, inner), max_size=4).map(_array),
        st.lists(st.tuples(_SPACES, _KEYS, _COLON, _COLON, inner), max_size=4, unique_by=_key).map(
            _object
        ),
    ),
    max_leaves=12,
)
_DEEP = st.builds(
    _nested, st.one_of(_SCALARS, _VALUES), _sample(_CLEAN_DEPTHS), st.sampled_from("[{")
)
_ITEMS = st.lists(
    st.tuples(_SPACES, _KEYS, _COLON, _COLON, st.one_of(_VALUES, _VALUES, _DEEP)),
    unique_by=_key,
)


@st.composite
def _bad_item(draw: st.DrawFn, kind: str, items: list[tuple[str, str, str, str, str]]) -> Any:
    """An item of the top object (spaces, key, spaces, spaces, value) with one bad part of
    ``kind``, its value at a drawn depth; or, for kind "top", the bad top."""
    bad = draw(_sample(_BAD[kind]))
    s1, key, s2, s3 = draw(_SPACES), f'"z{len(items)}"', draw(_COLON), draw(_COLON)
    value = draw(_SCALARS)
    if kind == "spaces":
        s1 = bad
    elif kind == "colon" and bad.strip(" ") and not bad.startswith("\n"):
        s3 = bad  # the line ends with ':'
    elif kind == "colon" and bad.strip(" "):
        s2, s3 = (bad, s3) if draw(st.booleans()) else (s2, bad)
    elif kind == "colon":
        s2 = bad  # spaces before ':'
    elif kind in ("numbers", "arrays"):
        value = bad if kind == "numbers" else _numbers_on_a_line(bad)
    elif kind in ("pieces", "long"):
        inner = draw(st.lists(_sample(_CLEAN_PIECES), max_size=2))
        inner.insert(draw(st.integers(0, len(inner))), bad)
        value = '"' + "".join(inner) + '"'
        if draw(st.booleans()):
            key, value = value, draw(_SCALARS)
    elif kind == "duplicate" and bad == "in the top object" and items:
        key = draw(st.sampled_from(items))[1]
    elif kind == "duplicate":  # an object nested in the item's value holds a key twice
        twice = draw(_KEYS)
        pairs = [(draw(_SPACES), twice, "", " ", draw(_SCALARS)) for _ in range(2)]
        others = draw(st.lists(st.tuples(_SPACES, _KEYS, _COLON, _COLON, _SCALARS), max_size=2))
        value = _object(others[:1] + pairs[:1] + others[1:] + pairs[1:])
    elif kind == "deep":
        value = _nested(draw(_SCALARS), bad, draw(st.sampled_from("[{")))
        return s1, key, s2, s3, value
    for _ in range(draw(st.integers(0, 3))):  # the bad value, nested in arrays or objects
        value = draw(st.sampled_from(["[{}]", '{{"w": {}}}', "[0, {}]"])).format(value)
    return s1, key, s2, s3, value


@st.composite
def _texts(draw: st.DrawFn) -> str:
    """A JSON-ish text: clean, or with one bad part of a drawn kind."""
    kind = draw(st.sampled_from(["", "", "", "", *_BAD]))
    items = draw(_ITEMS)
    lead: str = draw(st.sampled_from(["", " ", "\n", " \n  "]))
    body: str | None = None
    if kind == "top":
        top = draw(_sample(_BAD["top"]))
        if top == "array":
            body = _array([(s1, value) for s1, _key, _s2, _s3, value in items])
        elif top == "number":
            body = draw(_sample(_CLEAN_NUMBERS))
        elif top == "string":
            body = draw(_STRINGS)
        else:
            lead = {"lead tab": "\t", "lead BOM": "\ufeff", "lead CR": "\r\n"}[top] + lead
    elif kind:
        bad = draw(_bad_item(kind, items))
        items.insert(draw(st.integers(0, len(items))), bad)
    if body is None:
        body = _object(items)
    trail: str = draw(_SPACES)
    return lead + body + trail


@given(_texts())
@example('{"a": 1, "a": 2}')
@example('{"a": {"b": 1, "c": {"d": 2, "d": 3}}}')
@example('{"a": [{"x": 1}, {"x": 1, "x": 1}]}')
@example('{"a:b": 1, "a": "b:c", "[": "]", "}": "{"}')
@example('{"a"\n: 1}')
@example('{"a":\n 1}')
@example('{"a":  \n 1}')
@example('{"a": 1, "b":}')
@example('{"a": 1}\n:')
@example('{"a": 1} :')
@example('{"a" ' + " " * 64 + ": 1}")
@example('{"a" ' + " " * 63 + ": 1}")
@example('{"a": "' + "x" * 899 + '"}')
@example('{"a": "' + "x" * 900 + '"}')
@example('{"a": ["s",' + ",".join(["1"] * 450) + ',"t"]}')
@example('{"a": ["s",\n' + ",".join(["1"] * 450) + ',"t"]}')
@example('{"a": 1e999}')
@example('{"a": -1e400}')
@example('{"a": 1e-999}')
@example('{"a": [1, {"b": 1E+400}]}')
@example('{"a": ' + "1" * 310 + ".5}")
@example('{"a": 1.' + "1" * 400 + "e99}")
@example('{"a": ' + "1" * (MAX_INT_DIGITS + 1) + "}")
@example('{"a": ' + "1" * MAX_INT_DIGITS + "}")
@example('{"a": NaN}')
@example('{"a": -Infinity}')
@example('{"a": ' + "[" * 63 + "]" * 63 + "}")
@example('{"a": ' + "[" * 64 + "]" * 64 + "}")
@example('{"a": ' + "[" * 65 + "]" * 65 + "}")
@example('{"a": ' + "[" * 2000 + "]" * 2000 + "}")
@example('{"a": ' + "[" * 63 + '"]]]]"' + "]" * 63 + ', "b": "[[[[{{"}')
@example('{"a": ' + "[" * 64 + '"{{"' + "]" * 64 + "}")
@example('{"a": "caf\u00e9"}')
@example('{"a": "tab\there"}')
@example('{"a": 1}\r\n')
@example('{"a": "\\u0041"}')
@example("[1, 2]")
@example('  \n {"a": 1}')
@example('\t{"a": 1}')
@example('{"a": 1} # comment')
@example('{"a": 1}  ')
@example('{"a": "b"}x')
@example('{"a": true, "b": false, "c": null, "d": -0, "e": 1.0, "f": 1}')
def test_the_decision_is_the_oracles(text: str) -> None:
    new, old = _same(text)
    assert new == old


@pytest.mark.parametrize(
    ("text", "decided"),
    [
        ('{"a": 1, "b": [1.5, "x"]}', {"a": 1, "b": [1.5, "x"]}),
        ('{"a": {"b": 1, "b": 2}}', None),
        ('{"a": 1e308, "b": 1e999}', None),
        ('{"a": 1e308}', {"a": 1e308}),
        ('{"a": ' + "1" * MAX_INT_DIGITS + "}", {"a": int("1" * MAX_INT_DIGITS)}),
        ('{"a": ' + "1" * (MAX_INT_DIGITS + 1) + "}", None),
        ('{"a": "' + "x" * 899 + '"}', {"a": "x" * 899}),
        ('{"a": "' + "x" * 900 + '"}', None),
        ('{"a": ' + "[" * 64 + "]" * 64 + ', "b": "]]]]}}"}', None),
        ('{"a": ' + "[" * 63 + "]" * 63 + ', "b": "[[[[{{"}', {}),
    ],
)
def test_hostile_texts_decide_as_the_rules_say(text: str, decided: dict[str, Any] | None) -> None:
    """The rules at their edges: a collection at data depth 63 (64 brackets) is the deepest
    allowed, so the ``{}`` row marks data compared with ``json`` rather than written out."""
    result = _json_subset(text)
    if decided == {}:
        assert result == json.loads(text)
    else:
        assert result == decided
    assert _same(text)[0] == _same(text)[1]


@pytest.mark.parametrize("depth", [1, 2, 63, 64, 65, 100])
@pytest.mark.parametrize("inside", ["", '"[[[["', '"]]]]"', '"{", "}"', '"a", ""', '{"a:": ":"}'])
def test_nesting_is_counted_outside_the_strings(depth: int, inside: str) -> None:
    text = "[" * (depth - 1) + "[" + inside + "]" + "]" * (depth - 1)
    _keys, brackets = _structure(text.encode("ascii"))
    deepest = depth + inside.startswith("{")  # an object inside is one level more
    assert _nests_past(brackets, MAX_DEPTH) == (deepest > MAX_DEPTH)
    assert _nests_past(brackets, MAX_DEPTH) == (_oracle_bracket_depth(text) > MAX_DEPTH)


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("{}", 0),
        ('{"a": 1}', 1),
        ('{"a:b": ":", "c": {"::": [":", "d:"]}}', 3),
        ('{"": "", "e": ""}', 2),
        ('{"x": ["", ":", "", "::"], "y": ":[{"}', 2),
        ('[{"a": 1, "a": 2}, {":": {"b": "{:}"}}]', 4),
    ],
)
def test_keys_are_counted_outside_the_strings(text: str, keys: int) -> None:
    assert _structure(text.encode("ascii"))[0] == keys
