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

Cost: one parse, linear in the text. A document in which the converter would find nothing is
read from libyaml's events (``_events``: reading is most of ``validate``, see its module) and
keeps no node graph; a position asked of it is found in the text, the pointer alone
(``_locate``, the answer the converter's maps give). Any other document is composed and
converted with every position.
The depth walk before composing runs only when the text could nest past the composer's safe
depth (more than 400 flow brackets outside a JSON text that ``json`` reads within that depth,
or a line whose indentation and block indicators could open that many levels:
``2 * (indent + 1)`` plus its ``-``, ``?`` and ``:`` characters). Below that bound the
converter reports Y005 at the same collection as the walk would. The garbage collector is
left alone: the command line sets its thresholds for the whole command
(:data:`reprobridge_sdk.cli.GC_THRESHOLD`).

A document with a fatal problem (Y001, Y004-Y007, Y011) has ``data`` set to ``None``.

This module owns the :class:`Document` and the order of the reading; each part is private
and states its own rules: ``_events`` (data from events, no finding), ``_locate`` (one
pointer's position found in the text), ``_nodes`` (the node converter, positions and findings),
``_guards`` (the size, depth and alias bounds), ``_yamlcore`` (the core schema's resolution)
and :mod:`~reprobridge_sdk.io.pointer` (JSON Pointer tokens).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io._events import Span, _from_events
from reprobridge_sdk.io._guards import (
    MAX_ALIAS_NODES,
    MAX_BYTES,
    MAX_DEPTH,
    _check_aliases,
    _check_depth,
    _composer_at_risk,
    _composer_bounded,
    _Fatal,
    _size,
    _too_large,
    nests_too_deep,
)
from reprobridge_sdk.io._nodes import _Converter
from reprobridge_sdk.io._yamlcore import (
    MAX_INT_DIGITS,
    TYPE_WORDS,
    _kind,
    _Loader,
    _mark,
    core_tag,
    json_type,
)
from reprobridge_sdk.io.pointer import escape_pointer, unescape_pointer

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "TYPE_WORDS",
    "Document",
    "core_tag",
    "escape_pointer",
    "json_type",
    "load_document",
    "nests_too_deep",
    "unescape_pointer",
]


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
    # from ``text`` when every position is asked for (see _positions_of).
    _positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)
    _key_positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)
    # Finds single pointers in ``text`` while the maps above are not computed (see locate).
    _locator: Any = field(default=None, repr=False, compare=False)
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
        """
        if self._positions is None and self.text:
            if self._locator is None:
                from reprobridge_sdk.io._locate import Locator  # noqa: PLC0415 - it imports this

                self._locator = Locator(
                    self.text,
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
        self,
        code: str,
        message: str,
        *,
        path: str = "",
        hint: str | None = None,
        key: bool = False,
        context: str | None = None,
    ) -> Finding:
        """A finding located at ``path`` in this document (severity: the code's in ``context``)."""
        line, col = self.locate(path, key=key)
        return finding(
            code,
            message,
            path=path,
            file=self.name,
            line=line,
            col=col,
            hint=hint,
            context=context,
        )


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


def _parse(label: str, text: str) -> Document:
    spans: dict[str, Span] = {}
    data = _from_events(text, spans)
    if data is not None:  # no finding: a position asked for is found in the text
        return Document(label, text, data=data, _spans=spans)
    doc = Document(label, text, _positions={}, _key_positions={})
    try:
        root = _compose(label, text)
    except _Fatal as fatal:
        doc.findings.append(fatal.item)
        return doc
    except yaml.YAMLError as exc:
        doc.findings.append(_syntax_error(exc, label, text))
        return doc
    if root is None:
        doc.findings.append(
            finding("Y002", "the document is empty; expected a mapping", file=label, line=1, col=1)
        )
        return doc
    _convert(doc, root)
    return doc


def _compose(label: str, text: str) -> Any:
    """The node graph of ``text``; its depth is walked first where the composer could crash."""
    at_risk = _composer_at_risk(text)
    if at_risk and not _composer_bounded():
        _check_depth(label, text)
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        if at_risk:  # a level past MAX_DEPTH before the error is Y005, as when walked first
            _check_depth(label, text)
        raise


def _syntax_error(exc: yaml.YAMLError, label: str, text: str) -> Finding:
    """Y011 for a second document, else Y001 at the parser's position."""
    if not isinstance(exc, yaml.MarkedYAMLError):
        return finding("Y001", str(exc).splitlines()[0], file=label, line=1, col=1)
    mark = exc.problem_mark or exc.context_mark
    line, col = _mark(mark) if mark is not None else (1, 1)
    if isinstance(exc, yaml.composer.ComposerError) and _several_documents(text):
        message = "the file holds more than one YAML document; a manifest is one document"
        hint = "remove the '---' line and what follows, or split the file"
        return finding("Y011", message, file=label, line=line, col=col, hint=hint)
    problem = exc.problem or str(exc).splitlines()[0]
    context = f" ({exc.context})" if exc.context else ""
    return finding("Y001", f"{problem}{context}", file=label, line=line, col=col)


def _convert(doc: Document, root: Any) -> None:
    """Convert the node graph into ``doc``: its data, positions and findings."""
    try:
        if "*" in doc.text:  # without an alias there is nothing to expand
            _check_aliases(doc.name, root)
        data = _Converter(doc).convert(root, "", 0)
    except _Fatal as fatal:
        if fatal.item.code == "Y005":  # as when the depth walk finds it before composing
            doc.findings.clear()
        doc.findings.append(fatal.item)
        doc._positions, doc._key_positions = {}, {}
        return
    doc.data = data
    if not isinstance(data, dict):
        line, col = _mark(root.start_mark)
        message = f"the document is {_kind(data)}; expected a mapping"
        doc.findings.append(finding("Y002", message, file=doc.name, line=line, col=col))


def _positions_of(
    label: str, text: str
) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """The positions of values and keys of a document that was read without a finding
    (composed and converted again, this time recording where each value is)."""
    scratch = Document(label, text, _positions={}, _key_positions={})
    root = yaml.compose(text, Loader=_Loader)
    if root is not None:  # no node (a file that did not decode, an empty text): no position
        _Converter(scratch).convert(root, "", 0)
    assert scratch._positions is not None and scratch._key_positions is not None
    return scratch._positions, scratch._key_positions
