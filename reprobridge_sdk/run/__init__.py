"""The runner: run launchers, extract measurements, record evidence (spec §10).

Names are imported lazily so that ``import reprobridge_sdk.run`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobridge_sdk._lazy import lazy_names

if TYPE_CHECKING:
    from .evidence import RecordError, iter_runs, load_record, read_snapshot
    from .replay import SampleCheck, check_samples, replay_log, replay_run
    from .results import RunEvent, RunResult, RunSummary, TaskValue
    from .runner import run

__all__ = [
    "RecordError",
    "RunEvent",
    "RunResult",
    "RunSummary",
    "SampleCheck",
    "TaskValue",
    "check_samples",
    "iter_runs",
    "load_record",
    "read_snapshot",
    "replay_log",
    "replay_run",
    "run",
]

_WHERE = {
    ".evidence": "RecordError iter_runs load_record read_snapshot",
    ".replay": "SampleCheck check_samples replay_log replay_run",
    ".results": "RunEvent RunResult RunSummary TaskValue",
    ".runner": "run",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
