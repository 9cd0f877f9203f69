"""The run ledger: a hash chain of every finished run in a runs directory.

An append holds an exclusive lock on ``.ledger.lock``, reads the head from the end of the file
and appends one line with one ``write``: its cost does not grow with the ledger.
:func:`check_ledger` gives A050 to A057 and A068. Spec: ``spec/runner.md#ledger``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.filelock import file_lock

__all__ = [
    "GENESIS",
    "LEDGER_NAME",
    "LOCK_NAME",
    "LedgerCheck",
    "LedgerEntry",
    "LedgerState",
    "RunOnDisk",
    "append_run",
    "check_ledger",
    "entry_hash",
    "ledger_head",
    "read_ledger",
]

#: The ledger's file name inside a runs directory.
LEDGER_NAME = "ledger.jsonl"
#: The lock file that serialises appends.
LOCK_NAME = ".ledger.lock"
#: Bounds on a ledger read by the auditor (a stranger's file): the whole file, one line.
MAX_LEDGER_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 64 * 1024
#: The ``prev`` of the first entry and the head of an empty ledger.
GENESIS = "0" * 64
_FIELDS = ("seq", "prev", "run_id", "launcher", "seed", "scope", "status", "record_sha256")


def _canonical(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(data: Mapping[str, Any]) -> str:
    """The hash of an entry: SHA-256 of its canonical JSON without the ``hash`` key."""
    return hashlib.sha256(_canonical({k: v for k, v in data.items() if k != "hash"})).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    """One line of the ledger."""

    seq: int
    prev: str
    run_id: str
    launcher: str
    seed: int | None
    scope: str
    status: str
    record_sha256: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in (*_FIELDS, "hash")}


@dataclass(frozen=True)
class LedgerState:
    """A ledger as read: its entries (those that parse) and the problems of the chain."""

    path: Path
    exists: bool
    entries: tuple[LedgerEntry, ...]
    findings: tuple[Finding, ...]

    @property
    def head(self) -> str:
        return self.entries[-1].hash if self.entries else GENESIS


def _entry(line: str | bytes) -> LedgerEntry | None:
    """The entry a ledger line holds, or None: too long, not JSON, or not an entry's shape."""
    try:
        data = json.loads(line) if len(line) <= MAX_LINE_BYTES else None
    except (ValueError, RecursionError):  # not JSON, or nested beyond the parser's depth
        return None
    if not isinstance(data, dict) or set(data) != {*_FIELDS, "hash"}:
        return None
    seq, seed = data["seq"], data["seed"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return None
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        return None
    texts = [data[k] for k in ("prev", "run_id", "launcher", "scope", "status", "record_sha256")]
    if not all(isinstance(t, str) for t in [*texts, data["hash"]]):
        return None
    return LedgerEntry(**data)


def read_ledger(runs_dir: str | os.PathLike[str]) -> LedgerState:
    """Read and check the chain of ``runs_dir``'s ledger (codes A051, A053, A054).

    Never raises for a bad ledger: an unreadable one is one A051 finding.
    """
    path = Path(runs_dir) / LEDGER_NAME
    if not os.path.lexists(path):  # a dangling link is there, not missing
        return LedgerState(path, exists=False, entries=(), findings=())
    where = LEDGER_NAME
    try:  # through the safe file layer: a regular file of the runs directory, no link
        raw = safefs.read_bytes(
            path, root=path.parent, allow_links=False, max_bytes=MAX_LEDGER_BYTES
        )
        lines = raw.decode("utf-8").splitlines()
    except safefs.UnsafeFileError as exc:
        msg = f"the run ledger cannot be read: {exc.message}"
        return LedgerState(path, True, (), (finding("A051", msg, file=where),))
    except (OSError, UnicodeDecodeError) as exc:
        problem = getattr(exc, "strerror", None) or "not UTF-8"
        msg = f"the run ledger cannot be read: {problem}"
        return LedgerState(path, True, (), (finding("A051", msg, file=where),))
    findings: list[Finding] = []
    entries: list[LedgerEntry] = []
    for number, line in enumerate(lines, start=1):
        entry = _entry(line)
        if entry is None:
            findings.append(
                finding("A051", f"line {number} is not a ledger entry", file=where, line=number)
            )
            continue
        if entry_hash(entry.to_json()) != entry.hash:
            findings.append(
                finding(
                    "A051",
                    f"the entry of run {entry.run_id} was edited: its hash does not match it",
                    file=where,
                    line=number,
                    hint="an edited ledger cannot be trusted; re-run the evidence",
                )
            )
            continue
        entries.append(entry)
    findings.extend(_chain_findings(entries, where))
    return LedgerState(path, True, tuple(entries), tuple(findings))


def _chain_findings(entries: list[LedgerEntry], where: str) -> list[Finding]:
    """Duplicates, then links: reordered (A054) versus cut (A051)."""
    out: list[Finding] = []
    seen_ids: dict[str, int] = {}
    seen_hashes: set[str] = set()
    for entry in entries:
        if entry.run_id in seen_ids or entry.hash in seen_hashes:
            out.append(
                finding(
                    "A053",
                    f"run {entry.run_id} is in the ledger twice "
                    f"(entries {seen_ids.get(entry.run_id, '?')} and {entry.seq})",
                    file=where,
                )
            )
        seen_ids.setdefault(entry.run_id, entry.seq)
        seen_hashes.add(entry.hash)
    in_order = all(
        e.prev == (entries[i - 1].hash if i else GENESIS) and e.seq == i + 1
        for i, e in enumerate(entries)
    )
    if in_order:
        return out
    by_prev: dict[str, LedgerEntry] = {}
    for entry in entries:
        by_prev.setdefault(entry.prev, entry)
    walked: list[LedgerEntry] = []
    cursor = GENESIS
    while cursor in by_prev and len(walked) <= len(entries):
        walked.append(by_prev[cursor])
        cursor = walked[-1].hash
    if len(walked) == len(entries) and all(e.seq == i + 1 for i, e in enumerate(walked)):
        out.append(
            finding(
                "A054",
                "the ledger's entries are intact but not in the order of their chain",
                file=where,
                hint="entries were moved; the order of runs in the ledger is evidence",
            )
        )
        return out
    hashes = {e.hash for e in entries}
    for index, entry in enumerate(entries):
        expected_seq = entries[index - 1].seq + 1 if index else 1
        if entry.prev != GENESIS and entry.prev not in hashes:
            out.append(
                finding(
                    "A051",
                    f"the entry of run {entry.run_id} follows an entry that is not in the "
                    f"ledger: entries before seq {entry.seq} were cut out",
                    file=where,
                )
            )
        elif entry.prev == GENESIS and index:
            out.append(finding("A051", f"the chain restarts at run {entry.run_id}", file=where))
        elif entry.seq != expected_seq and not out:
            out.append(
                finding(
                    "A051",
                    f"seq jumps from {expected_seq - 1} to {entry.seq} at run {entry.run_id}",
                    file=where,
                )
            )
    if not any(f.code == "A051" for f in out):
        out.append(finding("A051", "the ledger's entries do not form one chain", file=where))
    return out


def ledger_head(runs_dir: str | os.PathLike[str]) -> str:
    """The head of ``runs_dir``'s ledger (64 zeros when there is none)."""
    return read_ledger(runs_dir).head


def append_run(
    runs_dir: str | os.PathLike[str],
    *,
    run_id: str,
    launcher: str,
    seed: int | None,
    scope: str,
    status: str,
    record_sha256: str,
) -> LedgerEntry:
    """Append one finished run under an exclusive lock; return its entry.

    The new entry follows the last entry that parses; an unreadable ledger is kept as it
    is and extended (the auditor reports its problems, the runner does not hide them).
    """
    base = Path(runs_dir)
    base.mkdir(parents=True, exist_ok=True)
    with file_lock(base / LOCK_NAME):
        path = base / LEDGER_NAME
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags | os.O_NONBLOCK, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO would block the read
                raise OSError(errno.EINVAL, f"{path} is not a regular file")
            os.set_blocking(fd, True)
            return _append(fd, run_id, launcher, seed, scope, status, record_sha256)
        finally:
            os.close(fd)


def _last_entry(fd: int, size: int) -> LedgerEntry | None:
    """The last line of the open ledger that is an intact entry, read from the end."""
    end = size
    tail = b""
    while end > 0:
        start = max(0, end - MAX_LINE_BYTES)
        block = os.pread(fd, end - start, start) + tail
        lines = block.split(b"\n")
        tail = lines.pop(0) if start else b""  # the first line may begin before the block
        for line in reversed(lines):
            entry = _entry(line) if line.strip() else None
            if entry is not None and entry_hash(entry.to_json()) == entry.hash:
                return entry
        if len(tail) > MAX_LINE_BYTES:
            tail = b""  # a line too long to be an entry
        end = start
    return None


def _append(  # noqa: PLR0917 - the fields of one entry
    fd: int,
    run_id: str,
    launcher: str,
    seed: int | None,
    scope: str,
    status: str,
    record_sha256: str,
) -> LedgerEntry:
    size = os.fstat(fd).st_size  # a regular file: append_run checked it
    last = _last_entry(fd, size)
    data: dict[str, Any] = {
        "seq": last.seq + 1 if last else 1,
        "prev": last.hash if last else GENESIS,
        "run_id": run_id,
        "launcher": launcher,
        "seed": seed,
        "scope": scope,
        "status": status,
        "record_sha256": record_sha256,
    }
    data["hash"] = entry_hash(data)
    line = _canonical(data) + b"\n"
    if size and os.pread(fd, 1, size - 1) != b"\n":
        line = b"\n" + line  # the last line was not ended: this one starts anew
    written = os.write(fd, line)
    while written < len(line):  # a short write (a signal, a full disk): the rest
        written += os.write(fd, line[written:])
    os.fsync(fd)
    return LedgerEntry(**data)


@dataclass(frozen=True)
class LedgerCheck:
    """The outcome of :func:`check_ledger`."""

    attempt: list[Finding]
    per_run: dict[str, list[Finding]]
    deleted: dict[str, list[Finding]]
    state: LedgerState


@dataclass(frozen=True)
class RunOnDisk:
    """What the ledger check needs of one run directory."""

    rel: str
    run_id: str
    status: str
    record_sha256: str


def check_ledger(
    runs_dir: str | os.PathLike[str],
    runs: Iterable[RunOnDisk],
    *,
    expect_head: str | None = None,
    required: bool = False,
) -> LedgerCheck:
    """Check the ledger of ``runs_dir`` against the run directories found in it.

    Returns the attempt-level findings, the findings of single runs by their ``rel`` and the
    ledger as read; deleted runs (A052) are also listed by launcher in ``LedgerCheck.deleted``."""
    state = read_ledger(runs_dir)
    present = list(runs)
    attempt: list[Finding] = list(state.findings)
    per_run: dict[str, list[Finding]] = {}
    deleted: dict[str, list[Finding]] = {}
    result = LedgerCheck(attempt, per_run, deleted, state)
    if not state.exists:
        finished = [r for r in present if r.status != "running"]
        attempt.extend(_no_ledger(len(finished), expect_head=expect_head, required=required))
        return result
    if expect_head is not None and expect_head != state.head:
        attempt.append(
            finding(
                "A057",
                f"the ledger's head is {state.head}, the author submitted {expect_head}",
                file=LEDGER_NAME,
                hint="runs were removed from the end of the ledger or the ledger was rewritten",
            )
        )
    by_id: dict[str, list[RunOnDisk]] = {}
    for run in present:
        by_id.setdefault(run.run_id, []).append(run)
    listed: dict[str, LedgerEntry] = {}
    for entry in state.entries:
        listed.setdefault(entry.run_id, entry)
    for run_id, entry in listed.items():
        if run_id not in by_id:
            deleted.setdefault(entry.launcher, [])
            attempt.append(
                finding(
                    "A052",
                    f"run {run_id} ({entry.launcher}, seed {entry.seed}, {entry.status}) "
                    "is in the ledger but its directory is gone",
                    file=LEDGER_NAME,
                    hint="every run the runner recorded must be submitted, favourable or not",
                )
            )
            deleted[entry.launcher].append(attempt[-1])
    for run_id, found in by_id.items():
        _check_copies(run_id, found, listed.get(run_id), per_run)
    return result


def _no_ledger(finished: int, *, expect_head: str | None, required: bool) -> list[Finding]:
    """What a runs directory without a ledger is (nothing when it holds no finished run)."""
    if expect_head is not None:
        return [
            finding(
                "A057",
                f"a ledger head {expect_head} is expected, but the runs have no ledger",
                file=LEDGER_NAME,
            )
        ]
    if required:
        return [
            finding(
                "A068",
                f"{finished} run(s) and no run ledger: trusted evidence needs its ledger",
                file=LEDGER_NAME,
                hint="submit the runs directory with the ledger.jsonl the runner kept",
            )
        ]
    if finished:
        return [
            finding(
                "A050",
                f"{finished} run(s) and no run ledger: deleted runs cannot be detected",
                file=LEDGER_NAME,
                hint="record runs with 'reprobridge run', which keeps the ledger",
            )
        ]
    return []


def _check_copies(
    run_id: str,
    found: list[RunOnDisk],
    held: LedgerEntry | None,
    per_run: dict[str, list[Finding]],
) -> None:
    """The findings of the directories of one run id: copies (A053), and finished runs the
    ledger does not hold (A055) or holds with another record (A056)."""
    # The runner names a run's directory after its id: that one is the original.
    copies = sorted(found, key=lambda r: r.rel.rsplit("/", 1)[-1] != run_id)
    for extra in copies[1:]:
        per_run.setdefault(extra.rel, []).append(
            finding(
                "A053",
                f"run {run_id} is also in {copies[0].rel or '.'}",
                file=extra.rel,
            )
        )
    for run in copies:
        if run.status == "running":
            continue
        if held is None:
            per_run.setdefault(run.rel, []).append(
                finding(
                    "A055",
                    f"run {run_id} is not in the run ledger",
                    file=run.rel,
                    hint="a run directory the runner did not write cannot be believed",
                )
            )
        elif held.record_sha256 != run.record_sha256:
            per_run.setdefault(run.rel, []).append(
                finding(
                    "A056",
                    f"run {run_id}'s record is not the one the ledger names (entry {held.seq})",
                    file=run.rel,
                    path="",
                )
            )
