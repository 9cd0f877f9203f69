"""Shared base for every model of the format.

Every object in an RRA document forbids unknown keys except those that start with ``x-``,
which the specification reserves for extensions. The generated JSON Schema says the same
thing with ``patternProperties`` plus ``additionalProperties: false``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reprobridge_sdk.versions import parse_since, since

__all__ = [
    "EXTENSION_PATTERN",
    "ID_PATTERN",
    "SHA256_PATTERN",
    "Identifier",
    "RelPath",
    "Sha256",
    "SpecModel",
    "parse_since",
    "since",
]

#: Keys reserved for extensions (spec §4.1).
EXTENSION_PATTERN = "^x-"
#: Identifiers: lower-case slugs, unique within their list (spec §5).
ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
#: A bare lower-case hex SHA-256 digest.
SHA256_PATTERN = r"^[0-9a-f]{64}$"

_EXTENSION_RE = re.compile(EXTENSION_PATTERN)


def _schema_extra(schema: dict[str, Any]) -> None:
    schema["patternProperties"] = {EXTENSION_PATTERN: {}}
    schema["additionalProperties"] = False


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
            known = set(cls.model_fields)
            known |= {f.alias for f in cls.model_fields.values() if f.alias}
            for key in data:
                if key not in known and not (isinstance(key, str) and _EXTENSION_RE.match(key)):
                    msg = f"unknown key {key!r}"
                    raise ValueError(msg)
        return data

    def extensions(self) -> dict[str, Any]:
        """The ``x-`` extension keys of this object."""
        return dict(self.__pydantic_extra__ or {})


Identifier = Annotated[str, Field(pattern=ID_PATTERN)]
Sha256 = Annotated[str, Field(pattern=SHA256_PATTERN)]
#: A POSIX-style path relative to the artifact root. Containment is checked by the validator
#: (spec §7) since it depends on the file system.
RelPath = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^/\\]")]
