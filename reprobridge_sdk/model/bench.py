"""The bench documents (spec/bench.md §18, preview): the results file an agent leaves
(:class:`BenchResults`), what ``reprobridge bench judge`` concludes (:class:`BenchJudgement`)
and the ``variant.json`` beside each workspace (:class:`VariantRecord`).

Paths are plain strings here: the judge, not the schema, refuses one that leaves the
workspace, so one hostile entry costs its own task. Numbers that are not finite are ``null``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import SpecModel
from .audit import AuditFinding, IcmlVerdict

__all__ = [
    "BENCH_RESULTS_VERSION",
    "BENCH_VERSION",
    "AgentPair",
    "BenchClaim",
    "BenchJudgement",
    "BenchReport",
    "BenchResults",
    "BenchRun",
    "BenchVerdict",
    "ClaimRow",
    "HeldBack",
    "LandmarkProgress",
    "PairedTest",
    "ProxyCounts",
    "RateInterval",
    "RerunCounts",
    "ResultRun",
    "RunOutcome",
    "Support",
    "TaskResult",
    "Usage",
    "VariantFile",
    "VariantRecord",
    "VariantStat",
]

#: The version of the results file this SDK writes and reads.
BENCH_RESULTS_VERSION = "1.0"
#: The version of the judgement and variant records.
BENCH_VERSION = "1.0"

#: How far the agent's logs back its value (spec ``bench``, "Outcomes").
Support = Literal[
    "log-backed",
    "no-logs",
    "log-refused",
    "not-extractable",
    "contradicted",
    "no-value",
    "unknown-task",
    "not-reported",
]
#: The claim's verdict: the auditor's interval verdicts, or ``unsupported``.
BenchVerdict = Literal[
    "compatible", "incompatible", "toy", "inconclusive", "not-executed", "unsupported"
]


class ResultRun(SpecModel):
    """One run behind a value: its log and the output files it wrote."""

    log: str | None = Field(
        default=None,
        min_length=1,
        description="The run's log (stdout and stderr), relative to the workspace.",
    )
    outputs: dict[str, str] = Field(
        default_factory=dict,
        description="Output id (as the artifact's launcher names it) -> file, relative to the "
        "workspace.",
    )
    seed: int | None = Field(default=None, description="The seed the run was given, if any.")


class TaskResult(SpecModel):
    """The agent's value for one task, and the runs it comes from."""

    task: str = Field(min_length=1, max_length=200, description="The task id of the claim.")
    value: float | None = Field(
        strict=True, description="The value the agent reports (null: it did not get one)."
    )
    launcher: str | None = Field(
        default=None,
        description="The artifact launcher whose extractors read the runs (default: a scored "
        "launcher that measures the task).",
    )
    runs: list[ResultRun] = Field(
        default_factory=list, description="The runs behind the value; none: unsupported."
    )
    note: str | None = None


class BenchResults(SpecModel):
    """The results file an agent leaves in its workspace (``bench-results.json``)."""

    bench_results_version: str = Field(
        pattern=r"^1\.(0|[1-9][0-9]*)$", description="'1.MINOR'; this schema is major 1."
    )
    artifact: str | None = Field(default=None, description="The artifact id, if the agent knows.")
    variant: str | None = Field(default=None, description="The workspace variant, if known.")
    agent: str | None = Field(default=None, description="The agent, in its own words.")
    results: list[TaskResult] = Field(default_factory=list, max_length=10_000)


class LandmarkProgress(SpecModel):
    """SUPER-style progress: which of the launcher's landmarks the agent's logs reached."""

    reached: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)
    progress: float | None = Field(
        default=None, description="reached / (reached + missed); null without landmarks."
    )


class BenchClaim(SpecModel):
    """The judgement of one claim (task)."""

    task: str
    support: Support
    verdict: BenchVerdict
    icml: IcmlVerdict
    value: float | None = Field(default=None, description="The value the agent reported.")
    extracted: float | None = Field(
        default=None, description="The value re-extracted from the agent's logs."
    )
    launcher: str | None = None
    runs: int = Field(default=0, description="Runs whose values were re-extracted.")
    low: float | None = None
    high: float | None = None
    landmarks: LandmarkProgress = Field(default_factory=LandmarkProgress)
    findings: list[AuditFinding] = Field(default_factory=list)


class BenchJudgement(SpecModel):
    """What the judge concludes about one results file."""

    bench_version: str = BENCH_VERSION
    artifact: str
    level: float
    floor: float
    claims: list[BenchClaim] = Field(default_factory=list)
    verdicts: dict[str, int] = Field(default_factory=dict)
    icml_counts: dict[str, int] = Field(default_factory=dict)
    progress: float | None = Field(
        default=None, description="Mean landmark progress over the artifact's tasks."
    )
    findings: list[AuditFinding] = Field(
        default_factory=list, description="Findings on the results file as a whole."
    )


class VariantFile(SpecModel):
    """A file of a workspace: its path and digest (or, for a link, its target)."""

    path: str
    sha256: str | None = None
    size: int | None = None
    link: str | None = None


class HeldBack(SpecModel):
    """Something of the artifact the variant does not hold: a file or a manifest field."""

    what: str = Field(description="A file path, or a JSON pointer into rra.yaml ('#/...').")
    why: str


class VariantRecord(SpecModel):
    """``variant.json``: what a workspace holds, where it came from and what was held back."""

    bench_version: str = BENCH_VERSION
    variant: str
    artifact: str
    artifact_version: str | None = None
    manifest_sha256: str = Field(description="SHA-256 of the artifact's rra.yaml.")
    artifact_files_sha256: str = Field(
        description="SHA-256 of the artifact's file list: one line '<sha256>  <path>' (LF) per "
        "file that pack carries, rra.yaml included, in byte order of the paths."
    )
    source: str = Field(
        description="Where the code came from: 'artifact', 'upstream-bundle' (the artifact's "
        "bundle of the upstream), 'upstream' (a cached, local or fetched upstream) or "
        "'refined-code' (raw without the upstream)."
    )
    upstream: str | None = None
    commit: str | None = None
    files: list[VariantFile] = Field(default_factory=list)
    held_back: list[HeldBack] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


#: How an agent's run ended (spec ``bench``, "Outcomes of a run").
RunOutcome = Literal[
    "finished",
    "crash",
    "timeout",
    "over-cost",
    "flood",
    "cpu-limit",
    "over-memory",
    "wrote-outside",
    "not-started",
    "no-workspace",
]


class Usage(SpecModel):
    """What the agent reported on its usage channel (``bench-usage.jsonl``), summed."""

    tokens: int | None = Field(default=None, description="Tokens, summed over the lines.")
    cost: float | None = Field(default=None, description="Cost, summed over the lines.")
    currency: str | None = None
    lines: int = Field(default=0, description="Lines read (at most 10,000).")


class ProxyCounts(SpecModel):
    """The connections the allow-list proxy let through and refused in one run."""

    allowed: int = 0
    refused: int = 0


class RerunCounts(SpecModel):
    """``--rerun``: the agent's recorded runs re-executed by the auditor, and how many did not
    hold up (A058, A059)."""

    reran: int = 0
    mismatches: int = 0


class BenchRun(SpecModel):
    """One run of the agent: a task of a submission, in a variant, one repeat."""

    submission: str
    artifact: str | None = None
    task: str
    variant: str
    repeat: int = Field(ge=0)
    agent: str
    outcome: RunOutcome
    exit_code: int | None = None
    seconds: float = Field(ge=0, description="Wall time of the agent's run.")
    support: Support | None = None
    verdict: BenchVerdict = "not-executed"
    icml: IcmlVerdict = "inconclusive"
    value: float | None = None
    extracted: float | None = None
    progress: float | None = Field(default=None, description="The claim's landmark progress.")
    usage: Usage = Field(default_factory=Usage)
    proxy: ProxyCounts | None = Field(
        default=None, description="Under the allow policy: the proxy's connections."
    )
    rerun: RerunCounts | None = Field(
        default=None, description="With --rerun: the agent's recorded runs re-executed."
    )
    folder: str = Field(description="The run's folder, relative to the report's folder.")
    findings: list[AuditFinding] = Field(default_factory=list)


class RateInterval(SpecModel):
    """A confidence interval of a proportion."""

    low: float
    high: float


class VariantStat(SpecModel):
    """The success rate of one agent in one variant, over tasks and repeats."""

    agent: str
    variant: str
    runs: int = Field(description="Runs judged (tasks x repeats).")
    successes: int = Field(description="Runs whose claim is verified.")
    rate: float | None = None
    wilson: RateInterval | None = Field(default=None, description="Wilson interval of the rate.")
    progress: float | None = Field(
        default=None, description="Mean landmark progress over the runs with landmarks."
    )
    seconds_per_success: float | None = Field(
        default=None, description="Total wall time of the runs over the successes."
    )
    cost_per_success: float | None = Field(
        default=None, description="Total reported cost over the successes."
    )
    outcomes: dict[str, int] = Field(default_factory=dict)
    icml: dict[str, int] = Field(default_factory=dict)


class _Versus(SpecModel):
    """``a`` against ``b`` over the same tasks and repeats (McNemar): the counts and test."""

    a: str
    b: str
    pairs: int
    both: int
    only_a: int
    only_b: int
    neither: int
    difference: float | None = Field(default=None, description="rate(a) - rate(b).")
    p_value: float
    method: Literal["exact", "chi-square"]


class PairedTest(_Versus):
    """Variant ``a`` against variant ``b`` over the same tasks and repeats (McNemar)."""

    agent: str


class AgentPair(_Versus):
    """Agent ``a`` against agent ``b`` in one variant, over the same tasks and repeats."""

    variant: str


class ClaimRow(SpecModel):
    """A claim (task of a submission) in one variant: its ICML labels over the repeats."""

    agent: str
    submission: str
    task: str
    variant: str
    icml: dict[str, int] = Field(default_factory=dict)
    verdicts: dict[str, int] = Field(default_factory=dict)


class BenchReport(SpecModel):
    """What ``reprobridge bench run`` reports (``report.json``)."""

    bench_version: str = BENCH_VERSION
    suite: str = Field(description="The suite file as given.")
    suite_sha256: str
    agents: list[str]
    variants: list[str]
    repeats: int
    sandbox: bool
    executor: Literal["local", "dask-local", "dask", "slurm"] = Field(
        default="local", description="The executor the agents' runs went through."
    )
    network: Literal["none", "allow", "open"]
    allow_hosts: list[str] = Field(
        default_factory=list, description="The hosts the allow policy lets the agent reach."
    )
    budget: dict[str, float | int | None] = Field(
        default_factory=dict, description="The budgets that applied when no submission set one."
    )
    level: float = 0.95
    rerun: int = Field(
        default=0,
        ge=0,
        description="Recorded runs of each agent re-executed per launcher and task.",
    )
    runs: list[BenchRun] = Field(default_factory=list)
    rates: list[VariantStat] = Field(default_factory=list)
    paired: list[PairedTest] = Field(default_factory=list)
    versus: list[AgentPair] = Field(
        default_factory=list, description="With several agents: each pair of them per variant."
    )
    claims: list[ClaimRow] = Field(default_factory=list)
    findings: list[AuditFinding] = Field(
        default_factory=list, description="Submissions that could not be benched, and why."
    )
