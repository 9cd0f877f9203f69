"""The fast path for JSON texts: read by :mod:`json` when YAML would read the same data.

Rules: see :func:`_json_subset`; any text outside the subset returns None and the YAML reader
decides, findings and all. Nesting is measured on brackets outside strings
(:func:`_bracket_depth`), which is exact for a text without escapes.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

from reprobridge_sdk.io._guards import MAX_DEPTH
from reprobridge_sdk.io._yamlcore import _int

# Outside the subset: any character but printable ASCII and line feeds, a backslash (escapes),
# a line that opens with ':' or ends with one (a key and its ':' or value on two lines), a run
# of spaces before ':', or a string of 900 characters (near libyaml's 1,024 of a key).
_NOT_JSON_SUBSET = re.compile(r'[^\x20-\x7e\n]|\\|^ *:|: *$| {64,}:|"[^"\n]{900,}"', re.MULTILINE)


class _NotSubset(Exception):
    """The text is outside the JSON subset that ``json`` reads as YAML would."""


def _json_subset(text: str) -> dict[str, Any] | None:
    """The data of a JSON text that YAML reads as the same data without a finding; else None.

    JSON is YAML 1.2 except where this subset draws the line: the text is printable ASCII
    and line feeds, with no backslash (no escapes, so a string's characters are the same in
    both readings), an object at the top, every key on the line of its ':' and not longer
    than 900 characters (libyaml allows a key 1,024), no duplicate key (Y003), no number
    that is not finite or an integer of more than MAX_INT_DIGITS digits (S004), no ``NaN``
    or ``Infinity`` (not JSON) and no nesting at MAX_DEPTH (Y005). In it the core schema
    reads ``true``, ``false``, ``null`` and JSON's numbers as :mod:`json` does. Anything
    else returns None and the YAML reader decides, findings and all.

    Such texts are what tools write (and what the benchmarks write, so that other
    validators read the very same bytes); parsing them with :mod:`json` takes a tenth of
    composing YAML nodes and keeps no node graph.
    """
    if not text.lstrip(" \n").startswith("{") or _NOT_JSON_SUBSET.search(text):
        return None

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(items)
        if len(result) != len(items):
            raise _NotSubset
        return result

    def number(value: str) -> float:
        result = float(value)
        if not math.isfinite(result):
            raise _NotSubset
        return result

    def integer(value: str) -> int:
        exact = _int(value)
        if exact is None:
            raise _NotSubset
        return exact

    def constant(value: str) -> Any:
        raise _NotSubset

    try:
        data = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_float=number,
            parse_int=integer,
            parse_constant=constant,
        )
    except (_NotSubset, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or _bracket_depth(text) > MAX_DEPTH:
        return None
    return data


_JSON_STRING = re.compile(r'"[^"]*"')  # without backslashes a string is this, and only this
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _bracket_depth(text: str) -> int:
    """The deepest nesting of brackets outside the strings of a JSON text without escapes
    (a collection at data depth ``d`` sits inside ``d + 1`` brackets)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)
