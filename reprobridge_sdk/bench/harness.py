"""``reprobridge bench run``: an agent over a suite, each run in a fresh sandboxed workspace.

The steps of a run are spec/bench.md §18.5. Nothing an agent does stops the batch: every
ending is an outcome of its run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.errors import ReproBridgeError, UsageError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model.bench import (
    BenchReport,
    BenchRun,
)

from .job import AGENTS, Budget, Job, agent_argv, run_job
from .outcome import USAGE_NAME, classify, read_usage
from .prompt import PROMPT_TEMPLATE, check_template, render_prompt
from .variants import VARIANTS, WORKSPACE_DIR

if TYPE_CHECKING:
    from reprobridge_sdk.run.executors import ExecutorOptions

__all__ = [
    "AGENTS",
    "PROMPT_TEMPLATE",
    "USAGE_NAME",
    "BenchOptions",
    "Budget",
    "classify",
    "read_usage",
    "render_prompt",
    "run_bench",
]


@dataclass(frozen=True)
class BenchOptions:
    """How ``bench run`` runs (the command's options)."""

    variants: tuple[str, ...] = VARIANTS
    repeats: int = 1
    jobs: int = 1
    executor: str | None = None
    #: How to reach and size a distributed executor (``dask`` and ``slurm`` need its
    #: ``shared_fs``: the runs are written into OUT where it is).
    executor_options: ExecutorOptions | None = None
    sandbox: bool = True
    network: str = "none"
    allow_hosts: tuple[str, ...] = ()
    budget: Budget = field(default_factory=Budget)
    visible: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    prompt: str = PROMPT_TEMPLATE
    level: float = 0.95
    floor: float = 0.01
    fetch: bool = False
    rerun: int = 0


def _memory_bytes(text: str | None) -> int | None:
    from reprobridge_sdk.model.launcher import memory_bytes  # noqa: PLC0415

    return None if text is None else memory_bytes(text)


def _budget_for(entry: Any, defaults: Any, budget: Budget) -> Budget:
    own = entry.budget or defaults.budget
    if own is None:
        return budget
    return replace(
        budget,
        timeout=own.time if own.time is not None else budget.timeout,
        memory=_memory_bytes(own.memory) if own.memory is not None else budget.memory,
        max_cost=own.cost if own.cost is not None else budget.max_cost,
    )


def _prepare_out(out: Path) -> None:
    if out.is_symlink() or out.is_file():
        message = f"{out} exists and is not a folder"
        raise UsageError(message, [finding("N004", message, hint="choose another -o folder")])
    if out.is_dir() and any(out.iterdir()) and not (out / "report.json").is_file():
        message = f"{out} is not empty and holds no report.json: not writing into it"
        raise UsageError(message, [finding("N004", message, hint="choose another -o folder")])
    if out.is_dir():  # an earlier bench's folders: replaced whole
        for child in out.iterdir():
            earlier = child.name in ("runs", "variants") or child.name.startswith("agent-")
            if earlier and child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
    out.mkdir(parents=True, exist_ok=True)


def _plan(
    batch: Any, opened: list[Any], out: Path, agent: str, options: BenchOptions
) -> tuple[list[Job], list[Finding]]:
    from reprobridge_sdk.api import load  # noqa: PLC0415
    from reprobridge_sdk.authoring.batch import digest_finding  # noqa: PLC0415

    from .variants import generate_variants  # noqa: PLC0415

    argv = tuple(agent_argv(agent))
    jobs: list[Job] = []
    problems: list[Finding] = []
    defaults = batch.model.defaults
    for index, (entry, item) in enumerate(zip(batch.model.submission, opened, strict=True)):
        if item.root is None:
            problems.extend(item.findings)
            continue
        mismatch = digest_finding(batch, index, entry, item)
        if mismatch is not None:
            problems.append(mismatch)
            continue
        try:
            art = load(item.root)
        except ReproBridgeError as exc:
            problems.extend(exc.findings)
            continue
        known = [task.id for task in art.manifest.tasks]
        wanted = list(entry.tasks) if entry.tasks is not None else known
        for name in [t for t in wanted if t not in known]:
            problems.append(
                finding(
                    "A100",
                    f"submission {entry.id}: the artifact has no task {name!r}",
                    file=batch.file,
                    line=batch.line_of(("submission", index, "tasks")),
                    path=f"/submission/{index}/tasks",
                    hint=f"name tasks of the artifact: {', '.join(known)}",
                )
            )
        tasks = [t for t in wanted if t in known]
        budget = _budget_for(entry, defaults, options.budget)
        for variant in options.variants:
            target = out / "variants" / entry.id
            try:
                generate_variants(item.root, target, [variant], fetch=options.fetch)
            except ReproBridgeError as exc:
                problems.extend(exc.findings)
                continue
            source = target / variant / WORKSPACE_DIR
            for task in tasks:
                for repeat in range(options.repeats):
                    jobs.append(
                        Job(
                            out=str(out),
                            folder=f"runs/{entry.id}/{task}/{variant}/r{repeat}",
                            agent=agent,
                            argv=argv,
                            submission=entry.id,
                            artifact_id=art.manifest.artifact.id,
                            artifact_root=str(item.root),
                            source=str(source),
                            task=task,
                            variant=variant,
                            repeat=repeat,
                            prompt=options.prompt,
                            budget=budget,
                            sandbox=options.sandbox,
                            network=options.network,
                            allow_hosts=options.allow_hosts,
                            visible=options.visible,
                            pass_env=options.pass_env,
                            level=options.level,
                            floor=options.floor,
                            rerun=options.rerun,
                        )
                    )
    return jobs, problems


def run_bench(
    agents: Sequence[str],
    suite: str | os.PathLike[str],
    out: str | os.PathLike[str],
    options: BenchOptions,
) -> BenchReport:
    """Run each of ``agents`` over the suite; the report, also written to ``OUT/report.json``.

    Raises :class:`UsageError` for a bad suite (A090, A091), output folder (N004) or sandbox
    (N011); nothing an agent does raises.
    """
    from reprobridge_sdk.audit.verdict import as_audit_finding  # noqa: PLC0415
    from reprobridge_sdk.authoring.batch import load_batch, open_batch  # noqa: PLC0415
    from reprobridge_sdk.run.executors import make_executor  # noqa: PLC0415
    from reprobridge_sdk.run.runner import require_sandbox  # noqa: PLC0415

    from .report import build_report  # noqa: PLC0415
    from .variants import _check_variants  # noqa: PLC0415

    _check_variants(options.variants)
    check_template(options.prompt)
    for agent in agents:
        agent_argv(agent)
    if options.network not in ("none", "allow", "open"):
        message = f"unknown network policy {options.network!r}"
        raise UsageError(message, [finding("N004", message, hint="none, allow or open")])
    if (options.network == "allow") != bool(options.allow_hosts):
        message = "the allow policy takes hosts (--allow-host), and only it does"
        hint = "--network allow --allow-host pypi.org --allow-host files.pythonhosted.org"
        raise UsageError(message, [finding("N004", message, hint=hint)])
    if options.network == "allow" and not options.sandbox:
        message = "--network allow needs the sandbox: without it nothing holds the agent back"
        raise UsageError(message, [finding("N004", message, hint="drop --no-sandbox")])
    _check_executor(options)
    batch = load_batch(suite)
    _check_visible(options.visible, [batch.folder, Path(out)])
    if not batch.model.submission:
        message = f"{batch.file} lists no [[submission]]"
        raise UsageError(message, [finding("A091", message, file=batch.file, line=1)])
    if options.sandbox:
        require_sandbox()
    target = Path(out).absolute()
    _prepare_out(target)
    runs: list[BenchRun] = []
    problems: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="rb-bench-") as scratch:
        opened = [item for item, _ in open_batch(batch, Path(scratch))]
        planned: list[Job] = []
        for agent in agents:
            jobs, found = _plan(batch, opened, target / _agent_dir(agent, agents), agent, options)
            if agent == agents[0]:
                problems.extend(found)
            planned.extend(jobs)
        if planned:  # one executor for every agent: a cluster is started once
            sized = _sized(options, planned)
            with make_executor(options.executor, jobs=options.jobs, options=sized) as executor:
                done = executor.map(run_job, planned)
            for job, run in zip(planned, done, strict=True):
                prefix = _agent_dir(job.agent, agents)
                if prefix:
                    run.folder = f"{prefix}/{run.folder}"
                runs.append(run)
    digest = hashlib.sha256(Path(suite).read_bytes()).hexdigest()
    report = build_report(
        runs,
        suite=os.fspath(suite),
        suite_sha256=digest,
        agents=list(agents),
        options=options,
        findings=[as_audit_finding(item) for item in problems],
    )
    from reprobridge_sdk.io.atomic import atomic_write_text, json_text  # noqa: PLC0415

    atomic_write_text(
        target / "report.json", json_text(report.model_dump(mode="json"), sort_keys=True)
    )
    return report


def _check_executor(options: BenchOptions) -> None:
    """N004 when a distributed executor (``dask``, ``slurm``) is not told that its workers
    share this file system: they copy the workspaces from OUT and write the runs into it."""
    name = options.executor
    shared = options.executor_options is not None and options.executor_options.shared_fs
    if name in ("dask", "slurm") and not shared:
        message = f"bench on the {name!r} executor needs a shared file system"
        hint = "the workers write the runs into OUT where it is: add --shared-fs"
        raise UsageError(message, [finding("N004", message, hint=hint)])


#: Seconds a run may take beyond its agent's wall time: the workspace copy and the judge.
_RUN_MARGIN = 60.0


def _sized(options: BenchOptions, jobs: Sequence[Job]) -> ExecutorOptions:
    """The executor options, with a batch job (``slurm``) big enough for the runs: the wall
    time of its share of them (their budgets spread over ``-j`` jobs, plus the longest one)
    and the largest memory budget."""
    from reprobridge_sdk.run.executors import ExecutorOptions  # noqa: PLC0415

    seconds = [job.budget.timeout + _RUN_MARGIN for job in jobs]
    memory = max((job.budget.memory or 0 for job in jobs), default=0)
    return replace(
        options.executor_options or ExecutorOptions(),
        walltime=sum(seconds) / options.jobs + max(seconds),
        memory=memory or None,
    )


def _check_visible(visible: Sequence[str], protected: Sequence[Path]) -> None:
    """N004 when a ``--visible`` path would show the agent the suite's folder (the artifacts
    and their references) or the output folder (the other runs), or lies inside them."""
    for given in visible:
        shown = Path(os.path.realpath(given))
        for place in protected:
            real = Path(os.path.realpath(place))
            if real.is_relative_to(shown) or shown.is_relative_to(real):
                message = f"--visible {given} would show the agent {place}"
                hint = "show the agent only its own program, kept apart from the suite and OUT"
                raise UsageError(message, [finding("N004", message, hint=hint)])


def _agent_dir(agent: str, agents: Sequence[str]) -> str:
    """Several agents: each gets ``agent-<n>/`` under OUT; one agent writes into OUT."""
    if len(agents) == 1:
        return ""
    return f"agent-{list(agents).index(agent)}"
