"""A committee's table: many artifacts audited with one set of options (spec audit.md#table).

Each artifact given is one row, in the order given, named by :func:`row_names`; one that
cannot be loaded is a row in ``error`` that counts as failed in every rate. A row's ``why``
is :func:`decisive`, its evidence state :func:`evidence_state`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.findings import Finding
from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.model.audit import (
    AuditFinding,
    AuditOptions,
    AuditResult,
    AuditTable,
    RunCheck,
    TableClaim,
    TableRow,
    TaskAttempt,
)
from reprobridge_sdk.signing.keys import TrustedKeys
from reprobridge_sdk.validation import Mapper

from ._checks import _Trust
from .attempts import Attempt, label_rates, mean, parse_attempt, spread
from .auditor import AttemptLike, _audit, _options, load_artifact
from .badges import TAMPERED
from .interval import DEFAULT_FLOOR, DEFAULT_LEVEL
from .present import reason_counts
from .verdict import audit_finding

__all__ = [
    "TAMPERED",
    "RowPolicy",
    "audit_table",
    "decisive",
    "evidence_state",
    "row_names",
    "table_row",
]

_STALE = {"A009", "A011"}


def _error_row(
    artifact_path: str | os.PathLike[str], message: str, found: Sequence[Finding] = ()
) -> TableRow:
    counts = {"error": 0, "warning": 0, "info": 0}
    for item in found:
        counts[item.severity.value] += 1
    counts["error"] = max(counts["error"], 1)
    why = audit_finding("A001", message, file=os.fspath(artifact_path))
    return TableRow(
        label=os.fspath(artifact_path),
        path=os.fspath(artifact_path),
        status="error",
        validation=counts,
        findings=[why],
        why=why,
    )


def _audit_one(
    artifact_path: str | os.PathLike[str],
    parsed: list[Attempt] | None,
    options: AuditOptions,
    checking: _Trust | None = None,
) -> AuditResult | TableRow:
    """One artifact of a table (top-level so a process pool can run it)."""
    root = Path(artifact_path)
    try:
        facts = load_artifact(root)
        mine = (
            [
                Attempt(a.label, a.path if a.path.is_absolute() else facts.root / a.path)
                for a in parsed
            ]
            if parsed is not None
            else None
        )
        return _audit(facts, root, mine, options, strict=False, trust=checking)
    except ArtifactError as exc:
        return _error_row(artifact_path, exc.message, exc.findings)
    except (RecursionError, MemoryError) as exc:
        # Bounded work per artifact: this artifact is an error of the table, the rest go on.
        what = "recursion depth" if isinstance(exc, RecursionError) else "memory"
        return _error_row(artifact_path, f"auditing this artifact exceeded the {what} allowed")


@dataclass(frozen=True)
class RowPolicy:
    """One row's own settings (a batch file's submission): the ledger head the authors
    submitted, the keys its runs must be signed by (``None``: signatures not required) and
    the budget of its re-execution."""

    expect_head: str | None = None
    trust: TrustedKeys | None = None
    #: The time budget of its re-execution, in seconds (``None``: unbounded).
    budget_time: float | None = None
    #: The memory, in bytes, and the cores each re-executed run may use (``None``: unbounded).
    budget_memory: int | None = None
    budget_cpus: int | None = None


def _row_settings(
    options: AuditOptions, checking: _Trust, policy: RowPolicy | None
) -> tuple[AuditOptions, _Trust]:
    if policy is None:
        return options, checking
    keys = policy.trust
    trusted = sorted(k.name for k in keys.keys.values()) if keys is not None else None
    mine = options.model_copy(update={"expect_head": policy.expect_head, "trusted": trusted})
    return mine, replace(
        checking,
        keys=keys,
        budget_time=policy.budget_time,
        budget_memory=policy.budget_memory,
        budget_cpus=policy.budget_cpus,
    )


def _audit_packed(
    job: tuple[str | os.PathLike[str], list[Attempt] | None, AuditOptions, _Trust | None],
) -> AuditResult | TableRow:
    return _audit_one(*job)


#: Verdicts from the worst: the claim that decides a row's "why" is the first of the worst.
_WORST = ("invalid-evidence", "incompatible", "not-executed", "toy", "inconclusive")


#: Implausible references (spec audit.md#plausible-references): findings of the artifact,
#: located at a task, that its claims and the row's why show.
_IMPLAUSIBLE = frozenset({"A080", "A081", "A082", "A083"})
_TASK_POINTER = re.compile(r"/tasks/(\d+)(?:/|$)")


def _implausible(result: AuditResult) -> dict[int, list[AuditFinding]]:
    """The implausible-reference findings of the artifact, by the task index they are at."""
    out: dict[int, list[AuditFinding]] = {}
    for item in result.findings:
        where = _TASK_POINTER.match(item.path or "") if item.code in _IMPLAUSIBLE else None
        if where is not None:
            out.setdefault(int(where.group(1)), []).append(item)
    return out


def _claim_reason(
    attempt: TaskAttempt, references: Sequence[AuditFinding] = ()
) -> AuditFinding | None:
    """A claim's decisive finding: its first error, else the first implausible-reference
    finding of its task, else its first reason."""
    errors = [r for r in attempt.reasons if r.severity == "error"]
    found = errors or list(references) or attempt.reasons
    return found[0] if found else None


def _claims(result: AuditResult) -> list[TableClaim]:
    out: list[TableClaim] = []
    implausible = _implausible(result)
    for index, task in enumerate(result.tasks):
        iv = task.interval
        for attempt in task.attempts:
            reason = _claim_reason(attempt, implausible.get(index, ()))
            out.append(
                TableClaim(
                    task=task.id,
                    attempt=attempt.attempt,
                    verdict=attempt.verdict,
                    icml=attempt.icml,
                    value=attempt.value,
                    low=iv.low,
                    high=iv.high,
                    half_width=iv.half_width,
                    floor_alone=iv.floor_alone,
                    code=reason.code if reason is not None else None,
                    message=reason.message if reason is not None else None,
                )
            )
    return out


def decisive(result: AuditResult) -> AuditFinding | None:
    """The finding that decides a row, its ``why`` in the order of spec audit.md#table;
    ``None``: passed with the available, functional and reproduced badges."""
    withheld = result.badges.reasons
    placeholder = [r for r in withheld.get("available", []) if r.code == "P003"]
    artifact = [f for f in result.findings if f.severity == "error"]
    attempts = [f for a in result.attempts for f in a.findings if f.severity == "error"]
    for found in (placeholder, artifact, attempts):
        if found:
            return found[0]
    pairs = [a for t in result.tasks for a in t.attempts]
    for verdict in _WORST:
        for attempt in pairs:
            if attempt.verdict == verdict:
                reason = _claim_reason(attempt)
                if reason is not None:
                    return reason
    references = [f for found in _implausible(result).values() for f in found]
    if references:
        return references[0]
    reasons = [r for b in ("reproduced", "functional", "available") for r in withheld.get(b, [])]
    # what the authors must fix first; the committee's own pending runs (A084) last
    return next((r for r in reasons if r.code != "A084"), reasons[0] if reasons else None)


def evidence_state(result: AuditResult) -> str:
    """``tampered`` (an error of :data:`TAMPERED` anywhere, a badge's reasons included),
    ``signed`` (signatures required and every run signed) or ``unsigned`` (spec
    audit.md#submissions)."""
    runs = [r for a in result.attempts for r in a.runs]
    found = [
        *result.findings,
        *(f for a in result.attempts for f in a.findings),
        *(f for r in runs for f in r.findings),
        *(f for items in result.badges.reasons.values() for f in items),
    ]
    if any(f.code in TAMPERED and f.severity == "error" for f in found):
        return "tampered"
    if result.options.trusted is not None and runs and all(r.signer for r in runs):
        return "signed"
    return "unsigned"


def _committee_success(result: AuditResult) -> float | None:
    """The mean over tasks of the share of the committee's attempts that found it
    compatible; ``None`` without an attempt of the committee's."""
    mine = {a.label for a in result.attempts if a.committee}
    if not mine:
        return None
    shares = [
        sum(v.verdict == "compatible" for v in verdicts) / len(verdicts)
        for verdicts in ([a for a in t.attempts if a.attempt in mine] for t in result.tasks)
        if verdicts
    ]
    return sum(shares) / len(shares) if shares else None


def _row(result: AuditResult, path: str) -> TableRow:
    runs = [r for a in result.attempts for r in a.runs]
    return TableRow(
        label=result.artifact,
        path=path,
        artifact=result.artifact,
        status="passed" if result.passed else "failed",
        tasks=len(result.tasks),
        task_success=result.task_success,
        validation=dict(result.validation),
        runs=len(runs),
        invalid_runs=sum(not r.valid for r in runs),
        stale_runs=sum(any(f.code in _STALE for f in r.findings) for r in runs),
        reran=sum(a.reran for a in result.attempts),
        rerun_mismatches=sum(a.rerun_mismatches for a in result.attempts),
        committee_runs=sum(len(a.runs) if a.committee else a.reran for a in result.attempts),
        committee_success=_committee_success(result),
        badges=result.badges,
        why=decisive(result),
        claims=_claims(result),
        withheld={k: reason_counts(v) for k, v in result.badges.reasons.items() if v},
        evidence=evidence_state(result),
        signers=_signers(runs),
    )


def _signers(runs: Sequence[RunCheck]) -> dict[str, int]:
    """Each trusted signer of ``runs`` whose signature holds, first seen first, with its runs."""
    counts: dict[str, int] = {}
    for run in runs:
        if run.signer is not None:
            counts[run.signer] = counts.get(run.signer, 0) + 1
    return counts


def table_row(result: AuditResult) -> TableRow:
    """The row of one audit, as in a table of one artifact (the CSV of ``audit``)."""
    row = _row(result, result.path)
    row.label = row_names([result.path])[0]
    return row


def _where(path: str | os.PathLike[str]) -> Path:
    """The artifact a path names, absolute, links not followed (a manifest names its folder)."""
    full = Path(os.path.normpath(Path(path).absolute()))
    return full.parent if full.name == MANIFEST_NAME else full


def row_names(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Each path relative to the batch folder, the deepest folder holding every artifact
    given, with ``/`` separators; a name that repeats (a path given twice) gets `` #2``, ...
    A name that would be empty (the file system's root) is the path as given."""
    where = [_where(p) for p in paths]
    if not where:
        return []
    batch = os.path.commonpath([w.parent for w in where])
    names: list[str] = []
    seen: dict[str, int] = {}
    for given, full in zip(paths, where, strict=True):
        rel = os.path.relpath(full, batch)
        name = Path(rel).as_posix() if rel not in {".", ""} else os.fspath(given)
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return names


def audit_table(
    artifact_paths: Sequence[str | os.PathLike[str]],
    attempts: Sequence[AttemptLike] | None = None,
    *,
    level: float = DEFAULT_LEVEL,
    floor: float = DEFAULT_FLOOR,
    holm: bool = False,
    curation: bool = False,
    jobs: int = 1,
    trust: TrustedKeys | None = None,
    rerun: int | str | None = None,
    rerun_seed: int | None = None,
    rerun_env: str = "cached",
    rerun_sandbox: bool = True,
    archives: Sequence[str | None] | None = None,
    mapper: Mapper | None = None,
    names: Sequence[str | os.PathLike[str]] | None = None,
    policies: Sequence[RowPolicy | None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> AuditTable:
    """Audit many artifacts for a committee's table.

    Spec audit.md#table; the options are those of :func:`.audit`. Relative attempt
    directories are resolved against each artifact. ``jobs > 1`` audits in that many
    processes, ``mapper`` over an executor's workers; the result is the same. ``archives``,
    ``names`` and ``policies`` (one per path, or ``None``) give each row its archive digest,
    its name as the committee gave it (:func:`row_names`) and its own trust and
    ``expect_head`` (a batch file's submissions).
    """
    options = _options(
        level, floor, holm=holm, curation=curation, trust=trust, rerun=rerun, rerun_seed=rerun_seed
    )
    # one per artifact: an archive's digest is that artifact's archival identifier
    digests = list(archives) if archives is not None else [None] * len(artifact_paths)
    # each row's progress lines name the row as the table does
    labels = row_names(names if names is not None else artifact_paths)
    checkings = [
        _Trust(trust, rerun_env, rerun_sandbox, digest, progress, label)
        for digest, label in zip(digests, labels, strict=True)
    ]
    if jobs < 1:
        msg = f"jobs must be at least 1, not {jobs}"
        raise UsageError(msg)
    parsed = [parse_attempt(a) for a in attempts] if attempts is not None else None
    settings = [
        _row_settings(options, checking, policy)
        for checking, policy in zip(
            checkings, policies or [None] * len(artifact_paths), strict=True
        )
    ]
    jobs_list = [(path, parsed, *s) for path, s in zip(artifact_paths, settings, strict=True)]
    outcomes: list[AuditResult | TableRow]
    if mapper is not None and len(jobs_list) > 1:
        outcomes = mapper(_audit_packed, jobs_list)
    elif jobs == 1 or len(jobs_list) < 2:
        outcomes = [_audit_packed(job) for job in jobs_list]
    else:
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - only with jobs

        with ProcessPoolExecutor(max_workers=min(jobs, len(jobs_list))) as pool:
            outcomes = list(pool.map(_audit_packed, jobs_list))
    results = [o for o in outcomes if isinstance(o, AuditResult)]
    failed = [o for o in outcomes if isinstance(o, TableRow)]
    errors: list[AuditFinding] = [f for row in failed for f in row.findings]
    rows = [
        o if isinstance(o, TableRow) else _row(o, os.fspath(path))
        for o, path in zip(outcomes, artifact_paths, strict=True)
    ]
    for row, digest in zip(rows, archives or [None] * len(rows), strict=True):
        row.archive_sha256 = digest
    for row, label in zip(rows, labels, strict=True):
        row.label = label
    task_level = mean([t.success_rate for r in results for t in r.tasks] + [0.0] * len(failed))
    paper_macro = mean([r.task_success for r in results] + [0.0] * len(failed))
    rates = label_rates([(r.attempts, r.tasks) for r in results], failed=len(failed))
    return AuditTable(
        options=options,
        artifacts=results,
        errors=errors,
        task_level=task_level,
        paper_macro=paper_macro,
        labels=rates,
        label_spread=spread(rates),
        rows=rows,
        passed=not failed and all(r.passed for r in results),
    )
