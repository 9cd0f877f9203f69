"""Structural layer: the manifest against the generated JSON Schema (S codes, V005; spec §9).

The committed schema of the declared version (the newest for newer minor versions and for
documents without a usable one) is evaluated by jsonschema-rs (:mod:`._engine`, which also
picks a failed union's errors); its errors map to S001 (unknown key, with a "did you mean"),
S002 (missing), S003 (type) and S004 (any other constraint). A key or value added after the
declared older version is V005 instead; in a newer minor version an unknown key is S005 and
an unknown value S006 (warnings, :mod:`.forward`).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io.document import TYPE_WORDS, Document, json_type
from reprobridge_sdk.io.pointer import resolve
from reprobridge_sdk.versions import FORMAT_VERSIONS, NEWEST_FORMAT, parse_since

from ._engine import CompiledSchema, SchemaError, compile_schema
from .forward import carrier, forward_kind, forward_view

__all__ = [
    "SCHEMA_RESOURCE",
    "additions_of",
    "check_structure",
    "manifest_schema",
    "version_addition",
]

#: The package copy of the committed manifest schema of each version.
SCHEMA_RESOURCE = "_data/schemas/rra-{version}.schema.json"

#: The pattern of relative paths in the models; its failures are F001, not S004.
_RELPATH_PATTERN = r"^[^/\\]"


@cache
def _schema_json(version: str) -> dict[str, Any]:
    package = __package__.rsplit(".", 1)[0]
    resource = SCHEMA_RESOURCE.format(version=version)
    data: dict[str, Any] = json.loads(
        resources.files(package).joinpath(resource).read_text("utf-8")
    )
    return data


@cache
def manifest_schema(version: str = NEWEST_FORMAT) -> CompiledSchema:
    """The compiled manifest schema of a format version (compiled once per process)."""
    return compile_schema(_schema_json(version))


@dataclass(frozen=True)
class _Additions:
    """Where the newest schema marks additions: by the keys (or values) an object (or an
    enumeration) has in an older version, the keys (values) added and their version."""

    keys: dict[frozenset[str], dict[str, str]]
    values: dict[frozenset[Any], dict[Any, str]]
    #: Union branches added later, seen from the older schema's error: by the tags (consts)
    #: of the older branches, or by the older branch's ``pattern``, the added pattern and its
    #: version (an ``x-`` extractor kind, an ``x-`` URL scheme).
    tags: dict[frozenset[Any], list[tuple[str, str]]] = field(default_factory=dict)
    patterns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


@cache
def _additions(version: str) -> _Additions:
    """The additions newer than ``version``, indexed as the older schema's errors see them."""
    return additions_of(_schema_json(NEWEST_FORMAT), version)


def additions_of(schema: dict[str, Any], version: str) -> _Additions:
    """The additions of ``schema`` (the newest) newer than ``version`` (an older one)."""
    major, _, minor = version.partition(".")
    found = _Collector(schema, (int(major), int(minor)))
    found.walk(schema)
    return _Additions(found.keys, found.values, found.tags, found.patterns)


def _label(marker: tuple[tuple[int, int], Any]) -> str:
    return f"{marker[0][0]}.{marker[0][1]}"


class _Collector:
    """One walk of the newest schema, collecting what is newer than ``older``."""

    def __init__(self, schema: dict[str, Any], older: tuple[int, int]) -> None:
        self.older = older
        defs = schema.get("$defs")
        self.defs: dict[str, Any] = defs if isinstance(defs, dict) else {}
        self.keys: dict[frozenset[str], dict[str, str]] = {}
        self.values: dict[frozenset[Any], dict[Any, str]] = {}
        self.tags: dict[frozenset[Any], list[tuple[str, str]]] = {}
        self.patterns: dict[str, list[tuple[str, str]]] = {}

    def _target(self, branch: Any) -> Any:
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        return self.defs.get(ref[len("#/$defs/") :]) if isinstance(ref, str) else branch

    def _newer(self, node: Any) -> tuple[tuple[int, int], Any] | None:
        """The ``since`` marker of a node added (whole) after the older version."""
        marker = parse_since(node.get("$comment") if isinstance(node, dict) else None)
        if marker is not None and marker[1] is None and marker[0] > self.older:
            return marker
        return None

    def walk(self, node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                self.walk(item)
            return
        if not isinstance(node, dict):
            return
        self._enum_values(node)
        for keyword in ("oneOf", "anyOf"):
            if isinstance(node.get(keyword), list):
                self._branches(node[keyword])
        self._properties(node.get("properties"))
        for child in node.values():
            self.walk(child)

    def _enum_values(self, node: dict[str, Any]) -> None:
        """Values added to the enumerations under ``node`` (a marker listing them)."""
        marker = parse_since(node.get("$comment"))
        if marker is None or marker[1] is None or not marker[0] > self.older:
            return
        for enum in _enums(node):
            kept = frozenset(v for v in enum if v not in marker[1])
            added = {v: _label(marker) for v in enum if v in marker[1]}
            self.values.setdefault(kept, {}).update(added)

    def _properties(self, properties: Any) -> None:
        """Keys added to an object, by the keys it had before."""
        if not isinstance(properties, dict):
            return
        added = {
            key: _label(marker)
            for key, prop in properties.items()
            if (marker := self._newer(prop)) is not None
        }
        if added:
            kept = frozenset(k for k in properties if k not in added)
            self.keys.setdefault(kept, {}).update(added)

    def _branches(self, items: list[Any]) -> None:
        """Union branches added later: a wider pattern, or new tags of a discriminator."""
        added = [(b, m) for b in items if (m := self._newer(b) or self._newer(self._target(b)))]
        kept = [self._target(b) for b in items if all(b is not a for a, _ in added)]
        for branch, marker in added:
            body = self._target(branch)
            if isinstance(body, dict):
                self._wider_pattern(body, _label(marker), kept)
                self._new_tags(body, _label(marker), kept)

    def _wider_pattern(self, body: dict[str, Any], label: str, kept: list[Any]) -> None:
        if not isinstance(body.get("pattern"), str):
            return
        for old in kept:
            if isinstance(old, dict) and isinstance(old.get("pattern"), str):
                self.patterns.setdefault(old["pattern"], []).append((body["pattern"], label))

    def _new_tags(self, body: dict[str, Any], label: str, kept: list[Any]) -> None:
        props = body.get("properties", {})
        for name in body.get("required", ()):
            sub = props.get(name)
            if not isinstance(sub, dict) or not isinstance(sub.get("pattern"), str):
                continue
            consts = frozenset(
                old["properties"][name]["const"]
                for old in kept
                if isinstance(old, dict)
                and isinstance(old.get("properties", {}).get(name), dict)
                and "const" in old["properties"][name]
            )
            if consts:
                self.tags.setdefault(consts, []).append((sub["pattern"], label))


def _enums(node: Any) -> list[list[Any]]:
    """Every ``enum`` list under ``node`` (not following ``$ref``)."""
    found: list[list[Any]] = []
    if isinstance(node, list):
        for item in node:
            found.extend(_enums(item))
    elif isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            found.append(node["enum"])
        for key, child in node.items():
            if key != "enum":
                found.extend(_enums(child))
    return found


def _schema_version(declared: tuple[int, int] | None) -> str:
    if declared is None:
        return NEWEST_FORMAT
    text = f"{declared[0]}.{declared[1]}"
    return text if text in FORMAT_VERSIONS else NEWEST_FORMAT


def check_structure(
    doc: Document,
    *,
    newer_minor: bool = False,
    declared: tuple[int, int] | None = None,
) -> list[Finding]:
    """S (and V005) findings for ``doc.data``; ``/rra_version`` is left to the version layer.

    ``declared``: the document's well-formed version; a known one selects its schema.
    """
    version = _schema_version(declared)
    errors = manifest_schema(version).errors(doc.data)
    additions = _additions(version) if version != NEWEST_FORMAT else None
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for error in errors:
        if error.pointer == "/rra_version" or error.pointer.startswith("/rra_version/"):
            continue
        if error.pointer in doc.unrepresentable:
            continue  # the loader reported S004 here: .nan, .inf or an overlong integer
        if error.keyword == "pattern" and error.schema_pattern == _RELPATH_PATTERN:
            continue  # an absolute path: the files layer reports F001 with a better message
        item = version_addition(doc, error, version, additions) if additions is not None else None
        if item is None:
            item = _to_finding(doc, error, newer_minor=newer_minor)
        marker = (item.code, item.path)
        if marker in seen:
            continue
        seen.add(marker)
        findings.append(item)
    if newer_minor:
        findings.extend(_nothing_left(doc, errors))
    return findings


def _nothing_left(doc: Document, errors: list[SchemaError]) -> list[Finding]:
    """V007 where the consumer's view of a newer-minor document has no task or no launcher."""
    view = forward_view(doc.data, errors)
    return [
        doc.finding(
            "V007",
            f"every item of {where} holds a value this version does not know, so a consumer "
            "of this version sets them all aside and has nothing to use",
            path=where,
            hint="declare a version this reader knows, or use a reader of the declared version",
        )
        for where in view.emptied
    ]


def version_addition(
    doc: Document, error: SchemaError, version: str, additions: _Additions
) -> Finding | None:
    """V005 when ``error`` is an older document's use of a key or value added later."""
    hint = "declare the version it was added in (`reprobridge upgrade` rewrites the manifest)"
    if error.keyword == "additionalProperties" and error.key is not None:
        since = additions.keys.get(frozenset(error.names), {}).get(error.key)
        if since is not None:
            message = f"key {error.key!r} was added in format {since}; this document is {version}"
            return doc.finding("V005", message, path=error.pointer, hint=hint, key=True)
    if error.keyword == "enum" and error.allowed:
        value = resolve(doc.data, error.pointer)
        if not isinstance(value, str):
            return None  # enumerations of the format are strings; anything else is S003/S004
        since = additions.values.get(frozenset(error.allowed), {}).get(value)
        if since is None:
            since = _matching(additions.tags.get(frozenset(error.allowed), ()), value)
        if since is not None:
            message = f"value {value!r} was added in format {since}; this document is {version}"
            return doc.finding("V005", message, path=error.pointer, hint=hint)
    if error.keyword == "pattern" and error.schema_pattern is not None:
        value = resolve(doc.data, error.pointer)
        added = additions.patterns.get(error.schema_pattern, ())
        since = _matching(added, value) if isinstance(value, str) else None
        if since is not None:
            message = f"value {value!r} was added in format {since}; this document is {version}"
            return doc.finding("V005", message, path=error.pointer, hint=hint)
    return None


def _matching(added: Any, value: str) -> str | None:
    """The version of the first added ``(pattern, version)`` that ``value`` matches."""
    from reprobridge_sdk.extract.pattern import schema_pattern  # noqa: PLC0415 - rare path

    for pattern, since in added:
        if schema_pattern(pattern).search(value):
            return str(since)
    return None


def _to_finding(doc: Document, error: SchemaError, *, newer_minor: bool) -> Finding:
    pointer = error.pointer
    if error.keyword == "additionalProperties":
        key = error.key or ""
        hint = None
        close = difflib.get_close_matches(key, error.names, n=1, cutoff=0.6)
        if close:
            hint = f"did you mean {close[0]!r}?"
        elif error.names:
            hint = f"known keys here: {', '.join(error.names)}; extensions start with 'x-'"
        if newer_minor and forward_kind(error) == "S005":
            message = f"unknown key {key!r} (it may be a field of a newer minor version)"
            return doc.finding("S005", message, path=pointer, hint=hint, key=True)
        return doc.finding("S001", f"unknown key {key!r}", path=pointer, hint=hint, key=True)
    if error.keyword == "required":
        return doc.finding("S002", error.message, path=pointer)
    if error.keyword == "type":
        wanted = " or ".join(TYPE_WORDS.get(name, name) for name in error.expected)
        got = _actual(doc, pointer)
        hint = None
        if "string" in error.expected and got in ("a number", "an integer", "a boolean"):
            hint = "quote the value to make it a string"
        return doc.finding("S003", f"expected {wanted}, got {got}", path=pointer, hint=hint)
    hint = None
    if error.keyword in ("enum", "const") and error.allowed:
        value = resolve(doc.data, pointer)
        if isinstance(value, str):
            close = difflib.get_close_matches(value, [str(a) for a in error.allowed], n=1)
            if close:
                hint = f"did you mean {close[0]!r}?"
        if newer_minor and forward_kind(error) == "S006":
            where = carrier(pointer)
            message = (
                f"{error.message} (it may be a value of a newer minor version; "
                f"a consumer sets aside {where})"
            )
            return doc.finding("S006", message, path=pointer, hint=hint)
    return doc.finding("S004", error.message, path=pointer, hint=hint)


def _actual(doc: Document, pointer: str) -> str:
    value = resolve(doc.data, pointer)
    return TYPE_WORDS.get(json_type(value), json_type(value))
