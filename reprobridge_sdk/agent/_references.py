"""The Distiller's reference runs, sized and bounded by the build's time limit.

Rules:

* **An observation** is one repetition of a launcher's seeds (a claim over several seeds:
  its seeds :data:`REFERENCE_JOBS` at a time, in one attempt directory), one run of its seed
  (:data:`REFERENCE_JOBS` runs at a time), or one run of an unseeded command (one at a time:
  the runner runs a launcher without seeds once per call). Each run is taken to last as long
  as the probe run did. The probe run of a launcher with one seed or none is the first
  observation when its record holds the claims' values (``have``): only the rest are run.
* **How many fit** (:func:`references_that_fit`): ``wanted`` when they all fit in the time
  left, else the most that do.
* **The Reviewer's share.** The Reviewer's clean-room check runs each scored launcher once
  more, in a fresh environment (``reserve`` seconds, estimated by the caller). The
  Distiller keeps that share when at least :data:`MIN_REFERENCE_RUNS` observations fit
  beside it; otherwise the references come first and the Reviewer may not fit the scored
  runs (B016 before it, the artifact packaged). The check's ``setup`` (its environment, its
  smoke runs: the part of the share that is no scored run) is always kept: references cut
  by the limit leave the claim not run, and an artifact whose claim is not run still gets
  its review.
* **Waves** (:func:`take_references`): the runs go in waves (the runs side by side). Each
  run's timeout is the time left before the Packager's share (:data:`PACKAGING_SECONDS`),
  so no run passes the limit. An observation starts only while it fits, judged by the
  slowest wave so far (runs side by side on a loaded machine take longer than the probe
  alone): within the time left less the Reviewer's share once the minimum is taken, within
  the time left before. A run the limit cut ends the waves, and an observation counts only
  when every run of it ended in time. A run that failed otherwise is kept, so that
  ``references add`` refuses it with its reason (B009).
* **Side by side only while it pays** (:func:`contended`): a wave of runs side by side that
  takes nearly as long as the same runs one after another (a training that keeps every core
  busy by itself, as multithreaded PyTorch, TensorFlow or BLAS do, slows several-fold beside
  another) turns the waves that follow into one run at a time, each expected to take the
  probe's time again.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.run.results import RunResult
from reprobridge_sdk.run.runner import run

__all__ = [
    "MIN_REFERENCE_RUNS",
    "PACKAGING_SECONDS",
    "REFERENCE_JOBS",
    "REFERENCE_RUNS",
    "SIDE_BY_SIDE_GAIN",
    "Taken",
    "contended",
    "references_that_fit",
    "references_to_take",
    "take_references",
]

#: Reference runs per claim (the audit needs at least two; the study used five).
REFERENCE_RUNS = 5

#: The fewest reference runs a build takes when its time limit cannot hold
#: :data:`REFERENCE_RUNS`: with two, the interval's t factor (12.7) makes almost any value
#: compatible.
MIN_REFERENCE_RUNS = 3

#: Runs of one launcher the runner makes at once (``run -j``).
REFERENCE_JOBS = 2

#: Seconds of a build's time limit kept for what follows the Distiller's runs (the Packager).
PACKAGING_SECONDS = 30.0

#: Runs side by side pay only when their wave takes less than this share of the same runs
#: one after another.
SIDE_BY_SIDE_GAIN = 0.8


def contended(seconds: float, runs: int, alone: float) -> bool:
    """Whether a wave of ``runs`` side by side that took ``seconds`` gained too little over
    the same runs one after another, each as long as ``alone`` (the probe's time)."""
    return runs > 1 and alone > 0 and seconds > SIDE_BY_SIDE_GAIN * runs * alone


def references_that_fit(
    run_seconds: float,
    seeds: int,
    remaining: float | None,
    wanted: int = REFERENCE_RUNS,
    *,
    side_by_side: int = REFERENCE_JOBS,
) -> int:
    """How many reference observations fit in ``remaining`` seconds (None: no limit), each
    a repetition of ``seeds`` runs of ``run_seconds`` (one run for a single seed), with
    ``side_by_side`` runs at once (1 for an unseeded command): ``wanted`` when they all fit,
    else the most that do."""
    if remaining is None:
        return wanted
    fitting = 0
    for count in range(1, wanted + 1):
        waves = (
            count * math.ceil(seeds / REFERENCE_JOBS)
            if seeds > 1
            else math.ceil(count / side_by_side)
        )
        if waves * run_seconds > remaining:
            break
        fitting = count
    return fitting


def references_to_take(
    run_seconds: float,
    seeds: int,
    remaining: float | None,
    wanted: int,
    share: float | None,
    *,
    side_by_side: int = REFERENCE_JOBS,
    have: int = 0,
    setup: float = 0.0,
) -> tuple[int, bool]:
    """How many more observations to take, ``have`` in hand (the probe run), and whether
    the Reviewer's ``share`` of seconds is kept (None: no share asked): kept when the rest of
    ``min(wanted, MIN_REFERENCE_RUNS)`` fits beside it; else the references come first, as
    many as fit in ``remaining`` less the check's ``setup``."""
    floor = min(wanted, MIN_REFERENCE_RUNS) - have
    more = max(wanted - have, 0)
    if share is not None:
        beside = references_that_fit(
            run_seconds,
            seeds,
            None if remaining is None else remaining - share,
            more,
            side_by_side=side_by_side,
        )
        if beside >= floor:
            return beside, True
    first = None if remaining is None else remaining - setup
    return references_that_fit(run_seconds, seeds, first, more, side_by_side=side_by_side), False


@dataclass
class Taken:
    """The reference runs taken: what ``references add`` reads (``arguments``: run
    directories, or attempt directories of repetitions), every run directory, and whether
    the time limit stopped the waves before the count asked for."""

    arguments: list[str] = field(default_factory=list)
    directories: list[Path] = field(default_factory=list)
    cut: bool = False

    @property
    def observations(self) -> int:
        return len(self.arguments)


@dataclass
class _Clock:
    """When the next observation may start, each run's timeout, and how many runs go side
    by side."""

    deadline: float | None
    reserve: float
    keep_reserve: bool
    alone: float  # the probe's time: one run alone
    wave: float = 0.0  # the slowest wave so far (the probe's time to start with)
    jobs: int = REFERENCE_JOBS
    have: int = 0  # observations in hand before the waves (the probe run)
    setup: float = 0.0  # the part of ``reserve`` always kept: no run may take it

    def __post_init__(self) -> None:
        self.wave = max(self.wave, self.alone)

    def left(self) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic() - PACKAGING_SECONDS - self.setup

    def may_start(self, waves: int, have: int) -> bool:
        left = self.left()
        if left is None:
            return True
        minimum = have + self.have >= MIN_REFERENCE_RUNS
        share = max(self.reserve - self.setup, 0.0) if self.keep_reserve and minimum else 0.0
        return left > 0 and waves * self.wave + share <= left

    def timeout(self) -> float | None:
        left = self.left()
        return None if left is None else max(left, 1.0)

    def ran(self, seconds: float, runs: int) -> None:
        if contended(seconds, runs, self.alone):
            self.jobs = 1
            self.wave = self.alone
        else:
            self.wave = max(self.wave, seconds)


def _cut(results: Sequence[RunResult], deadline: float | None) -> bool:
    """Whether the time limit stopped one of ``results`` (its timeout, not the launcher's)."""
    if deadline is None:
        return False
    return any(
        r.record.failure is not None and r.record.failure.reason == "timeout" for r in results
    )


def take_references(
    root: Path,
    launcher: str,
    seeds: Sequence[int] | None,
    wanted: int,
    *,
    took: float,
    deadline: float | None,
    reserve: float = 0.0,
    keep_reserve: bool = False,
    repetitions: Path,
    sandbox: bool = False,
    have: int = 0,
    setup: float = 0.0,
) -> Taken:
    """Run up to ``wanted`` reference observations of ``launcher`` in waves bounded by
    ``deadline`` (see the module docstring). ``seeds``: the launcher's seeds (several: a
    repetition of them per observation, in ``repetitions/rep-N``; one: that seed again;
    None: the unseeded command again). ``took``: the probe run's seconds; ``have``: the
    observations in hand (the probe run), counted toward the minimum; ``setup``: the
    seconds of ``reserve`` that no run may take."""
    clock = _Clock(deadline, reserve, keep_reserve, took, have=have, setup=setup)
    taken = Taken()
    if seeds is not None and len(seeds) > 1:
        if repetitions.exists():
            shutil.rmtree(repetitions)
        for number in range(1, wanted + 1):
            if not clock.may_start(math.ceil(len(seeds) / clock.jobs), taken.observations):
                taken.cut = True
                break
            target = repetitions / f"rep-{number}"
            made: list[RunResult] = []
            pending = list(seeds)
            while pending:
                chunk, pending = pending[: clock.jobs], pending[clock.jobs :]
                made += _wave(root, launcher, clock, chunk, sandbox, runs_dir=target)
                if _cut(made, deadline):
                    break
            if _cut(made, deadline):
                taken.cut = True
                break
            taken.arguments.append(str(target))
            taken.directories += [r.run_dir for r in made]
        return taken
    while taken.observations < wanted:
        count = 1 if seeds is None else min(clock.jobs, wanted - taken.observations)
        if not clock.may_start(1, taken.observations):
            taken.cut = True
            break
        again = None if seeds is None else [seeds[0]] * count
        made = _wave(root, launcher, clock, again, sandbox)
        kept = [r for r in made if not _cut([r], deadline)]
        taken.arguments += [str(r.run_dir) for r in kept]
        taken.directories += [r.run_dir for r in kept]
        if len(kept) < len(made):
            taken.cut = True
            break
    return taken


def _wave(  # noqa: PLR0917 - a private helper of take_references
    root: Path,
    launcher: str,
    clock: _Clock,
    seeds: list[int] | None,
    sandbox: bool,
    runs_dir: Path | None = None,
) -> list[RunResult]:
    """One wave of runs side by side, each bounded by the time left; the clock learns its
    duration."""
    begin = time.monotonic()
    summary = run(
        root,
        [launcher],
        seeds=seeds,
        runs_dir=runs_dir,
        jobs=clock.jobs,
        sandbox=sandbox,
        timeout=clock.timeout(),
    )
    clock.ran(time.monotonic() - begin, 1 if seeds is None else len(seeds))
    return list(summary.results)
