"""The audit report: what the independent auditor concludes (spec §11 ``audit``).

Reports are not part of the manifest. They are JSON with their own schema
(``schemas/audit-1.0.schema.json``). Numbers that are not finite (an interval that does not
exist, an infinite z-score) are ``null``: JSON has no NaN.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import SpecModel, since
from .batch import Budget

__all__ = [
    "AUDIT_VERSION",
    "AttemptSummary",
    "AuditFinding",
    "AuditOptions",
    "AuditResult",
    "AuditTable",
    "Badges",
    "CheckSignature",
    "IcmlVerdict",
    "IntervalResult",
    "LabelRate",
    "ReasonCount",
    "RerunComparison",
    "RunCheck",
    "ShiftSkipped",
    "ShiftTest",
    "TableClaim",
    "TableRow",
    "TaskAttempt",
    "TaskAudit",
    "Verdict",
]

#: Version of the audit report format.
AUDIT_VERSION = "1.0"

Verdict = Literal[
    "compatible", "incompatible", "toy", "not-executed", "invalid-evidence", "inconclusive"
]
IcmlVerdict = Literal["verified", "falsified", "toy", "inconclusive"]


class AuditFinding(SpecModel):
    """A finding in its JSON form (code from the registry, family A for the auditor)."""

    code: str
    severity: Literal["error", "warning", "info"]
    message: str
    path: str = ""
    file: str | None = None
    line: int | None = None
    col: int | None = None
    hint: str | None = None
    spec: str | None = None


class AuditOptions(SpecModel):
    """The options the result is a function of."""

    level: float = Field(gt=0, lt=1)
    floor: float = Field(ge=0)
    holm: bool = False
    curation: bool = False
    expect_head: str | None = Field(
        default=None,
        description="The ledger head the author submitted (--expect-head).",
        json_schema_extra=since("1.1"),
    )
    trusted: list[str] | None = Field(
        default=None,
        description="Names of the trusted signers (--trust KEYS); null: signatures unchecked.",
        json_schema_extra=since("1.1"),
    )
    rerun: int | Literal["all"] | None = Field(
        default=None,
        description="Runs re-executed per attempt (--rerun); null: none.",
        json_schema_extra=since("1.1"),
    )
    rerun_seed: int = Field(
        default=0,
        description="Seed of the choice of runs to re-execute (drawn at the audit unless given).",
        json_schema_extra=since("1.1"),
    )
    rerun_seed_drawn: bool = Field(
        default=False,
        description="The sample seed was drawn from the OS's entropy at the audit, secret until "
        "the report (false: given by the auditor, --rerun-seed).",
        json_schema_extra=since("1.1"),
    )


class IntervalResult(SpecModel):
    """A task's compatibility interval (``defined`` false: there is none)."""

    defined: bool
    n: int = Field(ge=0)
    mean: float | None = None
    sd: float | None = None
    half_width: float | None = None
    low: float | None = None
    high: float | None = None
    t: float | None = None
    floor_bound: bool = False
    floor_only: bool = False
    non_finite: bool = False
    floor_alone: Literal["one-reference", "identical-references"] | None = Field(
        default=None,
        description="The interval is the floor alone, with no spread of the references in it: "
        "one reference observation, or references all equal; null otherwise.",
        json_schema_extra=since("1.1"),
    )


class RerunComparison(SpecModel):
    """A re-executed run's value of one task beside the recorded one."""

    task: str = Field(description="The task's id.")
    recorded: float | None = Field(description="The value the run's record gives.")
    rerun: float | None = Field(description="The value of the re-execution; null: none.")
    difference: float | None = Field(description="recorded - rerun; null: no value.")
    tolerance: float = Field(ge=0, description="The same-seed tolerance; 0: exactly.")
    basis: Literal["deterministic", "no-interval", "declared", "spread", "half-width"] = Field(
        description="Where the tolerance comes from (spec audit.md#re-execution)."
    )
    held: bool = Field(description="|difference| <= tolerance (exactly equal when 0).")
    spread: float | None = Field(
        default=None,
        ge=0,
        description="basis spread: the observed same-seed spread, |first - second| of the "
        "launcher's run re-executed twice, that the tolerance is a multiple of; else null.",
        json_schema_extra=since("1.1"),
    )


class ShiftTest(SpecModel):
    """The paired t test of one task's differences (recorded - re-executed) over a sample."""

    task: str = Field(description="The task's id.")
    launcher: str | None = Field(
        default=None,
        description="The launcher whose re-executed runs alone were tested (a task measured "
        "by several launchers' runs); null: every re-executed run of the task.",
        json_schema_extra=since("1.1"),
    )
    n: int = Field(ge=2, description="Re-executed runs with a finite difference.")
    mean_difference: float | None = Field(default=None, description="Mean of the differences.")
    sd: float | None = Field(
        default=None, description="Sample standard deviation of the differences (divisor n - 1)."
    )
    t: float | None = Field(default=None, description="null: infinite (no spread, mean not 0).")
    p: float = Field(ge=0, le=1, description="Two-sided, Student's t with n - 1 df.")
    level: float = Field(gt=0, lt=1, description="The test's level (0.01).")
    shifted: bool = Field(description="p < level: A070.")


class ShiftSkipped(SpecModel):
    """A task whose shift test (A070) was not run: too few re-executed runs for it."""

    task: str = Field(description="The task's id.")
    n: int = Field(ge=0, description="Re-executed runs with a finite difference (under 4).")
    recorded: int = Field(ge=0, description="Succeeded runs of the attempt recording a value.")
    reason: str = Field(description="Why the shift test was not run, for a reader.")


class RunCheck(SpecModel):
    """The auditor's check of one run directory of an attempt."""

    run: str = Field(description="The run directory, relative to the attempt directory.")
    run_id: str | None = None
    launcher: str | None = None
    seed: int | None = None
    scope: Literal["smoke", "scored"] | None = None
    status: str | None = None
    values: dict[str, float | None] = Field(
        default_factory=dict, description="Task id -> value re-extracted by the auditor."
    )
    valid: bool = Field(description="No error-level finding: the evidence can be believed.")
    findings: list[AuditFinding] = Field(default_factory=list)
    signer: str | None = Field(
        default=None,
        description="With --trust: the trusted signer whose signature holds.",
        json_schema_extra=since("1.1"),
    )
    reran: bool = Field(
        default=False,
        description="The run was re-executed (--rerun).",
        json_schema_extra=since("1.1"),
    )
    rerun: list[RerunComparison] = Field(
        default_factory=list,
        description="Per recorded task: recorded and re-executed values, difference, tolerance.",
        json_schema_extra=since("1.1"),
    )


class TaskAttempt(SpecModel):
    """The verdict on one task in one attempt."""

    attempt: str = Field(description="The attempt's label.")
    verdict: Verdict
    icml: IcmlVerdict
    value: float | None = Field(default=None, description="Aggregated over seeds; null if none.")
    values: list[float | None] = Field(default_factory=list, description="Per counted seed.")
    seeds: list[int | None] = Field(default_factory=list)
    runs: list[str] = Field(default_factory=list, description="Run directories that count.")
    z: float | None = None
    p: float | None = None
    p_adjusted: float | None = Field(default=None, description="Holm-adjusted, with --holm.")
    reasons: list[AuditFinding] = Field(default_factory=list)


class TaskAudit(SpecModel):
    """One task: its interval and its verdict in every attempt."""

    id: str
    title: str | None = None
    metric: str
    direction: Literal["higher", "lower"]
    kind: Literal["full", "evaluation"]
    seeds: int = Field(ge=1, description="Seeds the task's statistic is over.")
    published: float | None = Field(default=None, description="Value or midpoint of the range.")
    observations: list[float | None] = Field(default_factory=list)
    stable: bool | None = None
    interval: IntervalResult
    published_compatible: bool | None = None
    attempts: list[TaskAttempt] = Field(default_factory=list)
    success_rate: float | None = Field(
        default=None, description="Share of attempts with the verdict compatible."
    )
    disagreement: bool = Field(
        default=False, description="Independent attempts gave different verdicts."
    )


class CheckSignature(SpecModel):
    """Who signed the clean-room check record, as the audit's verification of its envelope
    (``runs/check.dsse.json``) yields it (spec audit.md#badges)."""

    state: Literal["signed", "unverified", "untrusted", "unsigned", "tampered"] = Field(
        description="signed: a trusted key's signature holds (--trust); unverified: an "
        "envelope about this record, no keys to check its signature against; untrusted: "
        "signed by a key the KEYS file does not hold (K003); unsigned: no envelope; "
        "tampered: an envelope that is malformed, fails or is about other bytes (K002, K004, "
        "K007)."
    )
    signer: str | None = Field(
        default=None, description="The trusted key's name in the KEYS file; null: none verified."
    )
    key_id: str | None = Field(
        default=None,
        description="The key id of the signature: the verified one, else the "
        "envelope's first; null: none.",
    )
    role: str | None = Field(
        default=None, description="The trusted key's role in the KEYS file (author, committee)."
    )
    code: str | None = Field(
        default=None, description="The finding that keeps the signature from counting."
    )


class Badges(SpecModel):
    """Badge-style summary; the criteria are stated in ``criteria``."""

    available: bool
    functional: bool
    reproduced: bool
    reusable: bool = Field(
        default=False,
        description="ACM Artifacts Evaluated - Reusable: documented launchers, a guide without "
        "placeholders, a licence and a recorded clean-room check.",
        json_schema_extra=since("1.1"),
    )
    results: Literal["reproduced", "consistent", "not-reproduced"] | None = Field(
        default=None,
        description="The results' state: 'reproduced' (committee-made runs, the badge), "
        "'consistent' (results consistent, author evidence: every rule holds but runs the "
        "committee made are missing) or 'not-reproduced'; null: an older report.",
        json_schema_extra=since("1.1"),
    )
    criteria: dict[str, str] = Field(default_factory=dict)
    reasons: dict[str, list[AuditFinding]] = Field(
        default_factory=dict,
        description="Badge -> why it is withheld (absent: awarded).",
        json_schema_extra=since("1.1"),
    )
    evidence: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Badge -> the evidence behind it: files, or '<attempt>/<run directory>'.",
        json_schema_extra=since("1.1"),
    )
    checks: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Badge -> the checks it rests on, as spec anchors ('part.md#anchor').",
        json_schema_extra=since("1.1"),
    )
    check_record: CheckSignature | None = Field(
        default=None,
        description="Who signed the clean-room check record (runs/check.json) the reusable "
        "badge reads; null: no record that can be read.",
        json_schema_extra=since("1.1"),
    )


class LabelRate(SpecModel):
    """Success rate of one label (agent, model or person) over its attempts."""

    label: str
    attempts: int = Field(ge=0)
    success_rate: float | None = None


class AttemptSummary(SpecModel):
    """One attempt: its runs and its verdict counts."""

    label: str = Field(description="Unique within the audit (a repeated label gets '#2', ...).")
    group: str = Field(description="The label as given: attempts of one agent share it.")
    path: str
    runs: list[RunCheck] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    success_rate: float | None = None
    findings: list[AuditFinding] = Field(
        default_factory=list,
        description="Findings about the attempt as a whole (its run ledger).",
        json_schema_extra=since("1.1"),
    )
    ledger_head: str | None = Field(
        default=None,
        description="The head of the attempt's run ledger; null: no ledger.",
        json_schema_extra=since("1.1"),
    )
    reran: int = Field(
        default=0,
        ge=0,
        description="Runs re-executed (--rerun).",
        json_schema_extra=since("1.1"),
    )
    rerun_mismatches: int = Field(
        default=0,
        ge=0,
        description="Re-executed runs that did not hold up (A058, A059).",
        json_schema_extra=since("1.1"),
    )
    shift_tests: list[ShiftTest] = Field(
        default_factory=list,
        description="Per task with enough re-executed runs: the paired t test of a shift (A070).",
        json_schema_extra=since("1.1"),
    )
    shift_skipped: list[ShiftSkipped] = Field(
        default_factory=list,
        description="Per task with 4 or more recorded runs but fewer re-executed (a --rerun "
        "sample under 4): the shift test (A070) was not run.",
        json_schema_extra=since("1.1"),
    )
    committee: bool = Field(
        default=False,
        description="The committee's own attempt (labelled 'committee', or every run signed by "
        "a committee key): shown apart, never counted in the authors' success.",
        json_schema_extra=since("1.1"),
    )


class AuditResult(SpecModel):
    """The audit of one artifact (a pure function of the artifact, the evidence, the options)."""

    audit_version: str = AUDIT_VERSION
    artifact: str
    title: str
    path: str
    options: AuditOptions
    findings: list[AuditFinding] = Field(
        default_factory=list, description="Artifact-level findings (code and lock on disk)."
    )
    tasks: list[TaskAudit] = Field(default_factory=list)
    attempts: list[AttemptSummary] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict, description="Verdicts over all pairs.")
    icml_counts: dict[str, int] = Field(default_factory=dict)
    task_success: float | None = Field(
        default=None, description="Mean over tasks of the per-task success rate."
    )
    labels: list[LabelRate] = Field(default_factory=list)
    label_spread: float | None = Field(
        default=None, description="Max minus min of the labels' success rates."
    )
    disagreements: int = Field(default=0, ge=0)
    validation: dict[str, int] = Field(
        default_factory=dict,
        description="The validator's findings on the artifact by severity (error, warning, info).",
        json_schema_extra=since("1.1"),
    )
    badges: Badges
    passed: bool = Field(description="The audit's exit status is 0 (see the CLI's docs).")


class ReasonCount(SpecModel):
    """Findings of one code, counted: the first one's severity and message stand for all."""

    code: str
    severity: Literal["error", "warning", "info"]
    count: int = Field(ge=1)
    message: str = Field(description="The first finding's message.")


class TableClaim(SpecModel):
    """One claim of a table row: a task in one attempt, with its verdict and why."""

    task: str
    attempt: str
    verdict: Verdict
    icml: IcmlVerdict
    value: float | None = None
    low: float | None = Field(default=None, description="The interval's lower bound.")
    high: float | None = Field(default=None, description="The interval's upper bound.")
    half_width: float | None = Field(
        default=None, description="The interval's half-width: the precision numbers show."
    )
    floor_alone: Literal["one-reference", "identical-references"] | None = None
    code: str | None = Field(
        default=None, description="The decisive finding's code; null: none (compatible)."
    )
    message: str | None = None


class SubmissionInfo(SpecModel):
    """What the batch file says of a row's submission (spec audit.md#submissions)."""

    id: str = Field(description="The submission's id (also the row's label).")
    trust: str = Field(
        description="The trust policy: 'unsigned allowed', or 'signed by' the KEYS file and "
        "signers; 'ledger only' when the file states no policy."
    )
    expect_head: str | None = Field(
        default=None, description="The ledger head the row's attempts were checked against."
    )
    reviewers: list[str] = Field(default_factory=list, description="Who reviews it.")
    budget: Budget | None = Field(
        default=None, description="Recorded and shown; re-execution is not stopped by it."
    )
    notes: str | None = Field(default=None, description="The committee's notes.")
    decision: Literal["accept", "reject", "pending"] = Field(
        default="pending", description="The committee's decision."
    )


class TableRow(SpecModel):
    """One artifact of a committee's table, audited or not."""

    label: str = Field(
        description="Unique in the table: the artifact's path relative to the batch folder "
        "(the deepest folder holding every artifact given); a path given twice gets ' #2'."
    )
    path: str = Field(description="The artifact's path as given (or the archive's).")
    archive_sha256: str | None = Field(
        default=None, description="The SHA-256 of the packed archive the artifact came from."
    )
    artifact: str | None = Field(default=None, description="The manifest's id; null: unloaded.")
    status: Literal["passed", "failed", "error"] = Field(
        description="passed/failed: the audit's verdict; error: the artifact could not be loaded."
    )
    tasks: int = Field(default=0, ge=0)
    task_success: float | None = None
    validation: dict[str, int] = Field(
        default_factory=dict, description="Validation findings by severity."
    )
    runs: int = Field(default=0, ge=0)
    invalid_runs: int = Field(default=0, ge=0, description="Runs with an error-level finding.")
    stale_runs: int = Field(
        default=0, ge=0, description="Runs made with other code or another lock (A009, A011)."
    )
    reran: int = Field(default=0, ge=0)
    rerun_mismatches: int = Field(default=0, ge=0)
    committee_runs: int = Field(
        default=0,
        ge=0,
        description="Runs the committee made: re-executed in this audit, or in the "
        "committee's own attempts.",
        json_schema_extra=since("1.1"),
    )
    committee_success: float | None = Field(
        default=None,
        description="The committee's attempts' task-level success, apart from the authors' "
        "(task_success); null: no attempt of the committee's.",
        json_schema_extra=since("1.1"),
    )
    badges: Badges | None = None
    findings: list[AuditFinding] = Field(
        default_factory=list, description="Why an artifact could not be loaded."
    )
    why: AuditFinding | None = Field(
        default=None,
        description="The decisive finding: why the row is not passed with every badge; "
        "null: passed with every badge.",
        json_schema_extra=since("1.1"),
    )
    claims: list[TableClaim] = Field(
        default_factory=list,
        description="One per task and attempt, in the audit's order.",
        json_schema_extra=since("1.1"),
    )
    withheld: dict[str, list[ReasonCount]] = Field(
        default_factory=dict,
        description="Badge -> why it is withheld, grouped by code with counts.",
        json_schema_extra=since("1.1"),
    )
    submission: SubmissionInfo | None = Field(
        default=None,
        description="The batch file's entry of this row (audit --table --submissions).",
        json_schema_extra=since("1.1"),
    )
    evidence: Literal["signed", "unsigned", "tampered"] | None = Field(
        default=None,
        description="tampered: evidence that contradicts itself (a broken ledger, a head or "
        "an archive digest that differs, a bad signature, a re-execution that differs); "
        "unsigned: runs without a trusted signature (an alarm only where the policy requires "
        "one); signed: every run signed by a trusted key. null: not audited.",
        json_schema_extra=since("1.1"),
    )
    signers: dict[str, int] = Field(
        default_factory=dict,
        description="Who signed the row's runs: each trusted signer whose signature holds "
        "(runs[].signer), in first-seen order, with its number of runs; empty when no "
        "signature was checked or none holds.",
        json_schema_extra=since("1.1"),
    )


class AuditTable(SpecModel):
    """A committee's table: the audits of many artifacts and their averages."""

    audit_version: str = AUDIT_VERSION
    options: AuditOptions
    artifacts: list[AuditResult] = Field(default_factory=list)
    errors: list[AuditFinding] = Field(
        default_factory=list, description="Artifacts that could not be audited at all."
    )
    task_level: float | None = Field(
        default=None, description="Mean over all tasks of all artifacts of the success rate."
    )
    paper_macro: float | None = Field(
        default=None, description="Mean over artifacts of their task_success."
    )
    labels: list[LabelRate] = Field(default_factory=list)
    label_spread: float | None = None
    rows: list[TableRow] = Field(
        default_factory=list,
        description="One row per artifact given, in order, including those not loaded.",
        json_schema_extra=since("1.1"),
    )
    passed: bool
