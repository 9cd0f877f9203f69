"""Re-execution of recorded runs: the only defence against fabricated logs.

A secret-seeded sample of each attempt's succeeded runs (:func:`draw_seed`, stated in the
report afterwards) is run again and each value compared with the recorded one within the
same-seed tolerance (:func:`tolerance`; A058, A059); a paired t test per launcher and task
finds a shift that passes run by run (A070). Spec audit.md#re-execution.
"""

from __future__ import annotations

import math
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.audit import RerunComparison, ShiftSkipped, ShiftTest

from ._evidence import RunRecord
from ._execute import Execution, Executor, Progress, same_machine, snapshot_of, values
from ._studentt import t_two_sided
from .duplicates import same_seed_suggestions
from .interval import finite
from .verify import ArtifactFacts, RunEvidence

__all__ = [
    "DEFAULT_SAMPLE",
    "SHIFT_LEVEL",
    "SHIFT_MIN_RUNS",
    "SPREAD_MULTIPLE",
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
#: The same-seed tolerance, with nothing declared, is this multiple of the spread of one run
#: executed twice: with Gaussian same-seed noise, |recorded - re-executed| over that spread is
#: a standard Cauchy variable, past 100 with probability (2/pi) atan(1/100), about 0.64 %.
SPREAD_MULTIPLE = 100.0


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
    #: C027 where every same-seed pair the re-execution met agrees byte for byte.
    suggestions: list[Finding] = field(default_factory=list)


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


Basis = Literal["deterministic", "no-interval", "declared", "spread", "half-width"]


def tolerance(
    deterministic: bool,
    declared: float | None,
    half_width: float | None,
    spread: float | None = None,
) -> tuple[float, Basis]:
    """The same-seed tolerance of a re-execution and its basis (see the module); ``spread``:
    the observed same-seed spread of the launcher's repeated run, None when not measured."""
    if deterministic:
        return 0.0, "deterministic"
    if half_width is None or not math.isfinite(half_width):
        return 0.0, "no-interval"
    if declared is not None:
        return min(declared, half_width), "declared"
    if spread is not None:
        return min(SPREAD_MULTIPLE * spread, half_width), "spread"
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
    chosen: RunEvidence,
    fresh: Mapping[str, float | None],
    deterministic: bool,
    limits: Limits,
    spreads: Mapping[str, float],
) -> tuple[list[RerunComparison], list[Finding]]:
    """The comparison of every recorded value of ``chosen`` with the re-executed one;
    ``spreads``: task -> the same-seed spread observed for its launcher."""
    record = chosen.record
    assert record is not None
    where = f"{chosen.rel}/{RECORD_NAME}".lstrip("/")
    rows: list[RerunComparison] = []
    found: list[Finding] = []
    for index, measured in enumerate(record.measurements):
        if measured.value is None:
            continue
        spread = spreads.get(measured.task)
        allowed, basis = tolerance(
            deterministic,
            limits.declared.get(measured.task),
            limits.half_widths.get(measured.task),
            spread,
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
                spread=spread if basis == "spread" else None,
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
                    hint="the recorded log was not produced by this experiment (a launcher "
                    "whose same-seed values differ between machines declares its tasks' "
                    "same_seed_tolerance)",
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
    test the sample for a shift (A070 in ``shift_findings``).

    A launcher held to no declared tolerance has its first sampled run that succeeds executed
    once more (the repeat, counted in no total) for its same-seed spread. ``progress`` gets a
    line before the first execution and after each, naming ``where`` (the artifact's id
    without it). ``budget`` (seconds) bounds the whole re-execution, ``memory`` (bytes) each
    process's address space and ``cpus`` its cores; a run they stop, or left when the budget
    is spent, is not re-executed (``over_budget``, A094). Spec audit.md#re-execution."""
    from reprobridge_sdk.run.process import ResourceLimits  # noqa: PLC0415 - heavy

    outcome = RerunOutcome()
    sample = choose(runs, count, seed)
    if sandbox and sample:
        from reprobridge_sdk.run.runner import require_sandbox  # noqa: PLC0415 - heavy

        require_sandbox()
    run = Executor(
        facts,
        env_mode=env_mode,
        sandbox=sandbox,
        budget=budget,
        resources=ResourceLimits(memory=memory, cpus=cpus) if memory or cpus else None,
    )
    name = facts.manifest.artifact.id
    track = Progress(f"{where or name}: re-executing {name}", progress, run.started)
    # launchers whose spread is wanted -> the position of their last sampled run
    wanted = {_launcher_of(r): i for i, r in enumerate(sample) if _wants_spread(facts, r, limits)}
    track.start(len(sample) + len(wanted))
    got = _execute(sample, run, track, wanted, outcome)
    out_of_memory = got.out_of_memory
    timed_out = [rel for rel in outcome.over_budget if rel not in out_of_memory]
    if timed_out and budget is not None:
        outcome.budget_findings.append(_over_budget(budget, timed_out))
    if out_of_memory and memory is not None:
        outcome.budget_findings.append(_over_memory(memory, out_of_memory))
    outcome.suggestions = same_seed_suggestions(facts.manifest.launchers, got.pairs)
    launchers = _compare_all(facts, sample, got, limits, outcome)
    _shifts(outcome, launchers, limits, _recorded_counts(runs))
    return outcome


@dataclass
class _Sample:
    """What the executions of a sample gave: each re-executed run's values, each repeated
    launcher's spreads (task -> spread) and the runs that ran out of memory."""

    fresh: dict[str, Mapping[str, float | None]] = field(default_factory=dict)
    spreads: dict[str, dict[str, float]] = field(default_factory=dict)
    out_of_memory: list[str] = field(default_factory=list)
    #: Launcher -> its same-seed pairs: a recording and its re-execution, a run and its repeat.
    pairs: dict[str, list[tuple[RunRecord, RunRecord]]] = field(default_factory=dict)
    #: Run -> the record of its (first) re-execution that succeeded, condensed.
    records: dict[str, RunRecord] = field(default_factory=dict)
    #: Run -> whether that re-execution ran on the kind of machine the recording names.
    same_machine: dict[str, bool] = field(default_factory=dict)


def _launcher_of(run: RunEvidence) -> str:
    record = run.record
    assert record is not None
    return record.launcher


def _execute(
    sample: Sequence[RunEvidence],
    run: Executor,
    track: Progress,
    wanted: dict[str, int],
    outcome: RerunOutcome,
) -> _Sample:
    """Execute each sampled run once (A059 for one that fails), and the first of each
    ``wanted`` launcher's runs that succeeds once more."""
    got = _Sample()
    for position, chosen in enumerate(sample):
        rel = chosen.rel or "."
        done = run(chosen)
        if done.stopped is not None:
            outcome.over_budget.append(rel)
            if done.stopped == "memory":
                got.out_of_memory.append(rel)
        else:
            outcome.chosen.append(rel)
            values = _settle(chosen, done, outcome)
            if values is not None and done.record is not None and chosen.record is not None:
                again = RunRecord.of(done.record)
                got.fresh[rel] = values
                got.records[rel] = again
                got.same_machine[rel] = same_machine(
                    snapshot_of(chosen.path, chosen.record), done.environment
                )
                got.pairs.setdefault(_launcher_of(chosen), []).append((chosen.record, again))
        if done.started or done.stopped is None:  # not a run the spent budget left out
            track.step(chosen)
        _repeat(chosen, position, run=run, track=track, wanted=wanted, got=got)
    return got


def _repeat(
    chosen: RunEvidence,
    position: int,
    *,
    run: Executor,
    track: Progress,
    wanted: dict[str, int],
    got: _Sample,
) -> None:
    """The repeat of ``chosen`` (at ``position`` in the sample) when it is its wanted
    launcher's first run that succeeded: the spread of its two executions."""
    launcher = _launcher_of(chosen)
    rel = chosen.rel or "."
    if launcher not in wanted:
        return
    if rel not in got.fresh:
        if wanted[launcher] == position:  # the launcher's last sampled run: none to repeat
            del wanted[launcher]
            track.total -= 1
        return
    del wanted[launcher]
    again = run(chosen)
    if again.record is not None and again.record.status == "succeeded":
        got.spreads[launcher] = _spreads(got.fresh[rel], values(again.record))
        got.pairs[launcher].append((got.records[rel], RunRecord.of(again.record)))
    if again.started:
        track.step(chosen, again=True)
    else:  # the budget was spent
        track.total -= 1


def _wants_spread(facts: ArtifactFacts, run: RunEvidence, limits: Limits) -> bool:
    """Whether ``run``'s launcher is held to the observed spread: not deterministic, and a
    task its record gives has an interval and no declared tolerance."""
    record = run.record
    assert record is not None
    launcher = facts.launcher(record.launcher)
    if launcher is None or launcher.deterministic:
        return False
    for measured in record.measurements:
        width = limits.half_widths.get(measured.task)
        if (
            width is not None
            and math.isfinite(width)
            and limits.declared.get(measured.task) is None
        ):
            return True
    return False


def _spreads(
    first: Mapping[str, float | None], second: Mapping[str, float | None]
) -> dict[str, float]:
    """Task -> |first - second| where both executions gave a finite value."""
    out: dict[str, float] = {}
    for task, one in first.items():
        two = second.get(task)
        if one is not None and two is not None and math.isfinite(one) and math.isfinite(two):
            out[task] = abs(one - two)
    return out


def _settle(
    chosen: RunEvidence, done: Execution, outcome: RerunOutcome
) -> dict[str, float | None] | None:
    """The values of a re-execution that succeeded; else A059 on ``chosen`` and None."""
    record = chosen.record
    assert record is not None
    where = f"{chosen.rel}/{RECORD_NAME}".lstrip("/")
    if done.error is not None:  # the artifact cannot be run at all: unconfirmed
        chosen.findings.append(
            finding(
                "A059", f"run {record.run_id} could not be re-executed: {done.error}", file=where
            )
        )
        return None
    if not done.started:
        return None
    outcome.executed += 1
    if done.record is None or done.record.status != "succeeded":
        status = done.record.status if done.record is not None else "not started"
        chosen.findings.append(
            finding(
                "A059",
                f"run {record.run_id} was re-executed and did not succeed ({status})",
                file=where,
            )
        )
        outcome.mismatches += 1
        return None
    return values(done.record)


def _compare_all(
    facts: ArtifactFacts,
    sample: Sequence[RunEvidence],
    got: _Sample,
    limits: Limits,
    outcome: RerunOutcome,
) -> dict[str, str]:
    """Compare each re-executed run with its record (A058, A059); run -> its launcher, for
    every sampled run that was re-executed."""
    launchers: dict[str, str] = {}
    for chosen in sample:
        rel = chosen.rel or "."
        record = chosen.record
        assert record is not None
        if rel not in outcome.chosen:
            continue
        launchers[rel] = record.launcher
        if rel not in got.fresh:
            continue
        launcher = facts.launcher(record.launcher)
        deterministic = launcher is not None and launcher.deterministic
        # the spread is the auditor's machine's: it bounds a recording made on another
        # machine (another CPU or BLAS build can change the last bits) no better than h
        spreads = got.spreads.get(record.launcher, {}) if got.same_machine.get(rel) else {}
        rows, found = _compare(chosen, got.fresh[rel], deterministic, limits, spreads)
        outcome.comparisons[rel] = rows
        chosen.findings.extend(found)
        outcome.mismatches += bool(found)
    return launchers


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
