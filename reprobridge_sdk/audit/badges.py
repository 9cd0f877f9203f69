"""Badges with reasons: the one place where the badge rules live (spec audit.md#badges).

Each badge maps to an ACM artifact badge and is awarded when no rule withholds it. A rule
that withholds a badge says why, as findings (a code and a message, located where the
evidence is); a badge that is awarded lists the evidence behind it (run directories,
prefixed by their attempt) and every badge names the checks it rests on (spec anchors).

Rules, by badge (the first column is the rule's name in :data:`RULES`):

* ``available`` (ACM *Artifacts Available*):
  - ``validation``: the validator's errors on the artifact;
  - ``digests``: the code or lock on disk differs from the manifest (A010, A012), or
    another error of the auditor about the artifact itself;
  - ``placeholder``: the upstream commit is the null object id (all zeros), which no
    repository has: a value a scaffold leaves for the author to fill in never earns a
    badge. The reason is the validator's own finding, P003 (one code for one fact; A060,
    which said the same, is deprecated).
* ``functional`` (ACM *Artifacts Evaluated - Functional*):
  - ``no-attempt``: no attempt was audited;
  - ``launcher``: a launcher has no succeeded run with valid evidence in any attempt (the
    reasons are the errors of its runs, or A024 when it has none);
  - ``ledger``: an attempt's run ledger has an error (A051, A052, A054, A057);
  - ``placeholders``: the validator found a scaffold's placeholders (P codes, A046);
* ``reproduced`` (ACM *Results Reproduced*):
  - ``no-attempt``: as above;
  - ``task``: a task is not ``compatible`` in any attempt (the reasons of its verdicts;
    a task without reference observations gives A025: missing references);
  - ``ledger``: as above;
  - ``placeholders``: as above;
  - ``untrusted``: under ``--trust``, a run is unsigned or its signature does not hold
    (K001-K004, K007), even when other evidence suffices;
  - ``rerun``: a re-executed run did not hold up (A058, A059), or the re-executed runs of
    a task show a shift (A070), even when other evidence suffices: a fabricated run
    anywhere withholds the badge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.model.audit import AuditFinding, Badges, TaskAudit
from reprobridge_sdk.validation.placeholders import HINTS, is_placeholder_commit

from .facts import ManifestFacts
from .verdict import as_audit_finding
from .verify import RunEvidence

__all__ = ["BADGE_CHECKS", "BADGE_CRITERIA", "RULES", "BadgeContext", "award"]

BADGE_CRITERIA = {
    "available": "the artifact validates without errors, its code and lock match their "
    "digests, and it has no placeholder upstream (ACM Artifacts Available)",
    "functional": "every launcher has a successful run with valid evidence in some attempt, "
    "every run ledger is intact and no placeholder remains "
    "(ACM Artifacts Evaluated - Functional)",
    "reproduced": "every task is compatible in at least one attempt, every run ledger is "
    "intact, no placeholder remains, no re-executed run mismatched and, under --trust, "
    "every run is signed "
    "(ACM Results Reproduced)",
}
#: The checks each badge rests on: spec anchors.
BADGE_CHECKS = {
    "available": ["manifest.md#validation", "manifest.md#digests", "audit.md#badges"],
    "functional": ["runner.md#evidence", "runner.md#ledger", "audit.md#badges"],
    "reproduced": [
        "audit.md#verdicts",
        "runner.md#ledger",
        "signing.md#signatures",
        "audit.md#re-execution",
        "audit.md#badges",
    ],
}
_LEDGER = {"A051", "A052", "A054", "A057"}
_RERUN = {"A058", "A059"}


@dataclass(frozen=True)
class BadgeContext:
    """What the rules look at."""

    manifest: ManifestFacts
    artifact_findings: Sequence[AuditFinding]
    attempts: Sequence[tuple[str, Sequence[RunEvidence]]]
    attempt_findings: Sequence[Sequence[Finding]]
    tasks: Sequence[TaskAudit]
    trusted: bool


Rule = Callable[[BadgeContext], list[AuditFinding]]


def _audit_finding(item: Finding) -> AuditFinding:
    return as_audit_finding(item)


def _validation(ctx: BadgeContext) -> list[AuditFinding]:
    return [f for f in ctx.artifact_findings if f.severity == "error" and f.code[0] != "A"]


def _digests(ctx: BadgeContext) -> list[AuditFinding]:
    """The auditor's own errors about the artifact (A010, A012 and any later ones)."""
    return [f for f in ctx.artifact_findings if f.code[0] == "A" and f.severity == "error"]


def _placeholder(ctx: BadgeContext) -> list[AuditFinding]:
    if not is_placeholder_commit(ctx.manifest.codebase.upstream.commit):
        return []
    return [
        _audit_finding(
            finding(
                "P003",
                "the upstream commit is all zeros (the null object id), a placeholder",
                path="/codebase/upstream/commit",
                hint=HINTS["P003"],
            )
        )
    ]


def _placeholders(ctx: BadgeContext) -> list[AuditFinding]:
    return [f for f in ctx.artifact_findings if f.code == "A046"]


def _no_attempt(ctx: BadgeContext) -> list[AuditFinding]:
    if ctx.attempts:
        return []
    return [_audit_finding(finding("A024", "no attempt was audited"))]


def _launchers(ctx: BadgeContext) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    # One pass over the runs (launcher -> its runs, validity computed once per run), never
    # launchers x runs.
    mine: dict[str, list[RunEvidence]] = {}
    functional: set[str] = set()
    for _, runs in ctx.attempts:
        for r in runs:
            if r.record is None:
                continue
            mine.setdefault(r.record.launcher, []).append(r)
            if r.record.launcher not in functional and r.succeeded and r.valid:
                functional.add(r.record.launcher)
    for index, launcher in enumerate(ctx.manifest.launchers):
        if launcher.id in functional:
            continue
        errors = [
            f for r in mine.get(launcher.id, ()) for f in r.findings if f.severity is Severity.ERROR
        ]
        if errors:
            out.extend(_audit_finding(f) for f in errors)
        else:
            out.append(
                _audit_finding(
                    finding(
                        "A024",
                        f"launcher {launcher.id} has no succeeded run",
                        path=f"/launchers/{index}",
                    )
                )
            )
    return out


def _ledger(ctx: BadgeContext) -> list[AuditFinding]:
    return [_audit_finding(f) for found in ctx.attempt_findings for f in found if f.code in _LEDGER]


def _tasks(ctx: BadgeContext) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    for index, task in enumerate(ctx.tasks):
        counted = [a for a in task.attempts if a.attempt != "published"]
        if any(a.verdict == "compatible" for a in counted):
            continue
        if not task.interval.defined and task.interval.n == 0:
            out.append(
                _audit_finding(
                    finding(
                        "A025",
                        f"task {task.id} has no reference observations",
                        path=f"/tasks/{index}/reference",
                    )
                )
            )
            continue
        if not counted:
            continue
        best = counted[0]
        reasons = [r for r in best.reasons if r.severity == "error"] or best.reasons[:1]
        if reasons:
            out.extend(reasons)
        else:
            out.append(
                _audit_finding(
                    finding("A024", f"task {task.id} is {best.verdict}", path=f"/tasks/{index}")
                )
            )
    return out


def _untrusted(ctx: BadgeContext) -> list[AuditFinding]:
    if not ctx.trusted:
        return []
    return [
        _audit_finding(f)
        for _, runs in ctx.attempts
        for r in runs
        for f in r.findings
        if f.code.startswith("K")
    ]


def _rerun(ctx: BadgeContext) -> list[AuditFinding]:
    return [
        _audit_finding(f)
        for _, runs in ctx.attempts
        for r in runs
        for f in r.findings
        if f.code in _RERUN
    ] + [_audit_finding(f) for found in ctx.attempt_findings for f in found if f.code == "A070"]


#: The badge rules in order: (badge, rule name, rule). Add a rule here, and only here.
RULES: tuple[tuple[str, str, Rule], ...] = (
    ("available", "validation", _validation),
    ("available", "digests", _digests),
    ("available", "placeholder", _placeholder),
    ("functional", "no-attempt", _no_attempt),
    ("functional", "launcher", _launchers),
    ("functional", "ledger", _ledger),
    ("functional", "placeholders", _placeholders),
    ("reproduced", "no-attempt", _no_attempt),
    ("reproduced", "task", _tasks),
    ("reproduced", "ledger", _ledger),
    ("reproduced", "placeholders", _placeholders),
    ("reproduced", "untrusted", _untrusted),
    ("reproduced", "rerun", _rerun),
)


def _dedupe(items: list[AuditFinding]) -> list[AuditFinding]:
    seen: set[tuple[str, str, str | None, str]] = set()
    out: list[AuditFinding] = []
    for item in items:
        key = (item.code, item.message, item.file, item.path)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def award(ctx: BadgeContext) -> Badges:
    """The three badges, each with the reasons it is withheld or the evidence behind it."""
    reasons: dict[str, list[AuditFinding]] = {"available": [], "functional": [], "reproduced": []}
    for badge, _, rule in RULES:
        reasons[badge].extend(rule(ctx))
    reasons = {badge: _dedupe(items) for badge, items in reasons.items()}
    runs = [
        f"{label}/{r.rel or '.'}"
        for label, found in ctx.attempts
        for r in found
        if r.valid and r.succeeded
    ]
    counted = sorted(
        {
            f"{a.attempt}/{run}"
            for t in ctx.tasks
            for a in t.attempts
            if a.verdict == "compatible"
            for run in a.runs
        }
    )
    evidence = {
        "available": ["rra.yaml"],
        "functional": runs if not reasons["functional"] else [],
        "reproduced": counted if not reasons["reproduced"] else [],
    }
    return Badges(
        available=not reasons["available"],
        functional=not reasons["functional"],
        reproduced=not reasons["reproduced"],
        criteria=dict(BADGE_CRITERIA),
        reasons={k: v for k, v in reasons.items() if v},
        evidence=evidence,
        checks={k: list(v) for k, v in BADGE_CHECKS.items()},
    )
