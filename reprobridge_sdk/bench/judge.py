"""The judge of an agent's results file (preview): it never believes the agent.

Each value is re-extracted from the logs and outputs named, opened only inside the workspace,
and judged as the auditor judges a task. See spec/bench.md §18.3.
"""

from __future__ import annotations

import math
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from reprobridge_sdk.api import load
from reprobridge_sdk.audit.interval import DEFAULT_FLOOR, DEFAULT_LEVEL, Interval, finite
from reprobridge_sdk.audit.interval import compatibility_interval as interval_of
from reprobridge_sdk.audit.verdict import ICML, as_audit_finding
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.extract._opened import OpenedFile, open_checked
from reprobridge_sdk.extract.extraction import (
    ExtractionError,
    aggregate,
    extract_value,
    regex_matches,
)
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import reading
from reprobridge_sdk.io.safefs import UnsafeFileError
from reprobridge_sdk.model import Launcher, Manifest, Measurement, Task
from reprobridge_sdk.model.bench import (
    BenchClaim,
    BenchJudgement,
    BenchResults,
    BenchVerdict,
    LandmarkProgress,
    ResultRun,
    Support,
    TaskResult,
)
from reprobridge_sdk.validation.replay import same_value

__all__ = [
    "DEFAULT_MAX_LOG_BYTES",
    "MAX_RESULTS_BYTES",
    "RESULTS_NAME",
    "judge_results",
    "load_results",
    "measuring_launcher",
]

#: The results file an agent leaves at its workspace's root.
RESULTS_NAME = "bench-results.json"
#: The largest results file read.
MAX_RESULTS_BYTES = 16 * 1024 * 1024
#: The largest log or output file the judge reads (``--max-log-bytes``).
DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024


def _refused(message: str, file: str) -> ArtifactError:
    item = finding(
        "A072", message, file=file, hint="write the file as schemas/bench-results-1.0 says"
    )
    return ArtifactError(message, [item])


def load_results(path: str | os.PathLike[str]) -> BenchResults:
    """The results file at ``path``; :class:`ArtifactError` (A072) when it cannot be used."""
    name = os.fspath(path)
    try:
        data = reading.read_json(name, max_bytes=MAX_RESULTS_BYTES, unique_keys=True)
        return BenchResults.model_validate(data)
    except reading.Unreadable as exc:
        message = {
            "too-large": f"{name} is larger than {MAX_RESULTS_BYTES} bytes",
            "missing": f"{name} cannot be read: {exc.message}",
            "io": f"{name} cannot be read: {exc.message}",
            "unsafe": exc.message,
        }.get(exc.problem, f"{name}: not a results file: {exc.message}")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/" + "/".join(str(p) for p in first["loc"])
        message = f"{name}: not a results file at {where}: {first['msg']}"
    raise _refused(message, name) from None


@dataclass
class _Context:
    manifest: Manifest
    workspace: Path
    real_workspace: str
    max_bytes: int
    level: float
    floor: float


@dataclass
class _Entry:
    """The judgement of one entry under construction."""

    support: Support = "log-backed"
    findings: list[Finding] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    #: Distinct seeds of the runs with a value (a run without a seed counts on its own).
    seeds: int = 0

    def fail(self, support: Support, item: Finding) -> None:
        if self.support == "log-backed":
            self.support = support
        self.findings.append(item)


def _open_path(ctx: _Context, relative: str, where: str, entry: _Entry) -> Path | None:
    """The file ``relative`` names inside the workspace, or None (A074, A075 in ``entry``)."""

    def refused(code: str, message: str, hint: str) -> None:
        entry.fail("log-refused", finding(code, message, path=where, hint=hint))

    text = relative.replace("\\", "/")
    parts = PurePosixPath(text).parts
    if (
        not parts
        or "\0" in text
        or text.startswith("/")
        or Path(relative).is_absolute()
        or ".." in parts
    ):
        hint = "name logs and outputs relative to the workspace, without '..'"
        refused("A074", f"{relative!r} is not a path inside the workspace", hint)
        return None
    real = os.path.realpath(ctx.workspace.joinpath(*parts))
    if real != ctx.real_workspace and not real.startswith(ctx.real_workspace + os.sep):
        hint = "leave the logs themselves in the workspace, not links to them"
        refused("A074", f"{relative!r} is a link that leads out of the workspace", hint)
        return None
    problem = _unreadable(real, ctx.max_bytes)
    if problem is not None:
        refused("A075", f"{relative!r} {problem}", "leave the file as written")
        return None
    return Path(real)


def _unreadable(real: str, max_bytes: int) -> str | None:
    try:
        info = Path(real).stat()
    except OSError:
        return "does not exist"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_size > max_bytes:
        return f"has {info.st_size} bytes, over the cap of {max_bytes}"
    return None


def measuring_launcher(manifest: Manifest, task: str, named: str | None = None) -> Launcher | None:
    """The launcher that measures ``task`` (``named``, if given), a scored one first."""
    found = [
        launcher
        for launcher in manifest.launchers
        if named in (None, launcher.id) and any(m.task == task for m in launcher.measurements)
    ]
    return min(found, key=lambda launcher: launcher.scope != "scored", default=None)


def _launcher_for(
    manifest: Manifest, result: TaskResult
) -> tuple[Launcher | None, Measurement | None]:
    launcher = measuring_launcher(manifest, result.task, result.launcher)
    if launcher is None:
        return None, None
    return launcher, next(m for m in launcher.measurements if m.task == result.task)


def _run_value(  # noqa: PLR0917 - private helper
    ctx: _Context,
    launcher: Launcher,
    measurement: Measurement,
    run: ResultRun,
    index: int,
    entry: _Entry,
) -> float | None:
    where = f"/results/{index}"
    log = _open_path(ctx, run.log, f"{where}/log", entry) if run.log else None
    outputs: dict[str, Path] = {}
    for output_id, relative in sorted(run.outputs.items()):
        opened = _open_path(ctx, relative, f"{where}/outputs/{output_id}", entry)
        if opened is not None:
            outputs[output_id] = opened
    if entry.support != "log-backed":
        return None
    if log is not None:
        entry.logs.append(log)
    context: dict[str, object] = dict(launcher.params)
    if run.seed is not None:
        context["seed"] = run.seed
    context["run_dir"] = str(log.parent if log is not None else ctx.workspace)
    try:
        extracted = extract_value(
            measurement.extract,
            log=log,
            files_base=ctx.workspace,
            outputs=outputs,
            context=context,
            root=ctx.workspace,
            max_bytes=ctx.max_bytes,
            transform=measurement.transform,
        )
    except ExtractionError as exc:
        entry.fail(
            "not-extractable",
            finding(
                "A078",
                f"the artifact's extractor reads no value from the run: {exc.message}",
                path=where,
                hint="leave the logs and outputs the artifact's launcher writes",
            ),
        )
        return None
    return extracted.mean


def _decimals(value: float) -> int:
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    digits = len(mantissa.partition(".")[2])
    return max(0, digits - (int(exponent) if exponent else 0))


def agrees(claimed: float, extracted: float) -> bool:
    """Whether the agent's ``claimed`` value is ``extracted`` written with fewer digits."""
    if same_value(claimed, extracted):
        return True
    if not (math.isfinite(claimed) and math.isfinite(extracted)):
        return False
    return abs(claimed - extracted) <= 0.5 * 10.0 ** -_decimals(claimed) * (1 + 1e-9)


def _opened_logs(ctx: _Context, logs: list[Path]) -> list[OpenedFile]:
    """The logs opened once by the safe opener the extraction uses (inside the workspace,
    regular, capped): a log swapped after its checks is refused, never read by name."""
    opened: list[OpenedFile] = []
    for log in logs:
        try:
            found = open_checked(log, ctx.workspace, ctx.max_bytes)
        except (UnsafeFileError, OSError):
            found = None
        if found is not None:
            opened.append(found)
    return opened


def _landmarks(
    launcher: Launcher | None, logs: list[Path], ctx: _Context | None = None
) -> LandmarkProgress:
    if launcher is None or not launcher.landmarks:
        return LandmarkProgress()
    opened = _opened_logs(ctx, logs) if ctx is not None else []
    reached: list[str] = []
    missed: list[str] = []
    try:
        for landmark in launcher.landmarks:
            hit = False
            for log in opened:
                try:
                    found = regex_matches(log, landmark.pattern, group=0, occurrence="first")
                    hit = bool(found)
                except (ExtractionError, OSError):
                    hit = False
                if hit:
                    break
            (reached if hit else missed).append(landmark.id)
    finally:
        for log in opened:
            log.close()
    return LandmarkProgress(
        reached=reached, missed=missed, progress=len(reached) / len(launcher.landmarks)
    )


def _verdict(
    entry: _Entry,
    launcher: Launcher | None,
    task: Task,
    interval: Interval,
    extracted: float | None,
) -> BenchVerdict:
    if entry.support in ("no-value", "not-reported"):
        return "not-executed"
    if entry.support != "log-backed" or extracted is None or launcher is None:
        return "unsupported"
    if launcher.scope == "smoke" or entry.seeds < task.statistic.seeds:
        return "toy"
    if not interval.defined:
        return "inconclusive"
    return "compatible" if interval.contains(extracted) else "incompatible"


def _aggregated(entry: _Entry, measurement: Measurement, index: int) -> float | None:
    if entry.support != "log-backed":
        return None
    try:
        return aggregate(entry.values, measurement.aggregate)
    except ExtractionError as exc:
        entry.fail(
            "not-extractable",
            finding(
                "A078",
                f"the runs' values cannot be aggregated: {exc.message}",
                path=f"/results/{index}/runs",
                hint="list the runs of one launcher and its seeds",
            ),
        )
        return None


def _judge_entry(ctx: _Context, result: TaskResult, index: int) -> BenchClaim:
    task = ctx.manifest.task(result.task)
    entry = _Entry()
    launcher, measurement = _launcher_for(ctx.manifest, result)
    extracted: float | None = None
    if result.value is None:
        entry.support = "no-value"
    elif not result.runs or not any(run.log or run.outputs for run in result.runs):
        entry.fail(
            "no-logs",
            finding(
                "A076",
                f"the value of {result.task!r} has no log or output behind it",
                path=f"/results/{index}",
                hint="list the runs (log and outputs) the value comes from",
            ),
        )
    elif launcher is None or measurement is None:
        named = f"launcher {result.launcher!r}" if result.launcher else "no launcher"
        entry.fail(
            "not-extractable",
            finding(
                "A078",
                f"{named} of the artifact measures {result.task!r}",
                path=f"/results/{index}/launcher",
                hint="name a launcher of the artifact that measures the task, or none",
            ),
        )
    else:
        seeds: set[object] = set()
        for position, run in enumerate(result.runs):
            value = _run_value(ctx, launcher, measurement, run, index, entry)
            if value is not None:
                entry.values.append(value)
                seeds.add(run.seed if run.seed is not None else f"#{position}")
        entry.seeds = len(seeds)
        extracted = _aggregated(entry, measurement, index)
        if extracted is not None and not agrees(result.value, extracted):
            entry.fail(
                "contradicted",
                finding(
                    "A077",
                    f"the value {result.value!r} of {result.task!r} is not what its logs"
                    f" give ({extracted!r})",
                    path=f"/results/{index}/value",
                    hint="report the value the runs give, or the runs the value comes from",
                ),
            )
    interval = interval_of(
        [o.value for o in task.reference.observations], level=ctx.level, floor=ctx.floor
    )
    verdict = _verdict(entry, launcher, task, interval, extracted)
    return BenchClaim(
        task=result.task,
        support=entry.support,
        verdict=verdict,
        icml=ICML.get(verdict, "inconclusive"),
        value=finite(result.value),
        extracted=finite(extracted),
        launcher=launcher.id if launcher is not None else None,
        runs=len(entry.values),
        low=finite(interval.low) if interval.defined else None,
        high=finite(interval.high) if interval.defined else None,
        landmarks=_landmarks(launcher, entry.logs, ctx),
        findings=[as_audit_finding(item) for item in entry.findings],
    )


def _unknown(result: TaskResult, index: int, repeated: bool) -> BenchClaim:
    message = (
        f"{result.task!r} is reported twice; the first entry is judged"
        if repeated
        else f"the artifact has no task {result.task!r}"
    )
    item = finding(
        "A073", message, path=f"/results/{index}/task", hint="report each task once, by its id"
    )
    return BenchClaim(
        task=result.task,
        support="unknown-task",
        verdict="unsupported",
        icml="inconclusive",
        value=finite(result.value),
        findings=[as_audit_finding(item)],
    )


def _not_reported(ctx: _Context, task: Task) -> BenchClaim:
    launcher, _ = _launcher_for(ctx.manifest, TaskResult(task=task.id, value=None))
    progress = _landmarks(launcher, [])
    return BenchClaim(
        task=task.id,
        support="not-reported",
        verdict="not-executed",
        icml="inconclusive",
        launcher=launcher.id if launcher else None,
        landmarks=progress,
    )


def judge_results(
    artifact: str | os.PathLike[str],
    results: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
    level: float = DEFAULT_LEVEL,
    floor: float = DEFAULT_FLOOR,
    max_log_bytes: int = DEFAULT_MAX_LOG_BYTES,
) -> BenchJudgement:
    """Judge the results file ``results`` (its folder is the workspace unless given)."""
    art = load(artifact)
    parsed = load_results(results)
    root = Path(workspace) if workspace is not None else Path(results).parent
    ctx = _Context(art.manifest, root, os.path.realpath(root), max_log_bytes, level, floor)
    known = {task.id for task in art.manifest.tasks}
    claims: list[BenchClaim] = []
    seen: set[str] = set()
    for index, result in enumerate(parsed.results):
        if result.task not in known or result.task in seen:
            claims.append(_unknown(result, index, result.task in seen))
            continue
        seen.add(result.task)
        claims.append(_judge_entry(ctx, result, index))
    claims.extend(_not_reported(ctx, task) for task in art.manifest.tasks if task.id not in seen)
    counted = [claim for claim in claims if claim.support != "unknown-task"]
    progress = [c.landmarks.progress for c in counted if c.landmarks.progress is not None]
    return BenchJudgement(
        artifact=art.manifest.artifact.id,
        level=level,
        floor=floor,
        claims=claims,
        verdicts=dict(sorted(Counter(c.verdict for c in counted).items())),
        icml_counts=dict(sorted(Counter(c.icml for c in counted).items())),
        progress=sum(progress) / len(progress) if progress else None,
    )
