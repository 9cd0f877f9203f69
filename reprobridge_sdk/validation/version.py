"""Version layer: ``rra_version`` against the versions this validator knows (V codes).

The policy (V001-V004, what each stops) is spec ``manifest.md#versioning``. V005, a field or
value added after the declared older version, is reported by the structural and semantic
layers, which know the fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io.document import Document
from reprobridge_sdk.versions import FORMAT_VERSION, NEWEST_FORMAT, VERSION_PATTERN, parse_version

__all__ = ["KNOWN_VERSION", "VersionInfo", "check_version", "declared_version"]

#: The newest (major, minor) format version this validator implements.
KNOWN_VERSION: tuple[int, int] = (
    int(NEWEST_FORMAT.split(".")[0]),
    int(NEWEST_FORMAT.split(".")[1]),
)

_VERSION_RE = re.compile(VERSION_PATTERN)


@dataclass(frozen=True)
class VersionInfo:
    """What the document declares, as far as the validator could tell."""

    version: tuple[int, int] | None
    findings: tuple[Finding, ...]

    @property
    def unknown_major(self) -> bool:
        return self.version is not None and self.version[0] != KNOWN_VERSION[0]

    @property
    def older(self) -> bool:
        """A known version older than the newest (its later additions are V005)."""
        return self.version is not None and self.version < KNOWN_VERSION and not self.unknown_major

    @property
    def newer_minor(self) -> bool:
        return (
            self.version is not None
            and self.version[0] == KNOWN_VERSION[0]
            and self.version[1] > KNOWN_VERSION[1]
        )


def declared_version(data: object) -> tuple[int, int] | None:
    """The well-formed ``rra_version`` of a document's data, else ``None``."""
    return parse_version(data.get("rra_version") if isinstance(data, dict) else None)


def check_version(doc: Document) -> VersionInfo:
    """Read ``/rra_version`` of a document whose data is a mapping."""
    data = doc.data if isinstance(doc.data, dict) else {}
    known = f"{KNOWN_VERSION[0]}.{KNOWN_VERSION[1]}"
    value = data.get("rra_version")
    match = _VERSION_RE.fullmatch(value) if isinstance(value, str) else None
    version = (int(match.group(1)), int(match.group(2))) if match is not None else None
    if "rra_version" not in data:
        code, message = "V001", "rra_version is missing"
        hint = f"add 'rra_version: \"{FORMAT_VERSION}\"' at the top of the manifest"
    elif version is None:
        code = "V004"
        message = f"rra_version {value!r} is not a string of the form MAJOR.MINOR"
        hint = f'write it as a quoted string: rra_version: "{FORMAT_VERSION}"'
    elif version[0] != KNOWN_VERSION[0]:
        code = "V002"
        message = (
            f"rra_version {value} has major version {version[0]}; this validator knows {known}"
        )
        hint = "upgrade reprobridge, or check the version you declared"
    elif version[1] > KNOWN_VERSION[1]:
        code = "V003"
        message = f"rra_version {value} is newer than {known}; fields added since are not checked"
        hint = "upgrade reprobridge to check this manifest fully"
    else:
        return VersionInfo(version, ())
    return VersionInfo(version, (doc.finding(code, message, path="/rra_version", hint=hint),))
