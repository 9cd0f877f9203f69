"""Version layer: ``rra_version`` against the versions this validator knows (V codes).

Policy (spec "versioning"): a missing version is V001 and a malformed one V004 (both stop the
structural layer's version-dependent rules but not the others); an unknown major version is
V002 and stops the structural and semantic layers, since the document may mean anything; a
newer minor version is V003, a warning, and validation goes on with unknown keys downgraded to
warnings (S005).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io.document import Document

__all__ = ["KNOWN_VERSION", "VersionInfo", "check_version"]

#: The (major, minor) format version this validator implements.
KNOWN_VERSION = (1, 0)

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")


@dataclass(frozen=True)
class VersionInfo:
    """What the document declares, as far as the validator could tell."""

    version: tuple[int, int] | None
    findings: tuple[Finding, ...]

    @property
    def unknown_major(self) -> bool:
        return self.version is not None and self.version[0] != KNOWN_VERSION[0]

    @property
    def newer_minor(self) -> bool:
        return (
            self.version is not None
            and self.version[0] == KNOWN_VERSION[0]
            and self.version[1] > KNOWN_VERSION[1]
        )


def check_version(doc: Document) -> VersionInfo:
    """Read ``/rra_version`` of a document whose data is a mapping."""
    data = doc.data if isinstance(doc.data, dict) else {}
    known = f"{KNOWN_VERSION[0]}.{KNOWN_VERSION[1]}"
    if "rra_version" not in data:
        item = doc.finding(
            "V001",
            "rra_version is missing",
            path="/rra_version",
            hint=f"add 'rra_version: \"{known}\"' at the top of the manifest",
        )
        return VersionInfo(None, (item,))
    value = data["rra_version"]
    match = _VERSION_RE.match(value) if isinstance(value, str) else None
    if match is None:
        hint = f'write it as a quoted string: rra_version: "{known}"'
        item = doc.finding(
            "V004",
            f"rra_version {value!r} is not a string of the form MAJOR.MINOR",
            path="/rra_version",
            hint=hint,
        )
        return VersionInfo(None, (item,))
    version = (int(match.group(1)), int(match.group(2)))
    if version[0] != KNOWN_VERSION[0]:
        item = doc.finding(
            "V002",
            f"rra_version {value} has major version {version[0]}; this validator knows {known}",
            path="/rra_version",
            hint="upgrade reprobridge, or check the version you declared",
        )
        return VersionInfo(version, (item,))
    if version[1] > KNOWN_VERSION[1]:
        item = doc.finding(
            "V003",
            f"rra_version {value} is newer than {known}; fields added since are not checked",
            path="/rra_version",
            hint="upgrade reprobridge to check this manifest fully",
        )
        return VersionInfo(version, (item,))
    return VersionInfo(version, ())
