"""The third path of the reader: a manifest written as JSON text, read by :mod:`json`.

Why a third path: a manifest written by a program is JSON text more often than not, and the
event reader (``_events``) spends most of its time in libyaml's events, one Python object per
scalar. :mod:`json` reads the same text three to four times faster (its checks included); on
the bundled example grown to 10k tasks that is 22 to 24% of the whole ``validate``
(``docs/performance.md``, 2026-12-04, night).

Whenever :func:`_from_json` gives data, that is the event reader's. It keeps no positions: a
position asked for runs the event reader once.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from reprobridge_sdk.io._guards import MAX_DEPTH
from reprobridge_sdk.io._yamlcore import _int

# What YAML reads otherwise than JSON, or refuses: a character outside YAML's printable set,
# or one it takes as a line break (NEL, LS, PS), written raw; a surrogate written as an escape
# (JSON joins a pair, libyaml refuses it). JSON itself refuses the raw C0 controls.
_NOT_YAML = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
    r"|\\u[dD][89abAB]"
)


_OBJECT = re.compile(r"[ \t\r\n]*\{")
# A key's colon on a later line than the key (JSON strings hold no raw line break, so a
# colon first on a line follows a key).
_COLON_ON_NEXT_LINE = re.compile(r"\n[ \t\r\n]*:")  # a literal first: a tenth of the time
_COLON_ON_NEXT_LINE_CR = re.compile(r"[\n\r][ \t\r\n]*:")  # and where a CR alone may break
#: YAML takes an implicit key of at most 1,024 characters, quotes and spaces before the colon
#: included (YAML 1.2, section 7.4.2); a little less is left to the event reader to decide.
_LONGEST_KEY = 1000
# A line's strings and what lies between them (a JSON line starts outside a string), and
# whether a string is followed by a key's colon.
_TOKENS = re.compile(r'"((?:[^"\\]|\\.)*)"([ \t]*)(:?)|[^"]+')
# Half the longest key without a quote: a key and its spaces of ``_LONGEST_KEY`` hold one
# (the key's characters after its opening quote, or the spaces after its closing one) unless
# the key holds an escaped quote.
_LONG_STRETCH = re.compile(f'"[^"]{{{_LONGEST_KEY // 2}}}')


def _keys_yaml_refuses(text: str) -> bool:
    """True when a key's colon is on a later line, or a key with the spaces after it may be
    longer than YAML takes (only lines of at least ``_LONGEST_KEY`` characters are read)."""
    colon = _COLON_ON_NEXT_LINE_CR if "\r" in text else _COLON_ON_NEXT_LINE
    if colon.search(text):
        return True
    for line in text.split("\n"):
        if len(line) < _LONGEST_KEY or ('\\"' not in line and not _LONG_STRETCH.search(line)):
            continue
        for token in _TOKENS.finditer(line):
            if token.group(3) and len(token.group(1)) + len(token.group(2)) + 2 >= _LONGEST_KEY:
                return True
    return False


class _NotJson(Exception):
    """A value the event reader would not read (it leaves the text to the node converter)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _NotJson  # a key given twice: the converter reports it
    return mapping


def _integer(text: str) -> int:
    value = _int(text)
    if value is None:
        raise _NotJson  # more digits than JSON can carry: S004
    return value


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson  # too large for a double: S004
    return value


def _refuse(_text: str) -> Any:
    raise _NotJson  # NaN and Infinity are not JSON numbers: S004


def _nests_below_limit(data: Any) -> bool:
    """True when no collection of ``data`` is inside MAX_DEPTH others (Y005)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth >= MAX_DEPTH:
            return False
        for item in value.values() if type(value) is dict else value:
            if type(item) is dict or type(item) is list:
                stack.append((item, depth + 1))
    return True


def _from_json(text: str) -> dict[str, Any] | None:
    """The data of a JSON text whose top is an object, as the event reader reads it; None
    for any other text, and for a JSON text the event reader would not read alike: a key
    given twice, a number JSON cannot carry, nesting past MAX_DEPTH, a character YAML reads
    otherwise (``_NOT_YAML``), a key YAML cannot take (``_keys_yaml_refuses``)."""
    if not _OBJECT.match(text) or "\x7f" in text:
        return None
    if ("\\u" in text or not text.isascii()) and _NOT_YAML.search(text):
        return None
    try:
        data = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_integer,
            parse_float=_number,
            parse_constant=_refuse,
        )
    except (_NotJson, ValueError, RecursionError):
        return None
    if _keys_yaml_refuses(text) or not _nests_below_limit(data):
        return None
    return data  # type: ignore[no-any-return]
