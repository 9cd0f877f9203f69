"""Artifact paths as the command line takes them: directories, manifests or packed archives.

An archive is unpacked into a temporary directory for the ``with`` block
(:func:`open_artifact`, :func:`open_submissions`), a folder of submissions is expanded
(:func:`expand`), and reports name ``<archive>#<member>`` (:func:`relabel`), never the
temporary directory.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reprobridge_sdk.errors import ArtifactError, ReproBridgeError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.versions import MANIFEST_NAME

# Light at import: ``validate`` of a directory loads neither pydantic nor the model. The
# unpacker (and what it imports) loads when an archive is met.
if TYPE_CHECKING:
    from reprobridge_sdk.model.audit import AuditTable
    from reprobridge_sdk.validation import ValidationResult

__all__ = [
    "ARCHIVE_SUFFIXES",
    "Opened",
    "audit_submissions",
    "expand",
    "is_archive",
    "named_in_archive",
    "open_artifact",
    "open_submissions",
    "relabel",
    "root_manifest_findings",
    "validate_submissions",
    "zip_refusal",
]

#: The file names of a packed artifact (media-types.md#media-type-archive).
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")
_GZIP_MAGIC = b"\x1f\x8b"
_TAR_MAGIC = b"ustar"
_TAR_MAGIC_AT = 257
_ZIP_SUFFIX = ".zip"
_ZIP_MAGIC = b"PK\x03\x04"
#: Manifests below the root an Y010 names at most.
_SHOWN = 5

T = TypeVar("T")


def is_archive(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a packed archive (see the module docstring)."""
    target = Path(path)
    try:
        if not target.is_file() or target.name == MANIFEST_NAME:
            return False
        if target.name.endswith(ARCHIVE_SUFFIXES):
            return True
        with target.open("rb") as handle:
            head = handle.read(_TAR_MAGIC_AT + len(_TAR_MAGIC))
    except (OSError, ValueError):
        return False
    return head.startswith(_GZIP_MAGIC) or head[_TAR_MAGIC_AT:] == _TAR_MAGIC


def zip_refusal(path: str | os.PathLike[str]) -> list[Finding]:
    """C017 when ``path`` is a zip file (by name or bytes): not a supported archive."""
    given = os.fspath(path)
    target = Path(given)
    try:
        if not target.is_file():
            return []
        if not target.name.lower().endswith(_ZIP_SUFFIX):
            with target.open("rb") as handle:
                if handle.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                    return []
    except (OSError, ValueError):
        return []
    return [
        finding(
            "C017",
            f"{given} is a zip file, not a supported archive (.tar, .tar.gz, .tgz)",
            file=given,
            hint="pack the artifact with `reprobridge pack` (tar.gz)",
        )
    ]


def _submission(entry: os.DirEntry[str]) -> bool:
    try:
        if entry.is_dir():
            return (Path(entry.path) / MANIFEST_NAME).is_file()
        return entry.is_file() and entry.name.endswith(ARCHIVE_SUFFIXES)
    except OSError:
        return False


def expand(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The submissions ``paths`` name, as the user would write them (module docstring)."""
    out: list[str] = []
    for path in paths:
        given = os.fspath(path)
        target = Path(given)
        try:
            folder = target.is_dir() and not (target / MANIFEST_NAME).exists()
            children = sorted(os.scandir(target), key=lambda e: e.name) if folder else []
        except OSError:
            children = []  # the command reports the path itself
        found = [str(target / entry.name) for entry in children if _submission(entry)]
        out.extend(found or [given])
    return out


@dataclass
class Opened:
    """One artifact ready to read: ``root``, or the ``findings`` of why it is not."""

    #: The path as the user gave it (an archive's path for an archive).
    given: str
    #: Where the artifact is read (the temporary directory of an archive); None: refused.
    root: Path | None
    #: Where an archive is (or was to be) unpacked; None for a directory or manifest.
    scratch: Path | None = None
    #: The SHA-256 of an archive's uncompressed tar stream.
    digest: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def target(self) -> str:
        """The path to read: as given, or where the archive was (or was to be) unpacked."""
        return self.given if self.scratch is None else os.fspath(self.root or self.scratch)

    def relabel(self, value: T) -> T:
        """``value`` with this archive's temporary directory replaced by its name."""
        return relabel(value, [self])


def _pairs(opened: Sequence[Opened]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for item in opened:
        if item.scratch is None:
            continue
        for form in dict.fromkeys([str(item.scratch), os.path.realpath(item.scratch)]):
            pairs.append((form, item.given))
    return pairs


def _text(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        if old in text:
            text = text.replace(old + os.sep, new + "#").replace(old + "/", new + "#")
            text = text.replace(old, new)
    return text


def _walk(value: Any, pairs: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        return _text(value, pairs)
    if isinstance(value, Path):
        return Path(_text(str(value), pairs))
    if hasattr(type(value), "model_fields") and hasattr(value, "model_copy"):  # pydantic
        changes = _walk_fields(value, type(value).model_fields, pairs)
        return value.model_copy(update=changes) if changes else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [item.name for item in dataclasses.fields(value) if item.init]
        updates = _walk_fields(value, names, pairs)
        return dataclasses.replace(value, **updates) if updates else value
    if isinstance(value, list):
        return [_walk(item, pairs) for item in value]
    if isinstance(value, tuple):
        return tuple(_walk(item, pairs) for item in value)
    if isinstance(value, dict):
        return {_walk(k, pairs): _walk(v, pairs) for k, v in value.items()}
    return value


def _walk_fields(value: Any, names: Iterable[str], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The fields of ``value`` among ``names`` that :func:`_walk` changed, with their new values."""
    changes = {}
    for name in names:
        old = getattr(value, name)
        new = _walk(old, pairs)
        if new is not old:
            changes[name] = new
    return changes


def relabel(value: T, opened: Sequence[Opened]) -> T:
    """``value`` (findings, a result, a report model) naming archives, not their scratch.

    Every string in it that names an unpacked archive's temporary directory names the
    archive instead, and a file below it ``<archive>#<member>``.
    """
    pairs = _pairs(opened)
    return _walk(value, pairs) if pairs else value


def root_manifest_findings(root: Path, given: str) -> list[Finding]:
    """Y010 when the unpacked archive at ``root`` has no ``rra.yaml`` at its root."""
    if (root / MANIFEST_NAME).is_file():
        return []
    below = sorted(p.relative_to(root).as_posix() for p in root.rglob(MANIFEST_NAME))
    if not below:
        message = f"{given} holds no {MANIFEST_NAME}: it is not a packed artifact"
    else:
        shown = ", ".join(f"{given}#{name}" for name in below[:_SHOWN])
        more = f" and {len(below) - _SHOWN} more" if len(below) > _SHOWN else ""
        message = (
            f"{given} has no {MANIFEST_NAME} at its root; it holds {len(below)} below it "
            f"({shown}{more}): one archive is one artifact"
        )
    return [
        finding(
            "Y010",
            message,
            file=given,
            hint="pack each artifact on its own with `reprobridge pack`",
        )
    ]


def named_in_archive(findings: Sequence[Finding], given: str) -> list[Finding]:
    """The unpacker's findings about the archive ``given``: a finding about a member names
    it ``<archive>#<member>``, any other the archive (as the user gave it)."""
    itself = {"", given, str(Path(given))}
    return [
        item
        if item.file == given or item.file.startswith(given + "#")
        else dataclasses.replace(
            item, file=given if item.file in itself else f"{given}#{item.file}"
        )
        for item in findings
    ]


def _unpack_into(given: str, scratch: Path) -> Opened:
    from .pack import PackError, unpack  # noqa: PLC0415 - only when an archive is met

    try:
        result = unpack(given, scratch, validate_after=False)
    except PackError as exc:
        refused = named_in_archive(exc.findings, given)
        return Opened(given, None, scratch, findings=refused)
    problems = root_manifest_findings(result.root, given)
    if problems:
        shutil.rmtree(scratch, ignore_errors=True)
        return Opened(given, None, scratch, findings=problems)
    return Opened(given, result.root, scratch, digest=result.digest)


def _open_one(given: str, scratch: Path) -> Opened:
    refused = zip_refusal(given)
    if refused:
        return Opened(given, None, scratch, findings=refused)
    if is_archive(given):
        return _unpack_into(given, scratch)
    return Opened(given, Path(given))


@contextmanager
def open_artifact(path: str | os.PathLike[str]) -> Iterator[Opened]:
    """One artifact path ready to read; an archive is unpacked for the ``with`` block.

    An archive that cannot be unpacked safely raises ``ArtifactError`` (C017, C018, Y010)
    naming the archive; nothing of it is left behind. A :class:`ReproBridgeError` raised in
    the block is relabelled (:func:`relabel`) on its way out.
    """
    given = os.fspath(path)
    refused = zip_refusal(given)
    if refused:
        raise ArtifactError(refused[0].message, refused)
    if not is_archive(given):
        yield Opened(given, Path(given))
        return
    with tempfile.TemporaryDirectory(prefix="rb-archive-") as scratch:
        opened = _unpack_into(given, Path(scratch) / "artifact")
        if opened.root is None:
            raise ArtifactError(opened.findings[0].message, opened.findings)
        try:
            yield opened
        except ReproBridgeError as exc:  # what the command could not do names the archive
            exc.message = opened.relabel(exc.message)
            exc.findings = opened.relabel(exc.findings)
            exc.args = (exc.message, *exc.args[1:])
            raise


@contextmanager
def open_submissions(paths: Sequence[str | os.PathLike[str]]) -> Iterator[list[Opened]]:
    """The submissions ``paths`` name (:func:`expand`), archives unpacked for the block."""
    with tempfile.TemporaryDirectory(prefix="rb-submissions-") as scratch:
        yield [
            _open_one(given, Path(scratch) / f"{index:04d}")
            for index, given in enumerate(expand(paths))
        ]


def validate_submissions(
    paths: Sequence[str | os.PathLike[str]], **options: Any
) -> ValidationResult:
    """``reprobridge validate``: :func:`~reprobridge_sdk.validation.validate` of the
    submissions ``paths`` name, archives included (``options`` as for ``validate``)."""
    from reprobridge_sdk.validation import (  # noqa: PLC0415 - the command's own import
        ArtifactResult,
        ValidationResult,
        validate,
    )

    fail_fast = bool(options.get("fail_fast"))
    result = ValidationResult()
    with open_submissions(paths) as opened:
        roots = [item.target for item in opened if item.root is not None]
        found = iter(validate(roots, **options).artifacts if roots else [])
        for item in opened:
            if item.root is None:
                result.artifacts.append(ArtifactResult(item.given, item.given, item.findings))
            else:
                checked = next(found, None)
                if checked is None:  # fail_fast stopped the validation
                    break
                result.artifacts.append(relabel(checked, [item]))
            if fail_fast and not result.artifacts[-1].ok:
                break
    return result


def audit_submissions(
    paths: Sequence[str | os.PathLike[str]],
    attempts: Sequence[str] | None = None,
    **options: Any,
) -> AuditTable:
    """``reprobridge audit --table``: the submissions ``paths`` name, archives included, as
    one table (``options`` as for :func:`~reprobridge_sdk.audit.audit_table`)."""
    from reprobridge_sdk.audit import audit_table  # noqa: PLC0415 - the command's own import
    from reprobridge_sdk.audit.verdict import as_audit_finding  # noqa: PLC0415

    with open_submissions(paths) as opened:
        targets = [item.target for item in opened]
        digests = [item.digest for item in opened]
        names = [item.given for item in opened]
        table = audit_table(targets, attempts, archives=digests, names=names, **options)
        table = relabel(table, opened)
    for row, item in zip(table.rows, opened, strict=True):
        row.path = item.given
        if item.root is None:  # refused: the unpacker's findings, not a missing directory's
            row.findings = [as_audit_finding(f) for f in item.findings]
            row.why = row.findings[0] if row.findings else row.why
    table.errors = [f for row in table.rows for f in row.findings]
    return table
