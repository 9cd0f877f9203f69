"""Round-trip YAML: load a manifest, edit it, save it with comments and formatting kept.

Reading goes through the safety pass of ``document.load_document`` (spec/manifest.md §3);
ruamel parses a document only on first edit. An unchanged document is written back byte for
byte; an edited one has only its changed lines spliced in.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, Severity, finding

from ._yamlspans import edit_scalars
from ._yamlspans import same as _same
from ._yamlsplice import splice, style
from .atomic import atomic_write_text
from .document import MAX_INT_DIGITS, Document, core_tag, load_document

__all__ = [
    "YamlDocument",
    "dumps",
    "dumps_data",
    "load",
    "loads",
    "save",
    "to_plain",
    "update",
]

_NEW_INDENT = (2, 4, 2)  # mapping, sequence, offset of the dash: "key:\n  - item"


@lru_cache(maxsize=1)
def _rt() -> Any:
    """ruamel.yaml's round-trip types, imported on first use (reading needs none of them)."""
    # ruamel is imported only when a tree is built, edited or written
    from ruamel.yaml import YAML  # noqa: PLC0415
    from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar  # noqa: PLC0415
    from ruamel.yaml.error import YAMLError  # noqa: PLC0415
    from ruamel.yaml.nodes import ScalarNode  # noqa: PLC0415
    from ruamel.yaml.resolver import VersionedResolver  # noqa: PLC0415
    from ruamel.yaml.scalarstring import (  # noqa: PLC0415
        DoubleQuotedScalarString,
        LiteralScalarString,
        SingleQuotedScalarString,
    )
    from ruamel.yaml.tag import Tag  # noqa: PLC0415

    class CoreResolver(VersionedResolver):
        """Plain scalars resolve exactly as the validator reads them (``document.core_tag``).

        ruamel's own YAML 1.2 resolver also reads ``1_000``, ``0b101`` and ``-0x1F`` as
        integers, and timestamps and ``<<``; the core schema reads them as strings. An integer
        of more than 4,300 digits is read as a string here (ruamel's ``int()`` would raise);
        the validator's view reports it S004, so such a document is never edited.
        """

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            tag = super().resolve(kind, value, implicit)
            if kind is not ScalarNode or not implicit[0]:
                return tag
            core = core_tag(value)
            if core == _INT_TAG and _overlong(value):
                core = _STR_TAG
            return tag if str(tag) == core else Tag(suffix=core)

    return SimpleNamespace(
        YAML=YAML,
        CommentedMap=CommentedMap,
        CommentedSeq=CommentedSeq,
        TaggedScalar=TaggedScalar,
        YAMLError=YAMLError,
        LiteralScalarString=LiteralScalarString,
        SingleQuotedScalarString=SingleQuotedScalarString,
        DoubleQuotedScalarString=DoubleQuotedScalarString,
        CoreResolver=CoreResolver,
    )


def _loader() -> Any:
    yaml = _rt().YAML(typ="rt")
    yaml.Resolver = _rt().CoreResolver
    yaml.preserve_quotes = True
    return yaml


def _dumper(indent: tuple[int, int, int]) -> Any:
    yaml = _rt().YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    return yaml


@dataclass
class YamlDocument:
    """A YAML document held for round-trip editing; its ruamel tree is built on first edit."""

    name: str
    #: The text as read, as last saved, or as edited in place by a scalar-only update.
    text: str
    #: The validator's view of ``text``: plain data, positions, loading findings.
    document: Document
    #: True once :func:`update` changed the tree.
    changed: bool = False
    _tree: Any = None
    _before: str | None = None  # the tree as emitted before the first edit

    @property
    def tree(self) -> Any:
        """The ruamel round-trip tree, or None when the document could not be read."""
        if self._tree is None and not self.document.fatal:
            self._tree = _round_trip_tree(self.document)
        return self._tree

    @tree.setter
    def tree(self, value: Any) -> None:
        self._tree = value

    @property
    def findings(self) -> list[Finding]:
        """Findings of loading the document (Y codes)."""
        return self.document.findings

    @property
    def ok(self) -> bool:
        """The document was read and has no error-level finding."""
        return not self.document.fatal and not any(
            item.severity == Severity.ERROR for item in self.document.findings
        )

    @property
    def data(self) -> Any:
        """The plain data (dicts, lists, str, int, float, bool, None) of the current tree."""
        if self._tree is None:
            return self.document.data
        return to_plain(self._tree)

    def locate(self, pointer: str, *, key: bool = False) -> tuple[int, int]:
        """1-based ``(line, col)`` of a JSON Pointer in ``text`` (nearest existing ancestor)."""
        return self.document.locate(pointer, key=key)


def loads(text: str | bytes, *, name: str = "<string>") -> YamlDocument:
    """Read a document from text or bytes; never raises for bad content."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return _from_document(load_document(raw, name=name))


def load(path: str | os.PathLike[str], *, name: str | None = None) -> YamlDocument:
    """Read a document from a file; ``OSError`` if the file cannot be read.

    Read through the safe file layer, contained in its own directory: a link out of it, a FIFO
    or a device raises ``UnsafeFileError``.
    """
    return _from_document(load_document(path, name=name or str(path), root=Path(path).parent))


def _from_document(document: Document) -> YamlDocument:
    return YamlDocument(name=document.name, text=document.text, document=document)


def _round_trip_tree(document: Document) -> Any:
    try:
        return _loader().load(document.text)
    except _rt().YAMLError as exc:
        if not document.findings:  # pragma: no cover - the safety pass reads what ruamel reads
            mark = getattr(exc, "problem_mark", None)
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
            code = "Y003" if type(exc).__name__ == "DuplicateKeyError" else "Y001"
            document.findings.append(
                finding(code, str(exc).splitlines()[0], file=document.name, line=line, col=col)
            )
        return None


def to_plain(node: Any) -> Any:
    """The plain Python value of a round-trip node (ruamel's types become built-in ones)."""
    if isinstance(node, Mapping):
        return {str(key): to_plain(value) for key, value in node.items()}
    if isinstance(node, _rt().TaggedScalar):
        return node.value
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, datetime | date):
        return node.isoformat()
    if isinstance(node, Sequence):
        return [to_plain(item) for item in node]
    return node


def _new_node(value: Any, *, quote: bool = False) -> Any:
    """A fresh round-trip node for a plain value; with ``quote`` every string is double-quoted."""
    if isinstance(value, Mapping):
        node = _rt().CommentedMap()
        for key, item in value.items():
            node[_new_scalar(key, quote=quote)] = _new_node(item, quote=quote)
        return node
    if isinstance(value, list | tuple):
        seq = _rt().CommentedSeq()
        seq.extend(_new_node(item, quote=quote) for item in value)
        if value and _short_scalars(value):
            seq.fa.set_flow_style()
        return seq
    return _new_scalar(value, quote=quote)


def _new_scalar(value: Any, *, quote: bool = False) -> Any:
    if not isinstance(value, str):
        return value
    if quote:
        return _rt().DoubleQuotedScalarString(value)
    if _literal_block(value):
        return _rt().LiteralScalarString(value)
    if _plain_safe(value):
        return value
    if value.isprintable():
        return _rt().SingleQuotedScalarString(value)
    return _rt().DoubleQuotedScalarString(value)  # escapes: tab, CR, NEL, U+2028, U+200B ...


# First characters that make a plain scalar mean something else, in block or flow context
# (libyaml and ruamel read "?x" and ":x" in a flow list as a mapping).
_UNSAFE_FIRST = frozenset("?:,[]{}#&*!|>'\"%@`")
_UNSAFE_ANYWHERE = frozenset(",[]{}")


def _plain_safe(value: str) -> bool:
    """True when ``value`` surely reads back as this string if written plain, in any context.

    Conservative: also false for words a YAML 1.1 reader takes for non-strings (``yes``,
    ``0b101``, ``2024-05-01``). Strings that fail are quoted.
    """
    if not value or not value.isprintable() or value != value.strip():
        return False
    first = value[0]
    if first in _UNSAFE_FIRST or value == "-" or value.startswith(("- ", "---", "...")):
        return False
    if not _UNSAFE_ANYWHERE.isdisjoint(value):
        return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    return _reads_as_string(value)


def _reads_as_string(value: str) -> bool:
    """``value`` written plain is a string to the core schema and to YAML 1.1 resolvers."""
    if core_tag(value) != _STR_TAG:
        return False
    implicit = _yaml11().resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    return bool(implicit == _STR_TAG)


_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"


def _overlong(value: str) -> bool:
    """An integer text with more digits than the validator reads (then S004)."""
    digits = value.lstrip("+-")
    if digits.startswith(("0o", "0x")):
        return bool(int(digits[2:], 8 if digits[1] == "o" else 16) >= _INT_BOUND)
    return len(digits) > MAX_INT_DIGITS


_INT_BOUND = 10**MAX_INT_DIGITS


@lru_cache(maxsize=1)
def _yaml11() -> yaml.resolver.Resolver:
    """PyYAML's YAML 1.1 resolver: it names the words that older readers take for non-strings."""
    return yaml.resolver.Resolver()


def _literal_block(value: str) -> bool:
    """A multi-line string that reads back exactly from a ``|`` block scalar."""
    body = value[:-1] if value.endswith("\n") else value
    if "\n" not in body or body[:1].isspace() or body.endswith("\n"):
        return False
    lines = body.split("\n")
    return all(line.isprintable() and line == line.rstrip() and line for line in lines)


def _short_scalars(values: Sequence[Any]) -> bool:
    """A list of short one-line scalars (written in flow style: ``[a, b]``)."""
    total = 0
    for item in values:
        if isinstance(item, Mapping | list | tuple) or (isinstance(item, str) and "\n" in item):
            return False
        total += len(str(item)) + 2
    return total <= 60


def _merge(old: Any, new: Any) -> Any:
    """``old`` edited in place to equal ``new`` where the shapes agree, else a new node."""
    if _same(to_plain(old), new):
        return old
    if isinstance(old, _rt().CommentedMap) and isinstance(new, Mapping):
        _merge_map(old, new)
        return old
    if isinstance(old, _rt().CommentedSeq) and isinstance(new, list | tuple):
        _merge_seq(old, list(new))
        return old
    if isinstance(old, str) and isinstance(new, str) and type(old) is not str:
        try:
            return type(old)(new)  # keep the quoting or block style of the old scalar
        except TypeError:  # pragma: no cover - a str subclass with another constructor
            return _new_node(new)
    return _new_node(new)


def _merge_map(old: Any, new: Mapping[str, Any]) -> None:
    for key in [key for key in old if key not in new]:
        del old[key]
    previous: Any = None
    for key, value in new.items():
        if key in old:
            merged = _merge(old[key], value)
            if merged is not old[key]:
                old[key] = merged
        else:
            position = list(old).index(previous) + 1 if previous in old else 0
            old.insert(position, key, _new_node(value))
        previous = key


def _item_id(item: Any) -> Any:
    return item.get("id") if isinstance(item, Mapping) else None


def _by_id(items: Sequence[Any]) -> bool:
    ids = [_item_id(item) for item in items]
    return all(isinstance(key, str) for key in ids) and len(set(ids)) == len(ids)


def _merge_seq(old: Any, new: list[Any]) -> None:
    if old and new and _by_id(old) and _by_id(new):
        wanted = {_item_id(item) for item in new}
        for index in reversed(range(len(old))):
            if _item_id(old[index]) not in wanted:
                del old[index]
        for index, value in enumerate(new):
            ident = _item_id(value)
            current = [_item_id(item) for item in old]
            if index < len(old) and current[index] == ident:
                pass
            elif ident in current:
                old.insert(index, old.pop(current.index(ident)))
            else:
                old.insert(index, _new_node(value))
                continue
            merged = _merge(old[index], value)
            if merged is not old[index]:
                old[index] = merged
        return
    for index, value in enumerate(new[: len(old)]):
        merged = _merge(old[index], value)
        if merged is not old[index]:
            old[index] = merged
    while len(old) > len(new):
        del old[len(old) - 1]
    for value in new[len(old) :]:
        old.append(_new_node(value))


def _edit_scalars_in_text(doc: YamlDocument, new_data: Any) -> bool:
    """Apply scalar-only changes by rewriting just their text spans; False if not possible."""
    edited = edit_scalars(doc.text, doc.document.data, new_data, name=doc.name)
    if edited is None:
        return False
    doc.text, doc.document = edited
    doc.changed = True
    return True


def update(doc: YamlDocument, new_data: Mapping[str, Any]) -> bool:
    """Make ``doc`` hold ``new_data`` with the fewest changes; True if anything changed.

    Scalar-only changes are made in the text itself; others go through the round-trip tree.
    """
    if not doc.ok:
        msg = f"{doc.name}: the document has errors, so it cannot be edited"
        raise ArtifactError(msg, doc.findings)
    if doc._tree is None and _same(doc.document.data, new_data):
        return False
    if doc._tree is None and _edit_scalars_in_text(doc, new_data):
        return True
    if doc.tree is None:  # pragma: no cover - ruamel rejects what the safety pass read
        msg = f"{doc.name}: the document could not be read, so it cannot be edited"
        raise ArtifactError(msg, doc.findings)
    if _same(to_plain(doc.tree), new_data):
        return False
    if doc._before is None:
        indent, crlf = style(doc.text)
        doc._before = _emit(doc.tree, indent, crlf=crlf)
    if not isinstance(doc.tree, _rt().CommentedMap) or not isinstance(new_data, Mapping):
        doc.tree = _new_node(new_data)
    else:
        _merge_map(doc.tree, new_data)
    doc.changed = True
    return True


def _emit(tree: Any, indent: tuple[int, int, int], *, crlf: bool = False) -> str:
    stream = io.StringIO()
    _dumper(indent).dump(tree, stream)
    text = stream.getvalue()
    return text.replace("\n", "\r\n") if crlf else text


def _render(doc: YamlDocument) -> str:
    indent, crlf = style(doc.text)
    after = _emit(doc.tree, indent, crlf=crlf)
    before = doc._before or _emit(_loader().load(doc.text), indent, crlf=crlf)
    spliced = splice(doc.text, before, after)
    return after if spliced is None or not _reads_back(spliced, doc.tree) else spliced


def _reads_back(text: str, tree: Any) -> bool:
    return _reads_back_as(text, to_plain(tree))


def _plain_floats(node: Any) -> Any:
    """Replace ruamel's float scalars (whose re-emission may round) by Python floats."""
    if isinstance(node, _rt().CommentedMap):
        for key, value in node.items():
            node[key] = _plain_floats(value)
    elif isinstance(node, _rt().CommentedSeq):
        for index, value in enumerate(node):
            node[index] = _plain_floats(value)
    elif isinstance(node, float) and type(node) is not float:
        return float(node)
    return node


def dumps(doc: YamlDocument) -> str:
    """The text of ``doc``: the original while unchanged, else a minimal rewrite of it.

    The result always reads back to the data of the tree: if ruamel's re-emission of a kept
    number would round it, numbers are re-emitted exactly, and as a last resort the data is
    written afresh (losing comments rather than values).
    """
    if not doc.changed or doc._before is None:
        return doc.text  # unchanged, or changed by text-level scalar edits only
    out = _render(doc)
    if _reads_back(out, doc.tree):
        return out
    doc.tree = _plain_floats(doc.tree)
    out = _render(doc)
    if _reads_back(out, doc.tree):
        return out
    # Not reached by any known input: new nodes are quoted when needed and kept nodes keep
    # the spelling they were read with. dumps_data checks its own output (or raises).
    return dumps_data(to_plain(doc.tree), spaced=False)  # pragma: no cover


def dumps_data(data: Mapping[str, Any], *, header: str = "", spaced: bool = True) -> str:
    """Text for a new document holding ``data``, after the comment lines of ``header``.

    The text is read back before it is returned; if it does not give ``data`` again, strings
    are double-quoted, else :class:`ArtifactError`: writing never changes what data means.
    """
    comment = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines())
    for quote in (False, True):
        try:
            emitted = _emit(_new_node(data, quote=quote), _NEW_INDENT)
        except ValueError:  # an int of more than 4,300 digits: CPython will not print it
            break
        text = comment + _spaced(emitted, spaced=spaced)
        if _reads_back_as(text, data):
            return text
    msg = "the data cannot be written as YAML that reads back the same"
    raise ArtifactError(msg)


def _spaced(text: str, *, spaced: bool) -> str:
    if not spaced:
        return text
    lines = text.splitlines(True)
    return "".join(
        ("\n" + line if index and line[:1] not in (" ", "-", "#", "\n") else line)
        for index, line in enumerate(lines)
    )


def _reads_back_as(text: str, data: Any) -> bool:
    check = load_document(text.encode("utf-8"), name="<check>")
    return not check.fatal and not check.findings and _same(check.data, data)


def save(
    doc: YamlDocument, path: str | os.PathLike[str], *, edit: Callable[[str], str] | None = None
) -> None:
    """Write ``doc`` to ``path`` atomically; ``doc`` then reflects the saved text.

    ``edit``: a last change of the text before it is written (a manifest's modeline follows
    its version, :func:`~reprobridge_sdk.versions.follow_modeline`)."""
    text = dumps(doc) if edit is None else edit(dumps(doc))
    atomic_write_text(Path(path), text)
    fresh = loads(text, name=doc.name)
    doc.text, doc.document, doc.tree, doc.changed = fresh.text, fresh.document, None, False
    doc._before = None
