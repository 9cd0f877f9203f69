"""Executing a recorded run again, and saying how far a re-execution is (spec §11.2,
"Re-execution"): the runner with the record's launcher and seed in a fresh runs directory,
within a submission's time and memory budget; one progress line per execution on stderr.
What the executions are compared with is :mod:`.rerun`'s.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import terminal_text

if TYPE_CHECKING:
    from reprobridge_sdk.model.evidence import EnvironmentSnapshot, EvidenceRecord
    from reprobridge_sdk.run.evidence import NamesSnapshot
    from reprobridge_sdk.run.process import ResourceLimits

    from ._evidence import RunRecord
    from .verify import ArtifactFacts, RunEvidence

__all__ = ["Execution", "Executor", "Progress", "progress_line", "values"]


def values(record: EvidenceRecord | RunRecord) -> dict[str, float | None]:
    return {m.task: m.value for m in record.measurements}


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


@dataclass
class Progress:
    """The progress lines of a re-execution (see :func:`rerun_runs`)."""

    head: str
    say: Callable[[str], None] | None
    started: float
    total: int = 0
    done: int = 0

    def start(self, total: int) -> None:
        self.total = total
        if self.say is not None and total:
            self.say(terminal_text(f"{self.head}: 0/{total} runs"))

    def step(self, run: RunEvidence, *, again: bool = False) -> None:
        self.done += 1
        if self.say is not None:
            elapsed = time.monotonic() - self.started
            count = (self.done, max(self.total, self.done))
            self.say(progress_line(self.head, run, count, elapsed, again=again))


def progress_line(
    head: str, run: RunEvidence, count: tuple[int, int], elapsed: float, *, again: bool = False
) -> str:
    """``p01: re-executing toy: 3/8 runs (last scored-s2: task acc), 12s so far, about 20s
    left`` (``scored-s2 again`` for a repeat), the artifact's text in it shown with its
    control characters visible."""
    done, total = count
    left = elapsed / done * (total - done)
    tail = f", about {_duration(left)} left" if done < total else ", done"
    tasks = sorted({m.task for m in run.record.measurements}) if run.record is not None else []
    what = f": task {', '.join(tasks[:3])}{' ...' if len(tasks) > 3 else ''}" if tasks else ""
    last = f" (last {run.rel or '.'}{' again' if again else ''}{what})"
    line = f"{head}: {done}/{total} runs{last}, {_duration(elapsed)} so far{tail}"
    return terminal_text(line)


@dataclass
class Execution:
    """One execution of a recorded run's launcher and seed: the budget that stopped it, the
    error that kept it from running, or its record (None: no run started)."""

    stopped: Literal["time", "memory"] | None = None
    error: str | None = None
    record: EvidenceRecord | None = None
    started: bool = True
    #: What the execution ran on (its environment snapshot), None when unknown.
    environment: EnvironmentSnapshot | None = None


@dataclass
class Executor:
    """Executes recorded runs again, each in a fresh runs directory, within the budget."""

    facts: ArtifactFacts
    env_mode: str
    sandbox: bool
    budget: float | None = None
    resources: ResourceLimits | None = None
    started: float = field(default_factory=time.monotonic)

    def __call__(self, chosen: RunEvidence) -> Execution:
        """Run ``chosen``'s launcher with its seed; which budget stopped it, if one did: the
        time left, or the memory of ``resources`` (the run failed out of memory under it)."""
        from reprobridge_sdk.run.evidence import LOG_NAME  # noqa: PLC0415 - heavy
        from reprobridge_sdk.run.process import out_of_memory  # noqa: PLC0415 - heavy
        from reprobridge_sdk.run.runner import run as run_launchers  # noqa: PLC0415 - heavy

        record = chosen.record
        assert record is not None
        launcher = self.facts.launcher(record.launcher)
        if launcher is None:
            return Execution(started=False)
        left = None if self.budget is None else self.budget - (time.monotonic() - self.started)
        if left is not None and left <= 0:
            return Execution(stopped="time", started=False)
        # the budget's time left, when it is shorter than the launcher's own timeout
        bounded = left is not None and (launcher.timeout is None or left < launcher.timeout)
        resources = self.resources
        with tempfile.TemporaryDirectory(prefix="rb-rerun-") as scratch:
            try:
                summary = run_launchers(
                    self.facts.root,
                    [launcher.id],
                    seeds=[record.seed] if record.seed is not None and launcher.seeds else None,
                    env_mode=self.env_mode,
                    runs_dir=Path(scratch) / "runs",
                    sandbox=self.sandbox,
                    timeout=left if bounded else None,
                    limits=resources,
                )
            except UsageError:  # e.g. the sandbox cannot work here (N011): the auditor's
                raise
            except Exception as exc:  # the artifact cannot be run at all
                return Execution(error=str(exc))
            again = [r for r in summary.results if r.record.launcher == launcher.id]
            if not again:
                return Execution()
            last = again[-1]
            failure = last.record.failure
            if (
                resources is not None
                and resources.memory is not None
                and failure is not None
                and failure.reason == "exit-status"
                and out_of_memory(last.record.exit_code, last.run_dir / LOG_NAME)
            ):
                return Execution(stopped="memory")  # the committee's budget, not the artifact
            environment = snapshot_of(last.run_dir, last.record)
        if bounded and failure is not None and failure.reason == "timeout":
            return Execution(stopped="time")  # the committee's budget, not the artifact
        return Execution(record=last.record, environment=environment)


def snapshot_of(run_dir: Path, record: NamesSnapshot) -> EnvironmentSnapshot | None:
    """The environment snapshot of the run at ``run_dir``, None when it has none or it
    cannot be read (a missing or altered snapshot file is the evidence checks' concern)."""
    from reprobridge_sdk.run.evidence import (  # noqa: PLC0415 - heavy
        SnapshotProblem,
        read_snapshot,
    )

    try:
        return read_snapshot(run_dir, record)
    except (SnapshotProblem, OSError, ValueError):
        return None


def same_machine(one: EnvironmentSnapshot | None, other: EnvironmentSnapshot | None) -> bool:
    """Whether two runs ran on the same kind of machine and software: the same platform,
    architecture and CPU, and the same installed distributions. Unknown is not the same."""
    if one is None or other is None:
        return False

    def kind(snapshot: EnvironmentSnapshot) -> tuple[object, ...]:
        installed = sorted((d.name.lower(), d.version) for d in snapshot.distributions)
        return (snapshot.platform, snapshot.machine, snapshot.cpu, installed)

    return kind(one) == kind(other)
