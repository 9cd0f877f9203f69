"""The build agent's phase outputs: one typed JSON document per phase in ``OUT/.rra-build/``.

``reprobridge build`` moves through phases (Intake, Planner, Builder, Reproducer, Distiller,
Packager, Independent Reviewer). Each phase writes ``<phase>.json``, a :class:`PhaseRecord`
subclass below, and each record carries:

* ``inputs_digest``: the SHA-256 of everything the phase read (the source commit, the claims,
  the options, the previous phases' records). ``--resume`` reuses a record only when the
  digest of its inputs is unchanged, so a changed input invalidates that phase and every
  phase after it;
* ``gate``: whether the phase's gate passed, with the findings (family ``B``) that say why not.

These documents are build state, not part of an artifact: their schemas (``build-*-1.0``)
are generated like the others so that tools can read a build's progress.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .guide import Ambiguity, Change, Pitfall

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

#: Version of the build-state documents.
BUILD_VERSION = "1.0"

PhaseName = Literal[
    "intake", "planner", "builder", "reproducer", "distiller", "packager", "reviewer"
]
#: The phases in order.
PHASES: tuple[PhaseName, ...] = (
    "intake",
    "planner",
    "builder",
    "reproducer",
    "distiller",
    "packager",
    "reviewer",
)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BuildFinding(_Record):
    """A finding of the build (family ``B``) in its JSON form."""

    code: str = Field(pattern=r"^[A-Z][0-9]{3}$")
    severity: Literal["error", "warning", "info"]
    message: str
    path: str = Field(default="", description="JSON Pointer into the claims file, if any.")
    hint: str | None = None


class Gate(_Record):
    """A phase's gate: passed, or the findings that stop the build."""

    passed: bool
    findings: list[BuildFinding] = Field(default_factory=list)


class PhaseRecord(_Record):
    """What every phase record carries."""

    build_version: str = BUILD_VERSION
    phase: PhaseName
    inputs_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    seconds: float = Field(ge=0, description="Wall time the phase took.")
    gate: Gate


# --------------------------------------------------------------------------- intake


class SourceLine(_Record):
    """A place in the repository: a file and a 1-based line, with the line's text."""

    file: str
    line: int = Field(ge=1)
    text: str = Field(max_length=300)


DependencyKind = Literal["requirements", "setup.py", "setup.cfg", "pyproject", "conda", "pipfile"]


class DependencyFile(_Record):
    """A file that declares dependencies."""

    path: str
    kind: DependencyKind
    requirements: list[str] = Field(
        default_factory=list, description="The requirement lines it declares, as written."
    )


class ImportUse(_Record):
    """A third-party top-level module the code imports, and where."""

    module: str
    files: list[str]


class PythonEra(_Record):
    """The Python the code was written for."""

    syntax: Literal["2", "3"] = Field(description="'2' when some file only parses as Python 2.")
    python2_files: list[str] = Field(default_factory=list)
    python_requires: str | None = None
    commit_date: str = Field(description="Committer date of the source commit (ISO 8601).")
    target: str = Field(description="The installed interpreter the build uses, 'X.Y'.")


class EntryOption(_Record):
    """One command-line option of an entry point."""

    flags: list[str]
    default: str | None = Field(default=None, description="The default, as source text.")
    type: str | None = None
    help: str | None = None


class EntryPoint(_Record):
    """A script that can be run."""

    path: str
    kinds: list[Literal["argparse", "click", "main", "readme", "notebook"]] = Field(
        description="Why it runs: a __main__ guard or top-level statements (main), an "
        "argument parser, click, a README command, or a Jupyter notebook (notebook)."
    )
    options: list[EntryOption] = Field(default_factory=list)
    readme_commands: list[str] = Field(default_factory=list)
    prints: list[str] = Field(
        default_factory=list, description="Literal text of the print and logging calls."
    )


class DataReference(_Record):
    """A URL, a data path or a download script the code refers to."""

    kind: Literal["url", "path", "script"]
    value: str
    where: SourceLine | None = None


class CommandLine(_Record):
    """A command line read as a launcher (from a README, a shell script or a claim's hint)."""

    source: str = Field(description="Where it was read: a file of the repository, or 'hint'.")
    text: str = Field(max_length=4096, description="The line as written.")
    workdir: str = Field(default=".", description="Working directory, from the repository root.")
    env: dict[str, str] = Field(default_factory=dict)
    argv: list[str] = Field(
        default_factory=list, description="With 'shell', the one shell line (argv[0])."
    )
    script: str | None = Field(default=None, description="The Python file it runs, if found.")
    module: str | None = Field(default=None, description="The module of 'python -m'.")
    shell: bool = Field(default=False, description="Only a shell can run it as written.")
    via: str | None = Field(default=None, description="The shell script it was followed through.")
    problem: str | None = Field(default=None, description="Why it cannot be a launcher.")
    console_script: str | None = Field(
        default=None,
        description="The console script of the repository's own package the line runs "
        "(read from its packaging metadata), run without installing the package.",
    )


class IntakeRecord(PhaseRecord):
    """The Intake phase: an inventory of the repository."""

    phase: Literal["intake"] = "intake"
    source: str = Field(description="The SOURCE argument as given (URL or path).")
    repo_name: str
    commit: str = Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")
    dependency_files: list[DependencyFile] = Field(default_factory=list)
    imports: list[ImportUse] = Field(default_factory=list)
    python: PythonEra
    entry_points: list[EntryPoint] = Field(default_factory=list)
    readme_commands: list[str] = Field(default_factory=list)
    commands: list[CommandLine] = Field(
        default_factory=list, description="The README's Python commands, read as launchers."
    )
    data: list[DataReference] = Field(default_factory=list)
    seeds: list[SourceLine] = Field(default_factory=list)
    outputs: list[SourceLine] = Field(default_factory=list)
    gpu: list[SourceLine] = Field(default_factory=list)
    license: str | None = Field(default=None, description="SPDX id guessed from the licence.")


# --------------------------------------------------------------------------- planner


class PrepareStep(_Record):
    """A command of the repository that writes a file a launcher reads: the launcher runs it
    first, in the same run (one shell line, ``step && launcher``)."""

    argv: list[str] = Field(min_length=1, description="The step as the repository runs it.")
    smoke_argv: list[str] = Field(
        min_length=1,
        description="The step in a smoke launcher: its size options small, else 'argv'.",
    )
    workdir: str = Field(default=".", description="Working directory, from the repository root.")
    env: dict[str, str] = Field(default_factory=dict)
    script: str = Field(description="The Python file it runs, from the repository root.")
    source: str = Field(description="Where the step was found: a README, or the script itself.")
    produces: str = Field(description="The file it writes, from the repository root.")
    console_script: str | None = Field(
        default=None, description="The console script of the repository's package it runs."
    )


class LauncherPlan(_Record):
    """A launcher the Planner proposes."""

    id: str
    script: str
    argv: list[str] = Field(description="With '{seed}' where the seed goes.")
    workdir: str = "."
    env: dict[str, str] = Field(
        default_factory=lambda: {"MPLBACKEND": "Agg"},
        description="Environment variables; a non-interactive matplotlib backend by default.",
    )
    shell: bool = Field(
        default=False, description="argv[0] is a shell line (only a shell can run it)."
    )
    scope: Literal["smoke", "scored"]
    seed_flag: str | None = Field(
        default=None,
        description="The option (or, for a script without an argument parser, the "
        "environment variable) that takes the seed; None: the script takes no seed.",
    )
    seeds: list[int] = Field(
        default_factory=list,
        description="The seeds to run with. With no seed_flag: the seeds the claims ask for, "
        "which the Reproducer gives the script an option for.",
    )
    repeats: int = Field(
        default=1,
        ge=1,
        description=(
            "Reference observations to make: runs of the seed (or of an unseeded command), "
            "or repetitions of every seed for a claim over several seeds."
        ),
    )
    prepare: list[PrepareStep] = Field(
        default_factory=list,
        description="Steps that write the files the launcher reads, run first in the same "
        "run (the Reproducer adds them when a run stops on a missing file).",
    )


class NotebookScript(_Record):
    """The script the agent makes from a notebook that computes a claim."""

    notebook: str = Field(description="The notebook (.ipynb), relative to the repository.")
    script: str = Field(description="The generated script beside it; the launchers run it.")
    display: bool = Field(
        default=False,
        description="Cells' last bare expressions are printed (the notebook shows the "
        "claim's number only as a displayed value).",
    )
    commented: list[str] = Field(
        default_factory=list, description="IPython-only lines commented out ('cell N: line')."
    )
    change: str = Field(description="The id of its change-record entry (a convenience patch).")
    tasks: list[str] = Field(default_factory=list)


class ClaimPlan(_Record):
    """How one claim will be produced, or why it cannot be."""

    claim: str
    status: Literal["planned", "unplanned"]
    smoke: str | None = Field(default=None, description="Smoke launcher id.")
    scored: str | None = Field(default=None, description="Scored launcher id.")
    basis: str = Field(description="Why this script: the hint or heuristic that chose it.")
    reason: str | None = Field(default=None, description="Why there is no plan.")
    statistic: Literal["mean", "median", "min", "max", "std"] | None = Field(
        default=None,
        description=(
            "A claim over several seeds: how the task's statistic aggregates the scored "
            "launcher's seeds (each reference observation is one repetition of them all). "
            "None: a statistic over one seed."
        ),
    )


class ReachedImport(_Record):
    """A third-party module a planned launcher's script reaches (its import closure)."""

    module: str
    files: list[str] = Field(description="The repository files that import it.")
    optional: str | None = Field(
        default=None,
        description="Why the import is optional (try/except ImportError, in a function, "
        "behind another module's __main__ guard); None: required.",
    )


class PlanRecord(PhaseRecord):
    """The Planner phase: launchers per claim and the ambiguities met on the way."""

    phase: Literal["planner"] = "planner"
    launchers: list[LauncherPlan] = Field(default_factory=list)
    claims: list[ClaimPlan] = Field(default_factory=list)
    ambiguities: list[Ambiguity] = Field(default_factory=list)
    pitfalls: list[Pitfall] = Field(default_factory=list)
    conveniences: list[Change] = Field(
        default_factory=list,
        description="Changes of how the code runs, not of the code (no patch), e.g. the "
        "repository root on PYTHONPATH.",
    )
    imports: list[ReachedImport] = Field(
        default_factory=list,
        description="Third-party modules the planned scripts reach: the Builder's imports.",
    )
    code_date: str | None = Field(
        default=None,
        description="Committer date of the newest commit that changed a planned script, a "
        "repository file it reaches that imports a third-party module, or a file that declares "
        "dependencies (pins set later than the code are of a later era): the era of the code's "
        "library calls, which bounds the Builder's environments of the code's era (None: "
        "the source commit's date).",
    )
    notebooks: list[NotebookScript] = Field(
        default_factory=list,
        description="Notebooks run as generated scripts, written into the refined code by "
        "the Reproducer and recorded as convenience patches.",
    )


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
        description="The steps that would unblock the build, in order: 'edit <path>' or a "
        "'reprobridge ...' command line (POSIX shell quoting)."
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
