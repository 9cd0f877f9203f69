"""Upgrade a manifest to a newer minor version of the format (``reprobridge upgrade``).

Rewrites ``rra_version`` (and the schema modeline) and keeps every other byte; refused with
the validator's finding (Y, V001, V002, V004; V006 for an unknown or older target). Spec:
``spec/manifest.md#upgrade``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.io._yamlspans import same
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.loading import MANIFEST_NAME, read_manifest
from reprobridge_sdk.validation.version import check_version
from reprobridge_sdk.versions import (
    FORMAT_VERSIONS,
    NEWEST_FORMAT,
    follow_modeline,
    parse_version,
)

__all__ = ["UpgradeResult", "upgrade"]


@dataclass(frozen=True)
class UpgradeResult:
    """What :func:`upgrade` did (or, with ``check``, would do)."""

    manifest: Path
    before: str
    after: str
    changed: bool
    written: bool


def _refuse(findings: list[Finding], message: str) -> ArtifactError:
    return ArtifactError(message, findings)


def upgrade(
    artifact_dir: str | os.PathLike[str],
    *,
    to: str = NEWEST_FORMAT,
    check: bool = False,
) -> UpgradeResult:
    """Rewrite the manifest of ``artifact_dir`` as format ``to`` (default: the newest).

    Raises :class:`UsageError` (V006) for an unknown target and :class:`ArtifactError` (with
    the findings) for a manifest that cannot be upgraded; ``OSError`` when it cannot be read
    or written.
    """
    target = parse_version(to)
    if target is None or to not in FORMAT_VERSIONS:
        known = ", ".join(FORMAT_VERSIONS)
        item = finding("V006", f"cannot upgrade to {to!r}: this SDK knows {known}")
        raise UsageError(item.message, [item])
    root, doc = read_manifest(artifact_dir)
    manifest = root / MANIFEST_NAME
    version = check_version(doc.document)
    if version.version is None or version.unknown_major:
        found = list(version.findings)
        raise _refuse(found, f"{manifest}: the declared version cannot be upgraded")
    before = doc.data["rra_version"]
    if version.version > target:
        line, col = doc.locate("/rra_version")
        item = finding(
            "V006",
            f"the manifest is {before}, newer than {to}: a manifest is never downgraded",
            path="/rra_version",
            file=str(manifest),
            line=line,
            col=col,
        )
        raise _refuse([item], item.message)
    if version.version == target:
        return UpgradeResult(manifest, before, to, changed=False, written=False)
    new_data = dict(doc.data)
    new_data["rra_version"] = to
    yamlio.update(doc, new_data)
    text = follow_modeline(yamlio.dumps(doc), to)
    check_doc = load_document(text.encode("utf-8"), name=str(manifest))
    if check_doc.fatal or not same(check_doc.data, new_data):  # pragma: no cover - a scalar edit
        msg = f"{manifest}: the upgraded text does not read back as the same manifest"
        raise _refuse([finding("V006", msg, file=str(manifest))], msg)
    if not check:
        atomic_write_text(manifest, text)
    return UpgradeResult(manifest, before, to, changed=True, written=not check)
