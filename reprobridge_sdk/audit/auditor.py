"""``audit()``: the independent auditor's entry point (spec ``audit``).

The result is a pure function of the artifact's files, the evidence's files and the options:
no clock, no state shared with a runner. The one random draw, the seed of the re-execution
sample, is made when the options are (secret until the report, which states it), and a seed
given instead draws the same sample again. Paths in the result are relative to
the attempt directory (runs) or as the caller gave them (attempts, artifact).

Artifact-level findings are the validator's errors (``reprobridge validate``) and the
auditor's own checks of the code and lock on disk (A010, A012); the *available* badge needs
none of them.

Exit status (``AuditResult.passed``, the CLI's exit 0): every task is ``compatible`` in at
least one attempt (the *reproduced* badge) and no attempt has ``invalid-evidence`` for any
task. In curation mode: every task's published value is compatible with its references.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from reprobridge_sdk.api import consumer_view, load
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io.document import Document, load_document
from reprobridge_sdk.loading import manifest_root
from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.model._base import SpecModel
from reprobridge_sdk.model.audit import (
    AttemptSummary,
    AuditFinding,
    AuditOptions,
    AuditResult,
    IntervalResult,
    RerunComparison,
    RunCheck,
    ShiftSkipped,
    ShiftTest,
    TaskAudit,
)
from reprobridge_sdk.signing.keys import TrustedKeys

from .attempts import (
    COMMITTEE_LABEL,
    DEFAULT_ATTEMPT,
    Attempt,
    label_rates,
    mean,
    parse_attempt,
    spread,
    summarize_tasks,
    unique_labels,
)
from .badges import BadgeContext, award
from .clean_room import clean_room_problem
from .duplicates import settle_by_rerun
from .facts import ManifestFacts
from .interval import (
    DEFAULT_FLOOR,
    DEFAULT_LEVEL,
    Interval,
    check_options,
    compatibility_intervals,
    is_stable,
)
from .interval import (
    holm as holm_adjust,
)
from .plausibility import plausibility, provenance_mismatches
from .rerun import Limits, draw_seed, rerun_runs
from .trust import check_attempt_ledger, check_signatures
from .verdict import (
    ICML,
    VERDICTS,
    Judgement,
    PendingScores,
    RunIndex,
    TaskIndex,
    as_audit_finding,
    judge_published,
    judge_task,
    settle_scores,
)
from .verify import (
    ArtifactFacts,
    RunEvidence,
    artifact_facts,
    check_artifact,
    verify_attempt,
)

__all__ = ["audit", "collector_paused", "load_artifact"]

AttemptLike = str | os.PathLike[str] | Attempt

#: Attempt findings that taint only the tasks of their launchers (deleted runs, a shift).
_BY_LAUNCHER = frozenset({"A052", "A070"})
#: Implausible references that fail the audit (spec "plausible-references").
_IMPLAUSIBLE = frozenset({"A080", "A083"})


@dataclass
class _Checks:
    """The ledger, signature and re-execution outcomes of every attempt of one audit."""

    attempt_findings: list[list[Finding]] = field(default_factory=list)
    #: Per attempt: findings that taint the tasks of one launcher (deleted runs, A052).
    by_launcher: list[dict[str, list[Finding]]] = field(default_factory=list)
    heads: list[str | None] = field(default_factory=list)
    executed: list[int] = field(default_factory=list)
    mismatches: list[int] = field(default_factory=list)
    signers: dict[Path, str] = field(default_factory=dict)
    reran: set[Path] = field(default_factory=set)
    comparisons: dict[Path, list[RerunComparison]] = field(default_factory=dict)
    shifts: list[list[ShiftTest]] = field(default_factory=list)
    skipped: list[list[ShiftSkipped]] = field(default_factory=list)

    def taint(self, judgement: Judgement, attempt: int, launchers: set[str]) -> Judgement:
        """Attempt-level evidence errors make the verdict ``invalid-evidence``.

        A broken, reordered or unexpected ledger taints every task of the attempt; a
        deleted run taints the tasks its launcher measures.
        """
        if attempt < 0 or attempt >= len(self.attempt_findings):
            return judgement
        errors = [
            f
            for f in self.attempt_findings[attempt]
            if f.severity is Severity.ERROR and f.code not in _BY_LAUNCHER
        ]
        for launcher in sorted(launchers):
            errors.extend(self.by_launcher[attempt].get(launcher, ()))
        if errors and launchers:
            judgement.verdict = "invalid-evidence"
            judgement.reasons = [*errors, *judgement.reasons]
        return judgement


def _check_trust(
    facts: ArtifactFacts,
    chosen: Sequence[Attempt],
    evidence: Sequence[list[RunEvidence]],
    options: AuditOptions,
    trust: _Trust,
    *,
    intervals: Sequence[Interval],
) -> _Checks:
    """Ledger (always), signatures (with keys) and re-execution (with --rerun) per attempt.

    ``intervals`` are the manifest's tasks' compatibility intervals, in the tasks' order
    (computed once per audit; the re-run tolerances are capped at their half-widths)."""
    checks = _Checks()
    limits = _limits(facts, intervals) if options.rerun is not None else Limits()
    for attempt, runs in zip(chosen, evidence, strict=True):
        check = (
            check_attempt_ledger(
                attempt.path, runs, options.expect_head, required=trust.keys is not None
            )
            if (attempt.path.is_dir())
            else None
        )
        checks.attempt_findings.append(list(check.attempt) if check else [])
        checks.by_launcher.append({k: list(v) for k, v in check.deleted.items()} if check else {})
        checks.heads.append(check.state.head if check and check.state.exists else None)
        if trust.keys is not None:
            for run in runs:
                _planted_is_error(run)
                signer = check_signatures(run, trust.keys, check.state if check else None)
                if signer is not None:
                    checks.signers[run.path] = signer
        checks.shifts.append([])
        checks.skipped.append([])
        checks.executed.append(0)
        checks.mismatches.append(0)
        if options.rerun is not None:
            _rerun_attempt(facts, runs, options=options, trust=trust, limits=limits, checks=checks)
    return checks


def _rerun_attempt(
    facts: ArtifactFacts,
    runs: Sequence[RunEvidence],
    *,
    options: AuditOptions,
    trust: _Trust,
    limits: Limits,
    checks: _Checks,
) -> None:
    """Re-execute the last attempt's sample; its shift findings taint their launchers."""
    outcome = rerun_runs(
        facts,
        runs,
        count=None if options.rerun == "all" else int(options.rerun or 0),
        seed=options.rerun_seed,
        limits=limits,
        env_mode=trust.rerun_env,
        sandbox=trust.rerun_sandbox,
        progress=trust.progress,
        budget=trust.budget_time,
    )
    checks.executed[-1], checks.mismatches[-1] = outcome.executed, outcome.mismatches
    checks.shifts[-1] = outcome.shifts
    checks.skipped[-1] = outcome.skipped
    by_rel = {r.rel or ".": r.path for r in runs}
    checks.reran.update(by_rel[rel] for rel in outcome.chosen)
    for rel, rows in outcome.comparisons.items():
        checks.comparisons[by_rel[rel]] = rows
    # Two seeds re-executed that differ: their byte-identical recorded evidence was copied.
    settle_by_rerun(runs, checks.comparisons)
    checks.attempt_findings[-1].extend(outcome.budget_findings)
    for item, launchers in outcome.shift_findings:
        checks.attempt_findings[-1].append(item)
        for launcher in launchers:
            checks.by_launcher[-1].setdefault(launcher, []).append(item)


def _limits(facts: ArtifactFacts, intervals: Sequence[Interval]) -> Limits:
    """Per task: the interval half-width and the declared same-seed tolerance."""
    widths: dict[str, float | None] = {}
    declared: dict[str, float | None] = {}
    positions: dict[str, int] = {}
    for index, (task, interval) in enumerate(zip(facts.manifest.tasks, intervals, strict=True)):
        widths[task.id] = interval.half_width if interval.defined else None
        declared[task.id] = task.same_seed_tolerance
        positions.setdefault(task.id, index)
    return Limits(widths, declared, positions)


def _wide_tolerances(facts: ArtifactFacts, intervals: Sequence[Interval]) -> list[Finding]:
    """A071 where a declared same-seed tolerance is not below the task's half-width (known
    where the interval is: at the audit, with its level and floor)."""
    found: list[Finding] = []
    for index, (task, interval) in enumerate(zip(facts.manifest.tasks, intervals, strict=True)):
        declared = task.same_seed_tolerance
        if declared is None or not interval.defined or declared < interval.half_width:
            continue
        found.append(
            finding(
                "A071",
                f"task {task.id}: same_seed_tolerance {declared:.6g} is not below the "
                f"interval half-width {interval.half_width:.6g}; re-execution uses the "
                "half-width",
                path=f"/tasks/{index}/same_seed_tolerance",
                hint="declare the spread of two runs with one seed, well below the half-width",
            )
        )
    return found


def _implausible(
    manifest: ManifestFacts,
    intervals: Sequence[Interval],
    evidence: Sequence[Sequence[RunEvidence]],
    *,
    floor: float,
) -> list[Finding]:
    """Implausible references: a domain (A080, A081), a width (A082), a reference that its
    cited run does not give (A083; the runs of every attempt, by run id)."""
    found: list[Finding] = []
    for index, (task, interval) in enumerate(zip(manifest.tasks, intervals, strict=True)):
        found.extend(plausibility(task, index, interval, floor=floor))
    recorded: dict[str, dict[str, float | None]] = {}
    launchers: dict[str, str] = {}
    for runs in evidence:
        for run in runs:
            if run.record is not None:
                launchers.setdefault(run.record.run_id, run.record.launcher)
                values = recorded.setdefault(run.record.run_id, {})
                for measured in run.record.measurements:
                    values.setdefault(measured.task, measured.value)
    aggregates = {
        (launcher.id, m.task): m.aggregate
        for launcher in manifest.launchers
        for m in launcher.measurements
    }
    return found + provenance_mismatches(manifest.tasks, recorded, aggregates, launchers)


def _planted_is_error(run: RunEvidence) -> None:
    """Under ``--trust``, a link or special file in a run folder (A069) taints the run:
    trusted evidence is the folder as the runner left it, with nothing planted in it."""
    for notes in (run.findings, run.run_notes):
        notes[:] = [f.with_severity(Severity.ERROR) if f.code == "A069" else f for f in notes]


def _num(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _interval_result(interval: Interval) -> IntervalResult:
    return IntervalResult(
        defined=interval.defined,
        n=interval.n,
        mean=_num(interval.mean),
        sd=_num(interval.sd),
        half_width=_num(interval.half_width),
        low=_num(interval.low),
        high=_num(interval.high),
        t=_num(interval.t),
        floor_bound=interval.floor_bound,
        floor_only=interval.floor_only,
        non_finite=interval.non_finite,
        floor_alone=_floor_alone(interval),
    )


def _floor_alone(interval: Interval) -> Literal["one-reference", "identical-references"] | None:
    """The interval is the floor alone: one reference, or references all equal."""
    if not interval.defined:
        return None
    if interval.n == 1:
        return "one-reference"
    return "identical-references" if interval.sd == 0 else None


def load_artifact(path: str | os.PathLike[str]) -> ArtifactFacts:
    """Load an artifact for auditing; :class:`ArtifactError` (with findings) if it cannot be.

    The manifest is read once, with the fast, bounded loader of
    :mod:`reprobridge_sdk.io.document` (the audit's validation reuses it), and typed with
    its tasks condensed (:meth:`.facts.ManifestFacts.validate`: accepted or refused as the
    typed manifest is); when that fails, :func:`reprobridge_sdk.api.load` reads it again to
    locate the problems.
    """
    root = manifest_root(path)
    manifest: ManifestFacts | None = None
    view = None
    document: Document | None = None
    try:  # named as the validator names it, so the validation can reuse the document
        document = load_document(root / MANIFEST_NAME, name=str(root / MANIFEST_NAME), root=root)
        if isinstance(document.data, dict) and not any(
            f.severity is Severity.ERROR for f in document.findings
        ):
            view_data, view = consumer_view(document.data)
            manifest = ManifestFacts.validate(view_data)
    except (OSError, ValueError, ArtifactError):
        manifest = None
    if manifest is None:  # load() reads the file again and raises located findings
        return artifact_facts(load(root))
    return replace(check_artifact(root, manifest, forward=view), document=document)


def _options(
    level: float,
    floor: float,
    *,
    holm: bool,
    curation: bool,
    expect_head: str | None = None,
    trust: TrustedKeys | None = None,
    rerun: int | str | None = None,
    rerun_seed: int | None = None,
) -> AuditOptions:
    check_options(level, floor)
    if rerun is not None and rerun != "all" and (not isinstance(rerun, int) or rerun < 1):
        msg = f"--rerun must be a positive number of runs or 'all', not {rerun!r}"
        raise UsageError(msg, [finding("N004", msg, hint="e.g. --rerun 3 or --rerun all")])
    return AuditOptions(
        level=level,
        floor=floor,
        holm=holm,
        curation=curation,
        expect_head=expect_head,
        trusted=sorted(k.name for k in trust.keys.values()) if trust is not None else None,
        rerun=rerun,  # checked above
        # secret until the report: drawn here unless given (a sample that can be reproduced)
        rerun_seed=draw_seed() if rerun_seed is None and rerun is not None else rerun_seed or 0,
        rerun_seed_drawn=rerun_seed is None and rerun is not None,
    )


@dataclass
class _Trust:
    """How the evidence of the attempts is checked beyond each run's files."""

    keys: TrustedKeys | None = None
    rerun_env: str = "cached"
    rerun_sandbox: bool = True
    #: The SHA-256 of the packed archive the committee audited (the archival identifier of
    #: the *available* badge); ``None``: a directory.
    archive_sha256: str | None = None
    #: Given a line of progress during re-execution (the command line prints it on stderr).
    progress: Callable[[str], None] | None = None
    #: The time budget of each attempt's re-execution, in seconds (a submission's budget).
    budget_time: float | None = None


def _verify_attempt(
    facts: ArtifactFacts, attempt: Attempt, cache: ExtractionCache
) -> list[RunEvidence]:
    if not attempt.path.exists():
        return []
    if not attempt.path.is_dir():
        msg = f"attempt {attempt.label}: {attempt.path} is not a directory"
        raise UsageError(msg)
    return verify_attempt(facts, attempt.path, cache)


def _run_check(run: RunEvidence, checks: _Checks) -> RunCheck:
    record = run.record
    return RunCheck(
        signer=checks.signers.get(run.path),
        reran=run.path in checks.reran,
        rerun=checks.comparisons.get(run.path, []),
        run=run.rel or ".",
        run_id=record.run_id if record else None,
        launcher=record.launcher if record else None,
        seed=record.seed if record else None,
        scope=record.scope if record else None,
        status=record.status if record else None,
        values={k: _num(v) if v is not None else None for k, v in run.values.items()},
        valid=run.valid,
        findings=[as_audit_finding(f) for f in run.findings],
    )


def _display_path(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def audit(
    artifact_path: str | os.PathLike[str],
    attempts: Sequence[AttemptLike] | None = None,
    *,
    level: float = DEFAULT_LEVEL,
    floor: float = DEFAULT_FLOOR,
    holm: bool = False,
    curation: bool = False,
    expect_head: str | None = None,
    trust: TrustedKeys | None = None,
    rerun: int | str | None = None,
    rerun_seed: int | None = None,
    rerun_env: str = "cached",
    rerun_sandbox: bool = True,
    archive_sha256: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> AuditResult:
    """Audit the artifact at ``artifact_path`` against the evidence of ``attempts``.

    ``attempts`` are directories of run directories (or ``LABEL=DIR`` strings); by default
    the artifact's ``runs/``. An attempt that is given but does not exist is a
    :class:`UsageError`; a missing default ``runs/`` is an attempt without runs.

    Every attempt's run ledger is checked (``expect_head``: the head the author submitted);
    with ``trust`` every run must be signed by one of its keys; with ``rerun`` (a number of
    runs per launcher and task, or ``"all"``) a sample of each attempt's succeeded runs
    chosen with ``rerun_seed`` (``None``: a secret seed drawn from the OS's entropy, stated
    in the report's options) is re-executed in ``rerun_env`` (in the sandbox unless
    ``rerun_sandbox`` is false) and compared (see :mod:`.rerun`). ``archive_sha256`` is the
    digest of the packed archive the committee unpacked into ``artifact_path``: an archival
    identifier for the *available* badge. ``progress`` is given a line of progress, with an
    estimate of the time left, before and after each re-executed run.
    """
    options = _options(
        level,
        floor,
        holm=holm,
        curation=curation,
        expect_head=expect_head,
        trust=trust,
        rerun=rerun,
        rerun_seed=rerun_seed,
    )
    checking = _Trust(trust, rerun_env, rerun_sandbox, archive_sha256, progress)
    with collector_paused():
        # No reference kept here: _audit releases the manifest's plain data once validated.
        return _audit(
            load_artifact(artifact_path), Path(artifact_path), attempts, options, trust=checking
        )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one artifact's audit; its state is restored
    afterwards, on an exception too (a collector that was off stays off).

    Why: the audit holds the typed manifest (about 17 model objects a task) and every run's
    record while it allocates the result, and each full collection rescans all of them: at 10k
    tasks the collections took about a third of the audit's CPU. Nothing is lost: the audit's
    objects are freed by reference counting as before; only reference cycles (none are made
    per run or per task; an exception's traceback at most) wait until the collector is back,
    which bounds what a hostile artifact can leave behind by the audit's own inputs. Memory
    is unchanged at 10k tasks and 3k runs (the benchmark's peak).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _audit(
    facts: ArtifactFacts,
    artifact_path: Path,
    attempts: Sequence[AttemptLike] | None,
    options: AuditOptions,
    *,
    strict: bool = True,
    trust: _Trust | None = None,
) -> AuditResult:
    manifest = facts.manifest
    root = facts.root
    if attempts is None:
        chosen = [] if options.curation else [Attempt(DEFAULT_ATTEMPT, root / DEFAULT_ATTEMPT)]
    else:
        chosen = [parse_attempt(a) for a in attempts]
        for attempt in chosen if strict else ():
            if not attempt.path.is_dir():
                msg = f"attempt {attempt.label}: no directory {os.fspath(attempt.path)}"
                raise UsageError(msg, [finding("A001", msg, file=os.fspath(attempt.path))])
    names = unique_labels(chosen)
    from reprobridge_sdk.validation import validate_artifact  # noqa: PLC0415 - layer 3, on use

    validation = validate_artifact(
        facts.root.as_posix(), facts.root, facts.root / MANIFEST_NAME, document=facts.document
    )
    # The manifest's plain data is not needed again: let it go before the runs are read.
    facts = replace(facts, document=None)
    cache = ExtractionCache()  # one per audit: each file is parsed once for all its tasks
    evidence = [_verify_attempt(facts, attempt, cache) for attempt in chosen]
    del cache  # the parsed outputs are not read again
    # One interval per task, shared by the re-run widths and the verdicts.
    intervals: list[Interval] = compatibility_intervals(
        (task.observations for task in manifest.tasks),
        level=options.level,
        floor=options.floor,
    )
    checks = _check_trust(facts, chosen, evidence, options, trust or _Trust(), intervals=intervals)
    wide = _wide_tolerances(facts, intervals)
    wide += _implausible(manifest, intervals, evidence, floor=options.floor)

    tasks: list[TaskAudit] = []
    for task, interval in zip(manifest.tasks, intervals, strict=True):
        observations = task.observations
        published = task.published
        tasks.append(
            TaskAudit(
                id=task.id,
                title=task.title,
                metric=task.metric,
                direction=task.direction,
                kind=task.kind,
                seeds=task.seeds,
                published=_num(published) if published is not None else None,
                observations=[_num(x) for x in observations],
                stable=is_stable(observations, published),
                interval=_interval_result(interval),
                published_compatible=(
                    interval.contains(published)
                    if published is not None and interval.defined
                    else None
                ),
            )
        )

    # Judge every (task, attempt); Holm's family is one attempt's tasks.
    columns: list[list[Judgement]] = []
    if options.curation:
        columns.append(
            [
                judge_published(task, intervals[i], tasks[i].published, f"/tasks/{i}")
                for i, task in enumerate(manifest.tasks)
            ]
        )
    by_task = TaskIndex.of(manifest)  # once per audit: tasks x launchers is never rescanned
    pending: PendingScores = []  # every column's scores in one batch call each
    for name, runs in zip(names, evidence, strict=True):
        by_launcher = RunIndex.of(runs)
        columns.append(
            [
                checks.taint(
                    judge_task(
                        facts,
                        task,
                        i,
                        interval=intervals[i],
                        runs=runs,
                        label=name,
                        tasks=by_task,
                        by_launcher=by_launcher,
                        pending=pending,
                    ),
                    len(columns) - (1 if options.curation else 0),
                    by_task.launchers(task.id),
                )
                for i, task in enumerate(manifest.tasks)
            ]
        )
        settle_scores(pending)
    del intervals, pending  # judged: about 1 KB a task less while the results are built
    alpha = 1.0 - options.level
    verdict_counts: list[dict[str, int]] = []
    for column in columns:
        adjusted = holm_adjust([j.p for j in column]) if options.holm else [None] * len(column)
        counted: dict[str, int] = dict.fromkeys(VERDICTS, 0)
        # Each judgement is released as its result is made (last first: a pop is O(1)).
        for i in range(len(column) - 1, -1, -1):
            judgement, p_adj = column.pop(), adjusted[i]
            if (
                p_adj is not None
                and judgement.verdict == "incompatible"
                and p_adj >= alpha
                and any(r.code in {"A029", "A031"} for r in judgement.reasons)
            ):
                judgement.verdict = "compatible"
                judgement.reasons.append(
                    finding(
                        "A030",
                        f"Holm-adjusted p = {p_adj:.4g} >= {alpha:.4g}",
                        path=f"/tasks/{i}",
                    )
                )
            counted[judgement.verdict] += 1
            tasks[i].attempts.append(judgement.done(p_adj))
        verdict_counts.append(counted)
    # the committee's own attempts: so labelled, or made of runs signed by a committee key
    signed = _committee_signed(checks, trust)
    committee = {
        name
        for attempt, name, runs in zip(chosen, names, evidence, strict=True)
        if attempt.label == COMMITTEE_LABEL or (runs and all(r.path in signed for r in runs))
    }
    summarize_tasks(tasks, committee)

    summaries: list[AttemptSummary] = []
    for index, (attempt, name, runs) in enumerate(zip(chosen, names, evidence, strict=True)):
        counts = verdict_counts[index + (1 if options.curation else 0)]
        summaries.append(
            AttemptSummary(
                label=name,
                group=attempt.label,
                path=_display_path(attempt.path, root),
                runs=[_run_check(r, checks) for r in runs],
                counts=counts,
                success_rate=counts["compatible"] / len(tasks) if tasks else None,
                findings=[as_audit_finding(f) for f in checks.attempt_findings[index]],
                ledger_head=checks.heads[index],
                reran=checks.executed[index],
                rerun_mismatches=checks.mismatches[index],
                shift_tests=checks.shifts[index],
                shift_skipped=checks.skipped[index],
                committee=name in committee,
            )
        )

    counts = dict.fromkeys(VERDICTS, 0)
    icml_counts = dict.fromkeys(("verified", "falsified", "toy", "inconclusive"), 0)
    for task_audit in tasks:
        for verdict in task_audit.attempts:
            counts[verdict.verdict] += 1
            icml_counts[ICML[verdict.verdict]] += 1

    by_severity = {"error": 0, "warning": 0, "info": 0}
    for item in validation:
        by_severity[item.severity.value] += 1
    artifact_findings: list[AuditFinding] = [
        as_audit_finding(f) for f in validation if f.severity is Severity.ERROR
    ] + [as_audit_finding(f) for f in facts.findings]
    artifact_findings += [as_audit_finding(f) for f in _shared_runs(manifest, evidence)]
    artifact_findings += [as_audit_finding(f) for f in _placeholders(validation)]
    artifact_findings += [as_audit_finding(f) for f in wide]
    badges = award(
        BadgeContext(
            manifest=manifest,
            artifact_findings=artifact_findings,
            attempts=list(zip(names, evidence, strict=True)),
            attempt_findings=checks.attempt_findings,
            tasks=tasks,
            trusted=options.trusted is not None,
            committee=signed.union(
                checks.reran,
                (
                    r.path
                    for name, runs in zip(names, evidence, strict=True)
                    if name in committee
                    for r in runs
                ),
            ),
            archive_sha256=trust.archive_sha256 if trust is not None else None,
            clean_room=clean_room_problem(root),
        )
    )
    reproduced = all(
        any(a.verdict == "compatible" for a in t.attempts if a.attempt != "published")
        for t in tasks
    ) and bool(chosen)
    attempt_errors = any(
        f.severity is Severity.ERROR for found in checks.attempt_findings for f in found
    )
    placeholder = any(r.code == "P003" for r in badges.reasons.get("available", []))
    implausible = any(f.code in _IMPLAUSIBLE for f in artifact_findings)
    if options.curation:
        # The artifact itself is judged: any placeholder (A046) keeps it from passing.
        passed = (
            all(t.published_compatible for t in tasks)
            and not implausible
            and not any(f.code == "A046" for f in artifact_findings)
        )
    else:
        passed = (
            not implausible
            and reproduced
            and counts["invalid-evidence"] == 0
            and not attempt_errors
            and not placeholder  # a placeholder artifact never passes (spec audit.md#badges)
        )
    rates = label_rates([(summaries, tasks)])
    result = AuditResult(
        artifact=manifest.artifact.id,
        title=manifest.artifact.title,
        path=artifact_path.as_posix(),
        options=options,
        findings=artifact_findings,
        tasks=tasks,
        attempts=summaries,
        counts=counts,
        icml_counts=icml_counts,
        task_success=mean(t.success_rate for t in tasks),
        labels=rates,
        label_spread=spread(rates),
        disagreements=sum(t.disagreement for t in tasks),
        validation=by_severity,
        badges=badges,
        passed=passed,
    )
    forward = facts.forward
    if forward is not None and forward.changed:  # identity unless set-aside items shift
        _in_document(result, forward.to_document)
    return result


def _in_document(value: object, to_document: Callable[[str], str]) -> None:
    """Point the auditor's own findings in ``value`` into the document, not the consumer's
    view of a newer-minor manifest (spec "forward-compatibility"): where elements were set
    aside, list indices shift. Findings with a position (the validator's) already point
    into the document; a record's pointers (``/code_tree_digest``) are left alone by
    ``to_document``, which only shifts the lists that lost items."""
    if isinstance(value, AuditFinding):
        if value.line is None:
            value.path = to_document(value.path)
    elif isinstance(value, SpecModel):
        for name in type(value).model_fields:
            _in_document(getattr(value, name), to_document)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _in_document(item, to_document)
    elif isinstance(value, dict):
        for item in value.values():
            _in_document(item, to_document)


def _committee_signed(checks: _Checks, trust: _Trust | None) -> frozenset[Path]:
    """The runs signed by a committee-role key."""
    roles = trust.keys.committee() if trust is not None and trust.keys is not None else ()
    return frozenset(path for path, signer in checks.signers.items() if signer in roles)


def _placeholders(validation: Sequence[Finding]) -> list[Finding]:
    """A046 when the validator found a scaffold's placeholders (P codes); the badge rule
    ``placeholders`` (:mod:`.badges`) withholds "functional" and "reproduced" on it."""
    pointers = sorted({f.path for f in validation if f.code.startswith("P")})
    if not pointers:
        return []
    return [
        finding(
            "A046",
            f"{len(pointers)} placeholder(s) remain, e.g. {pointers[0]}",
            path=pointers[0],
            hint="replace them (`reprobridge validate` lists them as P findings)",
        )
    ]


def _shared_runs(
    manifest: ManifestFacts, evidence: Sequence[Sequence[RunEvidence]]
) -> list[Finding]:
    """A045: audited runs that the reference observations cite (they judge themselves)."""
    cited = {run for task in manifest.tasks for run in task.cited}
    audited = {r.record.run_id for runs in evidence for r in runs if r.record is not None}
    shared = sorted(cited & audited)
    if not shared:
        return []
    return [
        finding(
            "A045",
            f"{len(shared)} audited run(s) are also reference observations: {', '.join(shared[:3])}"
            + (" ..." if len(shared) > 3 else ""),
            path="/tasks",
            hint="audit runs other than the reference runs (e.g. a fresh attempt directory)",
        )
    ]
