"""The build agent's phase outputs: one typed JSON document per phase in ``OUT/.rra-build/``.

Each phase of ``reprobridge build`` writes ``<phase>.json``, a :class:`PhaseRecord` with the
digest of its inputs (``--resume`` reuses it only while that is unchanged) and its gate.
The phases, gates and resuming are spec/building.md §13.2-13.4. These are build state, not
part of an artifact; their schemas (``build-*-1.0``) are generated like the others.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._buildplan import (
    BUILD_VERSION,
    PHASES,
    BuildFinding,
    ClaimPlan,
    CommandLine,
    DataReference,
    DependencyFile,
    DependencyKind,
    EntryOption,
    EntryPoint,
    Gate,
    ImportUse,
    IntakeRecord,
    LauncherPlan,
    NotebookScript,
    PhaseName,
    PhaseRecord,
    PlanRecord,
    PrepareStep,
    PythonEra,
    ReachedImport,
    SourceLine,
    _Record,
)
from .guide import Ambiguity

__all__ = [
    "BUILD_VERSION",
    "PHASES",
    "AppliedFix",
    "BuildFinding",
    "BuildReport",
    "BuilderRecord",
    "ClaimPlan",
    "ClaimResult",
    "ClaimSummary",
    "CommandLine",
    "DataReference",
    "DependencyFile",
    "DependencyKind",
    "DistillerRecord",
    "EntryOption",
    "EntryPoint",
    "EnvironmentAttempt",
    "EnvironmentName",
    "FailureClass",
    "FailureReport",
    "Gate",
    "ImportUse",
    "IntakeRecord",
    "LauncherPlan",
    "NotebookScript",
    "PackagerRecord",
    "PhaseName",
    "PhaseRecord",
    "PlanRecord",
    "PrepareStep",
    "PythonEra",
    "ReachedImport",
    "Replacement",
    "ReproducerRecord",
    "ResolveStep",
    "ResolveStepName",
    "ReviewRecord",
    "SmokeAttempt",
    "SourceLine",
]


# --------------------------------------------------------------------------- builder


class Replacement(_Record):
    """A requirement dropped, replaced or added, and why."""

    original: str | None = Field(
        default=None, description="The line as declared; None for an addition."
    )
    replacement: str | None = Field(
        default=None, description="What is used instead; None when dropped."
    )
    why: str


ResolveStepName = Literal[
    "declared",
    "lower-bounds",
    "newest",
    "newest-lower-bounds",
    "optional-left-out",
    "required-only",
    "source-build",
    "build-dependencies",
    "oldest-wheel",
]


class ResolveStep(_Record):
    """One resolution attempt of the relaxation sequence."""

    name: ResolveStepName = Field(
        description="The step (see the Builder); 'oldest-wheel' is no longer taken, kept so "
        "that older build records still read."
    )
    requirements: list[str]
    exclude_newer: str | None = Field(
        default=None, description="The date bound, if any (ISO 8601)."
    )
    lowest: bool = Field(
        default=False,
        description="Oldest releases of the direct requirements (only in older records).",
    )
    source_builds: bool = Field(
        default=False, description="Source distributions were allowed (else wheels only)."
    )
    ok: bool
    why: str
    argv: list[str] = Field(default_factory=list, description="The resolver's command line.")
    pins: list[str] = Field(default_factory=list)
    error: str | None = Field(default=None, description="The resolver's last lines on failure.")
    python: str | None = Field(
        default=None, description="The interpreter 'X.Y' resolved for (absent in older records)."
    )
    build_dependencies: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Build requirements supplied to a source distribution's build that it "
        "needs but does not declare, by distribution (the step 'build-dependencies').",
    )


EnvironmentName = Literal["newest", "era", "era-python"]


class EnvironmentAttempt(_Record):
    """One environment the Builder tried: newest versions, the code's era for the running
    interpreter, or the code's era with an interpreter of that era (a legacy environment)."""

    name: EnvironmentName
    python: str = Field(description="The interpreter 'X.Y' of the attempt.")
    source: Literal["running", "path", "pyenv", "uv"] | None = Field(
        default=None, description="Where the interpreter was found (None: not found)."
    )
    exclude_newer: str | None = Field(default=None, description="The era's date bound, if any.")
    why: str = Field(description="Why this environment was tried.")
    ok: bool
    outcome: str = Field(description="What happened: the environment that works, or why not.")


class BuilderRecord(PhaseRecord):
    """The Builder phase: requirements, resolution steps, lock and environment."""

    phase: Literal["builder"] = "builder"
    python: str = Field(description="The interpreter 'X.Y' the environment is built with.")
    requirements: list[str] = Field(description="After replacements and additions.")
    replaced: list[Replacement] = Field(default_factory=list)
    steps: list[ResolveStep] = Field(default_factory=list)
    pins: list[str] = Field(default_factory=list, description="The chosen versions.")
    lock_sha256: str | None = None
    interpreter: str | None = Field(
        default=None, description="The built environment's interpreter (machine-local)."
    )
    imports_checked: list[str] = Field(default_factory=list)
    environment: EnvironmentName = Field(
        default="newest", description="The environment built (the last attempt)."
    )
    attempts: list[EnvironmentAttempt] = Field(
        default_factory=list, description="Every environment tried, in order, with its outcome."
    )
    in_use: EnvironmentAttempt | None = Field(
        default=None,
        description="The environment in use: the last attempt that passed. A later rebuild "
        "that fails is in 'attempts' only; this one stays (None: none passed).",
    )
    legacy: str | None = Field(
        default=None,
        description="Why the environment is a legacy one (an interpreter of the code's era).",
    )
    build_dependencies: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Undeclared build requirements the lock supplies to a source "
        "distribution's build, by distribution, pinned to the environment's versions.",
    )


# --------------------------------------------------------------------------- reproducer


class AppliedFix(_Record):
    """A fix the Reproducer kept: the rule, what it fixed and how it was recorded."""

    launcher: str
    rule: str
    source: Literal["heuristic", "advisor"] = "heuristic"
    kind: Literal["execution-fix", "correctness-fix", "convenience"]
    summary: str
    files: list[str] = Field(default_factory=list)
    workdir: str | None = Field(default=None, description="A new working directory, if any.")
    error: str = Field(
        default="",
        description="The error it fixed: type, message and place (paths relative to the "
        "artifact); empty for a convenience change no error called for.",
    )
    traceback: str = Field(
        default="", description="The traceback's last lines (paths relative to the artifact)."
    )
    evidence: str = Field(
        default="", description="A convenience change's reason and what showed that it works."
    )
    change: str | None = Field(default=None, description="The change-record id, once recorded.")


class SmokeAttempt(_Record):
    """One smoke run of the Reproducer."""

    launcher: str
    argv: list[str]
    workdir: str
    exit_status: int | None = Field(default=None, description="None: killed at the timeout.")
    seconds: float = Field(ge=0)
    error: str | None = Field(default=None, description="The classified error, if it failed.")
    caches: str | None = Field(
        default=None,
        description="The build's compile-cache folder the run shared with the build's other "
        "runs instead of its empty HOME (Theano, Numba, PyTorch extensions, matplotlib), "
        "relative to the artifact; None: none.",
    )


class ReproducerRecord(PhaseRecord):
    """The Reproducer phase: smoke runs, fixes kept and rejected, launchers as they now run."""

    phase: Literal["reproducer"] = "reproducer"
    attempts: list[SmokeAttempt] = Field(default_factory=list)
    fixes: list[AppliedFix] = Field(default_factory=list)
    rejected: list[AppliedFix] = Field(default_factory=list)
    launchers: list[LauncherPlan] = Field(
        default_factory=list,
        description="The plan's launchers as they now run (working directories, seed options, "
        "a short smoke scope).",
    )
    resolved_pitfalls: list[str] = Field(
        default_factory=list,
        description="Ids of the plan's pitfalls a convenience change resolved (a seed option).",
    )
    replanned: list[ClaimPlan] = Field(
        default_factory=list,
        description="Claims over several seeds of a script the Planner found unseeded, planned "
        "again: with the statistic once a seed option passed its gate, without it (B018) "
        "otherwise. They replace the plan's entries.",
    )
    decisions: list[Ambiguity] = Field(
        default_factory=list,
        description="The re-plans as guide records (a claim now planned over every seed).",
    )


# --------------------------------------------------------------------------- distiller


class ClaimResult(_Record):
    """What the Distiller found for one claim."""

    claim: str
    status: Literal["found", "not-extracted", "not-run"]
    launcher: str | None = None
    line: str | None = Field(default=None, description="The log line the number was read from.")
    pattern: str | None = None
    scale: float = 1.0
    value: float | None = Field(default=None, description="The value on the probe run.")
    references: list[float] = Field(default_factory=list)
    interval: list[float] | None = Field(default=None, description="[low, high] of references.")
    published: float
    reproduced: bool | None = Field(
        default=None, description="The published value lies inside the references' interval."
    )
    reason: str | None = None


class DistillerRecord(PhaseRecord):
    """The Distiller phase: extractors, samples, references and discrepancies."""

    phase: Literal["distiller"] = "distiller"
    claims: list[ClaimResult] = Field(default_factory=list)
    reference_runs: list[str] = Field(default_factory=list)
    review_seconds: float | None = Field(
        default=None,
        ge=0,
        description="The Reviewer's estimated seconds: its clean-room check's scored runs "
        "(each scored launcher's seeds once, by the probe runs' times), the smoke runs, a "
        "fresh environment and its own steps (absent in older records).",
    )


# --------------------------------------------------------------------------- packager, report


class PackagerRecord(PhaseRecord):
    """The Packager phase: the artifact written and validated with ``--strict``."""

    phase: Literal["packager"] = "packager"
    artifact: str = Field(description="The artifact directory (OUT).")
    discrepancies: list[str] = Field(default_factory=list, description="Discrepancy ids.")


class ReviewRecord(PhaseRecord):
    """The Independent Reviewer phase: the clean-room check and the curation verdicts."""

    phase: Literal["reviewer"] = "reviewer"
    archive: str | None = Field(
        default=None, description="The packed archive, relative to the artifact."
    )
    archive_sha256: str | None = None
    check_passed: bool = False
    check_steps: list[str] = Field(
        default_factory=list, description="Each step of the check and whether it passed."
    )
    verdicts: dict[str, str] = Field(
        default_factory=dict, description="Claim id -> 'reproduced' or 'not-reproduced'."
    )
    audit_codes: dict[str, list[str]] = Field(
        default_factory=dict, description="Claim id -> codes of the curation audit's reasons."
    )


class ClaimSummary(_Record):
    """One line of the human summary."""

    claim: str
    status: Literal["compatible", "incompatible", "not extracted", "not run"]
    published: float
    references_mean: float | None = None
    interval: list[float] | None = None
    reason: str | None = Field(
        default=None,
        description="Why the claim has its status: a phase's reason, or the verdict's basis.",
    )


#: The failure classes of a stopped build: a small fixed vocabulary derived from the codes of
#: the findings of the gate that stopped it (see :mod:`reprobridge_sdk.agent.failure`).
FailureClass = Literal[
    "source-unavailable",
    "hint-not-understood",
    "environment-unresolvable",
    "import-fails",
    "own-package-missing",
    "run-fails",
    "recorded-change-fails",
    "extraction-fails",
    "validation-fails",
    "review-fails",
    "over-budget",
]


class FailureReport(_Record):
    """Why a build stopped and what would unblock it."""

    phase: PhaseName = Field(description="The phase whose gate failed.")
    failure_class: FailureClass
    codes: list[str] = Field(description="The codes of the gate's errors, in order.")
    tried: list[str] = Field(
        default_factory=list,
        description="What the phase tried, from its record: runs, fixes, resolver steps.",
    )
    unblock: list[str] = Field(
        description="The steps that would unblock the build, in order: 'edit <path>', "
        "'add <path> ...' (a file to add, and what to do with it) or a 'reprobridge ...' "
        "command line (POSIX shell quoting)."
    )


class BuildReport(_Record):
    """The build report (``.rra-build/report.json``)."""

    build_version: str = BUILD_VERSION
    source: str
    commit: str | None = None
    artifact: str
    passed: bool = Field(description="Every phase's gate passed, the review included.")
    stopped_at: PhaseName | None = Field(
        default=None, description="The phase whose gate failed, if any."
    )
    reviewed: bool = Field(
        default=False,
        description="The Independent Reviewer's clean-room check ran and passed; until then "
        "the claims' statuses are the Distiller's curation of its own reference runs.",
    )
    claims: list[ClaimSummary] = Field(default_factory=list)
    phase_seconds: dict[str, float] = Field(default_factory=dict)
    reused: list[PhaseName] = Field(
        default_factory=list, description="Phases whose records --resume reused."
    )
    fixes: list[str] = Field(default_factory=list, description="Fix summaries, in order.")
    advisor_calls: int = 0
    findings: list[BuildFinding] = Field(default_factory=list)
    failure: FailureReport | None = Field(
        default=None, description="Why the build stopped and how to go on (a stopped build)."
    )
