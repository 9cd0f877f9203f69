"""The fast path for JSON texts: read by :mod:`json` when YAML would read the same data.

Rules: see :func:`_json_subset`; any text outside the subset returns None and the YAML reader
decides, findings and all.

How the rules are checked, each at the speed of C (a 5 MB manifest of 10k tasks is read in
about 1.5 times the time of a bare ``json.loads``), with the reason each check is exact:

* characters: ``str.isascii``, a backslash by ``in``, and the ASCII controls (all but the line
  feed) and DEL found in one ``bytes.translate`` to character classes (:data:`_CLASSES`);
* lines: a line opening with spaces and ':' is ``\\n *:`` (the text opens with ``{``, so its
  first line does not); a line ending with ':' and spaces is ``: *\\n`` (a text that ends with
  ':' is not JSON); a run of 64 spaces or more before ':' holds the literal of 64 spaces and
  ':';
* long strings: the rule is ``"[^"\\n]{900,}"`` (two quotes with 900 characters or more
  between them, none a line feed), which needs a run of 900 characters that are neither a
  quote nor a line feed; that run is a literal in the text translated to quotes, line feeds and
  ``x`` (:data:`_QUOTE_OR_LF`), and only a text that has it is searched with the rule itself;
* numbers: ``json`` gives the same int and float values as the hooks that reject an integer
  of more than MAX_INT_DIGITS digits and a number that is not finite, for every literal but
  those with 200 digits in a row or an exponent of 3 digits or more (below that a float is
  under 10 ** 299): the hooks are passed only when the class text holds either;
* duplicate keys and nesting, from the structure (:func:`_structure`): after ``json`` has
  read the text, its quotes pair up as the strings' delimiters (no escapes), so a ':' or a
  bracket is outside the strings exactly when an even number of quotes precede it. Keeping
  the quotes, colons and brackets, dropping adjacent pairs of quotes (which keeps every
  mark's parity) and what lies between the remaining odd and even quotes leaves the marks
  outside the strings. Each ':' there is one key of one object, so the text holds a
  duplicate key exactly when the objects ``json`` built (collected by an ``object_hook``,
  which costs next to nothing, unlike a pairs hook) hold fewer keys in all. The brackets
  are peeled, the innermost pairs a level at a time: the number of levels peeled is the
  depth.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from reprobridge_sdk.io._guards import MAX_DEPTH
from reprobridge_sdk.io._yamlcore import _int


def _table(default: bytes, classes: dict[bytes, bytes]) -> bytes:
    table = bytearray(default * 256)
    for members, mark in classes.items():
        for member in members:
            table[member] = mark[0]
    return bytes(table)


_CONTROLS = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F])
#: Character classes: "!" a control or DEL, "0" a digit, "e" an exponent letter, "-" a sign.
_CLASSES = _table(b" ", {_CONTROLS: b"!", b"0123456789": b"0", b"eE": b"e", b"+-": b"-"})
_LONG_EXPONENT = re.compile(rb"0e-?000")  # on the class text: a digit, e, a sign, 3 digits
_MANY_DIGITS = b"0" * 200
#: Quotes and line feeds as they are, any other character as "x".
_QUOTE_OR_LF = _table(b"x", {b'"': b'"', b"\n": b"\n"})
_LONG_RUN = b"x" * 900
_LONG_STRING = re.compile(r'"[^"\n]{900,}"')
_OPENS_WITH_COLON = re.compile(r"\n *:")
_ENDS_WITH_COLON = re.compile(r": *\n")
_SPACES_BEFORE_COLON = " " * 64 + ":"
#: Quotes and colons as they are, brackets as "(" and ")"; every other character is dropped.
_MARKS = _table(b" ", {b'"': b'"', b":": b":", b"[{": b"(", b"]}": b")"})
_NOT_MARKS = bytes(set(range(256)) - set(b'"[]{}:'))


class _NotSubset(Exception):
    """The text is outside the JSON subset that ``json`` reads as YAML would."""


def _json_subset(text: str) -> dict[str, Any] | None:
    """The data of a JSON text that YAML reads as the same data without a finding; else None.

    JSON is YAML 1.2 except where this subset draws the line: the text is printable ASCII
    and line feeds, with no backslash (no escapes, so a string's characters are the same in
    both readings), an object at the top, every key on the line of its ':' (no line opens or
    ends with ':', spaces aside), no run of 64 spaces before ':', no string of 900 characters
    or more (libyaml allows a key 1,024; the rule is on the text: two quotes on one line with
    900 characters between them), no duplicate key (Y003), no number that is not finite or
    an integer of more than MAX_INT_DIGITS digits (S004), no ``NaN`` or ``Infinity`` (not
    JSON) and no nesting at MAX_DEPTH (Y005). In it the core schema reads ``true``,
    ``false``, ``null`` and JSON's numbers as :mod:`json` does. Anything else returns None
    and the YAML reader decides, findings and all.

    Such texts are what tools write (and what the benchmarks write, so that other
    validators read the very same bytes); parsing them with :mod:`json` takes a tenth of
    composing YAML nodes and keeps no node graph.
    """
    if not text.isascii() or "\\" in text or not text.lstrip(" \n").startswith("{"):
        return None
    raw = text.encode("ascii")
    classes = raw.translate(_CLASSES)
    if (
        b"!" in classes
        or _OPENS_WITH_COLON.search(text)
        or _ENDS_WITH_COLON.search(text)
        or _SPACES_BEFORE_COLON in text
        or (_LONG_RUN in raw.translate(_QUOTE_OR_LF) and _LONG_STRING.search(text))
    ):
        return None
    risky = _MANY_DIGITS in classes or _LONG_EXPONENT.search(classes) is not None
    objects: list[dict[str, Any]] = []
    collect = objects.append

    def kept(value: dict[str, Any]) -> dict[str, Any]:
        collect(value)
        return value

    try:
        data = json.loads(
            text,
            object_hook=kept,
            parse_float=_number if risky else None,
            parse_int=_integer if risky else None,
            parse_constant=_constant,
        )
    except (_NotSubset, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    keys, brackets = _structure(raw)
    if keys != sum(map(len, objects)) or _nests_past(brackets, MAX_DEPTH):
        return None
    return data


def _number(value: str) -> float:
    result = float(value)
    if not math.isfinite(result):
        raise _NotSubset
    return result


def _integer(value: str) -> int:
    exact = _int(value)
    if exact is None:
        raise _NotSubset
    return exact


def _constant(value: str) -> Any:
    raise _NotSubset


def _structure(raw: bytes) -> tuple[int, bytes]:
    """The number of keys of a JSON text without escapes that :mod:`json` reads, and its
    brackets outside the strings as "(" and ")".

    A mark (':' or a bracket) is outside the strings when an even number of quotes precede
    it; removing two adjacent quotes keeps that number's parity for every mark, so the few
    quotes left (around strings that hold a mark) split the rest into outside and inside
    parts. Outside, each ':' separates one key from its value.
    """
    marks = raw.translate(_MARKS, _NOT_MARKS).replace(b'""', b"")
    if b'"' in marks:
        marks = b"".join(marks.split(b'"')[::2])
    return marks.count(b":"), marks.replace(b":", b"")


def _nests_past(brackets: bytes, limit: int) -> bool:
    """Whether balanced brackets (as "(" and ")") nest deeper than ``limit`` (a collection at
    data depth ``d`` sits inside ``d + 1``): each round drops every innermost pair, and the
    rounds that empty them are the depth."""
    for _ in range(limit):
        if not brackets:
            return False
        brackets = brackets.replace(b"()", b"")
    return bool(brackets)
