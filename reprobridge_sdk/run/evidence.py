"""Evidence records on disk: run directories, atomic records, interrupted runs, snapshots.

The layout, the two atomic writes of a record (``running``, naming its runner, then final and
fsynced), reading a ``running`` record whose runner is gone as ``interrupted``, and the
snapshot kept once by digest are ``spec/runner.md#evidence``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from reprobridge_sdk.digest import handle_sha256
from reprobridge_sdk.io import planted, reading, safefs
from reprobridge_sdk.io.atomic import atomic_write_bytes, atomic_write_json, json_text
from reprobridge_sdk.model.evidence import (
    RECORD_NAME,
    EnvironmentSnapshot,
    EvidenceRecord,
    Failure,
    FileDigest,
    PlantedEntry,
    RunFolderScan,
    RunnerProcess,
)
from reprobridge_sdk.timestamps import utc_now

from .recorded import LOG_NAME, RecordError
from .recorded import record_path as recorded_path

__all__ = [
    "ENV_DIR",
    "LEGACY_OWNER_KEY",
    "LOG_NAME",
    "OUTPUTS_DIR",
    "OWNER_KEY",
    "PLANTED",
    "RecordError",
    "SnapshotProblem",
    "evidence_digest",
    "iter_runs",
    "load_record",
    "load_snapshot",
    "minimal_snapshot",
    "new_run_dir",
    "owner_alive",
    "read_snapshot",
    "record_environment",
    "record_owner",
    "refused_code",
    "scan_run_folder",
    "scan_summary",
    "snapshot_path",
    "utc_now",
    "write_record",
    "write_snapshot",
]

#: Where copies of declared outputs go, inside the run directory.
OUTPUTS_DIR = "outputs"
#: The field of a ``running`` record that names the runner process (format 1.1).
OWNER_KEY = "runner"
#: The extension key that named it before (format 1.0), read as :data:`OWNER_KEY`.
LEGACY_OWNER_KEY = "x-runner"
#: The directory of a runs directory that holds the environment snapshots its records name.
ENV_DIR = ".env"

#: The code of a link or special file (FIFO, device, socket) where a run's evidence file
#: belongs: a launcher planted it; it is never followed, read or hashed.
PLANTED = "A067"


def refused_code(exc: safefs.UnsafeFileError) -> str:
    """The code of an evidence file the safe file layer refused: :data:`PLANTED` for a link
    or a file that is not regular, else the layer's own (F010 too large, F012 too slow)."""
    if exc.reason in {"link", "escapes", "not-regular"}:
        return PLANTED
    return exc.findings[0].code


def scan_run_folder(run_dir: str | os.PathLike[str] | safefs.OpenRoot) -> RunFolderScan | None:
    """The links and special files in a run folder, as a record names them (``run_folder``), or
    ``None`` when there are none and the bounded scan covered it all; never followed or read."""
    try:
        found = planted.scan_tree(run_dir)
    except (OSError, safefs.UnsafeFileError):
        found = planted.TreeScan((), "unreadable", "")
    if not found.planted and found.stopped is None:
        return None
    return RunFolderScan(
        planted=[PlantedEntry(path=path, kind=kind) for path, kind in found.planted],
        stopped=found.stopped,
        stopped_at=found.stopped_at,
    )


#: Most planted entries a finding's message names (the record names them all).
_NAMED = 10


def scan_summary(scan: RunFolderScan, entries: list[PlantedEntry] | None = None) -> str:
    """What a finding says of ``scan`` (of ``entries`` when given): the planted entries by
    path (the first few, then how many more), and where and why the scan stopped short.
    Paths are quoted (``repr``), so a control character in a file name reaches no terminal."""
    shown = scan.planted if entries is None else entries
    parts = []
    if shown:
        named = ", ".join(f"{e.path!r} ({e.kind})" for e in shown[:_NAMED])
        more = f" and {len(shown) - _NAMED} more" if len(shown) > _NAMED else ""
        parts.append(
            f"{len(shown)} symbolic link(s) or special file(s), never followed or read: "
            f"{named}{more}"
        )
    if scan.stopped is not None:
        why = {
            "entries": f"it looked at {planted.MAX_SCAN_ENTRIES} entries (its cap)",
            "depth": f"directories deeper than {planted.MAX_SCAN_DEPTH} levels were not entered",
            "deadline": f"it ran past its deadline of {planted.SCAN_SECONDS:g} s",
            "unreadable": "a directory could not be listed",
        }
        at = f" at {scan.stopped_at!r}" if scan.stopped_at else ""
        parts.append(f"the scan stopped{at} before covering the whole folder: {why[scan.stopped]}")
    return "; ".join(parts)


def evidence_digest(run_dir: str | os.PathLike[str] | safefs.OpenRoot, relative: str) -> FileDigest:
    """The digest and size of a run's log or output, ``relative`` to the run folder.

    Opened from the run folder without following links, as a regular file, hashed under the safe
    file layer's caps; the size is the bytes hashed. Raises
    :class:`~reprobridge_sdk.io.safefs.UnsafeFileError` (see :func:`refused_code`) or
    ``FileNotFoundError``."""
    cap = safefs.MAX_HASH_BYTES
    base = os.fspath(run_dir)
    name = f"{base}/{relative}"
    with safefs.open_regular(name, root=run_dir, max_bytes=cap, allow_links=False) as handle:
        digest = handle_sha256(handle, max_bytes=cap, deadline=safefs.HASH_SECONDS, name=name)
        size = handle.tell()
    return FileDigest(path=relative, sha256=digest, size=size)


#: The largest snapshot file read back (a snapshot lists the installed distributions).
MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024


#: The timestamp in ISO 8601's basic form, for a run id: no ``-``, ``:`` or ``.``.
_BASIC = str.maketrans("", "", "-:.")


def new_run_dir(runs_dir: Path, launcher: str, seed: int | None) -> tuple[str, Path]:
    """Create a fresh run directory under ``runs_dir``; return ``(run_id, path)``."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    while True:
        stamp = utc_now().translate(_BASIC)  # 20261203T134444123456Z
        seed_part = "" if seed is None else f"-s{seed}"
        run_id = f"{launcher}{seed_part}-{stamp}-{secrets.token_hex(4)}"
        path = runs_dir / run_id
        try:
            path.mkdir()
        except FileExistsError:  # pragma: no cover - 32 random bits and a microsecond clock
            continue
        return run_id, path


@functools.cache
def _later_fields() -> dict[str, tuple[int, int]]:
    """Record fields added after evidence 1.0 (marked with ``since``), by name."""
    from reprobridge_sdk.versions import parse_since  # noqa: PLC0415 - cheap

    later = {}
    for name, info in EvidenceRecord.model_fields.items():
        extra = info.json_schema_extra
        marked = parse_since(extra.get("$comment")) if isinstance(extra, dict) else None
        if marked is not None and marked[1] is None:
            later[name] = marked[0]
    return later


def write_record(run_dir: Path, record: EvidenceRecord, *, durable: bool = True) -> None:
    """Write ``record`` atomically as the run directory's ``record.json``.

    ``durable=False`` (the interim ``running`` record) skips the fsync; that record also names
    this process under :data:`OWNER_KEY`. A field newer than evidence 1.0 is written only when it
    says something, and then ``record_version`` names the version that added it."""
    data = record.model_dump(mode="json")
    data.pop(OWNER_KEY, None)  # named below, for a running record only
    data.pop(LEGACY_OWNER_KEY, None)
    needed = (1, 0)
    for name, version in _later_fields().items():
        if data.get(name) in (None, [], {}):
            data.pop(name, None)
        else:
            needed = max(needed, version)
    for measured in data.get("measurements", []):  # 'count' (1.1): occurrence 'all' only
        if measured.get("count") is None:
            measured.pop("count", None)
        else:
            needed = max(needed, (1, 1))
    if needed > (1, 0):
        data["record_version"] = "{}.{}".format(*needed)
        record.record_version = data["record_version"]  # the record as it reads back
    if record.status == "running":  # the interim record only: the final one stays as needed
        data[OWNER_KEY] = _owner()
        data["record_version"] = "{}.{}".format(*max(needed, _later_fields()[OWNER_KEY]))
    atomic_write_json(run_dir / RECORD_NAME, data, durable=durable)


# --------------------------------------------------------------------------- ownership


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text("ascii").strip()
    except OSError:
        return None


def _proc_stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (field 3 on), or none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text("ascii", "replace")
    except OSError:
        return []
    return stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses


def _start_ticks(pid: int) -> int | None:
    fields = _proc_stat(pid)
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def _owner() -> dict[str, object]:
    pid = os.getpid()
    return {
        "pid": pid,
        "boot_id": _boot_id(),
        "start_ticks": _start_ticks(pid),
        "host": platform.node(),
    }


def record_owner(data: object) -> object:
    """The runner a record's JSON names: ``runner``, else a 1.0 record's ``x-runner``."""
    if not isinstance(data, dict):
        return None
    owner = data.get(OWNER_KEY)
    if owner is not None or LEGACY_OWNER_KEY not in data:
        return owner
    try:  # the upgrade rule: an x-runner of the runner field's shape, or no runner
        return RunnerProcess.model_validate(data[LEGACY_OWNER_KEY]).model_dump(mode="json")
    except ValidationError:
        return None


def owner_alive(owner: object) -> bool:
    """Whether the runner process a ``runner`` (or ``x-runner``) value names still runs."""
    if not isinstance(owner, dict):
        return False
    try:
        pid = int(owner["pid"])
    except (ValueError, KeyError, TypeError):
        return False
    if owner.get("host") not in (None, platform.node()):
        return True  # another machine's run (shared file system): we cannot tell; trust it
    boot = _boot_id()
    if boot is not None and owner.get("boot_id") not in (None, boot):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    ticks = owner.get("start_ticks")
    current = _start_ticks(pid)
    if ticks is not None and current is not None and ticks != current:
        return False
    return _proc_stat(pid)[:1] != ["Z"]


# --------------------------------------------------------------------------- reading


def load_record(path: str | os.PathLike[str]) -> EvidenceRecord:
    """Read the record of a run directory (or a ``record.json``).

    A ``running`` record whose runner process is gone is returned with status
    ``interrupted`` and failure reason ``interrupted``.
    """
    record_path = recorded_path(path)
    try:  # a regular file (no link, no FIFO), bounded in size and depth
        data = reading.read_json(record_path, allow_links=False)
        record = EvidenceRecord.model_validate(data)
    except (reading.Unreadable, ValidationError) as exc:
        if isinstance(exc, reading.Unreadable) and not exc.malformed:
            reason = exc.message
        else:
            reason = "not a valid evidence record"
        hint = "give a run directory written by 'reprobridge run'"
        raise RecordError.n006(f"{record_path}: {reason}", record_path, hint) from None
    if record.status == "running" and not owner_alive(record_owner(data)):
        record = record.model_copy(
            update={
                "status": "interrupted",
                "failure": Failure(
                    reason="interrupted",
                    detail="the runner stopped before it finished the record",
                    last_landmark=record.landmarks[-1].id if record.landmarks else None,
                ),
            }
        )
    return record


def iter_runs(runs_dir: str | os.PathLike[str]) -> Iterator[tuple[Path, EvidenceRecord]]:
    """``(run_dir, record)`` for every readable run under ``runs_dir``, oldest first.

    Directories without a readable record are skipped.
    """
    base = Path(runs_dir)
    if not base.is_dir():
        return
    found: list[tuple[str, Path, EvidenceRecord]] = []
    for child in base.iterdir():
        if not (child / RECORD_NAME).is_file():
            continue
        try:
            record = load_record(child)
        except RecordError:
            continue
        found.append((record.started_at, child, record))
    found.sort(key=lambda item: (item[0], item[1].name))
    for _, child, record in found:
        yield child, record


# --------------------------------------------------------------------------- snapshot


def minimal_snapshot() -> EnvironmentSnapshot:
    """A snapshot of the running interpreter from the standard library alone."""
    return EnvironmentSnapshot(
        captured_at=utc_now(),
        python=platform.python_version(),
        implementation=platform.python_implementation(),
        executable=sys.executable,
        platform=f"{platform.system().lower()}-{platform.machine().lower()}",
        machine=platform.machine(),
        cpu_count=os.cpu_count(),
    )


def _snapshot_bytes(snapshot: EnvironmentSnapshot) -> bytes:
    data = snapshot.model_dump(mode="json")
    return json_text(data, sort_keys=True).encode()


def snapshot_path(runs_dir: Path, digest: str) -> Path:
    """Where the snapshot with SHA-256 ``digest`` is kept in ``runs_dir``."""
    return runs_dir / ENV_DIR / f"{digest}.json"


def write_snapshot(runs_dir: Path, snapshot: EnvironmentSnapshot) -> str:
    """Keep ``snapshot`` in ``runs_dir`` (atomically, fsynced) and return its SHA-256.

    A file already there under that name with that content is left as it is; anything else
    there (another content, a link) is replaced. Raises ``OSError`` or
    :class:`~reprobridge_sdk.io.safefs.UnsafeFileError` when it cannot be written.
    """
    data = _snapshot_bytes(snapshot)
    digest = hashlib.sha256(data).hexdigest()
    path = snapshot_path(runs_dir, digest)
    try:
        current = safefs.read_bytes(path, root=runs_dir, max_bytes=len(data), allow_links=False)
    except (OSError, safefs.UnsafeFileError):
        current = None
    if current != data:
        atomic_write_bytes(path, data, root=runs_dir)
    return digest


class SnapshotProblem(Exception):
    """A referenced snapshot that cannot be used: ``kind`` is ``missing`` or ``altered``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class NamesSnapshot(Protocol):
    """What of a record names its environment snapshot: a typed record, or one an audit
    condensed."""

    @property
    def environment(self) -> EnvironmentSnapshot | None: ...

    @property
    def environment_sha256(self) -> str | None: ...


def read_snapshot(run_dir: Path, record: NamesSnapshot) -> EnvironmentSnapshot | None:
    """The environment snapshot of the run at ``run_dir``: embedded, or the one it names.

    ``None`` when the record has neither. A named snapshot is looked up in the runs directory
    that holds ``run_dir`` (its parent) by :func:`load_snapshot`, which raises
    :class:`SnapshotProblem` when it cannot be used.
    """
    if record.environment_sha256 is None:
        return record.environment
    return load_snapshot(run_dir.parent, record.environment_sha256)


def load_snapshot(runs_dir: Path, digest: str) -> EnvironmentSnapshot:
    """The snapshot ``.env/<digest>.json`` of ``runs_dir``, checked against its digest.

    Raises :class:`SnapshotProblem`: ``missing`` when no file is there; ``altered`` when the
    file is a link, lies outside the runs directory, is larger than
    :data:`MAX_SNAPSHOT_BYTES`, its SHA-256 is not the digest or it is not a snapshot.
    """
    path = snapshot_path(runs_dir, digest)
    shown = f"{ENV_DIR}/{digest}.json"
    if not path.exists() and not path.is_symlink():
        raise SnapshotProblem("missing", f"the environment snapshot {shown} is not there")
    try:
        data = safefs.read_bytes(
            path, root=runs_dir, max_bytes=MAX_SNAPSHOT_BYTES, allow_links=False
        )
    except safefs.UnsafeFileError as exc:
        message = f"the environment snapshot {shown}: {exc.message}"
        raise SnapshotProblem("altered", message) from None
    except OSError as exc:
        raise SnapshotProblem(
            "missing", f"the environment snapshot {shown}: {exc.strerror or exc}"
        ) from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise SnapshotProblem(
            "altered", f"the environment snapshot {shown} differs from its digest"
        )
    try:
        return EnvironmentSnapshot.model_validate_json(data)
    except (ValidationError, ValueError):
        raise SnapshotProblem(
            "altered", f"the environment snapshot {shown} is not an environment snapshot"
        ) from None


def record_environment(run_dir: Path, record: NamesSnapshot) -> EnvironmentSnapshot | None:
    """The run's snapshot as :func:`read_snapshot` finds it, or ``None`` when it cannot."""
    try:
        return read_snapshot(run_dir, record)
    except SnapshotProblem:
        return None
