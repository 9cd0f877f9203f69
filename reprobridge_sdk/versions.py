"""Format versions: which versions exist and how an addition of a minor version is marked.

The rules are spec/manifest.md §4. A field or value added after 1.0 carries a :func:`since`
marker, from which older schemas, the spec's "Since 1.1" and V005 are derived.

This module imports nothing (no pydantic), so that validation stays free of the models.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "FORMAT_VERSION",
    "FORMAT_VERSIONS",
    "MANIFEST_NAME",
    "NEWEST_FORMAT",
    "RECORD_NAME",
    "SCHEMA_BASE_URL",
    "VERSION_PATTERN",
    "follow_modeline",
    "manifest_modeline",
    "manifest_schema_url",
    "parse_since",
    "parse_version",
    "since",
    "written_version",
]

#: The manifest's file name in an artifact's root.
MANIFEST_NAME = "rra.yaml"
#: The evidence record's file name in a run directory.
RECORD_NAME = "record.json"
#: The format version new manifests declare (the lowest one whose fields they use).
FORMAT_VERSION = "1.0"
#: Every format version this SDK understands, oldest first; the models describe the last one.
FORMAT_VERSIONS = ("1.0", "1.1")
#: The newest format version this SDK understands (1.1 is a draft).
NEWEST_FORMAT = FORMAT_VERSIONS[-1]
#: A well-formed version: ASCII digits, no leading zeros (``01.0`` and ``1.00`` are not).
VERSION_PATTERN = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"

#: Base of the stable ``$id`` of every schema: ``<base><name>.schema.json``.
SCHEMA_BASE_URL = "https://reprobridge.org/schemas/"

_VERSION_RE = re.compile(VERSION_PATTERN)
#: A manifest's editor binding comment (its modeline), with the schema's version (group 2).
_MODELINE_RE = re.compile(
    r"^(#\s*yaml-language-server:\s*\$schema=\S*?rra-)(\d+\.\d+)(\.schema\.json)",
    re.MULTILINE,
)
_SINCE_RE = re.compile(r"^since (0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:: (\[.*\]))?$")


def parse_version(text: object) -> tuple[int, int] | None:
    """``(major, minor)`` of a well-formed version string, else ``None``."""
    match = _VERSION_RE.fullmatch(text) if isinstance(text, str) else None
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def written_version(declared: str, needed: tuple[int, int]) -> str:
    """The version a manifest is written as: ``declared``, raised to ``needed``, never lowered.

    The one rule of every writer of a manifest (spec/manifest.md §4); a malformed ``declared``
    is kept, for validation to report.
    """
    have = parse_version(declared)
    if have is None or have >= needed:
        return declared
    return f"{needed[0]}.{needed[1]}"


def manifest_schema_url(version: str) -> str:
    """The ``$id`` of the manifest schema of ``version`` (``schemas/rra-<version>...``)."""
    return f"{SCHEMA_BASE_URL}rra-{version}.schema.json"


def manifest_modeline(version: str) -> str:
    """The editor binding comment (without ``#``) a new manifest of ``version`` starts with."""
    return f"yaml-language-server: $schema={manifest_schema_url(version)}"


def follow_modeline(text: str, version: str) -> str:
    """``text`` of a manifest with its editor binding comment, when it has one, naming the
    schema of ``version``: the comment follows the version the manifest is written as."""
    return _MODELINE_RE.sub(lambda m: m.group(1) + version + m.group(3), text, count=1)


def since(version: str, *, values: tuple[str, ...] = ()) -> dict[str, Any]:
    """Schema annotation of a field, or of enumeration values, added in a minor version.

    ``Field(..., json_schema_extra=since("1.1"))`` for a field, ``since("1.1", values=("new",))``
    for values an enumeration gained. Rendered as a ``$comment``, the one annotation every
    strict 2020-12 validator accepts.
    """
    if not _VERSION_RE.fullmatch(version):
        msg = f"since(): {version!r} is not a MAJOR.MINOR version"
        raise ValueError(msg)
    if values:
        return {"$comment": f"since {version}: {json.dumps(list(values))}"}
    return {"$comment": f"since {version}"}


def parse_since(comment: Any) -> tuple[tuple[int, int], tuple[str, ...] | None] | None:
    """Read a :func:`since` ``$comment``: (version, None) for a field, (version, values) for
    enumeration values, ``None`` for any other comment (or none)."""
    if not isinstance(comment, str):
        return None
    match = _SINCE_RE.fullmatch(comment)
    if match is None:
        return None
    version = (int(match.group(1)), int(match.group(2)))
    if match.group(3) is None:
        return version, None
    values = json.loads(match.group(3))
    return version, tuple(str(v) for v in values)
