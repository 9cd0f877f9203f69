"""Evidence records on disk: run directories, atomic records, interrupted runs (spec §10.1).

Layout of a run directory (``<artifact>/runs/<run_id>/`` unless another runs directory is
given)::

    record.json                 the evidence record (EvidenceRecord, JSON)
    log.txt                     stdout and stderr of the process, merged, in order
    outputs/<id>/<basename>     a copy of each declared output found after the run

Paths inside the record (``log.path``, ``outputs[].path``) are relative to the run directory.

*Run ids* are ``<launcher>-s<seed>-<UTC yyyymmddThhmmssffffff>Z-<8 hex>`` (``-s`` and the seed
are left out for a launcher without seeds). The directory is created with an exclusive
``mkdir``, so two runs never share one and no run overwrites another.

*Writing.* The record is written atomically (temporary file in the same directory, fsync,
rename): first with ``status: running`` when the run starts, then once more with its final
status. A crash, ``kill -9`` or a full disk therefore leaves either the earlier record or the
new one, never a torn file. The log is append-only and flushed as it is written.

*Interrupted runs.* The ``running`` record carries the extension key ``x-runner``: the pid of
the runner process, the kernel boot id, the process start time (``/proc/<pid>/stat`` field
22, so a reused pid is not mistaken for the runner) and the host name. The final record has
no such key. :func:`load_record` reports a record whose status is ``running`` as
``interrupted`` when that runner process no longer exists (or the key is missing); the file
on disk is left as it is. A run on another host (shared file system) is taken as still
running. A run stopped by Ctrl-C or SIGTERM is finalised with status ``interrupted`` by the
runner itself. (Keeping the owner inside the record costs no extra file write: each record
write is fsynced, and that is most of the runner's cost per run.)
"""

from __future__ import annotations

import functools
import os
import platform
import secrets
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io._fs import atomic_write_json
from reprobridge_sdk.model.evidence import (
    RECORD_NAME,
    EnvironmentSnapshot,
    EvidenceRecord,
    Failure,
)

__all__ = [
    "LOG_NAME",
    "OUTPUTS_DIR",
    "OWNER_KEY",
    "RecordError",
    "iter_runs",
    "load_record",
    "minimal_snapshot",
    "new_run_dir",
    "owner_alive",
    "utc_now",
    "write_record",
]

#: The log of a run, inside its run directory.
LOG_NAME = "log.txt"
#: Where copies of declared outputs go, inside the run directory.
OUTPUTS_DIR = "outputs"
#: The extension key of a ``running`` record that names the runner process.
OWNER_KEY = "x-runner"


class RecordError(ReproBridgeError):
    """A run directory holds no readable evidence record."""


def utc_now() -> str:
    """The current time as an RFC 3339 UTC timestamp with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_run_dir(runs_dir: Path, launcher: str, seed: int | None) -> tuple[str, Path]:
    """Create a fresh run directory under ``runs_dir``; return ``(run_id, path)``."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    while True:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
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


def write_record(run_dir: Path, record: EvidenceRecord) -> None:
    """Write ``record`` atomically as the run directory's ``record.json``.

    A ``running`` record also names this process under :data:`OWNER_KEY`. A field added
    after evidence 1.0 is written only when it says something (not null, not empty), and a
    record that writes one declares the version that added it in ``record_version``, so a
    local run's record stays a 1.0 record.
    """
    data = record.model_dump(mode="json")
    needed = (1, 0)
    for name, version in _later_fields().items():
        if data.get(name) in (None, [], {}):
            data.pop(name, None)
        else:
            needed = max(needed, version)
    if needed > (1, 0):
        data["record_version"] = "{}.{}".format(*needed)
    if record.status == "running":
        data[OWNER_KEY] = _owner()
    else:
        data.pop(OWNER_KEY, None)
    atomic_write_json(run_dir / RECORD_NAME, data)


# --------------------------------------------------------------------------- ownership


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text("ascii").strip()
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _owner() -> dict[str, object]:
    pid = os.getpid()
    return {
        "pid": pid,
        "boot_id": _boot_id(),
        "start_ticks": _start_ticks(pid),
        "host": platform.node(),
    }


def owner_alive(owner: object) -> bool:
    """Whether the runner process an ``x-runner`` value names still runs."""
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
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text("ascii", "replace")
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 : stat.rfind(")") + 3] == "Z"


# --------------------------------------------------------------------------- reading


def load_record(path: str | os.PathLike[str]) -> EvidenceRecord:
    """Read the record of a run directory (or a ``record.json``).

    A ``running`` record whose runner process is gone is returned with status
    ``interrupted`` and failure reason ``interrupted``.
    """
    target = Path(path)
    record_path = target if target.is_file() else target / RECORD_NAME
    try:  # a regular file (no link, no FIFO), bounded in size and depth
        data = safefs.load_json(record_path, allow_links=False)
        record = EvidenceRecord.model_validate(data)
    except (OSError, ValueError, ValidationError, safefs.UnsafeFileError) as exc:
        if isinstance(exc, safefs.UnsafeFileError):
            reason = exc.message
        elif isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
        else:
            reason = "not a valid evidence record"
        msg = f"{record_path}: {reason}"
        raise RecordError(
            msg,
            [
                finding(
                    "N006",
                    msg,
                    file=str(record_path),
                    hint="give a run directory written by 'reprobridge run'",
                )
            ],
        ) from None
    if record.status == "running" and not owner_alive(data.get(OWNER_KEY)):
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
