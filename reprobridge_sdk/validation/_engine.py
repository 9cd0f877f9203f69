"""The committed JSON Schemas evaluated by jsonschema-rs, its errors in the SDK's own terms.

Acceptance is jsonschema-rs's (Draft 2020-12). Its schema ``pattern`` keywords run on Rust's
``regex`` crate (``RegexOptions``): linear time, and the same meaning as RE2 for the schema
dialect (:func:`~reprobridge_sdk.extract.pattern.schema_pattern`: explicit ASCII classes, ``$``
the end of the whole string). Author patterns are not schema patterns: the semantic layer
checks them with RE2. What stays the SDK's: each error becomes a :class:`SchemaError` with the
SDK's message, the pointer of the failing value (a key's own pointer for ``required`` and
``additionalProperties``) and what a hint needs; and which errors a failed ``anyOf`` /
``oneOf`` reports:

1. in a tagged union (each ``$ref`` branch requires a property with its own ``const``, or a
   ``pattern`` for the plugin ``x-`` kinds), the errors of the branch the tag names; a
   missing tag is ``required`` at the tag's pointer, an unknown tag ``enum`` there;
2. otherwise the branch whose type fits the value with the fewest errors (the first on a
   tie); when no branch's type fits, one ``type`` error naming every accepted type.

Non-finite floats reach jsonschema-rs as ``null``; the loader reports them (S004) and the
structural layer skips errors at their pointers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs

from reprobridge_sdk.extract.pattern import schema_pattern
from reprobridge_sdk.io.document import json_type
from reprobridge_sdk.io.pointer import escape_pointer, pointer_of, resolve

__all__ = ["CompiledSchema", "SchemaError", "compile_schema"]

_RELATIONS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}


@dataclass(frozen=True)
class SchemaError:
    """One structural error: the failing keyword, where, and what was expected."""

    keyword: str
    pointer: str
    message: str
    key: str | None = None
    expected: tuple[str, ...] = ()
    allowed: tuple[Any, ...] = ()
    names: tuple[str, ...] = field(default=(), compare=False)
    schema_pattern: str | None = None


class CompiledSchema:
    """A schema compiled once by jsonschema-rs; :meth:`errors` in the SDK's terms."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._root = schema
        self._tagging: dict[tuple[str | None, ...], _Tagging] = {}
        self._validator = jsonschema_rs.validator_for(
            schema, pattern_options=jsonschema_rs.RegexOptions()
        )

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid (no error is built)."""
        return bool(self._validator.is_valid(instance))

    def errors(self, instance: Any) -> list[SchemaError]:
        """Every error, each converted (see the module doc)."""
        out: list[SchemaError] = []
        for error in self._validator.iter_errors(instance):
            out.extend(self._convert(error))
        return out

    def _node(self, schema_path: Any) -> Any:
        return resolve(self._root, pointer_of(schema_path))

    def _convert(self, error: Any) -> list[SchemaError]:
        kind = error.kind
        name = kind.name
        pointer = pointer_of(error.instance_path)
        instance = error.instance
        if name == "additionalProperties":
            parent = self._node(list(error.schema_path)[:-1])
            names = tuple(parent.get("properties", {})) if isinstance(parent, dict) else ()
            return [
                SchemaError(
                    name,
                    f"{pointer}/{escape_pointer(key)}",
                    f"unknown key {key!r}",
                    key=key,
                    names=names,
                )
                for key in kind.unexpected
            ]
        if name == "required":
            prop = kind.property
            where = f"{pointer}/{escape_pointer(prop)}"
            return [SchemaError(name, where, f"missing required key {prop!r}", key=prop)]
        if name == "type":
            return [_type_error(pointer, instance, tuple(kind.types))]
        if type(kind).__name__ in ("OneOfNotValid", "AnyOf"):
            branches = self._node(error.schema_path)
            results = [[e for sub in group for e in self._convert(sub)] for group in kind.context]
            return self._best(instance, pointer, results, branches)
        return [_simple(name, pointer, instance, self._node(error.schema_path), kind)]

    def _best(
        self, instance: Any, pointer: str, results: list[list[SchemaError]], branches: Any
    ) -> list[SchemaError]:
        branches = branches if isinstance(branches, list) else []
        refs = tuple(b.get("$ref") if isinstance(b, dict) else None for b in branches)
        tagging = self._tagging.get(refs)
        if tagging is None:
            tagging = self._tagging[refs] = _tags(self._root, refs)
        prop, mapping, patterns = tagging
        if prop is not None and isinstance(instance, dict):
            tag = instance.get(prop)
            target = mapping.get(tag) if isinstance(tag, str) else None
            if target is None and isinstance(tag, str):
                target = next((ref for regex, ref in patterns if regex.search(tag)), None)
            if target is not None and target in refs and refs.index(target) < len(results):
                return results[refs.index(target)]
            where = f"{pointer}/{escape_pointer(prop)}"
            if prop not in instance:
                return [SchemaError("required", where, f"missing required key {prop!r}", key=prop)]
            also = "".join(f" or a value matching {regex.pattern!r}" for regex, _ in patterns)
            message = f"{tag!r} is not one of {sorted(mapping)}{also}"
            return [SchemaError("enum", where, message, allowed=tuple(sorted(mapping)))]
        fitting: list[int] = []
        expected: set[str] = set()
        for index, branch in enumerate(branches[: len(results)]):
            kinds = _accepted_types(self._root, branch)
            if kinds is None or any(_is_type(instance, kind) for kind in kinds):
                fitting.append(index)
            if kinds is not None:
                expected |= kinds
        if not fitting:
            return [_type_error(pointer, instance, tuple(sorted(expected)))]
        return results[min(fitting, key=lambda i: len(results[i]))]


def compile_schema(schema: dict[str, Any]) -> CompiledSchema:
    """Compile ``schema`` with jsonschema-rs."""
    return CompiledSchema(schema)


def _simple(name: str, pointer: str, instance: Any, node: Any, kind: Any) -> SchemaError:
    """The error of one keyword about a single value, with the SDK's message."""
    if name == "enum":
        values = tuple(node) if isinstance(node, list) else tuple(kind.options)
        message = f"{instance!r} is not one of {list(values)}"
        return SchemaError(name, pointer, message, allowed=values)
    if name == "const":
        return SchemaError(name, pointer, f"expected {node!r}", allowed=(node,))
    if name == "pattern":
        message = f"{instance!r} does not match {node!r}"
        return SchemaError(name, pointer, message, schema_pattern=node)
    if name == "minLength":
        message = "must not be empty" if node == 1 else f"needs at least {node} characters"
        return SchemaError(name, pointer, message)
    if name == "maxLength":
        return SchemaError(name, pointer, f"allows at most {node} characters")
    if name == "minItems":
        return SchemaError(name, pointer, f"needs at least {node} item(s)")
    if name == "maxItems":
        return SchemaError(name, pointer, f"allows at most {node} item(s)")
    if name in _RELATIONS:
        return SchemaError(name, pointer, f"{instance!r} is not {_RELATIONS[name]} {node!r}")
    if name == "oneOf":  # more than one branch is valid
        return SchemaError("oneOf", pointer, "the value matches more than one alternative")
    if name == "falseSchema":
        return SchemaError("false", pointer, "no value is allowed here")
    return SchemaError(name, pointer, str(kind))


def _type_error(pointer: str, instance: Any, expected: tuple[str, ...]) -> SchemaError:
    names = " or ".join(expected)
    message = f"expected {names}, got {json_type(instance)}"
    return SchemaError("type", pointer, message, expected=expected)


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return name == "number" or isinstance(value, int) or value.is_integer()


def _target(root: dict[str, Any], ref: Any) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    return resolve(root, ref[1:])


def _accepted_types(root: dict[str, Any], schema: Any) -> frozenset[str] | None:
    """The types a schema accepts at most, or None when it does not say."""
    if not isinstance(schema, dict):
        return None
    if "type" in schema:
        kind = schema["type"]
        return frozenset([kind] if isinstance(kind, str) else kind)
    if "$ref" in schema:
        return _accepted_types(root, _target(root, schema["$ref"]))
    if "const" in schema:
        return frozenset([json_type(schema["const"])])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not branches:
        return None
    union: set[str] = set()
    for branch in branches:
        kinds = _accepted_types(root, branch)
        if kinds is None:
            return None
        union |= kinds
    return frozenset(union)


_Tagging = tuple[str | None, dict[str, str], tuple[tuple[Any, str], ...]]
_UNTAGGED: _Tagging = (None, {}, ())


def _tags(root: dict[str, Any], refs: tuple[str | None, ...]) -> _Tagging:
    """The property whose ``const`` tells the ``$ref`` branches apart, and its mapping.

    Branches that instead require the property to match a ``pattern`` (the plugin ``x-``
    kinds) are returned apart, tried when no ``const`` names the tag.
    """
    common: set[str] | None = None
    consts: list[dict[str, str]] = []
    const_refs: list[str] = []
    patterned: list[tuple[dict[str, str], str]] = []
    for ref in refs:
        target = _target(root, ref)
        if not isinstance(target, dict) or ref is None:
            return _UNTAGGED
        props, required = target.get("properties", {}), target.get("required", ())
        tagged = {
            name: sub["const"]
            for name, sub in props.items()
            if isinstance(sub, dict) and isinstance(sub.get("const"), str) and name in required
        }
        if tagged:
            consts.append(tagged)
            const_refs.append(ref)
            common = set(tagged) if common is None else common & set(tagged)
            continue
        matching = {
            name: sub["pattern"]
            for name, sub in props.items()
            if isinstance(sub, dict) and isinstance(sub.get("pattern"), str) and name in required
        }
        if not matching:
            return _UNTAGGED
        patterned.append((matching, ref))
    for name in sorted(common or ()):
        values = [tagged[name] for tagged in consts]
        if len(set(values)) == len(values) and all(name in m for m, _ in patterned):
            patterns = tuple((schema_pattern(m[name]), ref) for m, ref in patterned)
            return name, dict(zip(values, const_refs, strict=True)), patterns
    return _UNTAGGED
