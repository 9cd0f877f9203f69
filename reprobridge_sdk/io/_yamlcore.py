r"""The YAML 1.2 core schema as the reader resolves it, and the JSON types of what it reads.

Why not a library: PyYAML resolves YAML 1.1 (``yes`` is true, dates are timestamps) and
ruamel's 1.2 loader is several times slower; this is the core schema's table on libyaml's nodes.

Grammar (YAML 1.2.2, §10.3.2), a plain scalar matched whole, the first row that matches:

=========  =================================================================
null       ``~ | null | Null | NULL | (empty)``
boolean    ``true | True | TRUE | false | False | FALSE``
integer    ``[-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+``
float      ``[-+]?(\.[0-9]+ | [0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?``
float      ``[-+]?\.(inf | Inf | INF) | \.nan | \.NaN | \.NAN``
string     anything else, and every quoted scalar
=========  =================================================================

So ``yes``/``no``/``on``/``off``, ``1_000``, ``0b101``, ``-0x1F`` and dates are strings.
An integer of more than :data:`MAX_INT_DIGITS` digits (CPython's int/str limit) has no value
here (S004); ``!!float 0x1F`` is 31.0 and a float too large to be finite is ``inf``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

__all__ = ["MAX_INT_DIGITS", "TYPE_WORDS", "core_tag", "json_type"]

_BaseLoader: type[yaml.SafeLoader]
try:
    _BaseLoader = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader

_T = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = _T + "str", _T + "int", _T + "float", _T + "bool", _T + "null"
_SEQ, _MAP = _T + "seq", _T + "map"
_CORE = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL, _SEQ, _MAP, "!"})

# YAML 1.2.2 core schema, §10.3.2.
_NULL_RE = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT_RE = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$"
)

#: Most decimal digits of an integer (CPython's default limit of int <-> str conversions).
MAX_INT_DIGITS = 4_300
_INT_BOUND = 10**MAX_INT_DIGITS
_MAYBE_NOT_STR = frozenset("-+.0123456789~nNtTfF")


def core_tag(value: str) -> str:
    """The YAML 1.2 core-schema tag of a plain scalar written as ``value``."""
    if value and value[0] not in _MAYBE_NOT_STR:
        return _STR
    if _NULL_RE.match(value):
        return _NULL
    if _BOOL_RE.match(value):
        return _BOOL
    if _INT_RE.match(value):
        return _INT
    if _FLOAT_RE.match(value):
        return _FLOAT
    return _STR


_SCALAR_NODE, _SEQUENCE_NODE = yaml.ScalarNode, yaml.SequenceNode
_MAPPING_NODE = yaml.MappingNode


class _Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Core-schema resolution of plain scalars; quoted scalars are strings."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is _SCALAR_NODE:
            if implicit[0]:
                return core_tag(value)
            return _STR
        return _SEQ if kind is _SEQUENCE_NODE else _MAP

    # No path resolvers are registered: skip PyYAML's per-node bookkeeping for them.
    def descend_resolver(self, _node: Any, _index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


def _mark(mark: Any) -> tuple[int, int]:
    return (int(mark.line) + 1, int(mark.column) + 1)


def _int(value: str) -> int | None:
    """The integer of a core-schema int, or None when it has more than MAX_INT_DIGITS digits.

    Decimal digits are counted as written (signs aside, leading zeros included); an octal or
    hexadecimal integer counts the decimal digits of its value.
    """
    if value.startswith(("0o", "0x")):
        if len(value) > MAX_INT_DIGITS + 2:  # never fewer digits in base 8 or 16
            return None
        number = int(value[2:], 8 if value[1] == "o" else 16)
        return number if number < _INT_BOUND else None
    if len(value.lstrip("+-")) > MAX_INT_DIGITS:
        return None
    return int(value)


def _float(value: str) -> float:
    """The float of a core-schema float or int text (``!!float 0x1F`` is 31.0)."""
    if not value.startswith(("0o", "0x")):
        return float(value)  # a decimal text of any length; too large is inf
    exact = _int(value)
    try:
        return math.inf if exact is None else float(exact)
    except OverflowError:
        return math.inf


#: Words for JSON types in messages.
TYPE_WORDS = {
    "object": "a mapping",
    "array": "a sequence",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def json_type(value: Any) -> str:
    """The JSON type name of a plain value (a Python type name for anything else)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _kind(value: Any) -> str:
    return TYPE_WORDS.get(json_type(value), "a mapping")
