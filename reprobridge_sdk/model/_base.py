"""Shared base for every model of the format.

Every object in an RRA document forbids unknown keys except those that start with ``x-``,
which the specification reserves for extensions. The generated JSON Schema says the same
thing with ``patternProperties`` plus ``additionalProperties: false``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from reprobridge_sdk.versions import parse_since, since

from ._fieldnotes import EXAMPLES, NOTES

__all__ = [
    "EXTENSION_PATTERN",
    "ID_PATTERN",
    "SHA256_PATTERN",
    "Identifier",
    "Integer",
    "OptionalInteger",
    "RelPath",
    "Sha256",
    "SpecModel",
    "parse_since",
    "required_version",
    "since",
]


def _integral(value: Any) -> Any:
    """A float with no fractional part as the integer it is (``1.0`` is 1); else unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: An integer as JSON Schema 2020-12 defines it: a number with a zero fractional part, so
#: ``1.0`` is the integer 1 (spec "conventions"); booleans are not integers. The models are
#: validated strictly (no coercion of strings), so the one conversion is written here.
Integer = Annotated[int, BeforeValidator(_integral)]
#: An optional :data:`Integer` (written so that a field's bounds still reach the integer).
OptionalInteger = Annotated[int | None, BeforeValidator(_integral)]

#: Keys reserved for extensions (spec §4.1).
EXTENSION_PATTERN = "^x-"
#: Identifiers: lower-case slugs, unique within their list (spec §5).
ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
#: A bare lower-case hex SHA-256 digest.
SHA256_PATTERN = r"^[0-9a-f]{64}$"

_EXTENSION_RE = re.compile(EXTENSION_PATTERN)


def _schema_extra(schema: dict[str, Any], model: type[Any]) -> None:
    schema["patternProperties"] = {EXTENSION_PATTERN: {}}
    schema["additionalProperties"] = False
    # Every property described, from the one source of field notes (see _fieldnotes).
    name = model.__name__
    for key, prop in schema.get("properties", {}).items():
        if not isinstance(prop, dict):
            continue
        note = NOTES.get(f"{name}.{key}")
        if note is not None and "description" not in prop:
            prop["description"] = note
        examples = EXAMPLES.get(f"{name}.{key}")
        if examples is not None and "examples" not in prop:
            prop["examples"] = examples


#: The keys each model class accepts (its fields' names and aliases), computed once a class.
_KNOWN_KEYS: dict[type[Any], frozenset[str]] = {}


def _known_keys(model: type[BaseModel]) -> frozenset[str]:
    known = _KNOWN_KEYS.get(model)
    if known is None:
        fields = model.model_fields
        known = frozenset(fields) | {f.alias for f in fields.values() if f.alias}
        _KNOWN_KEYS[model] = known
    return known


class SpecModel(BaseModel):
    """Base of all format objects: unknown keys are rejected, ``x-`` keys are kept."""

    model_config = ConfigDict(
        extra="allow",
        frozen=False,
        populate_by_name=True,
        validate_assignment=True,
        use_enum_values=True,
        json_schema_extra=_schema_extra,
    )

    @model_validator(mode="before")
    @classmethod
    def _only_extension_extras(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = _known_keys(cls)
            if data.keys() <= known:
                return data
            for key in data:
                if key not in known and not (isinstance(key, str) and _EXTENSION_RE.match(key)):
                    msg = f"unknown key {key!r}"
                    raise ValueError(msg)
        return data

    def extensions(self) -> dict[str, Any]:
        """The ``x-`` extension keys of this object."""
        return dict(self.__pydantic_extra__ or {})

    def _needs_version(self) -> tuple[int, int]:
        """The lowest format version a rule of this object (not a marked field) needs."""
        return (1, 0)


def required_version(value: Any) -> tuple[int, int]:
    """The lowest format version whose fields and values ``value`` (a model) uses.

    A field marked ``since(V)`` counts when it is written: when it was set (given in the data
    or assigned, even to its default) or its value differs from its default; an enumeration
    value marked ``since(V, values=...)`` when the field holds it (or a list holds it); an
    object's own rule through ``_needs_version`` (an empty patch series needs 1.1). Producers
    declare this version (spec "versioning": the lowest version whose fields they use).
    """
    needed = (1, 0)
    if isinstance(value, SpecModel):
        needed = max(needed, value._needs_version())
        written = value.model_fields_set
        for name, info in type(value).model_fields.items():
            current = getattr(value, name)
            extra = info.json_schema_extra
            marker = parse_since(extra.get("$comment")) if isinstance(extra, dict) else None
            if marker is not None:
                version, values = marker
                if values is None:
                    default = info.get_default(call_default_factory=True)
                    if name in written or current != default:
                        needed = max(needed, version)
                else:
                    held = current if isinstance(current, list) else [current]
                    if any(item in values for item in held):
                        needed = max(needed, version)
            needed = max(needed, required_version(current))
    elif isinstance(value, (list, tuple)):
        for item in value:
            needed = max(needed, required_version(item))
    elif isinstance(value, dict):
        for item in value.values():
            needed = max(needed, required_version(item))
    return needed


Identifier = Annotated[str, Field(pattern=ID_PATTERN)]
Sha256 = Annotated[str, Field(pattern=SHA256_PATTERN)]
#: A POSIX-style path relative to the artifact root. Containment is checked by the validator
#: (spec §7) since it depends on the file system.
RelPath = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^/\\]")]
