"""Re-execution of recorded runs: the only defence against fabricated logs.

A sample of each attempt's succeeded runs, drawn per launcher and per task with a secret
seed (:func:`draw_seed`, stated in the report afterwards), is run again by the runner with
the recorded seed, in the environment built from the lock and in the sandbox by default.
Each value is compared with the recorded one within a same-seed tolerance never looser than
the interval's half-width (A058, A059), and per launcher and task a paired t test of the differences
finds a shift that passes run by run (A070). See spec §11.2 ("Re-execution").
"""

from __future__ import annotations

import math
import random
import secrets
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import Finding, finding, terminal_text
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.audit import RerunComparison, ShiftSkipped, ShiftTest

from ._studentt import t_two_sided
from .interval import finite
from .verify import ArtifactFacts, RunEvidence

if TYPE_CHECKING:
    from reprobridge_sdk.run.process import ResourceLimits

__all__ = [
    "DEFAULT_SAMPLE",
    "SHIFT_LEVEL",
    "SHIFT_MIN_RUNS",
    "RerunOutcome",
    "choose",
    "draw_seed",
    "rerun_runs",
    "shift_test",
    "tolerance",
]

#: Runs re-executed per launcher and per task when the committee gives no number.
DEFAULT_SAMPLE = 4
#: Level of the paired t test of a shift across the sample (two-sided).
SHIFT_LEVEL = 0.01
#: The fewest re-executed runs of a task for which the shift is tested.
SHIFT_MIN_RUNS = 4


def draw_seed() -> int:
    """A secret sample seed from the operating system's entropy (63 bits)."""
    return secrets.randbits(63)


@dataclass
class RerunOutcome:
    """What re-execution did for one attempt."""

    chosen: list[str] = field(default_factory=list)
    executed: int = 0
    mismatches: int = 0
    #: Run directory (relative) -> the comparison of each task it records.
    comparisons: dict[str, list[RerunComparison]] = field(default_factory=dict)
    shifts: list[ShiftTest] = field(default_factory=list)
    #: Tasks with enough recorded runs whose sample was too small for the shift test.
    skipped: list[ShiftSkipped] = field(default_factory=list)
    #: A070 findings, each with the launchers whose runs it was tested on.
    shift_findings: list[tuple[Finding, set[str]]] = field(default_factory=list)
    #: Sampled runs (relative) the time budget stopped or left out: not re-executed.
    over_budget: list[str] = field(default_factory=list)
    #: A094 when the time budget ran out.
    budget_findings: list[Finding] = field(default_factory=list)


def _strata(pool: Sequence[RunEvidence]) -> list[list[int]]:
    """Indices of ``pool`` per launcher, then per (launcher, task) with a recorded value."""
    launchers: dict[str, list[int]] = {}
    tasks: dict[tuple[str, str], list[int]] = {}
    for index, run in enumerate(pool):
        record = run.record
        assert record is not None
        launchers.setdefault(record.launcher, []).append(index)
        for measured in record.measurements:
            members = tasks.setdefault((record.launcher, measured.task), [])
            if measured.value is not None and (not members or members[-1] != index):
                members.append(index)
    return [launchers[k] for k in sorted(launchers)] + [tasks[k] for k in sorted(tasks)]


def choose(runs: Sequence[RunEvidence], count: int | None, seed: int) -> list[RunEvidence]:
    """The sample of succeeded runs to re-execute: ``count`` per launcher and per task (all
    of a stratum's runs when it has fewer; every run when ``count`` is None)."""
    pool = sorted((r for r in runs if r.succeeded and r.record is not None), key=lambda r: r.rel)
    if count is None:
        return pool
    rng = random.Random(seed)
    chosen: set[int] = set()
    for stratum in _strata(pool):
        need = min(count, len(stratum)) - sum(i in chosen for i in stratum)
        if need > 0:
            chosen.update(rng.sample([i for i in stratum if i not in chosen], need))
    return [pool[i] for i in sorted(chosen)]


def tolerance(
    deterministic: bool, declared: float | None, half_width: float | None
) -> tuple[float, str]:
    """The same-seed tolerance of a re-execution and its basis (see the module)."""
    if deterministic:
        return 0.0, "deterministic"
    if half_width is None or not math.isfinite(half_width):
        return 0.0, "no-interval"
    if declared is not None:
        return min(declared, half_width), "declared"
    return half_width, "half-width"


def _within(recorded: float, again: float, allowed: float) -> bool:
    if math.isnan(recorded) or math.isnan(again):
        return math.isnan(recorded) and math.isnan(again)
    if allowed == 0.0:
        return recorded == again
    return abs(recorded - again) <= allowed


def shift_test(task: str, differences: Sequence[float]) -> ShiftTest | None:
    """The paired t test of ``differences`` (recorded - re-executed); None under
    :data:`SHIFT_MIN_RUNS` finite differences."""
    values = [d for d in differences if math.isfinite(d)]
    n = len(values)
    if n < SHIFT_MIN_RUNS:
        return None
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in values) / (n - 1))
    if sd == 0.0:
        t = math.inf if mean != 0.0 else 0.0
        p = 0.0 if mean != 0.0 else 1.0
    else:
        t = mean / (sd / math.sqrt(n))
        p = t_two_sided(t, n - 1)
    return ShiftTest(
        task=task,
        n=n,
        mean_difference=finite(mean),
        sd=finite(sd),
        t=finite(t),
        p=p,
        level=SHIFT_LEVEL,
        shifted=p < SHIFT_LEVEL,
    )


@dataclass(frozen=True)
class Limits:
    """What a re-executed value is held to, per task: half-width and declared tolerance."""

    half_widths: Mapping[str, float | None] = field(default_factory=dict)
    declared: Mapping[str, float | None] = field(default_factory=dict)
    #: Task id -> its index in the manifest (where a shift is located).
    positions: Mapping[str, int] = field(default_factory=dict)


def _compare(
    chosen: RunEvidence, fresh: Mapping[str, float | None], deterministic: bool, limits: Limits
) -> tuple[list[RerunComparison], list[Finding]]:
    """The comparison of every recorded value of ``chosen`` with the re-executed one."""
    record = chosen.record
    assert record is not None
    where = f"{chosen.rel}/{RECORD_NAME}".lstrip("/")
    rows: list[RerunComparison] = []
    found: list[Finding] = []
    for index, measured in enumerate(record.measurements):
        if measured.value is None:
            continue
        allowed, basis = tolerance(
            deterministic, limits.declared.get(measured.task), limits.half_widths.get(measured.task)
        )
        value = fresh.get(measured.task)
        held = value is not None and _within(measured.value, value, allowed)
        difference = measured.value - value if value is not None else None
        rows.append(
            RerunComparison(
                task=measured.task,
                recorded=finite(measured.value),
                rerun=finite(value),
                difference=finite(difference),
                tolerance=allowed,
                basis=basis,
                held=held,
            )
        )
        pointer = f"/measurements/{index}/value"
        if value is None:
            found.append(
                finding(
                    "A059",
                    f"run {record.run_id}: the re-execution gave no value for task {measured.task}",
                    file=where,
                    path=pointer,
                )
            )
        elif not held:
            limit = "exactly" if allowed == 0.0 else f"within {allowed:.6g} ({basis})"
            found.append(
                finding(
                    "A058",
                    f"run {record.run_id}: task {measured.task} recorded "
                    f"{measured.value!r}, re-executed {value!r} (must match {limit})",
                    file=where,
                    path=pointer,
                    hint="the recorded log was not produced by this experiment",
                )
            )
    return rows, found


def _recorded_counts(runs: Sequence[RunEvidence]) -> dict[str, int]:
    """Task id -> the succeeded runs whose record gives it a value."""
    counts: dict[str, int] = {}
    for run in runs:
        if not run.succeeded or run.record is None:
            continue
        for task in {m.task for m in run.record.measurements if m.value is not None}:
            counts[task] = counts.get(task, 0) + 1
    return counts


def _skipped(outcome: RerunOutcome, recorded: Mapping[str, int], tested: Mapping[str, int]) -> None:
    """The tasks with enough recorded runs whose sample is too small for the shift test."""
    for task in sorted(recorded):
        n = tested.get(task, 0)
        if recorded[task] >= SHIFT_MIN_RUNS and n < SHIFT_MIN_RUNS:
            reason = (
                f"shift test not run: {n} re-executed run(s) with a value, "
                f"it needs {SHIFT_MIN_RUNS} (the attempt records {recorded[task]})"
            )
            outcome.skipped.append(
                ShiftSkipped(task=task, n=n, recorded=recorded[task], reason=reason)
            )


def _shifts(
    outcome: RerunOutcome,
    launchers: Mapping[str, str],
    limits: Limits,
    recorded: Mapping[str, int],
) -> None:
    """Test each task's differences over the sample, and, for a task that runs of several
    launchers measure, each launcher's differences apart (the strata the sample is drawn
    from: one honest smoke run must not dilute a shift of the scored runs); A070 for a
    significant shift, the first one found per task."""
    by_task: dict[str, list[tuple[float, str]]] = {}
    for rel, rows in outcome.comparisons.items():
        for row in rows:
            if row.difference is not None:
                by_task.setdefault(row.task, []).append((row.difference, launchers[rel]))
    tested = {task: sum(math.isfinite(d) for d, _ in pairs) for task, pairs in by_task.items()}
    _skipped(outcome, recorded, tested)
    for task in sorted(by_task):
        pairs = by_task[task]
        groups: list[tuple[str | None, list[float]]] = [(None, [d for d, _ in pairs])]
        names = sorted({launcher for _, launcher in pairs})
        if len(names) > 1:
            groups += [(name, [d for d, who in pairs if who == name]) for name in names]
        found = False
        for launcher, differences in groups:
            test = shift_test(task, differences)
            if test is None:
                continue
            if launcher is not None:
                test = test.model_copy(update={"launcher": launcher})
            outcome.shifts.append(test)
            if not test.shifted or found:
                continue
            found = True
            tainted = set(names) if launcher is None else {launcher}
            outcome.shift_findings.append((_shift_finding(task, launcher, test, limits), tainted))


def _shift_finding(task: str, launcher: str | None, test: ShiftTest, limits: Limits) -> Finding:
    direction = "above" if (test.mean_difference or 0.0) > 0 else "below"
    whose = "" if launcher is None else f" of launcher {launcher}"
    return finding(
        "A070",
        f"task {task}: the recorded values{whose} lie systematically {direction} the "
        f"re-executed ones (mean difference {test.mean_difference:.6g} over {test.n} runs, "
        f"paired t test p = {test.p:.3g} < {SHIFT_LEVEL})",
        path=f"/tasks/{limits.positions[task]}" if task in limits.positions else "",
        hint="every run may pass its tolerance while the evidence is shifted: the recorded "
        "values were not produced by this experiment",
    )


def rerun_runs(
    facts: ArtifactFacts,
    runs: Sequence[RunEvidence],
    *,
    count: int | None,
    seed: int,
    limits: Limits,
    env_mode: str = "cached",
    sandbox: bool = True,
    progress: Callable[[str], None] | None = None,
    where: str | None = None,
    budget: float | None = None,
    memory: int | None = None,
    cpus: int | None = None,
) -> RerunOutcome:
    """Re-execute a sample of ``runs``, add A058/A059 to the runs that do not hold up and
    test the sample for a shift (A070 in ``shift_findings``). ``progress`` is given one line
    before the first run and after each, first naming ``where`` (the table's row, or the
    artifact's path; the artifact's id without it): runs done of the sample, the run just
    done and its tasks, time so far, and an estimate of the time left (the mean time of a
    run so far, times the runs left).

    ``budget`` (seconds, a submission's time budget) bounds the whole re-execution: each run
    gets at most the time left as its timeout, a run it stops and the runs left when it is
    spent are not re-executed (``over_budget``, A094), and never count as the committee's.
    ``memory`` (bytes) bounds the address space of each re-executed process and ``cpus`` the
    cores it runs on (:class:`~reprobridge_sdk.run.process.ResourceLimits`); a run that fails
    out of memory under that bound is over budget in the same way (A094)."""
    from reprobridge_sdk.run.process import ResourceLimits  # noqa: PLC0415 - heavy

    outcome = RerunOutcome()
    resources = ResourceLimits(memory=memory, cpus=cpus) if memory or cpus else None
    out_of_memory: list[str] = []
    sample = choose(runs, count, seed)
    if sandbox and sample:
        from reprobridge_sdk.run.runner import require_sandbox  # noqa: PLC0415 - heavy

        require_sandbox()
    launchers: dict[str, str] = {}
    started = time.monotonic()
    name = facts.manifest.artifact.id
    head = f"{where or name}: re-executing {name}"
    if progress is not None and sample:
        progress(terminal_text(f"{head}: 0/{len(sample)} runs"))
    for done, chosen in enumerate(sample, start=1):
        record = chosen.record
        assert record is not None
        rel = chosen.rel or "."
        left = None if budget is None else budget - (time.monotonic() - started)
        if left is not None and left <= 0:
            outcome.over_budget.append(rel)
            continue
        stopped = _rerun_one(
            facts,
            chosen,
            outcome,
            limits,
            env_mode=env_mode,
            sandbox=sandbox,
            budget=left,
            resources=resources,
        )
        if stopped == "memory":
            out_of_memory.append(rel)
        if stopped is not None:
            outcome.over_budget.append(rel)
        else:
            outcome.chosen.append(rel)
            launchers[rel] = record.launcher
        if progress is not None:
            elapsed = time.monotonic() - started
            progress(_progress_line(head, chosen, (done, len(sample)), elapsed))
    timed_out = [rel for rel in outcome.over_budget if rel not in out_of_memory]
    if timed_out and budget is not None:
        outcome.budget_findings.append(_over_budget(budget, timed_out))
    if out_of_memory and memory is not None:
        outcome.budget_findings.append(_over_memory(memory, out_of_memory))
    _shifts(outcome, launchers, limits, _recorded_counts(runs))
    return outcome


def _shown(runs: Sequence[str]) -> str:
    return ", ".join(runs[:5]) + (f" and {len(runs) - 5} more" if len(runs) > 5 else "")


def _over_memory(memory: int, runs: Sequence[str]) -> Finding:
    return finding(
        "A094",
        f"the re-execution's memory budget of {memory / 2**20:g} MiB was exceeded: "
        f"{len(runs)} sampled run(s) ran out of memory, not re-executed: {_shown(runs)}",
        hint="grant the submission more memory in the submissions file's budget (it bounds "
        "each process's address space, which can be well above its resident memory)",
    )


def _over_budget(budget: float, runs: Sequence[str]) -> Finding:
    shown = _shown(runs)
    return finding(
        "A094",
        f"the re-execution's time budget of {budget:g} s ran out: {len(runs)} sampled run(s) "
        f"stopped or not started, not re-executed: {shown}",
        hint="grant the submission more time in the submissions file's budget, or re-execute "
        "fewer runs (--rerun K)",
    )


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def _progress_line(head: str, run: RunEvidence, count: tuple[int, int], elapsed: float) -> str:
    """``p01: re-executing toy: 3/8 runs (last scored-s2: task acc), 12s so far, about 20s
    left``, the artifact's text in it shown with its control characters visible."""
    done, total = count
    left = elapsed / done * (total - done)
    tail = f", about {_duration(left)} left" if done < total else ", done"
    tasks = sorted({m.task for m in run.record.measurements}) if run.record is not None else []
    what = f": task {', '.join(tasks[:3])}{' ...' if len(tasks) > 3 else ''}" if tasks else ""
    last = f" (last {run.rel or '.'}{what})"
    line = f"{head}: {done}/{total} runs{last}, {_duration(elapsed)} so far{tail}"
    return terminal_text(line)


def _rerun_one(
    facts: ArtifactFacts,
    chosen: RunEvidence,
    outcome: RerunOutcome,
    limits: Limits,
    *,
    env_mode: str,
    sandbox: bool,
    budget: float | None = None,
    resources: ResourceLimits | None = None,
) -> Literal["time", "memory"] | None:
    """Re-execute one run and compare it; which budget stopped it, if one did: the time
    ``budget``, or the memory of ``resources`` (the run failed out of memory under it)."""
    from reprobridge_sdk.run.evidence import LOG_NAME  # noqa: PLC0415 - heavy
    from reprobridge_sdk.run.process import out_of_memory  # noqa: PLC0415 - heavy
    from reprobridge_sdk.run.runner import run as run_launchers  # noqa: PLC0415 - heavy

    record = chosen.record
    assert record is not None
    launcher = facts.launcher(record.launcher)
    if launcher is None:
        return None
    # the budget's time left, when it is shorter than the launcher's own timeout
    bounded = budget is not None and (launcher.timeout is None or budget < launcher.timeout)
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
                timeout=budget if bounded else None,
                limits=resources,
            )
        except UsageError:  # e.g. the sandbox cannot work here (N011): the auditor's problem
            raise
        except Exception as exc:  # the artifact cannot be run at all: unconfirmed
            chosen.findings.append(
                finding("A059", f"run {record.run_id} could not be re-executed: {exc}", file=where)
            )
            return None
        again = [r for r in summary.results if r.record.launcher == launcher.id]
        failure = again[-1].record.failure if again else None
        if (
            resources is not None
            and resources.memory is not None
            and failure is not None
            and failure.reason == "exit-status"
            and out_of_memory(again[-1].record.exit_code, again[-1].run_dir / LOG_NAME)
        ):
            return "memory"  # the committee's budget, not the artifact, stopped it
    if bounded and failure is not None and failure.reason == "timeout":
        return "time"  # the committee's budget, not the artifact, stopped it
    outcome.executed += 1
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
        return None
    fresh = {m.task: m.value for m in again[-1].record.measurements}
    rows, found = _compare(chosen, fresh, launcher.deterministic, limits)
    outcome.comparisons[chosen.rel or "."] = rows
    chosen.findings.extend(found)
    outcome.mismatches += bool(found)
    return None
