"""A run's evidence as the auditor reads it: its record, log and outputs, each read once
through the safe file layer (a link, a special file or a file past the caps is refused, never
followed), and the run's verified facts (:class:`RunEvidence`). See spec §11.2 and §15.6."""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from reprobridge_sdk.extract.extraction import OpenedFile
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io import reading, safefs
from reprobridge_sdk.model import RECORD_NAME, EvidenceRecord
from reprobridge_sdk.model.evidence import EnvironmentSnapshot
from reprobridge_sdk.run.evidence import ENV_DIR, SnapshotProblem, load_snapshot, record_owner

__all__ = ["FileFacts", "Measured", "OutputFacts", "RunEvidence", "RunRecord"]


class Measured(NamedTuple):
    """A value a record gives: its task and the value (``None``: extraction failed)."""

    task: str
    value: float | None


class FileFacts(NamedTuple):
    """A log's recorded digest and size."""

    sha256: str
    size: int


class OutputFacts(NamedTuple):
    """An output's id, recorded digest and size."""

    id: str
    sha256: str
    size: int


def _shared(text: str) -> str:
    """``text`` interned: ids and digests that many runs repeat are held once."""
    return sys.intern(text)


def _shared_or_none(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)


@dataclass(slots=True)
class RunRecord:
    """A run's record condensed once verified (:meth:`of`): what the verdicts, the report and
    the later checks (ledger, signatures, duplicates, re-execution) read of it, in plain
    values. The typed record and its parsed JSON are not kept: a typed record is about forty
    model objects, where a condensed one is a few tuples and strings."""

    run_id: str
    artifact: str
    launcher: str
    seed: int | None
    scope: str
    status: str
    started_at: str
    ended_at: str | None
    code_tree_digest: str | None
    lock_digest: str | None
    environment_sha256: str | None
    #: The embedded snapshot (``None``: none, or named by ``environment_sha256`` as the
    #: runner's records name it); kept typed, as the re-execution and the references read it.
    environment: EnvironmentSnapshot | None
    log: FileFacts | None
    outputs: tuple[OutputFacts, ...]
    measurements: tuple[Measured, ...]

    @classmethod
    def of(cls, record: EvidenceRecord) -> RunRecord:
        """``record`` condensed."""
        log = record.log
        return cls(
            run_id=record.run_id,
            artifact=_shared(record.artifact),
            launcher=_shared(record.launcher),
            seed=record.seed,
            scope=record.scope,
            status=record.status,
            started_at=record.started_at,
            ended_at=record.ended_at,
            code_tree_digest=_shared_or_none(record.code_tree_digest),
            lock_digest=_shared_or_none(record.lock_digest),
            environment_sha256=_shared_or_none(record.environment_sha256),
            environment=record.environment,
            log=None if log is None else FileFacts(log.sha256, log.size),
            outputs=tuple(OutputFacts(_shared(o.id), o.sha256, o.size) for o in record.outputs),
            measurements=tuple(Measured(_shared(m.task), m.value) for m in record.measurements),
        )


@dataclass(slots=True)
class RunEvidence:
    """One run directory after verification: its record condensed (:class:`RunRecord`; a
    typed record given is condensed), the values the auditor re-extracted and its findings."""

    path: Path
    rel: str
    record: RunRecord | None
    findings: list[Finding] = field(default_factory=list)
    values: dict[str, float | None] = field(default_factory=dict)
    #: Warnings that concern one task's value (A035), by task id; also in ``findings``.
    task_notes: dict[str, list[Finding]] = field(default_factory=dict)
    #: Warnings that concern every value of the run (A036, A065); also in ``findings``.
    run_notes: list[Finding] = field(default_factory=list)
    #: Tasks whose value could not be re-extracted because the extractor plugin is missing
    #: (A061) or failed (A062), by task id; also in ``findings``. Such a task is inconclusive.
    unread: dict[str, Finding] = field(default_factory=dict)
    #: SHA-256 of the record's bytes as the verification read them (``None``: not read here).
    record_sha256: str | None = None
    #: The earlier run of another seed whose log or output this run's repeats byte for byte,
    #: with nothing else shared (A079, :mod:`.duplicates`); re-execution may turn it to A038.
    twin: RunEvidence | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.record, EvidenceRecord):  # a record loaded by the caller
            self.record = RunRecord.of(self.record)

    @property
    def valid(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def succeeded(self) -> bool:
        return self.record is not None and self.record.status == "succeeded"


def _read_record(
    path: Path, rel: str, root: Path | safefs.OpenRoot | None = None
) -> tuple[EvidenceRecord | None, object, str | None, Finding | None]:
    """The record, the runner it names as its owner (``runner``, or 1.0's ``x-runner``) and
    the SHA-256 of the bytes it was parsed from (what the run ledger is compared with), or
    the A001 finding.

    The record is read through the safe file layer: a link, a FIFO, a file over
    :data:`~reprobridge_sdk.io.safefs.MAX_EVIDENCE_BYTES` or JSON nested deeper than
    :data:`~reprobridge_sdk.io.safefs.MAX_JSON_DEPTH` is refused, never followed or parsed.
    ``root``: the run directory, opened once for the run's files (:func:`check_run`).
    """
    record_path = _below(os.fspath(path), RECORD_NAME)
    try:
        raw = safefs.read_bytes(
            record_path,
            root=root or path,
            max_bytes=safefs.MAX_EVIDENCE_BYTES,
            allow_links=False,
        )
        data = reading.parse_json(raw, name=record_path)
        owner = record_owner(data)
        digest = hashlib.sha256(raw).hexdigest()
        return EvidenceRecord.model_validate(data), owner, digest, None
    except safefs.UnsafeFileError as exc:
        problem = exc.message
    except OSError as exc:
        problem = exc.strerror or str(exc)
    except ValueError as exc:  # JSON (its Unreadable) or pydantic validation
        problem = str(exc).splitlines()[0]
    return (
        None,
        None,
        None,
        finding(
            "A001",
            f"cannot read the record: {problem}",
            file=f"{rel}/{RECORD_NAME}".lstrip("/"),
        ),
    )


def _open_joined(
    base: Path, found: str | None, root: safefs.OpenRoot | None
) -> tuple[io.FileIO | None, safefs.UnsafeFileError | None]:
    """A log or output of the run at ``base``, its path ``found`` already joined (``None``: it
    leaves the run directory), opened: a regular file, not a link, inside ``base``.

    Returns ``(handle, None)``, ``(None, None)`` when it is missing or leaves the run
    directory, or ``(None, refusal)`` when the file is there but is a link, lies behind a
    linked directory that leads out of ``base`` (even when it is missing there), is not a
    regular file or cannot be opened (A040). A file over
    :data:`~reprobridge_sdk.io.safefs.MAX_HASH_BYTES` is refused from its size, unread.

    One open through the safe file layer (:func:`~reprobridge_sdk.io.safefs.open_regular`
    with ``root=base`` and ``allow_links=False``): every component is resolved from the run
    directory's descriptor, so the file that was checked is the file that is hashed (there is
    no second lookup by name). ``root``, when given, is ``base`` opened once for all the files
    of the run (:func:`check_run`)."""
    if found is None:
        return None, None
    try:
        handle = safefs.open_regular(
            found, root=root or base, allow_links=False, max_bytes=safefs.MAX_HASH_BYTES
        )
    except FileNotFoundError:
        return None, None
    except safefs.UnsafeFileError as exc:
        return None, exc
    return handle, None


def _evidence_file(
    base: Path, relative: str, root: safefs.OpenRoot | None = None
) -> tuple[str | None, str | None, safefs.UnsafeFileError | None, io.FileIO | None, bytes | None]:
    """``(path, sha256, None, descriptor, held)`` of a log or output of the run at ``base``
    (see :func:`_open_joined`), or ``(None, None, refusal, None, None)``: the descriptor it
    hashed is still open (the caller closes it), and ``held`` the bytes hashed when the file
    is small (:func:`_hash_and_hold`): re-extraction reads
    that very file (:func:`_check_run`), not the name again. ``refusal``: why the safe file
    layer refused the file (a link or special file, or over the cap or deadline of
    hashing), ``None`` when it is simply missing or outside the run directory."""
    found = _safe_join(base, relative)
    handle, refused = _open_joined(base, found, root)
    if handle is None:
        return None, None, refused, None, None
    try:
        digest, held = _hash_and_hold(handle, found or relative)
    except safefs.UnsafeFileError as exc:
        handle.close()
        return None, None, exc, None, None
    except BaseException:
        handle.close()
        raise
    return found, digest, None, handle, held


#: Refusals of a log or output for its size or time (F010, F012), not for what it is (A040).
_OVER_LIMIT = frozenset({"too-large", "too-slow"})


#: A log or output up to this size is kept in memory once hashed, for its re-extraction.
_HOLD_BYTES = 1 << 20


_STEP = 1 << 16


def _hash_and_hold(handle: io.FileIO, name: str = "") -> tuple[str, bytes | None]:
    """The SHA-256 of the rest of ``handle`` (to its end, as :func:`handle_sha256`) and, when
    it holds at most :data:`_HOLD_BYTES`, those very bytes (``None`` for a larger file, which
    is hashed in steps and never held whole). At most
    :data:`~reprobridge_sdk.io.safefs.MAX_HASH_BYTES` are read (a file that grows past it is
    ``"too-large"``) for at most :data:`~reprobridge_sdk.io.safefs.HASH_SECONDS`
    (``"too-slow"``)."""
    digest = hashlib.sha256()
    size = os.fstat(handle.fileno()).st_size
    chunks: list[bytes] | None = []
    total = 0
    cap = safefs.MAX_HASH_BYTES
    end = time.monotonic() + safefs.HASH_SECONDS
    want = min(size, _HOLD_BYTES) + 1  # the size fstat gives (plus one byte, to see growth)
    while chunk := handle.read(want):
        digest.update(chunk)
        total += len(chunk)
        if total > cap:
            msg = f"{name} grew beyond {cap} bytes while it was hashed"
            raise safefs.UnsafeFileError("too-large", name, msg, limit=cap)
        if chunks is None and time.monotonic() > end:
            msg = f"{name} took longer than {safefs.HASH_SECONDS} s to hash"
            raise safefs.UnsafeFileError("too-slow", name, msg, limit=round(safefs.HASH_SECONDS))
        if chunks is not None:
            chunks.append(chunk)
            if total > _HOLD_BYTES:
                chunks = None
        want = _STEP
    return digest.hexdigest(), None if chunks is None else b"".join(chunks)


#: At most this many of a run's files are kept open for its re-extraction (a record may list
#: any number of outputs; beyond this, an extraction opens its file itself, as without).
_MAX_KEPT = 32


class _KeptFiles:
    """The run's log and outputs that its launcher's measurements read, kept open after their
    digests were checked, by output id (``None``: the log)."""

    __slots__ = ("files", "wanted")

    def __init__(self, wanted: set[str | None]) -> None:
        self.wanted = wanted
        self.files: dict[str | None, OpenedFile] = {}

    def keep(
        self,
        key: str | None,
        path: str | None,
        handle: io.FileIO | None,
        held: bytes | None,
        *,
        ok: bool,
    ) -> None:
        """Keep ``handle`` (with the bytes ``held`` from its hash) for ``key`` when its digest
        matched and a measurement reads it; close it otherwise. A later file of the same id
        replaces (and closes) the earlier."""
        earlier = self.files.pop(key, None)
        if earlier is not None:
            earlier.close()
        if handle is None:
            return
        if ok and path is not None and key in self.wanted and len(self.files) < _MAX_KEPT:
            self.files[key] = OpenedFile(path, handle, resolve=True, pinned=True, data=held)
        else:
            handle.close()

    def close(self) -> None:
        for opened in self.files.values():
            opened.close()
        self.files.clear()


#: The runner's run ids: ``<launcher>[-s<seed>]-<UTC stamp>-<8 hex>``.
_RUN_ID = re.compile(
    r"^(?P<launcher>.+?)(?:-s(?P<seed>-?[0-9]+))?-(?P<stamp>[0-9]{8}T[0-9]{12}Z)-[0-9a-f]{8}$"
)


def _relabelled(record: EvidenceRecord) -> str | None:
    """Why the record's launcher or seed differs from the ones its run id was made for.

    The runner names a run when it starts (:func:`~reprobridge_sdk.run.evidence.new_run_dir`);
    a record edited afterwards to pass a smoke run off as scored, or a seed-0 run as seed 4,
    keeps the old name. Run ids of another shape (other runners) are not judged.
    """
    match = _RUN_ID.fullmatch(record.run_id)
    if match is None:
        return None
    named_seed = int(match["seed"]) if match["seed"] is not None else None
    if match["launcher"] != record.launcher:
        return (
            f"the run {record.run_id} was started for launcher {match['launcher']}, "
            f"the record says {record.launcher}"
        )
    if named_seed != record.seed:
        return (
            f"the run {record.run_id} was started for seed {named_seed}, "
            f"the record says {record.seed}"
        )
    return None


def _snapshot_problem(runs_dir: Path, digest: str) -> tuple[str, str] | None:
    """Why the snapshot ``digest`` of ``runs_dir`` cannot be used (kind, message), or ``None``.

    One snapshot serves every run of an invocation: it is read and hashed once per audit
    process and file state (cached by the file's inode, size and times).
    """
    try:
        info = (runs_dir / ENV_DIR / f"{digest}.json").lstat()
        stamp: tuple[int, ...] | None = (
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
        )
    except OSError:
        stamp = None
    return _snapshot_verdict(runs_dir, digest, stamp)


@functools.lru_cache(maxsize=256)
def _snapshot_verdict(
    runs_dir: Path, digest: str, stamp: tuple[int, ...] | None
) -> tuple[str, str] | None:
    try:
        load_snapshot(runs_dir, digest)
    except SnapshotProblem as exc:
        return exc.kind, exc.message
    return None


def _safe_join(base: Path, relative: str) -> str | None:
    """``str(base / relative)`` if it stays inside ``base``; ``None`` for escaping paths.

    A string, not a path object (a run's files are named by strings in the loop): joined
    directly when ``relative`` has no empty or ``.`` component, else through the path, so
    the name is always the one ``base.joinpath(*relative.split("/"))`` prints.
    """
    parts = relative.split("/")
    if not relative or relative.startswith(("/", "\\")) or ".." in parts:
        return None
    if "" in parts or "." in parts:
        return os.fspath(base.joinpath(*parts))
    return _below(os.fspath(base), relative)


def _below(directory: str, relative: str) -> str:
    """``str(Path(directory) / relative)`` for a directory spelled as its path prints and a
    ``relative`` without empty, ``.`` or ``..`` components."""
    if directory == ".":
        return relative
    return f"{directory}{relative}" if directory.endswith("/") else f"{directory}/{relative}"
