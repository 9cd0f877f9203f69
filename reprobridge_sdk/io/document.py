"""Safe, fast loading of YAML documents with a position for every value (spec §3, "yaml").

The validator reads manifests through this module. It uses PyYAML's libyaml-backed composer
(``yaml.CSafeLoader``, falling back to the pure-Python ``SafeLoader``) at the *node* level and
converts nodes itself, so that it can

* map every value to its 1-based ``(line, col)`` through the value's JSON Pointer
  (:attr:`Document.positions`; where the key is written: :attr:`Document.key_positions`);
* report duplicate keys (Y003) instead of silently keeping one value;
* resolve plain scalars with the YAML 1.2 *core* schema (the one the round-trip loader uses):
  ``yes``/``no``/``on``/``off`` are strings, ``1e3`` is a float, ``012`` is the integer 12,
  and YAML 1.1 implicit timestamps (``2024-05-01``) stay strings, since the format's dates are
  strings. Explicit tags other than the core schema's (``!!str``, ``!!int``, ``!!float``,
  ``!!bool``, ``!!null``, ``!!seq``, ``!!map``) -- ``!!timestamp``, ``!!binary``, ``!!set``,
  ``!!omap``, local tags such as ``!python/object`` -- are Y008 and the node is read as if
  untagged. Merge keys (``<<``) are not interpreted: ``<<`` is an ordinary key;
* report non-string keys (Y009; the entry is dropped);
* report numbers that JSON cannot carry as S004 at their pointer: ``.nan``, ``.inf`` and
  ``-.inf`` (in any spelling of the core schema, also under ``!!float``), a float too large
  to be finite (``1e400``) and an integer of more than ``MAX_INT_DIGITS`` (4,300) decimal
  digits (CPython's limit on int/str conversions); the value is read as a non-finite float
  and its pointer is listed in :attr:`Document.unrepresentable` so the schema layer does not
  report it again. ``1_000``, ``0b101``, ``-0x1F`` and ``+0x1F`` are strings (the core
  schema has no underscores, no binary and no signed hexadecimal or octal);
* bound the work an untrusted document can cause: the size is checked before parsing (Y006),
  nesting depth (Y005) is checked before libyaml's recursive composer runs (it crashes the
  interpreter on very deep input) and whatever libyaml's own nesting limit is, and nodes
  expanded through aliases are counted (Y004) so a "billion laughs" document stops early and
  never blows up memory; recursive aliases are Y004;
* report bytes that are not UTF-8 (Y007, at the line of the first bad byte) and syntax errors
  (Y001, at the parser's line and column); a stream of several documents is Y011 (at the
  start of the second); a document that is not a mapping is Y002.

Cost: one parse, linear in the text. The depth walk before composing runs only when the text
could nest past the composer's safe depth (more than 400 flow brackets, or a line whose
indentation and block indicators could open that many levels: ``2 * (indent + 1)`` plus its
``-``, ``?`` and ``:`` characters); a long line of prose or a long URL no longer triggers it.
Below that bound the converter reports Y005 at the same collection as the walk would. The
garbage collector is paused while nodes are composed and converted (restored in a
``finally``): the node graph is acyclic and short-lived, and without the pause every young
generation collection rescans it, which made a 10k-task manifest cost twice its time.

A document with a fatal problem (Y001, Y004-Y007, Y011) has ``data`` set to ``None``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import safefs

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "TYPE_WORDS",
    "Document",
    "core_tag",
    "escape_pointer",
    "gc_paused",
    "json_type",
    "load_document",
    "nests_too_deep",
    "unescape_pointer",
]

#: Largest manifest read, in bytes (checked before parsing).
MAX_BYTES = 8 * 1024 * 1024
#: Deepest nesting of collections allowed.
MAX_DEPTH = 64
#: Most nodes that aliases may expand to, over the whole document.
MAX_ALIAS_NODES = 100_000

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
# Upper bound of the nesting a text can reach without flow brackets: each block level needs
# at least one more column of indentation or a "- " on the line.
_SAFE_GUARD = 800
# The nesting libyaml 0.2.5 and later refuse to pass; composing up to it is safe (tested).
_LIBYAML_NESTING = 1000


#: Where a collection is written: offset of its first character, 0-based line and column,
#: offset past its end, and whether it is a sequence's item.
Span = tuple[int, int, int, int, bool]

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


class _Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Core-schema resolution of plain scalars; quoted scalars are strings."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is _SCALAR_NODE:
            if implicit[0]:
                return core_tag(value)
            return _STR
        return _SEQ if kind is _SEQUENCE_NODE else _MAP

    # No path resolvers are registered: skip PyYAML's per-node bookkeeping for them.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


def escape_pointer(token: str) -> str:
    """Escape one JSON Pointer reference token (RFC 6901)."""
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def unescape_pointer(token: str) -> str:
    """Undo :func:`escape_pointer`."""
    return token.replace("~1", "/").replace("~0", "~")


@dataclass
class Document:
    """A parsed YAML document: plain data, positions and the findings of loading it."""

    name: str
    text: str
    data: Any = None
    findings: list[Finding] = field(default_factory=list)
    #: Pointers of numbers JSON cannot carry (``.nan``, ``.inf``, overlong integers): S004.
    unrepresentable: set[str] = field(default_factory=set)
    # None until asked for: a document read without a finding has its positions computed
    # from ``text`` when the first position is asked for (see _parse_nodes).
    _positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)
    _key_positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)
    # Finds single pointers in ``text`` while the maps above are not computed (see locate).
    _locator: Any = field(default=None, repr=False, compare=False)
    # The text is in the JSON subset (read by json): the locator reads it as JSON.
    _json_text: bool = field(default=False, repr=False, compare=False)
    # Where the collections two levels down are written (see _from_events), for the locator.
    _spans: dict[str, Span] = field(default_factory=dict, repr=False, compare=False)

    @property
    def positions(self) -> dict[str, tuple[int, int]]:
        """``(line, col)`` of every value, by JSON Pointer (the first occurrence's)."""
        if self._positions is None:
            self._positions, self._key_positions = _positions_of(self.name, self.text)
        return self._positions

    @property
    def key_positions(self) -> dict[str, tuple[int, int]]:
        """``(line, col)`` of the key of every mapping entry, by the entry's JSON Pointer."""
        if self._key_positions is None:
            self._positions, self._key_positions = _positions_of(self.name, self.text)
        return self._key_positions

    @property
    def fatal(self) -> bool:
        """True when the document could not be read into data at all."""
        return self.data is None and bool(self.findings)

    def locate(self, pointer: str, *, key: bool = False) -> tuple[int, int]:
        """``(line, col)`` of ``pointer``, or of its nearest ancestor that exists; (0, 0) if none.

        With ``key=True`` the position of the key is preferred (where ``name:`` is written).
        A document read without a finding answers without computing every position: the
        pointer alone is found in the text (:class:`~reprobridge_sdk.io._locate.Locator`,
        the same answer as the maps).
        """
        if self._positions is None and self.text:
            if self._locator is None:
                from reprobridge_sdk.io._locate import Locator  # noqa: PLC0415 - it imports this

                self._locator = Locator(
                    self.text,
                    json_text=self._json_text,
                    spans=self._spans,
                    loader=_Loader,
                    # not the document's own maps: a closure over it would make a cycle
                    fallback=functools.partial(_positions_of, self.name, self.text),
                )
            return self._locator.locate(pointer, key=key)  # type: ignore[no-any-return]
        current = pointer
        while True:
            if key and current in self.key_positions:
                return self.key_positions[current]
            if current in self.positions:
                return self.positions[current]
            if not current:
                return (0, 0)
            current = current.rsplit("/", 1)[0] if "/" in current else ""

    def finding(
        self, code: str, message: str, *, path: str = "", hint: str | None = None, key: bool = False
    ) -> Finding:
        """A finding located at ``path`` in this document."""
        line, col = self.locate(path, key=key)
        return finding(code, message, path=path, file=self.name, line=line, col=col, hint=hint)


class _Fatal(Exception):
    def __init__(self, item: Finding) -> None:
        super().__init__(item.message)
        self.item = item


def load_document(
    source: str | os.PathLike[str] | bytes,
    *,
    name: str | None = None,
    root: str | os.PathLike[str] | None = None,
) -> Document:
    """Load a YAML document from a path or from bytes; never raises for bad content.

    A path is read through the safe file layer: with ``root`` it must stay inside it; a
    FIFO, device or other non-regular file, or a link at the last step when there is no
    ``root``, raises :class:`~reprobridge_sdk.io.safefs.UnsafeFileError` (never hangs); a
    file over :data:`MAX_BYTES` is Y006 without being read. I/O errors on reading ``source``
    (missing file, permission) raise ``OSError``.
    """
    if isinstance(source, bytes):
        raw = source
        label = name or "<bytes>"
    else:
        path = Path(source)
        label = name or str(path)
        try:
            raw = safefs.read_bytes(path, root=root, max_bytes=MAX_BYTES)
        except safefs.UnsafeFileError as exc:
            if exc.reason != "too-large":
                raise
            return Document(label, "", findings=[_too_large(label, _size(path))])
    if len(raw) > MAX_BYTES:
        return Document(label, "", findings=[_too_large(label, len(raw))])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        col = len(raw[start : exc.start].decode("utf-8", "replace")) + 1
        item = finding(
            "Y007",
            f"byte 0x{raw[exc.start]:02x} at offset {exc.start} is not valid UTF-8",
            file=label,
            line=line,
            col=col,
            hint="save the file as UTF-8",
        )
        return Document(label, "", findings=[item])
    if text.startswith("\ufeff"):
        text = text[1:]
    return _parse(label, text)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # pragma: no cover - it was just opened
        return MAX_BYTES + 1


def _too_large(label: str, size: int) -> Finding:
    return finding(
        "Y006",
        f"the file has {size} bytes; at most {MAX_BYTES} are read",
        file=label,
        line=1,
        col=1,
    )


def _several_documents(text: str) -> bool:
    """More than one document in the stream (counted on parser events, not on messages)."""
    count = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.DocumentStartEvent):
                count += 1
                if count > 1:
                    return True
    except yaml.YAMLError:
        return count > 1
    return False


def _mark(mark: Any) -> tuple[int, int]:
    return (int(mark.line) + 1, int(mark.column) + 1)


def _parse(label: str, text: str) -> Document:
    # The nodes are released when _parse_nodes returns, before the collector runs again:
    # it then scans the converted values only, never the node graph.
    with gc_paused():
        return _parse_nodes(label, text)


def _parse_nodes(label: str, text: str) -> Document:
    plain = _json_subset(text)
    if plain is not None:  # positions, if asked for, are found in the text
        return Document(label, text, data=plain, _json_text=True)
    spans: dict[str, Span] = {}
    events = _from_events(text, spans)
    if events is not None:
        return Document(label, text, data=events, _spans=spans)
    doc = Document(label, text, _positions={}, _key_positions={})
    at_risk = _composer_at_risk(text)
    try:
        if at_risk and not _composer_bounded():
            _check_depth(label, text)
        try:
            root = yaml.compose(text, Loader=_Loader)
        except yaml.YAMLError:
            if at_risk:  # a level past MAX_DEPTH before the error is Y005, as when walked first
                _check_depth(label, text)
            raise
    except _Fatal as fatal:
        doc.findings.append(fatal.item)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = _mark(mark) if mark is not None else (1, 1)
        if isinstance(exc, yaml.composer.ComposerError) and _several_documents(text):
            message = "the file holds more than one YAML document; a manifest is one document"
            doc.findings.append(
                finding(
                    "Y011",
                    message,
                    file=label,
                    line=line,
                    col=col,
                    hint="remove the '---' line and what follows, or split the file",
                )
            )
            return doc
        problem = exc.problem or str(exc).splitlines()[0]
        context = f" ({exc.context})" if exc.context else ""
        doc.findings.append(finding("Y001", f"{problem}{context}", file=label, line=line, col=col))
        return doc
    except yaml.YAMLError as exc:
        doc.findings.append(finding("Y001", str(exc).splitlines()[0], file=label, line=1, col=1))
        return doc
    if root is None:
        doc.findings.append(
            finding("Y002", "the document is empty; expected a mapping", file=label, line=1, col=1)
        )
        return doc
    converter = _Converter(doc)
    try:
        if "*" in text:  # without an alias there is nothing to expand
            _check_aliases(label, root)
        try:
            data = _plain(root)
            doc._positions = doc._key_positions = None  # computed when first asked for
        except _NotPlain:
            data = converter.convert(root, "", 0)
    except _Fatal as fatal:
        if fatal.item.code == "Y005":  # as when the depth walk finds it before composing
            doc.findings.clear()
        doc.findings.append(fatal.item)
        doc._positions, doc._key_positions = {}, {}
        return doc
    doc.data = data
    if not isinstance(data, dict):
        line, col = _mark(root.start_mark)
        kind = _kind(data)
        doc.findings.append(
            finding(
                "Y002",
                f"the document is {kind}; expected a mapping",
                file=label,
                line=line,
                col=col,
            )
        )
    return doc


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


class _NotEvents(Exception):
    """The text holds something the event converter leaves to the node converter."""


_SCALAR_EVENT, _ALIAS_EVENT = yaml.ScalarEvent, yaml.AliasEvent
_MAPPING_START, _SEQUENCE_START = yaml.MappingStartEvent, yaml.SequenceStartEvent
_MAPPING_END, _SEQUENCE_END = yaml.MappingEndEvent, yaml.SequenceEndEvent


# The numbers manifests hold most (``3``, ``-0.5``, ``63.42``): one match instead of the core
# schema's four patterns in turn, with the same reading.
_PLAIN_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?\Z")


def _event_scalar(value: str) -> Any:
    """The data of a plain scalar that may not be a string; :class:`_NotEvents` when the
    converter would report it (a number JSON cannot carry)."""
    if _PLAIN_DECIMAL.match(value):
        if "." in value:
            number = float(value)
            if math.isfinite(number):
                return number
            raise _NotEvents
        exact = _int(value)
        if exact is None:
            raise _NotEvents
        return exact
    tag = core_tag(value)
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return value[0] in "tT"
    if tag == _INT:
        exact = _int(value)
        if exact is None:
            raise _NotEvents
        return exact
    if value.lower().endswith((".nan", ".inf")):
        raise _NotEvents
    number = _float(value)
    if not math.isfinite(number):
        raise _NotEvents
    return number


def _from_events(text: str, spans: dict[str, Span] | None = None) -> dict[str, Any] | None:
    """The data of a YAML text read from libyaml's events, without composing nodes; None
    when the text needs the node converter.

    The converter over nodes builds about 600k node objects for a 10k-task block manifest
    and converts them again; this one converts each event as it comes and keeps no node. It
    reads only documents in which the node converter would find nothing and that need no
    node graph: one document whose top is a mapping; no anchor, alias or explicit tag; keys
    that are scalars read as strings, none twice; no number JSON cannot carry; nesting under
    MAX_DEPTH. Plain scalars resolve by the core schema (:func:`core_tag`) and quoted ones
    are strings, as in :class:`_Loader`. Anything else (an error of the parser included)
    returns None and the text is composed as before, findings and all; whenever this
    converter finishes, its data is the node converter's. Positions are not recorded:
    :class:`~reprobridge_sdk.io._locate.Locator` finds the ones findings ask for, helped by
    ``spans``: filled with where each collection two levels down (a task, a launcher) is
    written, by pointer: the offset of its first character, its 0-based line and column,
    the offset past its end and whether it is a sequence's item, so that a pointer below it
    is found by reading that span alone. The event stream has no recursion, so no depth of
    input can crash it.
    """
    loader = _Loader(text)
    try:
        return _convert_events(loader.get_event, {} if spans is None else spans)
    except (_NotEvents, yaml.YAMLError):
        return None
    finally:
        loader.dispose()


def _convert_events(get: Any, spans: dict[str, Span]) -> dict[str, Any] | None:
    if type(get()) is not yaml.StreamStartEvent or type(get()) is not yaml.DocumentStartEvent:
        raise _NotEvents
    maybe = _MAYBE_NOT_STR
    stack: list[tuple[Any, Any, bool]] = []
    top: Any = None  # the collection being filled
    key: str | None = None  # the pending key of a mapping (None: a key comes next)
    in_map = False
    outer = ""  # the pointer of the collection one level down being read
    inner: tuple[str, int, int, int, bool] | None = None  # the one two levels down, and its start
    while True:
        event = get()
        kind = type(event)
        if kind is _SCALAR_EVENT:
            if event.anchor is not None or event.tag is not None:
                raise _NotEvents
            value = event.value
            if event.implicit[0] and (not value or value[0] in maybe):
                value = _event_scalar(value)
            if in_map:
                if key is None:
                    if type(value) is not str or value in top:
                        raise _NotEvents  # a non-string or duplicate key: a finding
                    key = value
                    continue
                top[key] = value
                key = None
            elif top is not None:
                top.append(value)
            else:
                raise _NotEvents  # a scalar document
            continue
        if kind is _MAPPING_START or kind is _SEQUENCE_START:
            if event.anchor is not None or event.tag is not None:
                raise _NotEvents
            if (in_map and key is None) or len(stack) >= MAX_DEPTH:
                raise _NotEvents  # a collection key, or nesting the converter reports
            new: Any = {} if kind is _MAPPING_START else []
            if in_map:
                top[key] = new
            elif top is not None:
                top.append(new)
            elif kind is not _MAPPING_START:
                raise _NotEvents  # a sequence at the top: Y002
            if len(stack) == 1:
                outer = f"/{escape_pointer(key) if in_map else len(top) - 1}"  # type: ignore[arg-type]
            elif len(stack) == 2:
                mark = event.start_mark
                name = escape_pointer(key) if in_map else str(len(top) - 1)  # type: ignore[arg-type]
                inner = (f"{outer}/{name}", mark.index, mark.line, mark.column, not in_map)
            stack.append((top, key, in_map))
            top, key, in_map = new, None, kind is _MAPPING_START
            continue
        if kind is _MAPPING_END or kind is _SEQUENCE_END:
            done = top
            top, key, in_map = stack.pop()
            key = None
            if len(stack) == 2 and inner is not None:
                spans[inner[0]] = (inner[1], inner[2], inner[3], event.end_mark.index, inner[4])
            if top is None:
                break
            continue
        raise _NotEvents  # an alias, or an event out of place
    if type(get()) is not yaml.DocumentEndEvent or type(get()) is not yaml.StreamEndEvent:
        raise _NotEvents  # a second document: Y011
    return done  # type: ignore[no-any-return]


_JSON_STRING = re.compile(r'"[^"]*"')  # without backslashes a string is this, and only this
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _bracket_depth(text: str) -> int:
    """The deepest nesting of brackets outside the strings of a JSON text without escapes
    (a collection at data depth ``d`` sits inside ``d + 1`` brackets)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def _positions_of(
    label: str, text: str
) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """The positions of values and keys of a document that was read without a finding
    (composed and converted again, this time recording where each value is)."""
    scratch = Document(label, text, _positions={}, _key_positions={})
    with gc_paused():
        root = yaml.compose(text, Loader=_Loader)
        if root is not None:  # no node (a file that did not decode, an empty text): no position
            _Converter(scratch).convert(root, "", 0)
    assert scratch._positions is not None and scratch._key_positions is not None
    return scratch._positions, scratch._key_positions


class _NotPlain(Exception):
    """The document needs the full converter: something in it is a finding."""


def _plain(root: Any) -> Any:
    """The data of a node graph that holds no finding, converted without positions.

    Positions are most of the converter's work and memory, and a document without a finding
    usually never needs one. Anything the full converter would report (a duplicate or
    non-string key, a tag or number it flags, nesting at MAX_DEPTH) raises
    :class:`_NotPlain` and the caller converts the whole graph again with positions; the
    data of both converters is the same whenever this one finishes.
    """

    def scalar(node: Any) -> Any:
        tag = node.tag
        value: str = node.value
        if tag in (_STR, "!"):
            return value
        if tag == _NULL and _NULL_RE.match(value):
            return None
        if tag == _BOOL and _BOOL_RE.match(value):
            return value[0] in "tT"
        if tag == _INT and _INT_RE.match(value):
            exact = _int(value)
            if exact is not None:
                return exact
        elif (
            tag == _FLOAT
            and (_FLOAT_RE.match(value) or _INT_RE.match(value))
            and not value.lower().endswith((".nan", ".inf"))
        ):
            number = _float(value)
            if math.isfinite(number):
                return number
        raise _NotPlain

    def convert(node: Any, depth: int) -> Any:
        kind = type(node)
        if kind is _SCALAR_NODE:
            return node.value if node.tag == _STR else scalar(node)
        if depth >= MAX_DEPTH or node.tag not in _CORE:
            raise _NotPlain
        if kind is _SEQUENCE_NODE:
            return [
                item.value
                if item.tag == _STR and type(item) is _SCALAR_NODE
                else convert(item, depth + 1)
                for item in node.value
            ]
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not _SCALAR_NODE:
                raise _NotPlain
            key = key_node.value if key_node.tag == _STR else scalar(key_node)
            if type(key) is not str or key in result:
                raise _NotPlain
            if value_node.tag == _STR and type(value_node) is _SCALAR_NODE:
                result[key] = value_node.value
            else:
                result[key] = convert(value_node, depth + 1)
        return result

    return convert(root, 0)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; restore its state even on an
    exception (a collector that was off stays off).

    For work that holds a large acyclic structure (a document's data, a node graph) while
    it allocates many short-lived objects: each full collection would rescan all of it.
    Objects are still freed by reference counting; only reference cycles wait for the
    collector to be back.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def _composer_at_risk(text: str) -> bool:
    """True unless ``text`` provably nests at most ``_SAFE_GUARD // 2`` levels.

    A flow collection needs a bracket (all brackets are counted, quoted or not). A block
    collection opens either on a line of more indentation (at most two levels per column:
    a sequence may sit at its parent mapping's indentation) or after an indicator on the same
    line (``- ``, ``? ``, ``: ``): a line nests at most ``2 * (indent + 1)`` plus its count of
    ``-``, ``?`` and ``:`` characters. A line of ``n`` characters nests at most ``2n + 2``, so
    only lines longer than half the remaining budget are looked at. A line holding another YAML
    line break counts its whole length as indentation (an overestimate, never an under one).
    """
    budget = _SAFE_GUARD // 2 - (text.count("[") + text.count("{"))
    if budget < 0:
        return True
    shortest = max(budget // 2 - 1, 0) + 1
    for match in re.finditer(rf"^[^\n]{{{shortest},}}", text, re.MULTILINE):
        line = match.group()
        line = line.removesuffix("\r")
        if any(b in line for b in _OTHER_BREAKS):
            indent = len(line)
        else:
            indent = len(line) - len(line.lstrip(" "))
        opened = line.count("-") + line.count("?") + line.count(":")
        if 2 * (indent + 1) + opened > budget:
            return True
    return False


@functools.cache
def _composer_bounded() -> bool:
    """True when libyaml itself refuses to nest flow and block collections past
    ``_LIBYAML_NESTING`` levels (libyaml 0.2.5 and later stop there), so the composer never
    recurses deeper than that, a depth it handles, whatever the text.

    Asked once per process, of two small texts. Then the depth walk before composing is not
    needed: a text that composes is converted, and the converter reports Y005 at the
    collection the walk would report; a text that does not compose is walked after the
    error, which gives Y005 exactly when the walk first would have.
    """
    if _BaseLoader is yaml.SafeLoader:  # pragma: no cover - no libyaml: always walk
        return False
    depth = _LIBYAML_NESTING + 1
    probes = ("[" * depth + "]" * depth, "- " * depth + "x")
    for probe in probes:
        try:
            yaml.compose(probe, Loader=_Loader)
        except yaml.YAMLError:
            continue
        return False  # composed: this build has no limit at that depth
    return True


def _may_be_deep(text: str) -> bool:
    if text.count("[") + text.count("{") > _SAFE_GUARD // 2:
        return True
    longest = max((len(line) for line in text.splitlines()), default=0)
    return longest * 2 > _SAFE_GUARD // 2


def nests_too_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """True when YAML ``text`` nests deeper than ``max_depth`` (a walk of events, no recursion).

    For YAML evidence read by other loaders, which would recurse (and crash) on deep input.
    """
    if not _may_be_deep(text):
        return False
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False  # the loader reports the syntax error
    return False


def _check_depth(label: str, text: str) -> None:
    """Y005 at the first collection nested past MAX_DEPTH, whatever the PyYAML build.

    The event stream is walked (not recursively) with the fast parser. Builds of libyaml
    differ in their own nesting limits (PyYAML 6.0.4's stops at 1,000 flow levels, and its
    scanner reads far ahead of the events, so it fails before this walk sees level 65). So
    when the fast parser stops with an error, the pure-Python parser, which has no nesting
    limit of its own, walks the text again up to that error's offset: a level past MAX_DEPTH
    before it is Y005; otherwise the error stands and is reported as Y001 by the caller. The
    second walk reads no further than the first got, so it costs at most one more parse.
    """
    try:
        _walk_depth(label, text, _Loader, None)
    except yaml.MarkedYAMLError as exc:
        if _BaseLoader is yaml.SafeLoader:  # pragma: no cover - no libyaml: the error stands
            return
        mark = exc.problem_mark or exc.context_mark
        stop = mark.index if mark is not None else len(text)
        with contextlib.suppress(yaml.YAMLError):  # the caller reports the document's error
            _walk_depth(label, text, yaml.SafeLoader, stop)
    except yaml.YAMLError:  # pragma: no cover - every libyaml error carries a mark
        return


def _walk_depth(label: str, text: str, loader: type[Any], stop: int | None) -> None:
    depth = 0
    events: Iterator[Any] = yaml.parse(text, Loader=loader)
    for event in events:
        if stop is not None and event.start_mark.index > stop:
            return
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line, col = _mark(event.start_mark)
                raise _Fatal(_too_deep(label, line, col))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_key_depth(label: str, key: Any, depth: int) -> None:
    """Y005 at the first collection of a node that is never converted (a collection key, or
    the value of a dropped entry: a duplicate or non-string key) nested past MAX_DEPTH, in
    document order, as the depth walk would report it."""
    stack = [(key, depth)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            continue
        if level >= MAX_DEPTH:
            line, col = _mark(node.start_mark)
            raise _Fatal(_too_deep(label, line, col))
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = [n for pair in node.value for n in pair]
        stack.extend((child, level + 1) for child in reversed(children))


def _too_deep(label: str, line: int, col: int) -> Finding:
    return finding(
        "Y005",
        f"the document nests deeper than {MAX_DEPTH} levels",
        file=label,
        line=line,
        col=col,
    )


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


def _check_aliases(label: str, root: Any) -> None:
    """Y004 before any expansion: sizes of the node graph counted once per distinct node."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    unique = 0

    def size(node: Any, depth: int) -> int:
        nonlocal unique
        ident = id(node)
        known = sizes.get(ident)
        if known is not None:
            return known
        if ident in active:
            line, col = _mark(node.start_mark)
            raise _Fatal(
                finding(
                    "Y004",
                    "an alias refers to a node that contains it (recursive alias)",
                    file=label,
                    line=line,
                    col=col,
                )
            )
        unique += 1
        total = 1
        if depth <= MAX_DEPTH and not isinstance(node, yaml.ScalarNode):
            active.add(ident)
            children = node.value
            if isinstance(node, yaml.MappingNode):
                children = [part for pair in children for part in pair]
            for child in children:
                total += size(child, depth + 1)
            active.discard(ident)
        sizes[ident] = total
        return total

    if size(root, 0) <= unique + MAX_ALIAS_NODES:
        return
    node = root
    while True:
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        big = [child for child in children if sizes.get(id(child), 0) > MAX_ALIAS_NODES]
        if not big:
            break
        node = big[0]
    line, col = _mark(node.start_mark)
    raise _Fatal(
        finding(
            "Y004",
            f"aliases expand to more than {MAX_ALIAS_NODES} nodes",
            file=label,
            line=line,
            col=col,
            hint="write the repeated parts out, or use fewer nested aliases",
        )
    )


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


class _Converter:
    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def convert(self, node: Any, pointer: str, depth: int) -> Any:
        positions = self.doc.positions
        if pointer not in positions:
            mark = node.start_mark
            positions[pointer] = (mark.line + 1, mark.column + 1)
        tag = node.tag
        if tag == _STR and type(node) is _SCALAR_NODE:  # the most common node: a string
            return node.value
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, pointer)
        if depth >= MAX_DEPTH:
            line, col = _mark(node.start_mark)
            raise _Fatal(_too_deep(self.doc.name, line, col))
        if tag not in _CORE:
            self._bad_tag(node, pointer)
        if isinstance(node, yaml.SequenceNode):
            return [
                self.convert(item, f"{pointer}/{index}", depth + 1)
                for index, item in enumerate(node.value)
            ]
        return self._mapping(node, pointer, depth)

    def _mapping(self, node: Any, pointer: str, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        positions = self.doc.positions
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                _check_key_depth(self.doc.name, key_node, depth + 1)
                _check_key_depth(self.doc.name, value_node, depth + 1)  # its value is dropped
                line, col = _mark(key_node.start_mark)
                self.doc.findings.append(
                    finding(
                        "Y009",
                        "a mapping key is a collection; keys must be strings",
                        file=self.doc.name,
                        line=line,
                        col=col,
                        path=pointer,
                    )
                )
                continue
            key = key_node.value if key_node.tag == _STR else self._scalar(key_node, None)
            if not isinstance(key, str):
                _check_key_depth(self.doc.name, value_node, depth + 1)  # as the walk would
                line, col = _mark(key_node.start_mark)
                self.doc.findings.append(
                    finding(
                        "Y009",
                        f"the key {key_node.value!r} is {_kind(key)}; keys must be strings",
                        file=self.doc.name,
                        line=line,
                        col=col,
                        path=pointer,
                        hint=f"quote the key: '{key_node.value}'",
                    )
                )
                continue
            child = (
                f"{pointer}/{key}"
                if "~" not in key and "/" not in key
                else f"{pointer}/{escape_pointer(key)}"
            )
            mark = key_node.start_mark
            key_mark = (mark.line + 1, mark.column + 1)
            if key in result:
                _check_key_depth(self.doc.name, value_node, depth + 1)  # as the walk would
                first = self.doc.key_positions.get(child, (0, 0))
                self.doc.findings.append(
                    finding(
                        "Y003",
                        f"the key {key!r} occurs again (first at line {first[0]})",
                        file=self.doc.name,
                        line=key_mark[0],
                        col=key_mark[1],
                        path=child,
                        hint="remove one of the two entries",
                    )
                )
                continue
            self.doc.key_positions[child] = key_mark
            if value_node.tag == _STR and type(value_node) is _SCALAR_NODE:
                if child not in positions:  # a string value: convert() inlined
                    mark = value_node.start_mark
                    positions[child] = (mark.line + 1, mark.column + 1)
                result[key] = value_node.value
            else:
                result[key] = self.convert(value_node, child, depth + 1)
        return result

    def _scalar(self, node: Any, pointer: str | None) -> Any:
        tag = node.tag
        value: str = node.value
        if tag in (_STR, "!"):
            return value
        if tag == _NULL:
            if _NULL_RE.match(value):
                return None
        elif tag == _BOOL:
            if _BOOL_RE.match(value):
                return value[0] in "tT"
        elif tag == _INT:
            if _INT_RE.match(value):
                exact = _int(value)
                if exact is None:
                    return self._not_json(node, pointer, too_long=True)
                return exact
        elif tag == _FLOAT and (_FLOAT_RE.match(value) or _INT_RE.match(value)):
            if value.lower().endswith((".nan", ".inf")):
                return self._not_json(node, pointer)
            number = _float(value)
            return number if math.isfinite(number) else self._not_json(node, pointer)
        if pointer is not None:
            self._bad_tag(node, pointer)
        if tag not in _CORE and not node.style:
            # A plain scalar under a tag the format does not allow is read as if untagged
            # (`seeds: !custom 3` is the integer 3, with Y008); a quoted one is a string.
            plain = yaml.ScalarNode(core_tag(value), value, node.start_mark, node.end_mark)
            return self._scalar(plain, pointer)
        return value

    def _not_json(self, node: Any, pointer: str | None, *, too_long: bool = False) -> float:
        """S004 for a number JSON cannot carry; the value is read as a non-finite float."""
        value: str = node.value
        if pointer is not None:
            if too_long:
                digits = len(value.lstrip("+-"))
                message = f"an integer of {digits} digits; at most {MAX_INT_DIGITS} are allowed"
            else:
                message = f"{value[:40]!r} is not a finite number; the format's numbers are JSON's"
            self.doc.findings.append(
                self.doc.finding("S004", message, path=pointer, hint="quote it to make it a string")
            )
            self.doc.unrepresentable.add(pointer)
        if value.lower().endswith(".nan"):
            return math.nan
        return -math.inf if value.startswith("-") else math.inf

    def _bad_tag(self, node: Any, pointer: str) -> None:
        line, col = _mark(node.start_mark)
        tag = str(node.tag)
        short = "!!" + tag[len(_T) :] if tag.startswith(_T) else tag
        if tag in _CORE:
            message = f"{node.value!r} cannot be read as {short}"
        else:
            message = f"the tag {short} is not allowed; only the YAML core schema's tags are"
        self.doc.findings.append(
            finding(
                "Y008",
                message,
                file=self.doc.name,
                line=line,
                col=col,
                path=pointer,
                hint="remove the tag; the value is read as plain YAML",
            )
        )
