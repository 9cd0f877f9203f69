"""How the auditor checks the evidence of each attempt beyond each run's own files: the run
ledger, the signatures (with trusted keys) and the re-execution of a sample (with
``--rerun``), and the checks of the references that need the audit's intervals (A071, A080
to A083). See spec §11.2 ("Re-execution", "Plausible references") and §10.4."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.model.audit import AuditOptions, RerunComparison, ShiftSkipped, ShiftTest
from reprobridge_sdk.signing.keys import TrustedKeys

from .attempts import Attempt
from .duplicates import settle_by_rerun
from .facts import ManifestFacts
from .interval import Interval
from .plausibility import plausibility, provenance_mismatches
from .rerun import Limits, rerun_runs
from .trust import check_attempt_ledger, check_signatures
from .verdict import Judgement
from .verify import ArtifactFacts, RunEvidence

__all__: list[str] = []


#: Attempt findings that taint only the tasks of their launchers (deleted runs, a shift).
_BY_LAUNCHER = frozenset({"A052", "A070"})


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
    #: C027 of re-execution, per attempt (the auditor keeps one per launcher).
    suggestions: list[Finding] = field(default_factory=list)

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
        where=trust.where,
        budget=trust.budget_time,
        memory=trust.budget_memory,
        cpus=trust.budget_cpus,
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
    checks.suggestions.extend(outcome.suggestions)
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
    #: What the progress lines name first: the table's row, or the artifact's path.
    where: str | None = None
    #: The time budget of each attempt's re-execution, in seconds (a submission's budget).
    budget_time: float | None = None
    #: The memory (bytes) and cores each re-executed run may use (a submission's budget).
    budget_memory: int | None = None
    budget_cpus: int | None = None


def _committee_signed(checks: _Checks, trust: _Trust | None) -> frozenset[Path]:
    """The runs signed by a committee-role key."""
    roles = trust.keys.committee() if trust is not None and trust.keys is not None else ()
    return frozenset(path for path, signer in checks.signers.items() if signer in roles)
