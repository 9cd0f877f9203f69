"""The runner: run launchers, extract measurements, record evidence (spec §10).

Names are imported lazily so that ``import reprobridge_sdk.run`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "RecordError": "evidence",
    "iter_runs": "evidence",
    "load_record": "evidence",
    "read_snapshot": "evidence",
    "SampleCheck": "replay",
    "check_samples": "replay",
    "replay_log": "replay",
    "replay_run": "replay",
    "RunEvent": "results",
    "RunResult": "results",
    "RunSummary": "results",
    "TaskValue": "results",
    "run": "runner",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
