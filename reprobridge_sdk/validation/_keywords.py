"""The checks of single keywords, each compiled once into a closure: ``type``, ``enum``,
``const``, ``required``, ``pattern``, ``minLength``/``maxLength`` and the four number bounds.

Rules, as JSON Schema 2020-12 states them: a keyword about another type accepts the value
(``minLength`` accepts a number); a boolean is never a number or an integer; an integer is an
``int`` or a float with no fractional part; equality (``enum``, ``const``) is JSON's: ``1 ==
1.0``, ``true != 1``, deep for arrays and objects. A ``pattern`` is searched (not anchored) with
RE2 (:func:`~reprobridge_sdk.extract.pattern.schema_pattern`) on the string's UTF-8 bytes (what
the RE2 wrapper searches anyway), its answers memoised per string up to :data:`_MEMO_LIMIT`
results. An unknown ``type`` name is :class:`SchemaCompileError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from reprobridge_sdk.extract.pattern import schema_pattern
from reprobridge_sdk.validation._schema_types import (
    SchemaCompileError,
    SchemaError,
    _Check,
    _err,
    _esc,
    _type_error,
)

_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


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
    if isinstance(value, bool):
        return False
    if name == "number":
        return isinstance(value, (int, float))
    # integer: a float with no fractional part counts, as in jsonschema.
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _equal(one: Any, two: Any) -> bool:
    """JSON equality: booleans differ from numbers, 1 == 1.0, deep for arrays and objects."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=False))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) != isinstance(two, bool):
        return False
    return bool(one == two)


#: Most results a pattern keeps (then its memo starts again): bounds the memory on a document
#: of many distinct strings while keys and repeated values are still looked up once.
_MEMO_LIMIT = 1 << 16


@lru_cache(maxsize=256)
def _cached_search(source: str) -> Callable[[str], bool]:
    """Whether a schema ``pattern`` matches somewhere in a string, memoised per string.

    The regular expression is RE2's (:func:`~reprobridge_sdk.extract.pattern.schema_pattern`,
    the models' meaning); only the answer is kept. One memo per pattern text, shared by every
    schema node that uses it: an object's keys (``^x-``) and repeated values (task ids,
    digests) are matched once per document instead of once per occurrence.
    """
    regex = schema_pattern(source)
    memo: dict[str, bool] = {}

    def search(value: str) -> bool:
        found = memo.get(value)
        if found is None:
            # The UTF-8 bytes the RE2 wrapper would encode the string to itself: the same
            # search of the same program, without the wrapper's offsets back to characters
            # (only whether it matches is kept; a third of the cost); a string UTF-8 cannot
            # carry raises as before. ``Regex`` declares text only: the test
            # ``test_pattern_memo_searches_as_the_regex_on_text`` holds the two equal.
            encoded = value.encode("utf-8")
            found = regex.search(encoded) is not None  # type: ignore[arg-type]  # see above
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[value] = found
        return found

    return search


def _accept(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
    return True


def _reject(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
    if out is None:
        return False
    out.append(_err("false", pointer, "no value is allowed here"))
    return False


def _type_check(kind: Any, where: str) -> _Check:
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    if not kinds or any(k not in _TYPES for k in kinds):
        msg = f"{where}: unsupported type {kind!r}"
        raise SchemaCompileError(msg)

    if len(kinds) == 1 and kinds[0] in _SIMPLE_TYPES:
        simple = _SIMPLE_TYPES[kinds[0]]

        def one(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
            if isinstance(instance, simple) and not isinstance(instance, bool):
                return True
            if out is None:
                return False
            out.append(_type_error(pointer, instance, kinds))
            return False

        return one

    def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
        for name in kinds:
            if _is_type(instance, name):
                return True
        if out is None:
            return False
        out.append(_type_error(pointer, instance, kinds))
        return False

    return check


#: Types whose test is one isinstance (a bool is never one of them).
_SIMPLE_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "number": (int, float),
}


def _enum_check(values: tuple[Any, ...]) -> _Check:
    def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
        if any(_equal(value, instance) for value in values):
            return True
        if out is None:
            return False
        out.append(
            SchemaError(
                "enum", pointer, f"{instance!r} is not one of {list(values)}", allowed=values
            )
        )
        return False

    return check


def _const_check(value: Any) -> _Check:
    def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
        if _equal(value, instance):
            return True
        if out is None:
            return False
        out.append(SchemaError("const", pointer, f"expected {value!r}", allowed=(value,)))
        return False

    return check


def _required_check(names: tuple[str, ...]) -> _Check:
    def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
        if not isinstance(instance, dict):
            return True
        ok = True
        for name in names:
            if name not in instance:
                if out is None:
                    return False
                out.append(
                    SchemaError(
                        "required",
                        f"{pointer}/{_esc(name)}",
                        f"missing required key {name!r}",
                        key=name,
                    )
                )
                ok = False
        return ok

    return check


def _string_checks(schema: dict[str, Any]) -> Iterable[_Check]:
    if "pattern" in schema:
        source = schema["pattern"]
        search = _cached_search(source)

        def pattern(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
            if not isinstance(instance, str) or search(instance):
                return True
            if out is None:
                return False
            out.append(
                SchemaError(
                    "pattern",
                    pointer,
                    f"{instance!r} does not match {source!r}",
                    schema_pattern=source,
                )
            )
            return False

        yield pattern
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None or high is not None:

        def length(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
            if not isinstance(instance, str):
                return True
            if low is not None and len(instance) < low:
                if out is None:
                    return False
                message = "must not be empty" if low == 1 else f"needs at least {low} characters"
                out.append(_err("minLength", pointer, message))
                return False
            if high is not None and len(instance) > high:
                if out is None:
                    return False
                out.append(_err("maxLength", pointer, f"allows at most {high} characters"))
                return False
            return True

        yield length


def _number_checks(schema: dict[str, Any]) -> Iterable[_Check]:
    bounds = [
        (name, schema[name])
        for name in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        if name in schema
    ]
    if not bounds:
        return

    def check(instance: Any, pointer: str, out: list[SchemaError] | None) -> bool:
        if not _is_number(instance):
            return True
        ok = True
        for name, bound in bounds:
            failed = (
                (name == "minimum" and instance < bound)
                or (name == "maximum" and instance > bound)
                or (name == "exclusiveMinimum" and instance <= bound)
                or (name == "exclusiveMaximum" and instance >= bound)
            )
            if failed:
                if out is None:
                    return False
                relation = {
                    "minimum": ">=",
                    "maximum": "<=",
                    "exclusiveMinimum": ">",
                    "exclusiveMaximum": "<",
                }[name]
                out.append(_err(name, pointer, f"{instance!r} is not {relation} {bound!r}"))
                ok = False
        return ok

    yield check
