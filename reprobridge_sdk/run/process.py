"""Run one command: stream its output to the log, watch landmarks, stop it cleanly.

The command runs in its own process group, stdout and stderr merged into the log; memory is
bounded by one chunk and one partial line. :class:`ResourceLimits` are set in the child before
it executes the command. A timeout or cancel sends SIGTERM to the group, then SIGKILL after a
grace period. One watchdog process per runner (:class:`_Watchdog`) kills every registered
group when the runner dies, SIGKILL included: it reads end-of-file on a pipe only the runner
writes. Spec: ``spec/security.md#runner-host``.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from reprobridge_sdk.extract.extraction import MAX_LINE, required_literal
from reprobridge_sdk.extract.pattern import Regex, author_pattern

__all__ = [
    "DRAIN_WAIT",
    "READ_SIZE",
    "TMP_SIZE",
    "LandmarkPattern",
    "ProcessOutcome",
    "ResourceLimits",
    "ended_by",
    "out_of_memory",
    "run_process",
]

#: Bytes read from the pipe at a time.
READ_SIZE = 1 << 16
#: Seconds to wait for the pipe to close after the main process exited.
DRAIN_WAIT = 1.0
_POLL = 0.1


@dataclass(frozen=True)
class LandmarkPattern:
    """A compiled landmark with the literal used to pre-filter chunks."""

    id: str
    regex: Regex
    literal: bytes | None

    @classmethod
    def compile(cls, landmark_id: str, pattern: str) -> LandmarkPattern:
        literal = required_literal(pattern)
        return cls(landmark_id, author_pattern(pattern), literal.encode() if literal else None)


#: The size of a sandbox's private ``/tmp`` when no memory is bounded (bytes).
TMP_SIZE = 1 << 30


def _bounded(which: int, soft: int, hard: int) -> tuple[int, int]:
    """``(soft, hard)`` never above the limit this process already has."""
    _soft, current = resource.getrlimit(which)
    if current == resource.RLIM_INFINITY:
        return soft, hard
    return min(soft, current), min(hard, current)


@dataclass(frozen=True)
class ResourceLimits:
    """What the processes of a run may use, the one owner of these bounds (the runner's and
    bench's): ``memory`` bounds the address space of each process (``RLIMIT_AS``, in bytes;
    an allocation past it fails, and Python raises ``MemoryError``), ``cpus`` the cores they
    may run on (the first ``cpus`` of this process's CPU affinity), ``cpu_seconds`` the CPU
    time of each process (``RLIMIT_CPU``: SIGXCPU at the bound) and ``max_file`` the largest
    file a process may write (``RLIMIT_FSIZE``: SIGXFSZ past it). Inherited by every process
    the command starts, the sandbox's included; the sandbox's ``/tmp``, held in memory that
    no limit of a process counts, is bounded apart (:attr:`tmp_size`, sized by ``tmp``)."""

    memory: int | None = None
    cpus: int | None = None
    cpu_seconds: int | None = None
    max_file: int | None = None
    #: Bytes of the sandbox's private ``/tmp`` as asked (``run --sandbox-tmp``); ``None``:
    #: as :attr:`tmp_size` says.
    tmp: int | None = None

    @property
    def tmp_size(self) -> int:
        """Bytes of a sandbox's private ``/tmp`` (a tmpfs): ``tmp`` when given, else the
        memory bound, else :data:`TMP_SIZE`."""
        return self.tmp or self.memory or TMP_SIZE

    def preexec(self) -> Callable[[], None] | None:
        """The function the child runs between fork and exec; ``None`` when nothing is bounded.
        Its values are computed here, in the parent: the child only makes system calls."""
        limits: list[tuple[int, tuple[int, int]]] = []
        if self.memory is not None:
            limits.append(
                (resource.RLIMIT_AS, _bounded(resource.RLIMIT_AS, self.memory, self.memory))
            )
        if self.cpu_seconds is not None:  # SIGXCPU at the soft bound, SIGKILL a second later
            pair = _bounded(resource.RLIMIT_CPU, self.cpu_seconds, self.cpu_seconds + 1)
            limits.append((resource.RLIMIT_CPU, pair))
        if self.max_file is not None:
            pair = _bounded(resource.RLIMIT_FSIZE, self.max_file, self.max_file)
            limits.append((resource.RLIMIT_FSIZE, pair))
        cores: list[int] | None = None
        if self.cpus is not None and hasattr(os, "sched_getaffinity"):
            cores = sorted(os.sched_getaffinity(0))[: self.cpus]
        if not limits and cores is None:
            return None

        def apply() -> None:
            for which, pair in limits:
                resource.setrlimit(which, pair)
            if cores is not None:
                os.sched_setaffinity(0, cores)

        return apply


def ended_by(exit_code: int | None) -> int | None:
    """The signal that ended a process, from its exit status: a negative status (the
    process itself), or ``128 + N`` (the status by which the sandbox, or a shell, reports
    that its command died of signal N); ``None``: it exited."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    return exit_code - 128 if 128 < exit_code < 128 + 65 else None


#: What a process that ran out of memory prints: Python's exception, the C library's
#: ``ENOMEM`` text, C++'s exception and the wording of common runtimes.
_OUT_OF_MEMORY = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")


def out_of_memory(exit_code: int | None, log: Path) -> bool:
    """Whether a process that failed (not stopped by its runner: no timeout, cancel or
    flood) ran out of memory. From its result first: killed by SIGKILL, which the runner
    did not send, is the kernel's out-of-memory killer (or a memory cgroup's). An allocation
    that ``RLIMIT_AS`` refuses fails inside the process, which exits as it chooses, so
    only its output tells: the last 64 KiB of its log name the failed allocation."""
    if exit_code in (0, None):
        return False
    if ended_by(exit_code) == signal.SIGKILL:
        return True
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - (1 << 16)))
            tail = handle.read()
    except OSError:
        return False
    return any(sign in tail for sign in _OUT_OF_MEMORY)


@dataclass
class ProcessOutcome:
    """What happened to the process."""

    exit_code: int | None = None
    not_found: str | None = None
    timed_out: bool = False
    cancelled: bool = False
    lines: int = 0
    landmarks: list[tuple[str, int, float]] = field(default_factory=list)
    log_error: str | None = None
    duration: float = 0.0
    #: The output passed ``max_output`` bytes: the process was stopped, the log cut there.
    flooded: bool = False


class _LandmarkWatcher:
    def __init__(
        self,
        patterns: Sequence[LandmarkPattern],
        started: float,
        on_hit: Callable[[str, int, float], None] | None,
    ) -> None:
        self.pending = list(patterns)
        self.started = started
        self.on_hit = on_hit
        self.hits: list[tuple[str, int, float]] = []
        self.lines = 0  # complete lines seen so far
        self.partial = b""

    def feed(self, chunk: bytes) -> None:
        if not self.pending:
            self.lines += chunk.count(b"\n")
            return
        data = self.partial + chunk if self.partial else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            self.partial = data if len(data) < MAX_LINE else b""
            return
        whole, self.partial = data[: cut + 1], data[cut + 1 :]
        if len(self.partial) >= MAX_LINE:
            self.partial = b""
        if all(p.literal is not None and p.literal not in whole for p in self.pending):
            self.lines += whole.count(b"\n")
            return
        for raw in whole.split(b"\n")[:-1]:
            self.lines += 1
            if self.pending:
                self._match(raw)

    def finish(self) -> None:
        if self.partial:
            self.lines += 1
            self._match(self.partial)
            self.partial = b""

    def _match(self, raw: bytes) -> None:
        """Record each pending landmark that ``raw``, line :attr:`lines`, reaches."""
        line = raw.removesuffix(b"\r").decode("utf-8", "replace")
        for pattern in [p for p in self.pending if p.regex.search(line)]:
            self.pending.remove(pattern)
            elapsed = round(time.monotonic() - self.started, 6)
            self.hits.append((pattern.id, self.lines, elapsed))
            if self.on_hit is not None:
                self.on_hit(pattern.id, self.lines, elapsed)


#: The watchdog's program: read ``+<pgid>`` and ``-<pgid>`` lines from stdin, keeping the set
#: of registered groups; on end-of-file (the runner is gone) kill every group still in it.
_WATCHDOG = (
    "import os,signal\n"
    "groups=set()\n"
    "buf=b''\n"
    "while True:\n"
    "    try:\n"
    "        data=os.read(0,4096)\n"
    "    except OSError:\n"
    "        data=b''\n"
    "    if not data:\n"
    "        break\n"
    "    *lines,buf=(buf+data).split(b'\\n')\n"
    "    for line in lines:\n"
    "        if line[:1]==b'+':\n"
    "            groups.add(int(line[1:]))\n"
    "        elif line[:1]==b'-':\n"
    "            groups.discard(int(line[1:]))\n"
    "for pgid in groups:\n"
    "    try:\n"
    "        os.killpg(pgid,signal.SIGKILL)\n"
    "    except OSError:\n"
    "        pass\n"
)


class _Watchdog:
    """The supervising process of this runner process's groups (see the module docstring)."""

    _lock = threading.Lock()
    _current: _Watchdog | None = None

    def __init__(self) -> None:
        self.pid = os.getpid()
        read, self._write = os.pipe()  # close-on-exec: not inherited by the runs' processes
        # Spawned, not a Popen: it outlives every run and is never waited for (it ends with
        # this process), so no Popen object is left to warn that it still runs.
        try:
            os.posix_spawn(
                sys.executable,
                [sys.executable, "-I", "-S", "-c", _WATCHDOG],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, read, 0),
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                ],
                setsid=True,
            )
        except OSError:  # pragma: no cover - no interpreter to start: no supervision
            pass
        finally:
            os.close(read)

    @classmethod
    def shared(cls) -> _Watchdog:
        """This process's watchdog, started on first use (again after a ``fork``)."""
        with cls._lock:
            current = cls._current
            if current is None or current.pid != os.getpid():
                current = cls._current = cls()
            return current

    @classmethod
    def forget(cls) -> None:
        """In a forked child: close the parent's pipe, so only the parent holds it open."""
        current, cls._current = cls._current, None
        if current is not None:
            with contextlib.suppress(OSError):
                os.close(current._write)

    def _say(self, line: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self._write, line.encode())  # one write, shorter than PIPE_BUF: atomic

    def watch(self, pgid: int) -> None:
        """Kill the group ``pgid`` if this process ends before :meth:`release`."""
        self._say(f"+{pgid}\n")

    def release(self, pgid: int) -> None:
        """The run of group ``pgid`` ended normally: no longer kill it."""
        self._say(f"-{pgid}\n")


os.register_at_fork(after_in_child=_Watchdog.forget)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _stop(process: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the group, then SIGKILL after ``grace`` seconds if it still runs."""
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    # Kill what is left of the group (the leader, or children that outlived it).
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log_path: Path,
    timeout: float | None = None,
    cancel: threading.Event | None = None,
    landmarks: Sequence[LandmarkPattern] = (),
    on_landmark: Callable[[str, int, float], None] | None = None,
    echo: BinaryIO | None = None,
    grace: float = 5.0,
    pass_fds: Sequence[int] = (),
    max_output: int | None = None,
    limits: ResourceLimits | None = None,
) -> ProcessOutcome:
    """Run ``argv`` to completion, timeout or cancellation; append its output to ``log_path``.

    ``pass_fds`` are descriptors the process inherits (the sandbox's seccomp filter). With
    ``max_output``, a process whose output passes that many bytes is stopped as on timeout
    (``flooded``) and the log keeps the first ``max_output`` bytes. ``limits`` bound the
    process and its children (:class:`ResourceLimits`).
    """
    preexec = limits.preexec() if limits is not None else None
    outcome = ProcessOutcome()
    started = time.monotonic()
    with log_path.open("ab", buffering=0) as log:
        try:
            process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                bufsize=0,
                pass_fds=tuple(pass_fds),
                # Only system calls with precomputed values (ResourceLimits.preexec):
                # nothing in the child that could wait for a lock another thread held.
                preexec_fn=preexec,  # noqa: PLW1509
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            outcome.not_found = f"{argv[0]}: {exc.strerror}"
            outcome.duration = time.monotonic() - started
            return outcome
        watchdog = _Watchdog.shared()
        watchdog.watch(process.pid)
        try:
            watcher = _LandmarkWatcher(landmarks, started, on_landmark)
            _pump(process, outcome, log, timeout, cancel, grace, echo, started, watcher, max_output)
        finally:
            watchdog.release(process.pid)
    outcome.duration = time.monotonic() - started
    return outcome


def _pump(  # noqa: PLR0917 - the loop of run_process
    process: subprocess.Popen[bytes],
    outcome: ProcessOutcome,
    log: BinaryIO,
    timeout: float | None,
    cancel: threading.Event | None,
    grace: float,
    echo: BinaryIO | None,
    started: float,
    watcher: _LandmarkWatcher,
    max_output: int | None = None,
) -> None:
    """Read the process's output to the end (see :func:`run_process`)."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = None if timeout is None else started + timeout
    exited_at: float | None = None
    written = 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            exited_at = _stopped(process, outcome, exited_at, now, cancel, deadline, grace)
            if exited_at is not None and time.monotonic() - exited_at > DRAIN_WAIT:
                # The leader is gone but someone still holds the pipe: end the group.
                _signal_group(process.pid, signal.SIGKILL)
                break
            wait = _POLL
            if deadline is not None and exited_at is None:
                wait = max(0.0, min(wait, deadline - now))
            if not selector.select(wait):
                continue
            chunk = os.read(fd, READ_SIZE)
            if not chunk:
                break
            if max_output is not None:
                room = max(0, max_output - written)
                written += len(chunk)
                if written > max_output and not outcome.flooded:
                    outcome.flooded = True
                    _stop(process, grace)
                    exited_at = time.monotonic()
                chunk = chunk[:room]
                if not chunk:
                    continue
            _deliver(chunk, outcome, log, echo, watcher)
    process.stdout.close()
    watcher.finish()
    outcome.exit_code = process.wait()
    outcome.lines = watcher.lines
    outcome.landmarks = watcher.hits


def _stopped(  # noqa: PLR0917 - a step of _pump's loop
    process: subprocess.Popen[bytes],
    outcome: ProcessOutcome,
    exited_at: float | None,
    now: float,
    cancel: threading.Event | None,
    deadline: float | None,
    grace: float,
) -> float | None:
    """When the process exited or was stopped (on a cancel or at the deadline), if it did."""
    if cancel is not None and cancel.is_set() and exited_at is None:
        outcome.cancelled = True
        _stop(process, grace)
        exited_at = time.monotonic()
    elif deadline is not None and now >= deadline and exited_at is None:
        outcome.timed_out = True
        _stop(process, grace)
        exited_at = time.monotonic()
    if exited_at is None and process.poll() is not None:
        exited_at = time.monotonic()
    return exited_at


def _deliver(
    chunk: bytes,
    outcome: ProcessOutcome,
    log: BinaryIO,
    echo: BinaryIO | None,
    watcher: _LandmarkWatcher,
) -> None:
    """Write a chunk of output to the log (and the echo) and look for landmarks in it."""
    if outcome.log_error is None:
        try:
            log.write(chunk)
        except OSError as exc:  # full disk: keep draining, report it
            outcome.log_error = f"cannot write the log: {exc.strerror}"
    if echo is not None:
        with contextlib.suppress(OSError, ValueError):
            echo.write(chunk)
            echo.flush()
    watcher.feed(chunk)
