"""``audit()``: the independent auditor's entry point (spec audit.md#audit).

The result is a pure function of the artifact's files, the evidence's files and the options:
no clock, no state shared with a runner. The one random draw, the re-execution sample's
seed, is made with the options and stated in the report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import chain
from pathlib import Path

from reprobridge_sdk.api import consumer_view, load
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io.document import Document, load_document
from reprobridge_sdk.loading import manifest_root
from reprobridge_sdk.model import MANIFEST_NAME, SpecModel
from reprobridge_sdk.model.audit import (
    AttemptSummary,
    AuditFinding,
    AuditOptions,
    AuditResult,
    Badges,
    RunCheck,
    TaskAudit,
)
from reprobridge_sdk.signing.keys import TrustedKeys

from ._checks import (
    _check_trust,
    _Checks,
    _committee_signed,
    _implausible,
    _Trust,
    _wide_tolerances,
)
from ._judging import judge_columns, settle_columns, task_audits
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
from .clean_room import clean_room
from .facts import ManifestFacts
from .interval import (
    DEFAULT_FLOOR,
    DEFAULT_LEVEL,
    check_options,
    compatibility_interval,
    finite,
)
from .rerun import draw_seed
from .verdict import (
    ICML,
    VERDICTS,
    as_audit_finding,
)
from .verify import (
    ArtifactFacts,
    RunEvidence,
    artifact_facts,
    check_artifact,
    verify_attempt,
)

__all__ = ["audit", "load_artifact"]

AttemptLike = str | os.PathLike[str] | Attempt

#: Implausible references that fail the audit (spec "plausible-references").
_IMPLAUSIBLE = frozenset({"A080", "A083"})


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
        values={k: finite(v) for k, v in run.values.items()},
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

    Spec audit.md#audit. ``attempts``: directories of run directories or ``LABEL=DIR``
    strings, by default the artifact's ``runs/`` (a missing default is an attempt without
    runs; a missing given one, :class:`UsageError`).

    ``expect_head``: the ledger head the authors submitted; ``trust``: the keys every run
    must be signed by; ``rerun``: runs per launcher and task to re-execute (or ``"all"``),
    sampled with ``rerun_seed`` (``None``: a secret seed, stated in the report), in
    ``rerun_env`` and the sandbox unless ``rerun_sandbox`` is false; ``archive_sha256``: the
    digest of the archive the committee unpacked; ``progress``: given a line before and after
    each re-executed run, naming the artifact's path first.
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
    where = os.fspath(artifact_path)
    checking = _Trust(trust, rerun_env, rerun_sandbox, archive_sha256, progress, where)
    # No reference kept here: _audit releases the manifest's plain data once validated.
    return _audit(
        load_artifact(artifact_path), Path(artifact_path), attempts, options, trust=checking
    )


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
    chosen = _chosen(root, attempts, curation=options.curation, strict=strict)
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
    intervals = [
        compatibility_interval(task.observations, level=options.level, floor=options.floor)
        for task in manifest.tasks
    ]
    checks = _check_trust(facts, chosen, evidence, options, trust or _Trust(), intervals=intervals)
    wide = _wide_tolerances(facts, intervals)
    wide += _implausible(manifest, intervals, evidence, floor=options.floor)
    tasks = task_audits(manifest, intervals)
    # Judge every (task, attempt); Holm's family is one attempt's tasks.
    columns = judge_columns(
        facts,
        names=names,
        evidence=evidence,
        intervals=intervals,
        tasks=tasks,
        checks=checks,
        curation=options.curation,
    )
    del intervals  # judged: about 1 KB a task less while the results are built
    verdict_counts = settle_columns(columns, tasks, options)
    # the committee's own attempts: so labelled, or made of runs signed by a committee key
    signed = _committee_signed(checks, trust)
    committee = {
        name
        for attempt, name, runs in zip(chosen, names, evidence, strict=True)
        if attempt.label == COMMITTEE_LABEL or (runs and all(r.path in signed for r in runs))
    }
    summarize_tasks(tasks, committee)
    offset = 1 if options.curation else 0
    summaries = [
        _summary(
            attempt,
            name,
            runs,
            index,
            checks,
            verdict_counts[index + offset],
            tasks,
            root,
            committee=name in committee,
        )
        for index, (attempt, name, runs) in enumerate(zip(chosen, names, evidence, strict=True))
    ]
    counts = dict.fromkeys(VERDICTS, 0)
    icml_counts = dict.fromkeys(("verified", "falsified", "toy", "inconclusive"), 0)
    for task_audit in tasks:
        for verdict in task_audit.attempts:
            counts[verdict.verdict] += 1
            icml_counts[ICML[verdict.verdict]] += 1
    by_severity = {"error": 0, "warning": 0, "info": 0}
    for item in validation:
        by_severity[item.severity.value] += 1
    errors = [f for f in validation if f.severity is Severity.ERROR]
    found = (errors, facts.findings, _shared_runs(manifest, evidence), _placeholders(validation))
    artifact_findings = [as_audit_finding(f) for f in chain(*found, wide)]
    suggested: set[str] = set()  # a launcher's suggestion from several attempts: the first
    for item in checks.suggestions:
        if item.path not in suggested:
            suggested.add(item.path)
            artifact_findings.append(as_audit_finding(item))
    on_record = clean_room(root, trust.keys if trust is not None else None)
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
            clean_room=on_record,
        )
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
        passed=_passed(
            options, tasks, chosen, counts["invalid-evidence"], checks, badges, artifact_findings
        ),
    )
    forward = facts.forward
    if forward is not None and forward.changed:  # identity unless set-aside items shift
        _in_document(result, forward.to_document)
    return result


def _chosen(
    root: Path, attempts: Sequence[AttemptLike] | None, *, curation: bool, strict: bool
) -> list[Attempt]:
    """The attempts to audit: those given (each must be a directory when ``strict``), else
    the artifact's ``runs/`` (none in curation mode)."""
    if attempts is None:
        return [] if curation else [Attempt(DEFAULT_ATTEMPT, root / DEFAULT_ATTEMPT)]
    chosen = [parse_attempt(a) for a in attempts]
    for attempt in chosen if strict else ():
        if not attempt.path.is_dir():
            msg = f"attempt {attempt.label}: no directory {os.fspath(attempt.path)}"
            raise UsageError(msg, [finding("A001", msg, file=os.fspath(attempt.path))])
    return chosen


def _summary(  # noqa: PLR0917 - a step of _audit
    attempt: Attempt,
    name: str,
    runs: Sequence[RunEvidence],
    index: int,
    checks: _Checks,
    counts: dict[str, int],
    tasks: Sequence[TaskAudit],
    root: Path,
    *,
    committee: bool,
) -> AttemptSummary:
    """The summary of the ``index``-th attempt: its runs, verdict counts and checks."""
    return AttemptSummary(
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
        committee=committee,
    )


def _passed(  # noqa: PLR0917 - a step of _audit
    options: AuditOptions,
    tasks: Sequence[TaskAudit],
    chosen: Sequence[Attempt],
    invalid: int,
    checks: _Checks,
    badges: Badges,
    artifact_findings: Sequence[AuditFinding],
) -> bool:
    """Whether the audit passes (the command line's exit 0); see spec §11.2."""
    implausible = any(f.code in _IMPLAUSIBLE for f in artifact_findings)
    if options.curation:
        # The artifact itself is judged: any placeholder (A046) keeps it from passing.
        return (
            all(t.published_compatible for t in tasks)
            and not implausible
            and not any(f.code == "A046" for f in artifact_findings)
        )
    reproduced = all(
        any(a.verdict == "compatible" for a in t.attempts if a.attempt != "published")
        for t in tasks
    ) and bool(chosen)
    attempt_errors = any(
        f.severity is Severity.ERROR for found in checks.attempt_findings for f in found
    )
    placeholder = any(r.code == "P003" for r in badges.reasons.get("available", []))
    return (
        not implausible
        and reproduced
        and invalid == 0
        and not attempt_errors
        and not placeholder  # a placeholder artifact never passes (spec audit.md#badges)
    )


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
