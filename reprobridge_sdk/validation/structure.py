"""Structural layer: the manifest against the generated JSON Schema (S codes).

The committed schema (``_data/schemas/rra-1.0.schema.json``, generated from the models) is
compiled once by the in-house evaluator (:mod:`._evaluator`, which explains why it is not
``jsonschema``) and its errors are mapped to codes: unknown key S001 (with a "did you mean"
hint), or S005, a warning, when the document declares a newer minor version than this
validator knows, since the key may be a field added since; missing key S002; wrong type S003;
any other constraint (enum, pattern, length, range, item count) S004.
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io.document import TYPE_WORDS, Document, json_type

from ._evaluator import CompiledSchema, SchemaError, compile_schema

__all__ = ["SCHEMA_RESOURCE", "check_structure", "manifest_schema"]

#: The package copy of the committed manifest schema.
SCHEMA_RESOURCE = "_data/schemas/rra-1.0.schema.json"

#: The pattern of relative paths in the models; its failures are F001, not S004.
_RELPATH_PATTERN = r"^[^/\\]"


@lru_cache(maxsize=1)
def manifest_schema() -> CompiledSchema:
    """The compiled manifest schema (compiled once per process)."""
    package = __package__.rsplit(".", 1)[0]
    text = resources.files(package).joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    return compile_schema(json.loads(text))


def check_structure(doc: Document, *, newer_minor: bool = False) -> list[Finding]:
    """S findings for ``doc.data``; keys under ``/rra_version`` are left to the version layer."""
    errors = manifest_schema().errors(doc.data)
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for error in errors:
        if error.pointer == "/rra_version" or error.pointer.startswith("/rra_version/"):
            continue
        if error.pointer in doc.unrepresentable:
            continue  # the loader reported S004 here: .nan, .inf or an overlong integer
        if error.keyword == "pattern" and error.schema_pattern == _RELPATH_PATTERN:
            continue  # an absolute path: the files layer reports F001 with a better message
        item = _to_finding(doc, error, newer_minor=newer_minor)
        marker = (item.code, item.path)
        if marker in seen:
            continue
        seen.add(marker)
        findings.append(item)
    return findings


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
        if newer_minor:
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
        value = _value_at(doc.data, pointer)
        if isinstance(value, str):
            close = difflib.get_close_matches(value, [str(a) for a in error.allowed], n=1)
            if close:
                hint = f"did you mean {close[0]!r}?"
    return doc.finding("S004", error.message, path=pointer, hint=hint)


def _value_at(data: Any, pointer: str) -> Any:
    current = data
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict):
            current = current.get(token)
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return None
    return current


def _actual(doc: Document, pointer: str) -> str:
    value = _value_at(doc.data, pointer)
    return TYPE_WORDS.get(json_type(value), json_type(value))
