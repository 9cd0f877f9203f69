"""What every build record carries, and the records of the phases that read and plan.

The Intake phase reads the repository (its dependency files, imports, entry points, data and
command lines); the Planner turns it into launchers per claim. The later phases' records are
in :mod:`reprobridge_sdk.model.build`, which offers every name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .guide import Ambiguity, Change, Pitfall

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
        description="The seeds to run with. With no seed_flag: the seeds the claims ask for "
        "(or, for a script that fixes its seed, the seeds the Planner chose), which the "
        "Reproducer gives the script an option for.",
    )
    fixed_seed: int | None = Field(
        default=None,
        description="The constant the script seeds its generators with itself (seed = 123, "
        "then np.random.seed(seed)): run as written, every run repeats one initialisation.",
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
        description="Author date of the newest change to a planned script, a "
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
