"""Re-execution of recorded runs (spec ``re-execution``).

Digests, ledgers and signatures show that evidence was not changed after the fact; none of
them shows that a log came from running the experiment. A producer can write a plausible
log, compute its digest, ledger and even sign it. Re-execution is the only defense against
fabricated logs: the auditor runs the launcher again, with the recorded seed, in an
environment built from the artifact's lock, and compares the values.

Sampling. ``count`` runs are chosen among the attempt's succeeded runs (sorted by their
directory) with :class:`random.Random` seeded by ``seed``: the same seed picks the same
runs, and the report states both. ``count`` ``None`` means every succeeded run.

Execution. Each chosen run is re-executed by the runner (:func:`reprobridge_sdk.run.run`)
into a fresh temporary runs directory, with the record's launcher and seed, in
``env_mode`` ``cached`` (the environment built from the lock; the default) or ``current``,
and under the runner's sandbox (no network, a read-only file system but the run directory
and a private ``/tmp``) unless ``sandbox`` is false: a re-execution runs a stranger's code,
so the sandbox is the default. A sandbox that cannot work here is a usage error (N011)
before anything runs; it never falls back to an unsandboxed run.

Comparison, per task the launcher measures, the recorded value against the value the
re-execution extracted:

* a launcher that declares ``deterministic: true`` must give the same value exactly (two
  NaN are the same);
* otherwise the two may differ by at most the task's compatibility interval half-width
  (``|recorded - rerun| <= h``); a task without an interval must match exactly.

A difference is A058 on the run (an error: the run's evidence is invalid); a re-execution
that does not succeed, or gives no value where the record has one, is A059.
"""

from __future__ import annotations

import math
import random
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.model import RECORD_NAME

from .verify import ArtifactFacts, RunEvidence

__all__ = ["RerunOutcome", "choose", "rerun_runs"]


@dataclass
class RerunOutcome:
    """What re-execution did for one attempt."""

    chosen: list[str] = field(default_factory=list)
    executed: int = 0
    mismatches: int = 0


def choose(runs: Sequence[RunEvidence], count: int | None, seed: int) -> list[RunEvidence]:
    """The sample of succeeded runs to re-execute (all of them when ``count`` is None)."""
    pool = sorted((r for r in runs if r.succeeded), key=lambda r: r.rel)
    if count is None or count >= len(pool):
        return pool
    picked = random.Random(seed).sample(range(len(pool)), count)
    return [pool[i] for i in sorted(picked)]


def _same(recorded: float, again: float, deterministic: bool, half_width: float | None) -> bool:
    if math.isnan(recorded) or math.isnan(again):
        return math.isnan(recorded) and math.isnan(again)
    if deterministic or half_width is None or not math.isfinite(half_width):
        return recorded == again
    return abs(recorded - again) <= half_width


def rerun_runs(
    facts: ArtifactFacts,
    runs: Sequence[RunEvidence],
    *,
    count: int | None,
    seed: int,
    half_widths: Mapping[str, float | None],
    env_mode: str = "cached",
    sandbox: bool = True,
) -> RerunOutcome:
    """Re-execute a sample of ``runs`` and add A058/A059 to the runs that do not hold up."""
    from reprobridge_sdk.run.runner import run as run_launchers  # noqa: PLC0415 - heavy

    outcome = RerunOutcome()
    sample = choose(runs, count, seed)
    if sandbox and sample:
        from reprobridge_sdk.run.runner import require_sandbox  # noqa: PLC0415 - heavy

        require_sandbox()
    for chosen in sample:
        record = chosen.record
        assert record is not None
        outcome.chosen.append(chosen.rel or ".")
        launcher = facts.launcher(record.launcher)
        if launcher is None:
            continue
        where = f"{chosen.rel}/{RECORD_NAME}".lstrip("/")
        with tempfile.TemporaryDirectory(prefix="rb-rerun-") as scratch:
            try:
                summary = run_launchers(
                    facts.root,
                    [launcher.id],
                    seeds=[record.seed] if record.seed is not None and launcher.seeds else None,
                    env_mode=env_mode,
                    runs_dir=Path(scratch) / "runs",
                    sandbox=sandbox,
                )
            except UsageError:  # e.g. the sandbox cannot work here (N011): the auditor's problem
                raise
            except Exception as exc:  # the artifact cannot be run at all: unconfirmed
                chosen.findings.append(
                    finding(
                        "A059", f"run {record.run_id} could not be re-executed: {exc}", file=where
                    )
                )
                continue
        outcome.executed += 1
        again = [r for r in summary.results if r.record.launcher == launcher.id]
        if not again or again[-1].record.status != "succeeded":
            status = again[-1].record.status if again else "not started"
            chosen.findings.append(
                finding(
                    "A059",
                    f"run {record.run_id} was re-executed and did not succeed ({status})",
                    file=where,
                )
            )
            outcome.mismatches += 1
            continue
        fresh = {m.task: m.value for m in again[-1].record.measurements}
        mismatched = False
        for index, measured in enumerate(record.measurements):
            if measured.value is None:
                continue
            value = fresh.get(measured.task)
            if value is None:
                chosen.findings.append(
                    finding(
                        "A059",
                        f"run {record.run_id}: the re-execution gave no value for task "
                        f"{measured.task}",
                        file=where,
                        path=f"/measurements/{index}/value",
                    )
                )
                mismatched = True
                continue
            width = half_widths.get(measured.task)
            if not _same(measured.value, value, launcher.deterministic, width):
                allowed = (
                    "exactly" if launcher.deterministic or width is None else f"within {width:.6g}"
                )
                chosen.findings.append(
                    finding(
                        "A058",
                        f"run {record.run_id}: task {measured.task} recorded "
                        f"{measured.value!r}, re-executed {value!r} (must match {allowed})",
                        file=where,
                        path=f"/measurements/{index}/value",
                        hint="the recorded log was not produced by this experiment",
                    )
                )
                mismatched = True
        outcome.mismatches += mismatched
    return outcome
