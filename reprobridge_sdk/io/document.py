"""Safe, fast loading of YAML documents with a position for every value (spec §3, "yaml").

The validator reads manifests through this module: the core schema and the findings of
spec/manifest.md §3, with the limits of §3.1 checked before libyaml's recursive composer can
crash on deep input. A document with a fatal problem has ``data`` None.

Cost: one parse, linear in the text. A document in which the converter would find nothing is
read without a node graph (``_jsontext``, ``_events``; positions found later by ``_locate``);
any other is composed and converted with every position (``_nodes``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import reading
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
    _too_large,
    nests_too_deep,
)
from reprobridge_sdk.io._jsontext import _from_json
from reprobridge_sdk.io._locate import Locator
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
from reprobridge_sdk.io.pointer import ancestors

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "TYPE_WORDS",
    "Document",
    "core_tag",
    "json_type",
    "load_document",
    "nests_too_deep",
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
    # Where the collections two levels down are written (see _from_events), for the locator;
    # None for a JSON text read by ``json`` until a position is asked for.
    _spans: dict[str, Span] | None = field(default_factory=dict, repr=False, compare=False)

    @property
    def positions(self) -> dict[str, tuple[int, int]]:
        """``(line, col)`` of every value, by JSON Pointer (the first occurrence's)."""
        return self._positions if self._positions is not None else self._maps()[0]

    @property
    def key_positions(self) -> dict[str, tuple[int, int]]:
        """``(line, col)`` of the key of every mapping entry, by the entry's JSON Pointer."""
        return self._maps()[1]

    def _maps(self) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
        if self._positions is None or self._key_positions is None:
            self._positions, self._key_positions = _positions_of(self.name, self.text)
        return self._positions, self._key_positions

    @property
    def fatal(self) -> bool:
        """True when the document could not be read into data at all."""
        return self.data is None and bool(self.findings)

    def locate(self, pointer: str, *, key: bool = False) -> tuple[int, int]:
        """``(line, col)`` of ``pointer`` or its nearest existing ancestor; ``key``: the key's."""
        if self._positions is None and self.text:
            if self._locator is None:
                if self._spans is None:  # read by json: the event reader finds the spans
                    self._spans = {}
                    _from_events(self.text, self._spans)
                self._locator = Locator(
                    self.text,
                    spans=self._spans,
                    loader=_Loader,
                    # not the document's own maps: a closure over it would make a cycle
                    fallback=functools.partial(_positions_of, self.name, self.text),
                )
            return self._locator.locate(pointer, key=key)  # type: ignore[no-any-return]
        for current in ancestors(pointer):
            if key and current in self.key_positions:
                return self.key_positions[current]
            if current in self.positions:
                return self.positions[current]
        return (0, 0)

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

    A path is read through the safe file layer (``root`` contains it; a non-regular file
    raises ``UnsafeFileError``, never hangs); a file over :data:`MAX_BYTES` is Y006 unread.
    I/O errors raise ``OSError``.
    """
    label = name or ("<bytes>" if isinstance(source, bytes) else str(source))
    try:
        if isinstance(source, bytes):
            raw = source
            if len(raw) > MAX_BYTES:
                return Document(label, "", findings=[_too_large(label, len(raw))])
        else:
            raw = reading.read_bytes(source, root=root, max_bytes=MAX_BYTES)
        text = reading.decode(raw)
    except reading.Unreadable as exc:
        return Document(label, "", findings=[_unreadable(exc, label)])
    return _parse(label, text)


def _unreadable(exc: reading.Unreadable, label: str) -> Finding:
    """Y006 for a file too large, Y007 for bytes that are not UTF-8; other refusals and
    I/O errors of the file raise (the docstring of :func:`load_document`)."""
    if exc.problem == "too-large":
        return _too_large(label, exc.size)
    if exc.problem != "encoding":
        raise exc.__cause__ or exc
    return finding(
        "Y007",
        exc.message,
        file=label,
        line=exc.line,
        col=exc.col,
        hint="save the file as UTF-8",
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


def _parse(label: str, text: str) -> Document:
    data = _from_json(text)
    if data is not None:  # no finding, no spans yet: the first position asked for reads them
        return Document(label, text, data=data, _spans=None)
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
