"""Reference observations from recorded runs (``reprobridge references add``).

Every run is verified as the auditor verifies it, and nothing is written unless all pass
(C012, C013, C021). A repetition's value is the one the audit gives the task
(:func:`reprobridge_sdk.audit.verdict.judge_task`). Spec: ``spec/authoring.md#references-add``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.api import ArtifactDir, load
from reprobridge_sdk.audit.facts import TaskFacts
from reprobridge_sdk.audit.interval import DEFAULT_FLOOR, compatibility_interval
from reprobridge_sdk.audit.plausibility import plausibility
from reprobridge_sdk.audit.verdict import judge_task
from reprobridge_sdk.audit.verify import (
    ArtifactFacts,
    RunEvidence,
    RunRecord,
    artifact_facts,
    check_run,
    discover_runs,
    verify_attempt,
)
from reprobridge_sdk.authoring.codebase import require_version
from reprobridge_sdk.authoring.determinism import suggest_deterministic
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.model.evidence import RECORD_NAME
from reprobridge_sdk.model.task import Observation, Provenance, ProvenanceRun, Task
from reprobridge_sdk.run.evidence import record_environment

__all__ = [
    "ReferenceResult",
    "ReferencesError",
    "Repetition",
    "add_references",
    "find_runs",
    "repetition",
]


class ReferencesError(ArtifactError):
    """The runs cannot become reference observations; ``findings`` (C codes) say why."""


@dataclass
class ReferenceResult:
    """What :func:`add_references` wrote: observations added per task, runs skipped."""

    added: dict[str, list[Observation]] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: Implausible references after the change (A080-A082 of the audit, spec
    #: "plausible-references", with the default level and floor), as warnings: written all
    #: the same, since the values are what the runs measured; the audit judges them.
    warnings: list[Finding] = field(default_factory=list)
    #: C027 (information): launchers whose runs of one seed, given more than once, are
    #: identical, and that could declare ``deterministic: true`` (spec "same-seed-runs").
    suggestions: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class _Source:
    """One argument: a single run directory, or an attempt (a directory of run directories)."""

    name: str
    path: Path
    runs: list[Path]
    attempt: bool


def _sources(root: Path, names: Sequence[str | os.PathLike[str]]) -> list[_Source]:
    found: list[_Source] = []
    for name in names:
        path = Path(name)
        if not path.exists() and (root / "runs" / path).is_dir():
            path = root / "runs" / path
        if (path / RECORD_NAME).is_file():
            found.append(_Source(os.fspath(name), path, [path], attempt=False))
        elif path.is_dir():
            inner = discover_runs(path)
            if not inner:
                raise _error("C012", f"{name}: no run directory (no {RECORD_NAME})")
            found.append(_Source(os.fspath(name), path, inner, attempt=True))
        else:
            raise _error("C012", f"{name}: no such run")
    return found


def find_runs(root: Path, names: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The run directories ``names`` stand for (see the module docstring), in order."""
    return [run for source in _sources(root, names) for run in source.runs]


def _error(code: str, message: str, *, path: str = "") -> ReferencesError:
    return ReferencesError(message, [finding(code, message, path=path)])


def _hardware(run_dir: Path, record: RunRecord) -> str | None:
    env = record_environment(run_dir, record)  # embedded, or named by digest (1.1)
    if env is None:
        return None
    parts = [env.cpu or env.machine]
    if env.gpus:
        parts.append(", ".join(gpu.name for gpu in env.gpus))
    return "; ".join(p for p in parts if p) or None


#: The auditor's reasons for a value it cannot re-extract (a missing or failing plugin).
_UNREAD = frozenset({"A061", "A062"})


@dataclass
class Repetition:
    """One attempt's observation of a statistic over several seeds (see the module docstring).

    ``value`` is the auditor's value for the task in that attempt (``None``: no run of the
    attempt gave one); ``runs`` are the counted runs in seed order; ``problems`` the C020 and C022
    findings that keep the repetition from being an observation.
    """

    value: float | None
    runs: list[RunEvidence]
    problems: list[Finding]


def repetition(
    facts: ArtifactFacts, task: Task, index: int, runs: Sequence[RunEvidence], *, name: str
) -> Repetition:
    """The observation that the verified ``runs`` of one attempt (named ``name``) give
    ``task`` (the ``index``-th), judged by the auditor's own
    :func:`~reprobridge_sdk.audit.verdict.judge_task`, then checked for completeness."""
    judgement = judge_task(
        facts,
        TaskFacts.of(task),
        index,
        interval=compatibility_interval([]),
        runs=runs,
        label=name,
    )
    by_rel = {run.rel: run for run in runs}
    counted = [by_rel[rel] for rel in judgement.runs if rel in by_rel]
    pointer = f"/tasks/{index}/statistic/seeds"
    unread = [r for r in judgement.reasons if r.code in _UNREAD]
    by_where = {f"{run.rel}/{RECORD_NAME}".lstrip("/"): run for run in runs}
    if unread:
        # the value cannot be re-extracted here (an extractor plugin missing or failing)
        return Repetition(
            None,
            counted,
            [
                finding(
                    "C012",
                    f"{name}: run {r.file or '.'} cannot be a reference here ({r.code} "
                    f"{r.message})",
                    file=str(by_where[r.file].path / RECORD_NAME) if r.file in by_where else name,
                    path=pointer,
                    hint=r.hint,
                )
                for r in unread
            ],
        )
    if judgement.value is None or not counted or counted[0].record is None:
        return Repetition(None, [], [])
    problems: list[Finding] = []

    for reason in judgement.reasons:
        if reason.code == "A033":
            problems.append(
                finding(
                    "C022",
                    f"{name}: {reason.message} (run {reason.file or '.'}); "
                    "a repetition has one run per seed",
                    file=str(by_rel[reason.file].path / RECORD_NAME)
                    if reason.file in by_rel
                    else name,
                    path=pointer,
                    hint="keep one run per seed in each repetition's directory",
                )
            )
    launcher = facts.manifest.launcher(counted[0].record.launcher)
    declared = list(launcher.seeds) if launcher is not None else []
    got = [run.record.seed for run in counted if run.record is not None]
    missing = [seed for seed in declared if seed not in got]
    if missing or len(got) < task.statistic.seeds:
        problems.append(
            finding(
                "C020",
                f"{name}: {len(got)} of {task.statistic.seeds} seeds gave a value"
                + (f"; missing seed(s) {missing}" if missing else ""),
                file=name,
                path=pointer,
                hint="a repetition is one successful run of every declared seed",
            )
        )
    return Repetition(judgement.value, counted, problems)


def _common(values: Sequence[str | None]) -> str | None:
    distinct = set(values)
    return values[0] if len(distinct) == 1 else None


def _repetition_provenance(counted: Sequence[RunEvidence], source: str) -> Provenance:
    records = [run.record for run in counted if run.record is not None]
    first_run = min(
        (run for run in counted if run.record is not None),
        key=lambda run: run.record.started_at if run.record is not None else "",
    )
    first = first_run.record
    assert first is not None
    return Provenance(
        source=source,
        date=first.started_at[:10],
        hardware=_hardware(first_run.path, first),
        code_tree_digest=_common([r.code_tree_digest for r in records]),
        lock_digest=_common([r.lock_digest for r in records]),
        runs=[
            ProvenanceRun(
                run=run.record.run_id,
                seed=run.record.seed,
                record_sha256=file_sha256(run.path / RECORD_NAME),
            )
            for run in counted
            if run.record is not None
        ],
    )


def _cited(observation: Observation) -> list[str]:
    provenance = observation.provenance
    ids = [item.run for item in provenance.runs or ()]
    return [provenance.run, *ids] if provenance.run else ids


def _check_runs(facts: ArtifactFacts, evidence: Sequence[RunEvidence]) -> list[Finding]:
    """C012 and C013 for every run of ``source`` (all must be usable references)."""
    problems: list[Finding] = []
    declared = facts.manifest.codebase.tree_digest
    for run in evidence:
        directory = run.path
        rel = directory.name
        record = run.record
        if record is not None and declared is not None and record.code_tree_digest != declared:
            problems.append(
                finding(
                    "C013",
                    f"run {rel} used code {record.code_tree_digest}, not the declared tree",
                    file=str(directory / RECORD_NAME),
                    hint="rerun the references on the code as recorded",
                )
            )
            continue
        errors = [f for f in run.findings if f.severity is Severity.ERROR]
        if record is not None and errors and {f.code for f in errors} == {"A037"}:
            problems.append(
                finding(
                    "C021",
                    f"run {rel} has seed {record.seed}, which launcher {record.launcher} "
                    "does not declare",
                    file=str(directory / RECORD_NAME),
                    path="/seed",
                    hint="run the launcher's declared seeds only (without --seeds)",
                )
            )
            continue
        if record is None or not run.valid or not run.succeeded:
            detail = "; ".join(f"{f.code} {f.message}" for f in run.findings[:3])
            state = record.status if record is not None else "unreadable"
            problems.append(
                finding(
                    "C012",
                    f"run {rel} cannot be a reference ({state}{': ' + detail if detail else ''})",
                    file=str(directory / RECORD_NAME),
                )
            )
    return problems


def add_references(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    runs: Sequence[str | os.PathLike[str]],
    *,
    task: str | None = None,
    replace: bool = False,
    source: str = "reference run",
) -> ReferenceResult:
    """Turn recorded runs into reference observations with provenance; save the manifest."""
    art = artifact_dir if isinstance(artifact_dir, ArtifactDir) else load(artifact_dir)
    manifest = art.manifest
    if task is not None and task not in {t.id for t in manifest.tasks}:
        raise _error("C014", f"there is no task {task!r}", path="/tasks")
    sources = _sources(art.root, runs)
    found = _Gathered(artifact_facts(art), manifest.tasks, task, source)
    for item in sources:
        _gather(found, item)
    if found.problems:
        msg = f"{len(found.problems)} problem(s) keep the runs from references"
        raise ReferencesError(msg, found.problems)
    if not found.values:
        raise _error(
            "C014", "the runs measured no value for any task" + (f" {task!r}" if task else "")
        )
    result = ReferenceResult()
    problems: list[Finding] = []
    for task_id, observations in found.values.items():
        target = found.tasks[task_id]
        if replace:
            reference = target.reference
            reference.observations = list(observations)
            target.reference = reference
            result.replaced.append(task_id)
            result.added[task_id] = list(observations)
        else:
            where = f"/tasks/{found.position[task_id]}/reference"
            problems.extend(_add_observations(target, observations, result, where=where))
    if problems:
        raise ReferencesError(f"{len(problems)} problem(s) keep the runs from references", problems)
    for task_id in found.values:
        target = found.tasks[task_id]
        interval = compatibility_interval(o.value for o in target.reference.observations)
        facts_of = TaskFacts.of(target)
        implausible = plausibility(facts_of, found.position[task_id], interval, floor=DEFAULT_FLOOR)
        result.warnings.extend(f.with_severity(Severity.WARNING) for f in implausible)
    result.suggestions = suggest_deterministic(
        manifest, found.evidence, file=str(art.manifest_path)
    )
    require_version(art, "1.1")  # the provenance digests are format 1.1 fields
    art.save()
    return result


class _Gathered:
    """The observations read from the given runs, by task, and the problems found."""

    def __init__(
        self, facts: ArtifactFacts, tasks: Sequence[Task], task: str | None, source: str
    ) -> None:
        self.facts, self.task, self.source = facts, task, source
        self.task_list = list(tasks)
        self.tasks = {t.id: t for t in tasks}
        self.position = {t.id: i for i, t in enumerate(tasks)}
        self.problems: list[Finding] = []
        self.values: dict[str, list[Observation]] = {}
        self.in_call: dict[str, str] = {}  # run id -> the repetition that holds it
        self.evidence: list[RunEvidence] = []  # every run given, verified

    def add(self, task_id: str, observation: Observation) -> None:
        self.values.setdefault(task_id, []).append(observation)


def _gather(found: _Gathered, item: _Source) -> None:
    """Read the observations of one named run or attempt."""
    if item.attempt:
        evidence = verify_attempt(found.facts, item.path)
    else:
        evidence = [check_run(found.facts, item.path, item.path.name)]
    found.evidence.extend(evidence)
    bad = _check_runs(found.facts, evidence)
    if bad:
        found.problems.extend(bad)
        return
    if item.attempt:
        # Tasks over several seeds: the attempt is one repetition, one observation per task.
        for target in found.task_list:
            if target.statistic.seeds > 1 and found.task in {None, target.id}:
                _gather_repetition(found, item, target, evidence)
    for run in evidence:
        _gather_run(found, item, run)


def _gather_repetition(
    found: _Gathered, item: _Source, target: Task, evidence: Sequence[RunEvidence]
) -> None:
    """One observation of a task over several seeds, from the runs of one attempt."""
    index = found.position[target.id]
    counted = repetition(found.facts, target, index, evidence, name=item.name)
    if counted.problems:
        found.problems.extend(counted.problems)
        return
    if counted.value is None:
        return
    for run_id in [r.record.run_id for r in counted.runs if r.record is not None]:
        other = found.in_call.get(run_id)
        if other is not None and other != item.name:
            found.problems.append(
                finding(
                    "C023",
                    f"{item.name}: run {run_id} is also part of repetition {other}",
                    file=item.name,
                    path=f"/tasks/{index}/reference",
                    hint="each repetition is its own directory of runs",
                )
            )
        found.in_call[run_id] = item.name
    provenance = _repetition_provenance(counted.runs, found.source)
    found.add(target.id, Observation(value=counted.value, provenance=provenance))


def _gather_run(found: _Gathered, item: _Source, run: RunEvidence) -> None:
    """The observations of one run, one per task over a single seed."""
    record = run.record
    assert record is not None  # _check_runs refused unreadable records
    digest = file_sha256(run.path / RECORD_NAME)
    for measured in record.measurements:
        if measured.value is None or found.task not in {None, measured.task}:
            continue
        target = found.tasks.get(measured.task)
        if target is None:
            continue
        if target.statistic.seeds > 1:
            if not item.attempt:
                found.problems.append(_one_run_over_seeds(found, target, run))
            continue
        value = run.values.get(measured.task, measured.value)
        if value is None:
            continue
        provenance = Provenance(
            source=found.source,
            date=record.started_at[:10],
            hardware=_hardware(run.path, record),
            run=record.run_id,
            record_sha256=digest,
            code_tree_digest=record.code_tree_digest,
            lock_digest=record.lock_digest,
        )
        found.add(measured.task, Observation(value=value, provenance=provenance))


def _one_run_over_seeds(found: _Gathered, target: Task, run: RunEvidence) -> Finding:
    return finding(
        "C015",
        f"task {target.id!r} reports a statistic over "
        f"{target.statistic.seeds} seeds: one run is not one observation",
        path=f"/tasks/{found.position[target.id]}/statistic",
        file=str(run.path / RECORD_NAME),
        hint=(
            "give a directory holding one run of every declared seed "
            "(e.g. `reprobridge run --runs-dir DIR`): it is one "
            "repetition and one observation"
        ),
    )


def _add_observations(
    target: Task, observations: list[Observation], result: ReferenceResult, *, where: str
) -> list[Finding]:
    """Add the observations that cite runs the task's references do not cite yet; those
    citing only cited runs are skipped, those citing some are a problem (C023)."""
    reference = target.reference
    cited = {run_id for o in reference.observations for run_id in _cited(o)}
    fresh: list[Observation] = []
    problems: list[Finding] = []
    for observation in observations:
        mine = _cited(observation)
        if mine and all(run_id in cited for run_id in mine):
            result.skipped.extend(mine)
        elif any(run_id in cited for run_id in mine):
            problems.extend(
                finding(
                    "C023",
                    f"run {run_id} is already cited by another observation of task {target.id!r}",
                    path=where,
                    hint="use --replace to rebuild the task's references",
                )
                for run_id in mine
                if run_id in cited
            )
        else:
            fresh.append(observation)
    reference.observations = [*reference.observations, *fresh]
    result.added[target.id] = fresh
    target.reference = reference
    return problems
