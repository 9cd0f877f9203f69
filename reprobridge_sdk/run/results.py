"""What a run of the runner returns and reports: events, results, task values, summary."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reprobridge_sdk.extract.extraction import ExtractionError, aggregate
from reprobridge_sdk.model import Launcher
from reprobridge_sdk.model.evidence import EvidenceRecord, MeasuredValue

__all__ = ["RunEvent", "RunResult", "RunSummary", "TaskValue", "task_values"]


@dataclass(frozen=True)
class RunEvent:
    """A progress event: ``run-started``, ``landmark``, ``finding`` (a warning about one run:
    its ``run_id`` and the finding's fields), ``run-finished`` or ``summary``."""

    event: str
    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, **self.data}


@dataclass(frozen=True)
class RunResult:
    """One finished (or skipped) run."""

    run_id: str
    run_dir: Path
    record: EvidenceRecord

    @property
    def status(self) -> str:
        return self.record.status

    def to_dict(self) -> dict[str, Any]:
        failure = self.record.failure
        return {
            "run_id": self.run_id,
            "run_dir": str(self.run_dir),
            "launcher": self.record.launcher,
            "seed": self.record.seed,
            "status": self.record.status,
            "failure": None if failure is None else failure.model_dump(mode="json"),
            "duration": self.record.duration,
            "measurements": [m.model_dump(mode="json") for m in self.record.measurements],
        }


@dataclass(frozen=True)
class TaskValue:
    """A task's statistic over the seeds of one launcher in this invocation."""

    task: str
    launcher: str
    aggregate: str
    values: tuple[float, ...]
    value: float | None
    complete: bool
    #: Why a succeeded run gave no value, when one did not (its measurement's ``error``; a
    #: ``no-plugin:`` error is X005: the extractor kind's plugin is not installed).
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "values": list(self.values)}


@dataclass
class RunSummary:
    """Everything :func:`run` did."""

    results: list[RunResult] = field(default_factory=list)
    tasks: list[TaskValue] = field(default_factory=list)
    interrupted: bool = False
    elapsed: float = 0.0
    #: The head of the runs directory's ledger after these runs (``spec/runner.md#ledger``).
    ledger_head: str = ""

    @property
    def succeeded(self) -> int:
        return sum(r.status == "succeeded" for r in self.results)

    @property
    def failed(self) -> int:
        return sum(r.status == "failed" for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 all succeeded, 130 interrupted, 1 otherwise."""
        if self.interrupted:
            return 130
        return 0 if all(r.status == "succeeded" for r in self.results) else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": len(self.results),
            "succeeded": self.succeeded,
            "failed": self.failed,
            "interrupted": self.interrupted,
            "elapsed": round(self.elapsed, 3),
            "ledger_head": self.ledger_head,
            "exit_code": self.exit_code,
            "results": [r.to_dict() for r in self.results],
            "tasks": [t.to_dict() for t in self.tasks],
        }


def task_values(selected: Sequence[Launcher], results: Sequence[RunResult]) -> list[TaskValue]:
    values: list[TaskValue] = []
    for launcher in selected:
        runs = sorted(
            (r for r in results if r.record.launcher == launcher.id),
            key=lambda r: (r.record.seed is None, r.record.seed or 0),
        )
        if not runs:
            continue
        for measurement in launcher.measurements:
            got: list[float] = []
            error: str | None = None
            for result in runs:
                found = _measured(result.record.measurements, measurement.task)
                if result.status != "succeeded" or found is None:
                    continue
                if found.value is not None:
                    got.append(found.value)
                elif error is None:
                    error = found.error
            complete = len(got) == len(runs)
            value = None
            if got and complete:
                with contextlib.suppress(ExtractionError):  # no statistic: no value
                    value = aggregate(got, measurement.aggregate)
            values.append(
                TaskValue(
                    task=measurement.task,
                    launcher=launcher.id,
                    aggregate=measurement.aggregate,
                    values=tuple(got),
                    value=value,
                    complete=complete,
                    error=error,
                )
            )
    return values


def _measured(measured: Sequence[MeasuredValue], task: str) -> MeasuredValue | None:
    return next((item for item in measured if item.task == task), None)
