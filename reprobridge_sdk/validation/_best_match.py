"""Which errors a failed ``anyOf``/``oneOf`` reports (acceptance never depends on this).

Rules, in order: in a tagged union (each ``$ref`` branch requires a property with its own
``const``, or a ``pattern`` for the plugin ``x-`` kinds), the errors of the branch the tag
names; a missing tag is ``required`` at the tag's pointer, an unknown tag ``enum`` there with
the allowed tags. Otherwise the branch whose type fits the value and has the fewest errors (the
first on a tie); when no branch's type fits, one ``type`` error naming every accepted type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reprobridge_sdk.validation._keywords import _is_type
from reprobridge_sdk.validation._schema_types import SchemaError, _esc, _type_error

#: The ``pattern``-tagged branches of a tagged union: (compiled pattern, ``$ref``).
_Patterns = tuple[tuple[Any, str], ...]


def _best(  # noqa: PLR0917 - internal helper of one call site
    instance: Any,
    pointer: str,
    results: list[list[SchemaError]],
    branches: list[Any],
    refs: tuple[str | None, ...],
    tagging: tuple[str | None, dict[str, str], _Patterns],
    types_of: Callable[[Any], frozenset[str] | None],
) -> list[SchemaError]:
    prop, mapping, patterns = tagging
    if prop is not None and isinstance(instance, dict):
        tag = instance.get(prop)
        target = mapping.get(tag) if isinstance(tag, str) else None
        if target is None and isinstance(tag, str):
            target = next((ref for regex, ref in patterns if regex.search(tag)), None)
        if target is not None and target in refs:
            return results[refs.index(target)]
        if prop not in instance:
            return [
                SchemaError(
                    "required",
                    f"{pointer}/{_esc(prop)}",
                    f"missing required key {prop!r}",
                    key=prop,
                )
            ]
        also = "".join(f" or a value matching {regex.pattern!r}" for regex, _ in patterns)
        return [
            SchemaError(
                "enum",
                f"{pointer}/{_esc(prop)}",
                f"{tag!r} is not one of {sorted(mapping)}{also}",
                allowed=tuple(sorted(mapping)),
            )
        ]
    fitting: list[int] = []
    expected: set[str] = set()
    for index, branch in enumerate(branches):
        kinds = types_of(branch)
        if kinds is None or any(_is_type(instance, kind) for kind in kinds):
            fitting.append(index)
        if kinds is not None:
            expected |= kinds
    if not fitting:
        return [_type_error(pointer, instance, tuple(sorted(expected)))]
    index = min(fitting, key=lambda i: len(results[i]))
    return results[index]
