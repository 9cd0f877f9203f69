"""The worker's side of a distributed run: the same :func:`execute` the local executor calls.

:func:`run_remote` runs in a Dask worker: it finds or unpacks the artifact, prepares the
environment once per worker, notes a lost earlier attempt, relays cancellation, runs the job
and returns its result, events and (without a shared file system) its run directory's files.
"""

from __future__ import annotations

import io
import posixpath
import shutil
import socket
import tarfile
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobridge_sdk.contents import artifact_files
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.atomic import atomic_directory
from reprobridge_sdk.model import Manifest
from reprobridge_sdk.model.evidence import LostAttempt
from reprobridge_sdk.run._environment import prepare_environment
from reprobridge_sdk.run._execute import EnvMode, Job, Shared, execute
from reprobridge_sdk.run.evidence import utc_now
from reprobridge_sdk.run.results import RunEvent, RunResult

__all__ = ["RemoteOutcome", "RemoteRun", "pack_artifact", "run_remote", "shipped_files"]

#: Seconds between two looks at the client's cancellation event.
CANCEL_POLL = 0.5


@dataclass(frozen=True)
class RemoteRun:
    """Everything a worker needs for one run (picklable)."""

    manifest: Manifest
    launcher_id: str
    seed: int | None
    root: str
    runs_dir: str
    shared_fs: bool
    archive_digest: str | None
    env_mode: EnvMode
    timeout: float | None
    grace: float
    code_digest: str | None
    lock_digest: str | None
    cancel_event: str
    executor: str
    sandbox: bool = False


@dataclass
class RemoteOutcome:
    """What a worker sends back: the result, the run's events, and its files when unshared."""

    result: RunResult
    events: list[RunEvent]
    files: dict[str, bytes] | None


_env_lock = threading.Lock()
_environments: dict[tuple[str, str, str | None], tuple[dict[str, str], str | None, Any, list[str]]]
_environments = {}


def shipped_files(root: Path, manifest: Manifest, runs_dir: Path) -> list[str]:
    """What travels to workers without the client's file system: what ``pack`` packs, plus the
    working checkout ``code/`` of a patch series (workers do not build it again).

    The runs directory is left out; a link that leaves the artifact is C017 before anything is
    sent."""
    return artifact_files(root, manifest, with_checkout=True, skip=(runs_dir,))


def pack_artifact(root: Path, manifest: Manifest, runs_dir: Path) -> bytes:
    """The artifact as an uncompressed tar for workers without the client's file system."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in shipped_files(root, manifest, runs_dir):
            tar.add(root.joinpath(*rel.split("/")), arcname=rel, recursive=False)
    return buffer.getvalue()


def _cache_root() -> Path:
    from reprobridge_sdk.env.venv import cache_root  # noqa: PLC0415 - heavy

    return cache_root() / "artifacts"


def _unpacked(archive: bytes, digest: str) -> Path:
    """The artifact unpacked under the worker's cache, once per digest (atomically placed)."""
    target = _cache_root() / digest
    if target.is_dir():
        return target
    try:
        with atomic_directory(target) as staging:
            _extract(archive, staging)
    except OSError:
        if not target.is_dir():
            raise
        # another worker process placed it first
    return target


def _extract(archive: bytes, staging: Path) -> None:
    """The shipped tree, through tarfile's ``data`` filter; on Python 3.11.0-3.11.3, which
    lack it (Debian 12's is 3.11.2), only regular files and folders whose normalized names
    stay inside ``staging``."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(staging, filter="data")
            return
        for member in tar.getmembers():  # pragma: no cover - Python before 3.11.4
            name = posixpath.normpath(member.name)
            if not (member.isfile() or member.isdir()) or name.startswith(("/", "..")):
                msg = f"refusing archive member {member.name!r}"
                raise ValueError(msg)
        tar.extractall(staging)  # noqa: S202 - members checked above


def _environment(
    root: Path, manifest: Manifest, mode: EnvMode, lock_digest: str | None
) -> tuple[dict[str, str], str | None, Any, list[str]]:
    key = (str(root), mode, lock_digest)
    with _env_lock:
        if key not in _environments:
            _environments[key] = prepare_environment(root, manifest, mode)
        return _environments[key]


def _attempts() -> tuple[Any, str]:
    """The worker's client and the key of the task being run (its metadata is ours)."""
    from distributed import get_client, get_worker  # noqa: PLC0415 - only on a worker

    return get_client(), str(get_worker().get_current_task())


def _previous_attempt(client: Any, key: str) -> dict[str, Any] | None:
    """What an earlier attempt of this task noted (its worker was lost), and note this one.

    The note lives in the scheduler's metadata under the task's own key, which the scheduler
    forgets with the task: one round trip each way, nothing to clean up.
    """
    earlier = client.get_metadata(key, default=None)
    client.set_metadata(key, {"host": socket.gethostname(), "started_at": utc_now()})
    return earlier if isinstance(earlier, dict) else None


class _CancelRelay:
    """One thread per worker process and batch that waits on the client's cancel event and
    sets the local events of the runs of that batch in flight here."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.runs: set[threading.Event] = set()
        self.cancelled = False
        thread = threading.Thread(target=self._wait, daemon=True, name=f"rb-cancel-{name}")
        thread.start()

    def _wait(self) -> None:
        from distributed import Event  # noqa: PLC0415 - only on a worker

        remote = Event(self.name)
        while True:
            try:
                if remote.wait(timeout=CANCEL_POLL * 20):
                    break
            except Exception:  # the scheduler went away: nothing more will be cancelled
                return
        with _relays_lock:
            self.cancelled = True
            for event in self.runs:
                event.set()

    def register(self, event: threading.Event) -> None:
        with _relays_lock:
            if self.cancelled:
                event.set()
            self.runs.add(event)

    def unregister(self, event: threading.Event) -> None:
        with _relays_lock:
            self.runs.discard(event)


_relays_lock = threading.Lock()
_relays: dict[str, _CancelRelay] = {}


def _relay(name: str) -> _CancelRelay:
    with _relays_lock:
        if name not in _relays:
            _relays[name] = _CancelRelay(name)
        return _relays[name]


def run_remote(spec: RemoteRun, archive: bytes | None) -> RemoteOutcome:
    """Run one job on this worker; see the module documentation."""
    if spec.shared_fs or archive is None or spec.archive_digest is None:
        root = Path(spec.root)
    else:
        root = _unpacked(archive, spec.archive_digest)
    launcher = next(lm for lm in spec.manifest.launchers if lm.id == spec.launcher_id)
    base_env, env_error, snapshot, drift = _environment(
        root, spec.manifest, spec.env_mode, spec.lock_digest
    )
    client, key = _attempts()
    earlier = _previous_attempt(client, key)
    lost = None
    if earlier is not None:
        lost = LostAttempt(host=earlier.get("host"), started_at=str(earlier.get("started_at")))
        if spec.shared_fs:
            _remove_lost_run_dir(earlier.get("run_dir"), Path(spec.runs_dir))
    if spec.shared_fs:
        runs_dir = Path(spec.runs_dir)
        scratch = None
    else:
        scratch = Path(tempfile.mkdtemp(prefix="reprobridge-runs-"))
        runs_dir = scratch
    events: list[RunEvent] = []

    def _emit(event: RunEvent) -> None:
        events.append(event)
        if event.event == "run-started" and spec.shared_fs:
            note = {"host": socket.gethostname(), "started_at": utc_now()}
            client.set_metadata(key, {**note, "run_dir": str(event.data.get("run_dir"))})

    cancel = threading.Event()
    relay = _relay(spec.cancel_event)
    relay.register(cancel)
    shared = Shared(
        root=root,
        manifest=spec.manifest,
        runs_dir=runs_dir,
        env_mode=spec.env_mode,
        base_env=base_env,
        env_error=env_error,
        snapshot=snapshot,
        drift=drift,
        code_digest=spec.code_digest,
        lock_digest=spec.lock_digest,
        timeout=spec.timeout,
        grace=spec.grace,
        cancel=cancel,
        echo=None,
        emit=_emit,
        executor=spec.executor,
        lost_attempts=[lost] if lost is not None else [],
        seal_here=False,
        sandbox=spec.sandbox,
    )
    try:
        result = execute(Job(launcher, spec.seed), shared)
    finally:
        relay.unregister(cancel)
    files = None
    if scratch is not None:
        files = _regular_files(result.run_dir)
        shutil.rmtree(scratch, ignore_errors=True)
    return RemoteOutcome(result=result, events=events, files=files)


def _regular_files(run_dir: Path) -> dict[str, bytes]:
    """The regular files of a run directory, by path relative to it: what travels back.

    Read from the run folder without following links (a link or special file a launcher
    planted stays behind, unread: the record names it in ``run_folder``), so a link to a
    secret of the worker never reaches the client as a file."""
    files: dict[str, bytes] = {}
    with safefs.OpenRoot(run_dir) as root:
        for path in sorted(run_dir.rglob("*")):  # '**' enters no linked directory
            if path.is_symlink() or not path.is_file():
                continue
            relative = path.relative_to(run_dir).as_posix()
            try:
                files[relative] = safefs.read_bytes(
                    f"{root.path}/{relative}",
                    root=root,
                    max_bytes=safefs.MAX_HASH_BYTES,
                    allow_links=False,
                )
            except (OSError, safefs.UnsafeFileError):
                continue  # swapped for a link or a FIFO since: left behind like one
    return files


def _remove_lost_run_dir(run_dir: object, runs_dir: Path) -> None:
    """Remove the partial run directory a lost attempt left (its record never became final)."""
    if not isinstance(run_dir, str):
        return
    path = Path(run_dir)
    if path.parent == runs_dir and path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
