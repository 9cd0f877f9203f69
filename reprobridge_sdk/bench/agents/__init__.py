"""The reference agents of ``reprobridge bench``: ``null``, ``readme`` and ``oracle``, plain
baselines that show what the harness measures (spec bench.md#reference-agents).

Each is started as ``python -m reprobridge_sdk.bench.agents.<name> WORKSPACE`` with the task
in ``REPRO_BENCH_TASK``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from reprobridge_sdk.io.atomic import json_text
from reprobridge_sdk.versions import MANIFEST_NAME

__all__ = ["measured_value", "scored_launcher", "task_of", "write_results"]

RESULTS_NAME = "bench-results.json"


def task_of() -> str:
    """The task the harness asks for."""
    return os.environ.get("REPRO_BENCH_TASK", "")


def scored_launcher(workspace: Path, task: str) -> Any:
    """The workspace's manifest's launcher that measures ``task`` (scored first), or None
    when the workspace has no manifest that loads."""
    from reprobridge_sdk.api import load  # noqa: PLC0415
    from reprobridge_sdk.bench.judge import measuring_launcher  # noqa: PLC0415
    from reprobridge_sdk.errors import ReproBridgeError  # noqa: PLC0415

    if not (workspace / MANIFEST_NAME).is_file():
        return None
    try:
        manifest = load(workspace).manifest
    except ReproBridgeError:
        return None
    return measuring_launcher(manifest, task)


def measured_value(workspace: Path, entry: dict[str, Any]) -> float | None:
    """The value the workspace's own extractors read from ``entry``'s runs (the judge's reading,
    run against the workspace: the agent has no references, so only the value counts)."""
    from reprobridge_sdk.bench.judge import judge_results  # noqa: PLC0415
    from reprobridge_sdk.errors import ReproBridgeError  # noqa: PLC0415

    draft = workspace / ".bench-draft.json"
    data = {"bench_results_version": "1.0", "results": [{**entry, "value": 0.0}]}
    draft.write_text(json.dumps(data), encoding="utf-8")
    try:
        judgement = judge_results(workspace, draft, workspace=workspace)
    except ReproBridgeError:
        return None
    finally:
        draft.unlink()
    claim = next((c for c in judgement.claims if c.task == entry["task"]), None)
    return None if claim is None else claim.extracted


def write_results(workspace: Path, agent: str, entries: list[dict[str, Any]]) -> None:
    """Leave the results file."""
    data = {"bench_results_version": "1.0", "agent": agent, "results": entries}
    text = json_text(data)
    (workspace / RESULTS_NAME).write_text(text, encoding="utf-8")
    sys.stdout.write(f"{agent}: wrote {RESULTS_NAME} ({len(entries)} result(s))\n")
