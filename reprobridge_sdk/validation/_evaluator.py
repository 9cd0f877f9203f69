"""An in-house evaluator of the subset of JSON Schema 2020-12 that the generated schemas use.

Why not ``jsonschema``: importing ``jsonschema`` (and the pydantic models behind a model-based
check) costs more than the whole time budget of ``reprobridge validate``, and the semantic
layer must work on structurally broken documents anyway, so the validator walks plain data.
This module compiles a schema once into closures and evaluates plain Python data (the output
of :mod:`reprobridge_sdk.io.document`).

It supports exactly the keywords the generated schemas use -- ``$ref`` (local ``#/$defs/``),
``$defs``, ``type``, ``properties``, ``required``, ``additionalProperties``,
``patternProperties``, ``enum``, ``const``, ``pattern``, ``minLength``, ``maxLength``,
``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``minItems``,
``maxItems``, ``items``, ``anyOf``, ``oneOf`` -- plus annotations, which it ignores. A ``oneOf`` of
``$ref`` branches that each require a property with its own ``const`` (a tagged union, such
as the extractors' ``kind``) reports the errors of the branch its tag names.
Any other keyword raises :class:`SchemaCompileError` when the schema is compiled, so a change of
the models that makes pydantic emit a new keyword cannot silently escape validation.

Acceptance is exactly that of ``jsonschema.Draft202012Validator`` (a test proves it on random
and conformance inputs); only the choice of which errors to report is ours: for ``anyOf`` /
``oneOf`` the branch the tag names, else the one branch whose type fits the value,
else the branch with the fewest errors.

This module compiles a schema and its objects, arrays, ``$ref`` and branches; the checks of
single keywords are in ``_keywords``, the choice of a failed branch's errors in ``_best_match``,
and the error record with the shape of a check in ``_schema_types``. Validity alone (what a
valid document asks of almost every node) is answered by predicates generated from the same
schema (``_validity``), which the closures call at each ``$ref``; a union whose branches are
tagged by a required ``const`` tries only the branches the object's tag leaves possible.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reprobridge_sdk.extract.pattern import schema_pattern
from reprobridge_sdk.io.document import json_type
from reprobridge_sdk.validation._best_match import _best, _Patterns
from reprobridge_sdk.validation._keywords import (
    _MEMO_LIMIT,
    _accept,
    _cached_search,
    _const_check,
    _enum_check,
    _number_checks,
    _reject,
    _required_check,
    _string_checks,
    _type_check,
)
from reprobridge_sdk.validation._schema_types import (
    SchemaCompileError,
    SchemaError,
    _Check,
    _err,
    _esc,
)
from reprobridge_sdk.validation._validity import Specialiser

__all__ = ["CompiledSchema", "SchemaCompileError", "SchemaError", "compile_schema"]

#: Validity calls of a ``$defs`` entry after which its predicate is generated: generating
#: one costs about as much as a few dozen checks by the closures (measured on the manifest
#: schema), so a manifest of a few tasks never pays it.
SPECIALISE_AFTER = 64

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "$schema",
        "$id",
        "x-rra-since",  # the format version that added a field: an annotation here
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
    }
)
_SUPPORTED = _ANNOTATIONS | {
    "$ref",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "enum",
    "const",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "items",
    "anyOf",
    "oneOf",
}


class CompiledSchema:
    """A schema compiled to closures; call :meth:`errors` or :meth:`is_valid`.

    ``specialise_after``: a ``$ref`` evaluated in validity mode asks the generated predicate
    of its ``$defs`` entry (:mod:`._validity`), generated at the entry's ``n``-th such call
    (1: at the first); ``None`` keeps the closures alone, the reference the predicates are
    tested against. The answers and the errors are the same either way.
    """

    def __init__(
        self, schema: dict[str, Any], *, specialise_after: int | None = SPECIALISE_AFTER
    ) -> None:
        self._root = schema
        self._defs: dict[str, Any] = dict(schema.get("$defs", {}))
        self._compiled: dict[str, _Check] = {}
        self._types: dict[str, frozenset[str] | None] = {}
        self._specialiser = (
            None
            if specialise_after is None
            else Specialiser(self, self._defs, self._compiled, specialise_after)
        )
        self._check = self._compile(schema, "#")
        for name in list(self._defs):
            self._resolve(f"#/$defs/{name}")

    def errors(self, instance: Any) -> list[SchemaError]:
        """All errors, in document order of the evaluation."""
        out: list[SchemaError] = []
        self._check(instance, "", out)
        return out

    def is_valid(self, instance: Any) -> bool:
        return self._check(instance, "", None)

    # compilation ------------------------------------------------------------------------

    def _resolve(self, ref: str) -> _Check:
        if ref in self._compiled:
            return self._compiled[ref]
        prefix = "#/$defs/"
        if not ref.startswith(prefix) or ref[len(prefix) :] not in self._defs:
            msg = f"unsupported or dangling $ref {ref!r}"
            raise SchemaCompileError(msg)
        target = self._defs[ref[len(prefix) :]]

        compiled, key = self._compiled, ref + "!"

        if self._specialiser is not None:
            namespace, ident = self._specialiser.namespace, self._specialiser.ident(ref)

            def deferred(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
                if out is None:  # validity alone: the entry's predicate
                    return bool(namespace[ident](instance))
                return compiled[key](instance, pointer, out)

        else:

            def deferred(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
                return compiled[key](instance, pointer, out)

        self._compiled[ref] = deferred
        self._types[ref] = None
        self._compiled[ref + "!"] = self._compile(target, ref)
        self._types[ref] = self._accepted_types(target)
        return deferred

    def _tags(self, branches: list[Any]) -> tuple[str | None, dict[str, str], _Patterns]:
        """The property whose ``const`` tells the ``$ref`` branches apart, and its mapping.

        Standard JSON Schema has no discriminator; each branch of a tagged union requires a
        property with its own ``const`` (``kind: {const: regex}``). A branch may instead
        require the property to match a ``pattern`` (the plugin extractor's ``x-`` kinds);
        such branches are returned apart, tried when no ``const`` names the tag. Used only to
        choose which branch's errors to report; acceptance does not depend on it.
        """
        common: set[str] | None = None
        consts: list[dict[str, str]] = []
        patterned: list[tuple[dict[str, str], str]] = []
        for branch in branches:
            ref = branch.get("$ref") if isinstance(branch, dict) else None
            target = self._defs.get(ref[len("#/$defs/") :]) if isinstance(ref, str) else None
            if not isinstance(target, dict) or not isinstance(ref, str):
                return None, {}, ()
            props = target.get("properties", {})
            required = target.get("required", ())
            tagged = {
                name: sub["const"]
                for name, sub in props.items()
                if isinstance(sub, dict) and isinstance(sub.get("const"), str) and name in required
            }
            if tagged:
                consts.append(tagged)
                common = set(tagged) if common is None else common & set(tagged)
                continue
            matching = {
                name: sub["pattern"]
                for name, sub in props.items()
                if isinstance(sub, dict)
                and isinstance(sub.get("pattern"), str)
                and name in required
            }
            if not matching:
                return None, {}, ()
            patterned.append((matching, ref))
        const_refs = [b["$ref"] for b in branches if b["$ref"] not in {r for _, r in patterned}]
        for name in sorted(common or ()):
            values = [tagged[name] for tagged in consts]
            if len(set(values)) == len(values) and all(name in m for m, _ in patterned):
                patterns = tuple((schema_pattern(m[name]), ref) for m, ref in patterned)
                return name, dict(zip(values, const_refs, strict=True)), patterns
        return None, {}, ()

    def _tag_filter(
        self, branches: list[Any], compiled: tuple[_Check, ...], prop: str | None
    ) -> tuple[str | None, dict[str, tuple[_Check, ...]], tuple[_Check, ...]]:
        """Which branches an object's tag leaves to try: ``(tag, by_value, always)``.

        A branch is filed under a value only when it is a ``$ref`` to an object schema that
        requires the tag and gives it a string ``const``: on an object whose tag is absent,
        not a string or another string, that branch is invalid whatever else the object
        holds, so its verdict need not be asked. Every other branch is always tried. The
        count of valid branches, and so ``anyOf``/``oneOf``, is unchanged.
        """
        if prop is None:
            return None, {}, compiled
        by_value: dict[str, tuple[_Check, ...]] = {}
        always: list[_Check] = []
        for branch, check in zip(branches, compiled, strict=True):
            ref = branch.get("$ref") if isinstance(branch, dict) else None
            target = self._defs.get(ref[len("#/$defs/") :]) if isinstance(ref, str) else None
            sub = target.get("properties", {}).get(prop) if isinstance(target, dict) else None
            required = target.get("required", ()) if isinstance(target, dict) else ()
            const = sub.get("const") if isinstance(sub, dict) else None
            if isinstance(const, str) and isinstance(required, list) and prop in required:
                by_value[const] = (*by_value.get(const, ()), check)
            else:
                always.append(check)
        return prop, by_value, tuple(always)

    def _accepted_types(self, schema: Any) -> frozenset[str] | None:
        if not isinstance(schema, dict):
            return None
        if "type" in schema:
            kind = schema["type"]
            return frozenset([kind] if isinstance(kind, str) else kind)
        if "$ref" in schema:
            return self._types.get(schema["$ref"])
        if "const" in schema:
            return frozenset([json_type(schema["const"])])
        branches = schema.get("anyOf") or schema.get("oneOf")
        if branches:
            union: set[str] = set()
            for branch in branches:
                kinds = self._accepted_types(branch)
                if kinds is None:
                    return None
                union |= kinds
            return frozenset(union)
        return None

    def _compile(self, schema: Any, where: str) -> _Check:
        if schema is True or schema == {}:
            return _accept
        if schema is False:
            return _reject
        if not isinstance(schema, dict):
            msg = f"{where}: a schema must be an object or a boolean"
            raise SchemaCompileError(msg)
        # ``x-`` keywords are annotations (e.g. ``x-rra-since``, model._base.since): no check.
        unknown = {k for k in schema if not k.startswith("x-")} - _SUPPORTED
        if unknown:
            msg = f"{where}: unsupported keyword(s) {sorted(unknown)}"
            raise SchemaCompileError(msg)
        checks: list[_Check] = []
        if "$ref" in schema:
            checks.append(self._resolve(schema["$ref"]))
        if "type" in schema:
            checks.append(_type_check(schema["type"], where))
        if "enum" in schema:
            checks.append(_enum_check(tuple(schema["enum"])))
        if "const" in schema:
            checks.append(_const_check(schema["const"]))
        checks.extend(_string_checks(schema))
        checks.extend(_number_checks(schema))
        checks.extend(self._array_checks(schema, where))
        if any(k in schema for k in ("properties", "patternProperties", "additionalProperties")):
            checks.append(self._object_check(schema, where))
        if "required" in schema:
            checks.append(_required_check(tuple(schema["required"])))
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                checks.append(self._branches(schema, keyword, where))
        if not checks:
            return _accept
        if len(checks) == 1:
            return checks[0]
        sequence = tuple(checks)

        def all_of(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
            if out is None:
                for check in sequence:  # noqa: SIM110 - a loop: all() of a generator is slower
                    if not check(instance, pointer, None):
                        return False
                return True
            ok = True
            for check in sequence:
                if not check(instance, pointer, out):
                    ok = False
            return ok

        return all_of

    def _array_checks(self, schema: dict[str, Any], where: str) -> Iterable[_Check]:
        low, high = schema.get("minItems"), schema.get("maxItems")
        if low is not None or high is not None:

            def count(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
                if not isinstance(instance, list):
                    return True
                if low is not None and len(instance) < low:
                    if out is None:
                        return False
                    out.append(_err("minItems", pointer, f"needs at least {low} item(s)"))
                    return False
                if high is not None and len(instance) > high:
                    if out is None:
                        return False
                    out.append(_err("maxItems", pointer, f"allows at most {high} item(s)"))
                    return False
                return True

            yield count
        if "items" in schema:
            item_check = self._compile(schema["items"], f"{where}/items")

            def items(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
                if not isinstance(instance, list):
                    return True
                ok = True
                for index, item in enumerate(instance):
                    # Validity first, without pointers; the errors only of an invalid item.
                    if not item_check(item, "", None):
                        if out is None:
                            return False
                        item_check(item, f"{pointer}/{index}", out)
                        ok = False
                return ok

            yield items

    def _object_check(self, schema: dict[str, Any], where: str) -> _Check:
        props = {
            name: self._compile(sub, f"{where}/properties/{name}")
            for name, sub in schema.get("properties", {}).items()
        }
        patterns = [
            (_cached_search(pat), self._compile(sub, f"{where}/patternProperties/{pat}"))
            for pat, sub in schema.get("patternProperties", {}).items()
        ]
        extra_schema = schema.get("additionalProperties", True)
        extra = None if extra_schema is False else self._compile(extra_schema, where + "/ap")
        names = tuple(props)

        # The checks that apply to a key (its property's, then each matching pattern's), in
        # order; an empty tuple sends the value to additionalProperties. Routed once per key.
        routes: dict[str, tuple[_Check, ...]] = {}

        def route(key: str) -> tuple[_Check, ...]:
            sub = props.get(key)
            found = (() if sub is None else (sub,)) + tuple(
                check for search, check in patterns if search(key)
            )
            if len(routes) < _MEMO_LIMIT:
                routes[key] = found
            return found

        def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
            if not isinstance(instance, dict):
                return True
            if out is None:
                for key, value in instance.items():
                    checks = routes.get(key)
                    if checks is None:
                        checks = route(key)
                    if not checks:
                        if extra is None or not extra(value, "", None):
                            return False
                        continue
                    for sub in checks:
                        if not sub(value, "", None):
                            return False
                return True
            ok = True
            for key, value in instance.items():
                checks = routes.get(key)
                if checks is None:
                    checks = route(key)
                if checks:
                    for sub in checks:
                        if type(value) is list:
                            # An array asks each item's validity first itself: one pass over
                            # the items, not one to find the array invalid and one for errors.
                            if not sub(value, f"{pointer}/{_esc(key)}", out):
                                ok = False
                        # Validity first, without pointers; errors only below an invalid value.
                        elif not sub(value, "", None):
                            sub(value, f"{pointer}/{_esc(key)}", out)
                            ok = False
                    continue
                child = f"{pointer}/{_esc(key)}"
                if extra is None:
                    out.append(
                        SchemaError(
                            "additionalProperties",
                            child,
                            f"unknown key {key!r}",
                            key=key,
                            names=names,
                        )
                    )
                    ok = False
                elif not extra(value, child, out):
                    ok = False
            return ok

        return check

    def _branches(self, schema: dict[str, Any], keyword: str, where: str) -> _Check:
        branches = schema[keyword]
        compiled = tuple(
            self._compile(branch, f"{where}/{keyword}/{i}") for i, branch in enumerate(branches)
        )
        refs = tuple(b.get("$ref") if isinstance(b, dict) else None for b in branches)
        prop, mapping, patterns = self._tags(branches)
        exactly_one = keyword == "oneOf"
        types_of = self._accepted_types
        tag, by_tag, untagged = self._tag_filter(branches, compiled, prop)

        def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
            valid = 0
            candidates = compiled
            if tag is not None and isinstance(instance, dict):
                value = instance.get(tag)
                candidates = (by_tag.get(value, ()) if isinstance(value, str) else ()) + untagged
            for branch in candidates:
                if branch(instance, pointer, None):
                    if not exactly_one:
                        return True  # anyOf: the first valid branch decides
                    valid += 1
            if valid == 1:
                return True
            if out is None:
                return False
            if valid > 1:
                out.append(_err("oneOf", pointer, "the value matches more than one alternative"))
                return False
            results: list[list[SchemaError]] = []
            for branch in compiled:  # no branch is valid: each one's errors, to choose from
                errors: list[SchemaError] = []
                branch(instance, pointer, errors)
                results.append(errors)
            tagging = (prop, mapping, patterns)
            out.extend(_best(instance, pointer, results, branches, refs, tagging, types_of))
            return False

        return check


def compile_schema(
    schema: dict[str, Any], *, specialise_after: int | None = SPECIALISE_AFTER
) -> CompiledSchema:
    """Compile ``schema``; :class:`SchemaCompileError` on any unsupported keyword."""
    return CompiledSchema(schema, specialise_after=specialise_after)
