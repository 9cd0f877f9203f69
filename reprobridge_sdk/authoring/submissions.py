"""Submissions a committee audits: artifact directories or packed archives (audit.md#table).

:func:`audit_submissions` is ``reprobridge audit --table``: each path is an artifact
directory (or its ``rra.yaml``) or a packed archive (a file, ``.tar``, ``.tar.gz`` or
``.tgz``, as ``reprobridge pack`` writes). An archive is unpacked with the safe unpacker of
:mod:`reprobridge_sdk.authoring.pack` (no absolute or ``..`` names, no links leaving the tree,
no devices, bounded size) into a fresh temporary directory that is removed afterwards, and
audited there like a directory, re-executions (``rerun``) included. Its row is named by the
archive's path and the SHA-256 of its uncompressed tar stream, never by the temporary
directory. An archive that cannot be unpacked safely is a row in ``error`` whose findings are
the unpacker's (C017, C018); like any artifact that cannot be loaded it counts in every rate.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reprobridge_sdk.audit import audit_table
from reprobridge_sdk.audit.verdict import as_audit_finding
from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.model.audit import AuditTable

from .pack import PackError, unpack

__all__ = ["audit_submissions", "is_archive"]


def is_archive(path: str | os.PathLike[str]) -> bool:
    """A path names an archive when it is a file other than a manifest."""
    target = Path(path)
    return target.is_file() and target.name != MANIFEST_NAME


def audit_submissions(
    paths: Sequence[str | os.PathLike[str]],
    attempts: Sequence[str] | None = None,
    **options: Any,
) -> AuditTable:
    """Audit directories and archives as one table (``options`` as for ``audit_table``)."""
    with tempfile.TemporaryDirectory(prefix="rb-submissions-") as scratch:
        targets: list[str] = []
        digests: list[str | None] = []
        failed: dict[int, PackError] = {}
        for index, path in enumerate(paths):
            if not is_archive(path):
                targets.append(os.fspath(path))
                digests.append(None)
                continue
            dest = Path(scratch) / f"{index:04d}"
            try:
                result = unpack(path, dest, validate_after=False)
            except PackError as exc:
                failed[index] = exc
                targets.append(os.fspath(dest))  # missing: an error row, fixed below
                digests.append(None)
                continue
            targets.append(os.fspath(result.root))
            digests.append(result.digest)
        table = audit_table(targets, attempts, archives=digests, names=paths, **options)
    audited = iter(table.artifacts)
    for index, (row, path) in enumerate(zip(table.rows, paths, strict=True)):
        given = os.fspath(path)
        if row.artifact is not None:
            next(audited).path = given
        if row.path != given:  # an archive: its path, not the scratch directory's
            row.path = given
        if index in failed:
            row.findings = [as_audit_finding(f) for f in failed[index].findings]
            row.why = row.findings[0] if row.findings else row.why
    table.errors = [f for row in table.rows for f in row.findings]
    return table
