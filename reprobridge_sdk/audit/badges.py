"""Badges with reasons: the one place where the badge rules live.

Each badge maps to an ACM artifact badge and is awarded when no rule withholds it; a rule
that withholds one says why, as located findings, and an awarded badge lists the evidence
behind it. The rules are named in :data:`RULES`, per badge (``available``, ``functional``,
``reusable``, ``reproduced``). See spec §11.2 ("Badges").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reprobridge_sdk.findings import Finding, Severity
from reprobridge_sdk.model.audit import AuditFinding, Badges, TaskAudit
from reprobridge_sdk.validation.placeholders import HINTS, is_placeholder_commit
from reprobridge_sdk.versions import MANIFEST_NAME

from .clean_room import CleanRoom, no_check_record
from .facts import ManifestFacts
from .verdict import as_audit_finding, audit_finding
from .verify import RunEvidence

__all__ = [
    "BADGES",
    "BADGE_CHECKS",
    "BADGE_CRITERIA",
    "RULES",
    "TAMPERED",
    "BadgeContext",
    "award",
    "earned",
]

#: The badges, in the order reports show them.
BADGES = ("available", "functional", "reusable", "reproduced")

BADGE_CRITERIA = {
    "available": "the artifact validates without errors, its code and lock match their "
    "digests, it has no placeholder upstream, and it has an archival identifier: a DOI or "
    "the digest of the archive the committee holds (ACM Artifacts Available)",
    "functional": "every launcher has a successful run with valid evidence in some attempt, "
    "every run ledger is intact, no run's evidence contradicts itself (an edited log, a "
    "fabricated run, a failed signature) and no placeholder remains "
    "(ACM Artifacts Evaluated - Functional)",
    "reusable": "functional, every launcher has a description, the artifact states a "
    "licence, no placeholder remains and a clean-room check is on record "
    "(ACM Artifacts Evaluated - Reusable)",
    "reproduced": "every task is compatible in at least one attempt, with a run the "
    "committee made (re-executed in this audit, signed by a committee key, or by a passing "
    "scored clean-room check a committee key signed), every run "
    "ledger is intact, no placeholder remains, no re-executed run mismatched and, under "
    "--trust, every run is signed (ACM Results Reproduced)",
}
#: The checks each badge rests on: spec anchors.
BADGE_CHECKS = {
    "available": ["manifest.md#validation", "manifest.md#digests", "audit.md#badges"],
    "functional": ["runner.md#evidence", "runner.md#ledger", "audit.md#badges"],
    "reusable": [
        "runner.md#evidence",
        "authoring.md#placeholders",
        "authoring.md#clean-room-check",
        "audit.md#badges",
    ],
    "reproduced": [
        "audit.md#verdicts",
        "runner.md#ledger",
        "signing.md#signatures",
        "signing.md#keys",
        "audit.md#re-execution",
        "audit.md#badges",
    ],
}
_LEDGER = {"A051", "A052", "A054", "A057"}
#: Evidence that contradicts itself (an error of one of these codes): files that are not
#: those recorded, a ledger that does not hold its runs or its submitted head, a signature
#: that fails or signs other files, a re-execution that differs, an archive that is not the
#: one recorded. A missing signature (K001) or an unknown signer (K003) is not among them.
TAMPERED = frozenset(
    {
        "A002", "A004", "A006", "A007", "A010", "A012", "A038", "A039", "A040", "A051",
        "A052", "A053", "A054", "A055", "A056", "A057", "A058", "A066", "A067", "A070",
        "A093", "K002", "K004", "K007",
    }
)  # fmt: skip
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
    #: The run directories the committee made: re-executed in this audit, or signed by a
    #: key of the committee's role.
    committee: frozenset[Path] = frozenset()
    #: The SHA-256 of the packed archive the committee audited; ``None``: a directory.
    archive_sha256: str | None = None
    #: The check record (:func:`.clean_room.clean_room`): why no passing clean-room check
    #: is on record or its signed record cannot be believed, who signed it, and whether it
    #: passed scored.
    clean_room: CleanRoom = field(default_factory=lambda: CleanRoom(no_check_record(), None))


Rule = Callable[[BadgeContext], list[AuditFinding]]


def _validation(ctx: BadgeContext) -> list[AuditFinding]:
    return [f for f in ctx.artifact_findings if f.severity == "error" and f.code[0] != "A"]


def _digests(ctx: BadgeContext) -> list[AuditFinding]:
    """The auditor's own errors about the artifact (A010, A012 and any later ones)."""
    return [f for f in ctx.artifact_findings if f.code[0] == "A" and f.severity == "error"]


def _placeholder(ctx: BadgeContext) -> list[AuditFinding]:
    if not is_placeholder_commit(ctx.manifest.codebase.upstream.commit):
        return []
    return [
        audit_finding(
            "P003",
            "the upstream commit is all zeros (the null object id), a placeholder",
            path="/codebase/upstream/commit",
            hint=HINTS["P003"],
        )
    ]


def _placeholders(ctx: BadgeContext) -> list[AuditFinding]:
    return [f for f in ctx.artifact_findings if f.code == "A046"]


def _no_attempt(ctx: BadgeContext) -> list[AuditFinding]:
    if ctx.attempts:
        return []
    return [audit_finding("A024", "no attempt was audited")]


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
            out.extend(as_audit_finding(f) for f in errors)
        else:
            out.append(
                audit_finding(
                    "A024",
                    f"launcher {launcher.id} has no succeeded run",
                    path=f"/launchers/{index}",
                )
            )
    return out


def _ledger(ctx: BadgeContext) -> list[AuditFinding]:
    return [
        as_audit_finding(f) for found in ctx.attempt_findings for f in found if f.code in _LEDGER
    ]


def _evidence(ctx: BadgeContext) -> list[AuditFinding]:
    """Errors of :data:`TAMPERED` on any run or attempt (the ledger's are :func:`_ledger`'s):
    one forged run withholds *functional* even when the launcher has honest runs too."""
    found = [f for _, runs in ctx.attempts for r in runs for f in r.findings]
    found += [f for attempt in ctx.attempt_findings for f in attempt if f.code not in _LEDGER]
    return [
        as_audit_finding(f) for f in found if f.code in TAMPERED and f.severity is Severity.ERROR
    ]


def _tasks(ctx: BadgeContext) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    for index, task in enumerate(ctx.tasks):
        counted = [a for a in task.attempts if a.attempt != "published"]
        if any(a.verdict == "compatible" for a in counted):
            continue
        if not task.interval.defined and task.interval.n == 0:
            out.append(
                audit_finding(
                    "A025",
                    f"task {task.id} has no reference observations",
                    path=f"/tasks/{index}/reference",
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
                audit_finding("A024", f"task {task.id} is {best.verdict}", path=f"/tasks/{index}")
            )
    return out


def _untrusted(ctx: BadgeContext) -> list[AuditFinding]:
    if not ctx.trusted:
        return []
    return [
        as_audit_finding(f)
        for _, runs in ctx.attempts
        for r in runs
        for f in r.findings
        if f.code.startswith("K")
    ]


def _rerun(ctx: BadgeContext) -> list[AuditFinding]:
    return [
        as_audit_finding(f)
        for _, runs in ctx.attempts
        for r in runs
        for f in r.findings
        if f.code in _RERUN
    ] + [as_audit_finding(f) for found in ctx.attempt_findings for f in found if f.code == "A070"]


#: Licence values that state no licence (SPDX's NOASSERTION and NONE, and the like).
_NO_LICENCE = frozenset({"noassertion", "none", "unknown", "unlicensed", "todo", "tbd"})


def _archive(ctx: BadgeContext) -> list[AuditFinding]:
    if ctx.manifest.artifact.paper.doi or ctx.archive_sha256:
        return []
    return [
        audit_finding(
            "A085",
            "the artifact has no archival identifier: no DOI and no archive the committee holds",
            path="/artifact/paper/doi",
            hint="deposit the artifact in an archive that gives a DOI and record it at "
            "artifact.paper.doi, or audit the packed archive the authors submitted",
        )
    ]


def _functional(ctx: BadgeContext) -> list[AuditFinding]:
    """The reasons the functional badge is withheld: Reusable needs Functional."""
    return [f for badge, _, rule in RULES if badge == "functional" for f in rule(ctx)]


def _documented(ctx: BadgeContext) -> list[AuditFinding]:
    out = [
        audit_finding(
            "A086",
            f"launcher {launcher.id} has no description",
            path=f"/launchers/{index}/description",
            hint="say in 'description' what the launcher does and what it produces",
        )
        for index, launcher in enumerate(ctx.manifest.launchers)
        if not (launcher.description or "").strip()
    ]
    if ctx.manifest.artifact.license.strip().lower() in _NO_LICENCE:
        out.append(
            audit_finding(
                "A086",
                f"the artifact states no licence ({ctx.manifest.artifact.license!r})",
                path="/artifact/license",
                hint="give the SPDX expression of the licence others may reuse it under",
            )
        )
    return out + _placeholders(ctx)


def _clean_room(ctx: BadgeContext) -> list[AuditFinding]:
    found = ctx.clean_room.finding
    return [] if found is None else [as_audit_finding(found)]


def _scored(run: RunEvidence) -> bool:
    return run.record is not None and run.record.scope == "scored"


def _committee(ctx: BadgeContext) -> list[AuditFinding]:
    """A task without a succeeded, valid, scored run the committee made that gives its value
    (a smoke run is no evidence of the results), or a passing scored clean-room check of the
    files as they are, signed by a committee key, that measured it."""
    covered: set[str] = set()
    if ctx.clean_room.by_committee:
        covered.update(t.id for t in ctx.manifest.tasks if t.not_measured is None)
    for label, runs in ctx.attempts:
        if label == "published":
            continue
        for r in runs:
            if r.path in ctx.committee and r.succeeded and r.valid and _scored(r):
                covered.update(k for k, v in r.values.items() if v is not None)
    return [
        audit_finding(
            "A084",
            f"task {task.id} has no run the committee made (re-executed in this audit, "
            "signed by a committee key, or by a scored clean-room check a committee key "
            "signed): results consistent (author evidence), not reproduced",
            path=f"/tasks/{index}",
            hint="re-execute the runs (audit --rerun, review), add runs signed by a key "
            "the KEYS file marks 'committee', or run 'check --scored --record --sign' "
            "with such a key",
        )
        for index, task in enumerate(ctx.tasks)
        if task.id not in covered
    ]


#: The badge rules in order: (badge, rule name, rule). Add a rule here, and only here.
RULES: tuple[tuple[str, str, Rule], ...] = (
    ("available", "validation", _validation),
    ("available", "digests", _digests),
    ("available", "placeholder", _placeholder),
    ("available", "archive", _archive),
    ("functional", "no-attempt", _no_attempt),
    ("functional", "launcher", _launchers),
    ("functional", "ledger", _ledger),
    ("functional", "evidence", _evidence),
    ("functional", "placeholders", _placeholders),
    ("reproduced", "no-attempt", _no_attempt),
    ("reproduced", "task", _tasks),
    ("reproduced", "ledger", _ledger),
    ("reproduced", "placeholders", _placeholders),
    ("reproduced", "untrusted", _untrusted),
    ("reproduced", "rerun", _rerun),
    ("reproduced", "evidence", _evidence),
    ("reproduced", "committee", _committee),
    ("reusable", "functional", _functional),
    ("reusable", "documented", _documented),
    ("reusable", "clean-room", _clean_room),
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


Results = Literal["reproduced", "consistent", "not-reproduced"]


def _results(reasons: list[AuditFinding]) -> Results:
    """``consistent`` when the only reason is that the committee made no run (A084)."""
    if not reasons:
        return "reproduced"
    return "consistent" if all(r.code == "A084" for r in reasons) else "not-reproduced"


def award(ctx: BadgeContext) -> Badges:
    """The four badges, each with the reasons it is withheld or the evidence behind it."""
    reasons: dict[str, list[AuditFinding]] = {badge: [] for badge in BADGES}
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
    identifier = (
        f"doi:{ctx.manifest.artifact.paper.doi}"
        if ctx.manifest.artifact.paper.doi
        else f"archive sha256:{ctx.archive_sha256}"
    )
    evidence = {
        "available": [MANIFEST_NAME, identifier] if not reasons["available"] else [MANIFEST_NAME],
        "functional": runs if not reasons["functional"] else [],
        "reusable": [MANIFEST_NAME, "runs/check.json"] if not reasons["reusable"] else [],
        "reproduced": (
            [*counted, *(["runs/check.json"] if ctx.clean_room.by_committee else [])]
            if not reasons["reproduced"]
            else []
        ),
    }
    return Badges(
        available=not reasons["available"],
        functional=not reasons["functional"],
        reusable=not reasons["reusable"],
        reproduced=not reasons["reproduced"],
        results=_results(reasons["reproduced"]),
        criteria=dict(BADGE_CRITERIA),
        reasons={k: v for k, v in reasons.items() if v},
        evidence=evidence,
        checks={k: list(v) for k, v in BADGE_CHECKS.items()},
        check_record=ctx.clean_room.signature,
    )


def earned(badges: Badges) -> list[str]:
    """The badges earned, in :data:`BADGES` order, then ``consistent`` when the results are
    consistent on the authors' evidence alone (a state of its own, never the badge)."""
    names = [name for name in BADGES if getattr(badges, name)]
    return [*names, "consistent"] if badges.results == "consistent" else names
