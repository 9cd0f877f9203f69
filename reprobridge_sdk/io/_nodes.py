"""The node converter: plain data, positions and findings from a composed YAML node graph.

Why not a library: PyYAML's constructors give no positions and keep one of two duplicate keys
silently, and ruamel's round-trip tree costs several times more; this walks PyYAML's nodes.

:class:`_Converter` records the position of every value and key by JSON Pointer and reports
what spec/manifest.md §3 forbids; after a finding it keeps the first of duplicate keys, drops
a non-string key's entry, reads a bad tag as if untagged and a number JSON cannot carry
(S004) as a non-finite float.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import yaml

from reprobridge_sdk.findings import finding
from reprobridge_sdk.io._guards import MAX_DEPTH, _check_key_depth, _Fatal, _too_deep
from reprobridge_sdk.io._yamlcore import (
    _BOOL,
    _BOOL_RE,
    _CORE,
    _FLOAT,
    _FLOAT_RE,
    _INT,
    _INT_RE,
    _NULL,
    _NULL_RE,
    _SCALAR_NODE,
    _STR,
    _T,
    MAX_INT_DIGITS,
    _float,
    _int,
    _kind,
    _mark,
    core_tag,
)
from reprobridge_sdk.io.pointer import escape_pointer

if TYPE_CHECKING:
    from reprobridge_sdk.io.document import Document


#: What :meth:`_Converter._core_value` gives for a scalar its tag cannot read.
_UNREAD = object()


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
        if node.tag in (_STR, "!"):
            return node.value
        value = self._core_value(node, pointer)
        if value is not _UNREAD:
            return value
        if pointer is not None:
            self._bad_tag(node, pointer)
        if node.tag not in _CORE and not node.style:
            # A plain scalar under a tag the format does not allow is read as if untagged
            # (`seeds: !custom 3` is the integer 3, with Y008); a quoted one is a string.
            plain = yaml.ScalarNode(
                core_tag(node.value), node.value, node.start_mark, node.end_mark
            )
            return self._scalar(plain, pointer)
        return node.value

    def _core_value(self, node: Any, pointer: str | None) -> Any:
        """The value of a scalar under a core tag that reads it, else :data:`_UNREAD`."""
        tag = node.tag
        value: str = node.value
        if tag == _NULL:
            return None if _NULL_RE.match(value) else _UNREAD
        if tag == _BOOL:
            return value[0] in "tT" if _BOOL_RE.match(value) else _UNREAD
        if tag == _INT:
            if not _INT_RE.match(value):
                return _UNREAD
            exact = _int(value)
            return self._not_json(node, pointer, too_long=True) if exact is None else exact
        if tag == _FLOAT and (_FLOAT_RE.match(value) or _INT_RE.match(value)):
            if value.lower().endswith((".nan", ".inf")):
                return self._not_json(node, pointer)
            number = _float(value)
            return number if math.isfinite(number) else self._not_json(node, pointer)
        return _UNREAD

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
