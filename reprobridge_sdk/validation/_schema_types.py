"""What the schema evaluator's parts share: its error record and the shape of a check.

Rules: a :class:`SchemaError` is one structural error, a frozen value: the failing keyword, the
JSON Pointer of the failing value (a key's own pointer for ``required`` and
``additionalProperties``), a message, and the key, expected types, allowed values, known names
or pattern a reporter needs to write a hint. :class:`SchemaCompileError` is raised when a
schema is compiled, never when data is evaluated. A check (:data:`_Check`) answers validity
alone with ``out=None`` and appends errors only when it returns False.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reprobridge_sdk.io.document import json_type

__all__ = ["SchemaCompileError", "SchemaError"]


class SchemaCompileError(Exception):
    """The schema uses a keyword or form this evaluator does not implement."""


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


#: A compiled check: ``check(instance, pointer, out)``. With ``out`` a list, the errors are
#: appended to it; with ``out=None`` only validity is asked: no error is built, no pointer
#: below ``instance`` is formed (``pointer`` is then meaningless) and the check may stop at
#: the first failure. The boolean is the same in both modes, and a check that returns True
#: appends nothing.
_Check = Callable[[Any, str, "list[SchemaError] | None"], bool]


def _esc(token: str) -> str:
    if "~" not in token and "/" not in token:
        return token
    return token.replace("~", "~0").replace("/", "~1")


def _err(keyword: str, pointer: str, message: str) -> SchemaError:
    return SchemaError(keyword, pointer, message)


def _type_error(pointer: str, instance: Any, expected: tuple[str, ...]) -> SchemaError:
    names = " or ".join(expected)
    return SchemaError(
        "type", pointer, f"expected {names}, got {json_type(instance)}", expected=expected
    )
