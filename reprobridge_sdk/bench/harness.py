"""``reprobridge bench run``: an agent over a suite, each run in a fresh sandboxed workspace.

The suite is the committee's batch file (:mod:`reprobridge_sdk.authoring.batch`, schema
``batch-1.0``): one ``[[submission]]`` per artifact, optionally ``tasks`` (the claims to
bench) and a ``budget``. For every submission, task, variant and repeat the harness

1. copies the variant's workspace (:func:`reprobridge_sdk.bench.variants.generate_variants`,
   generated once per submission into ``OUT/variants/<submission>/``) to a fresh
   ``OUT/runs/<submission>/<task>/<variant>/r<repeat>/workspace``;
2. renders the prompt (:data:`PROMPT_TEMPLATE`, or the user's) to ``prompt.md`` beside it;
3. runs the agent's command there, by default in the sandbox of ``run --sandbox``
   (:mod:`reprobridge_sdk.run.sandbox`): only the workspace is writable, the network is
   ``none`` (``open`` keeps the host's), ``/tmp`` and ``HOME`` are private; under resource
   limits (CPU seconds, address space, file size) and a wall-time timeout, its output
   capped (:func:`reprobridge_sdk.run.process.run_process`);
4. classifies how it ended (:func:`classify`) and judges the results file it left with the
   judge (:func:`reprobridge_sdk.bench.judge.judge_results`), against the artifact the
   harness holds, never the workspace's copy.

Nothing an agent does stops the batch: every ending is an outcome of its run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import ReproBridgeError, UsageError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model.bench import (
    BenchReport,
    BenchRun,
    ProxyCounts,
    RerunCounts,
    RunOutcome,
    Usage,
)

from .judge import RESULTS_NAME
from .variants import VARIANTS, WORKSPACE_DIR

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

#: The reference agents shipped with the package (``reprobridge_sdk.bench.agents``).
AGENTS = ("null", "readme", "oracle")
#: The usage channel: JSON lines the agent may append in its workspace.
USAGE_NAME = "bench-usage.jsonl"
#: Lines of the usage channel read at most, and its largest size read.
MAX_USAGE_LINES = 10_000
MAX_USAGE_BYTES = 1 << 20
#: Bytes of the log scanned for the markers of :func:`classify`.
SCAN_BYTES = 4 << 20

PROMPT_TEMPLATE = """\
# Reproduce a claim of a paper

You are in a workspace that holds the material of one research artifact: `{artifact}`.
Reproduce this claim of its paper:

- task: `{task}`{title}
- metric: {metric}
- dataset: {dataset}
- the paper reports: {published} ({direction} is better){location}

The workspace (variant `{variant}`) holds:

{layout}

Work only inside the workspace; the network is {network}. When you are done, leave at the
workspace's root:

1. `{results}`: the results file (schema `bench-results-1.0`):
   `{{"bench_results_version": "1.0", "results": [{{"task": "{task}", "value": <number or
   null>, "runs": [{{"log": "<path>", "outputs": {{"<output id>": "<path>"}}, "seed": <int>}}]}}]}}`
   with paths relative to the workspace.
2. The logs (stdout and stderr) and output files of every run your value comes from, at the
   paths the results file names. A value without logs counts as unsupported: the judge
   re-reads every value from your logs and never takes your word for it.

Optionally append usage lines to `{usage}`: `{{"tokens": <int>, "cost": <number>}}`, one
JSON object per line.
"""


@dataclass(frozen=True)
class Budget:
    """What one run of the agent may use."""

    #: Wall-clock seconds.
    timeout: float = 3600.0
    #: CPU seconds of each process (RLIMIT_CPU); None: no limit.
    cpu: float | None = None
    #: Address space of each process in bytes (RLIMIT_AS); None: no limit.
    memory: int | None = None
    #: Bytes of output (stdout and stderr) kept before the run is stopped.
    max_output: int = 16 << 20
    #: Largest file a process may write, in bytes (RLIMIT_FSIZE); None: no limit.
    max_file: int | None = 4 << 30
    #: The cost the agent may report on its usage channel before it is stopped; None: no cap.
    max_cost: float | None = None


@dataclass(frozen=True)
class BenchOptions:
    """How ``bench run`` runs (the command's options)."""

    variants: tuple[str, ...] = VARIANTS
    repeats: int = 1
    jobs: int = 1
    executor: str | None = None
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


@dataclass(frozen=True)
class _Job:
    """One run of the agent (picklable: the executors may run it in another process)."""

    out: str
    folder: str
    agent: str
    argv: tuple[str, ...]
    submission: str
    artifact_id: str
    artifact_root: str
    source: str
    task: str
    variant: str
    repeat: int
    prompt: str
    budget: Budget
    sandbox: bool
    network: str
    allow_hosts: tuple[str, ...]
    visible: tuple[str, ...]
    pass_env: tuple[str, ...]
    level: float
    floor: float
    rerun: int = 0


# --------------------------------------------------------------------------- the prompt


def _published(task: Any) -> str:
    published = task.published
    unit = f" {published.unit}" if getattr(published, "unit", None) else ""
    if published.value is not None:
        return f"{published.value:g}{unit}"
    if published.range is not None:
        low, high = published.range
        return f"{low:g} to {high:g}{unit}"
    return "a value"


def _layout(workspace: Path) -> str:
    entries = sorted(workspace.iterdir(), key=lambda p: p.name)
    lines = [f"- `{p.name}{'/' if p.is_dir() and not p.is_symlink() else ''}`" for p in entries]
    if len(lines) > 50:
        lines = [*lines[:50], f"- ... and {len(lines) - 50} more"]
    return "\n".join(lines) or "- (nothing)"


def render_prompt(  # noqa: PLR0917 - the fields of one prompt
    template: str, manifest: Any, task_id: str, variant: str, workspace: Path, network: str
) -> str:
    """The prompt of one run: ``template`` with the claim, the layout and what to leave.

    Fields: ``artifact``, ``task``, ``title``, ``metric``, ``dataset``, ``published``,
    ``direction``, ``location``, ``variant``, ``layout``, ``network``, ``results``,
    ``usage``. A field the template names that is not one of them is a usage error (N004).
    """
    task = manifest.task(task_id)
    location = task.location.model_dump(exclude_none=True) if task.location else {}
    where = ", ".join(f"{k} {v}" for k, v in location.items())
    values = {
        **dict.fromkeys(PROMPT_FIELDS, ""),
        "artifact": manifest.artifact.id,
        "task": task.id,
        "title": f" ({task.title})" if task.title else "",
        "metric": task.metric,
        "dataset": task.dataset,
        "published": _published(task),
        "direction": task.direction,
        "location": f"; in the paper: {where}" if where else "",
        "variant": variant,
        "layout": _layout(workspace),
        "network": "off" if network == "none" else "on",
        "results": RESULTS_NAME,
        "usage": USAGE_NAME,
    }
    try:
        return template.format_map(values)
    except (KeyError, ValueError, IndexError) as exc:
        message = f"the prompt template cannot be rendered: {exc!r}"
        hint = f"use the fields {', '.join(sorted(values))}; write braces as {{{{ and }}}}"
        raise UsageError(message, [finding("N004", message, hint=hint)]) from None


#: The fields a prompt template may name (:func:`render_prompt`).
PROMPT_FIELDS = (
    "artifact",
    "task",
    "title",
    "metric",
    "dataset",
    "published",
    "direction",
    "location",
    "variant",
    "layout",
    "network",
    "results",
    "usage",
)


def check_template(template: str) -> None:
    """Raise :class:`UsageError` (N004) when ``template`` names a field that is not one of
    :data:`PROMPT_FIELDS` or is not a format string, before any agent runs."""
    import string  # noqa: PLC0415

    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        names = {f"<{exc}>"}
    unknown = sorted(n for n in names if n not in PROMPT_FIELDS)
    if unknown:
        message = f"the prompt template names unknown field(s): {', '.join(unknown)}"
        hint = f"use the fields {', '.join(PROMPT_FIELDS)}; write braces as {{{{ and }}}}"
        raise UsageError(message, [finding("N004", message, hint=hint)])


def agent_argv(agent: str) -> list[str]:
    """The command template of ``agent``: a reference agent's name, or a command line."""
    if agent in AGENTS:
        return [sys.executable, "-m", f"reprobridge_sdk.bench.agents.{agent}", "{workspace}"]
    try:
        words = shlex.split(agent)
    except ValueError as exc:
        message = f"the agent command cannot be read: {exc}"
        hint = "quote it as a shell would"
        raise UsageError(message, [finding("N004", message, hint=hint)]) from None
    if not words:
        message = "the agent command is empty"
        raise UsageError(message, [finding("N004", message, hint="name an agent or a command")])
    return words


def _fill(argv: Sequence[str], values: dict[str, str]) -> list[str]:
    out = []
    for word in argv:
        filled = word
        for name, value in values.items():
            filled = filled.replace("{" + name + "}", value)
        out.append(filled)
    return out


# --------------------------------------------------------------------------- limits

#: Sets the resource limits, then becomes the command (run outside the sandbox: bubblewrap
#: and everything it starts inherit them).
_LIMITS = (
    "import os,resource,sys\n"
    "cpu,mem,fsize=(int(x) for x in sys.argv[1:4])\n"
    "if cpu>0: resource.setrlimit(resource.RLIMIT_CPU,(cpu,cpu+1))\n"
    "if mem>0: resource.setrlimit(resource.RLIMIT_AS,(mem,mem))\n"
    "if fsize>0: resource.setrlimit(resource.RLIMIT_FSIZE,(fsize,fsize))\n"
    "os.execvp(sys.argv[5],sys.argv[5:])\n"
)


def _limited(command: Sequence[str], budget: Budget) -> list[str]:
    cpu = 0 if budget.cpu is None else max(1, round(budget.cpu))
    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _LIMITS,
        str(cpu),
        str(budget.memory or 0),
        str(budget.max_file or 0),
        "--",
        *command,
    ]


#: Exit codes of a process ended by SIGXCPU: the signal itself, or a shell's (or
#: bubblewrap's) 128 + 24.
_CPU_CODES = (-24, 152)
_MEMORY_MARKERS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")
_OUTSIDE_MARKERS = (b"Read-only file system",)


def _log_has(log: Path, markers: Sequence[bytes]) -> bool:
    try:
        with log.open("rb") as handle:
            data = handle.read(SCAN_BYTES)
    except OSError:
        return False
    return any(marker in data for marker in markers)


def classify(outcome: Any, log: Path) -> RunOutcome:
    """How a run ended, in this order: ``not-started`` (the command is not there),
    ``timeout``, ``over-cost`` (stopped when its reported cost passed the cap), ``flood``
    (output over the cap), ``cpu-limit`` (SIGXCPU), ``over-memory`` (failed, and its output
    tells of a failed allocation), ``wrote-outside`` (its output tells of a write the sandbox
    refused: ``Read-only file system``), ``crash`` (any other non-zero exit) and
    ``finished``."""
    if outcome.not_found is not None:
        return "not-started"
    if outcome.timed_out:
        return "timeout"
    if outcome.cancelled:
        return "over-cost"
    if outcome.flooded:
        return "flood"
    code = outcome.exit_code
    if code in _CPU_CODES:
        return "cpu-limit"
    if code not in (0, None) and _log_has(log, _MEMORY_MARKERS):
        return "over-memory"
    if _log_has(log, _OUTSIDE_MARKERS):
        return "wrote-outside"
    if code != 0:
        return "crash"
    return "finished"


# --------------------------------------------------------------------------- one run


def read_usage(workspace: Path) -> Usage:
    """The usage lines the agent left (:data:`USAGE_NAME`), summed; malformed lines and
    anything but a regular file of the workspace are ignored."""
    path = workspace / USAGE_NAME
    try:
        info = path.lstat()
    except OSError:
        return Usage()
    if not stat.S_ISREG(info.st_mode):
        return Usage()
    with path.open("rb") as handle:
        data = handle.read(MAX_USAGE_BYTES)
    tokens: int | None = None
    cost: float | None = None
    currency: str | None = None
    count = 0
    for line in data.splitlines()[:MAX_USAGE_LINES]:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        count += 1
        if isinstance(item.get("tokens"), int) and not isinstance(item["tokens"], bool):
            tokens = (tokens or 0) + item["tokens"]
        if isinstance(item.get("cost"), (int, float)) and not isinstance(item["cost"], bool):
            cost = (cost or 0.0) + float(item["cost"])
        if isinstance(item.get("currency"), str) and len(item["currency"]) <= 8:
            currency = item["currency"]
    return Usage(tokens=tokens, cost=cost, currency=currency, lines=count)


@dataclass
class _Prepared:
    """The agent's command, its environment, the descriptors it inherits and its proxy."""

    command: list[str]
    env: dict[str, str]
    fds: tuple[int, ...] = ()
    proxy: Any = None


def _proxy_env() -> dict[str, str]:
    from .proxy import PORT  # noqa: PLC0415

    address = f"http://127.0.0.1:{PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    return {**dict.fromkeys(names, address), **dict.fromkeys(map(str.lower, names), address)}


@contextlib.contextmanager
def _command(job: _Job, workspace: Path, prompt: Path) -> Iterator[_Prepared]:
    """The agent's command, its environment and inherited descriptors (sandboxed or not),
    and for the ``allow`` policy the run's proxy (:mod:`.proxy`), valid in the block."""
    import reprobridge_sdk  # noqa: PLC0415

    values = {
        "workspace": str(workspace),
        "prompt_file": str(prompt),
        "prompt": prompt.read_text("utf-8"),
        "task": job.task,
        "variant": job.variant,
    }
    argv = _fill(job.argv, values)
    declared = {
        "REPRO_BENCH_TASK": job.task,
        "REPRO_BENCH_VARIANT": job.variant,
        "REPRO_BENCH_PROMPT": str(prompt),
        "REPRO_BENCH_RESULTS": str(workspace / RESULTS_NAME),
        "REPRO_BENCH_USAGE": str(workspace / USAGE_NAME),
        "PYTHONUNBUFFERED": "1",
        **{name: os.environ[name] for name in job.pass_env if name in os.environ},
    }
    caller = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    caller["PATH"] = os.pathsep.join([bin_dir, caller.get("PATH", "")])
    if not job.sandbox:
        yield _Prepared(argv, {**caller, **declared})
        return
    from reprobridge_sdk.run import sandbox  # noqa: PLC0415

    from .proxy import RELAY, AllowProxy  # noqa: PLC0415

    package = Path(reprobridge_sdk.__file__).resolve().parent
    readable = [
        *sandbox.current_interpreter_paths(),
        package,
        prompt,
        *(Path(p) for p in job.visible),
    ]
    with contextlib.ExitStack() as stack:
        proxy = None
        if job.network == "allow":
            # A short path: a unix socket's path has at most 107 bytes.
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rb-px-")))
            scratch.chmod(0o755)
            proxy = AllowProxy(scratch / "s", job.allow_hosts)
            stack.callback(proxy.close)
            readable.append(scratch)
            declared.update(_proxy_env())
            argv = [sys.executable, "-I", "-S", "-c", RELAY, str(scratch / "s"), "--", *argv]
        roots = sandbox.visible_roots(readable, [workspace])
        env, _dropped = sandbox.sandbox_env(caller, declared, run_dir=workspace, roots=roots)
        env["HOME"] = "/tmp"  # noqa: S108 - the sandbox's own private /tmp
        fd = stack.enter_context(sandbox.seccomp_fd())
        command = sandbox.sandbox_command(
            argv,
            workdir=workspace,
            run_dir=workspace,
            seccomp=fd,
            readable=readable,
            network=job.network == "open",
        )
        yield _Prepared(command, env, (fd,), proxy)


def _judge(job: _Job, workspace: Path, run: BenchRun) -> None:
    from reprobridge_sdk.audit.verdict import as_audit_finding  # noqa: PLC0415

    from .judge import judge_results  # noqa: PLC0415

    results = workspace / RESULTS_NAME
    folder = Path(job.out) / job.folder
    if not results.exists() and not results.is_symlink():
        _not_reported(job, workspace, run)
        run.findings.append(
            as_audit_finding(
                finding(
                    "A102",
                    f"the agent left no {RESULTS_NAME}",
                    path=f"{run.folder}/{WORKSPACE_DIR}/{RESULTS_NAME}",
                    hint="the prompt says what to leave: the results file and its logs",
                )
            )
        )
        return
    if results.is_symlink() or not results.is_file():
        run.support = "log-refused"
        run.verdict = "unsupported"
        run.findings.append(
            as_audit_finding(
                finding(
                    "A102",
                    f"{RESULTS_NAME} is a link or not a regular file: not read",
                    path=f"{run.folder}/{WORKSPACE_DIR}/{RESULTS_NAME}",
                    hint="leave the results file itself in the workspace",
                )
            )
        )
        return
    try:
        judgement = judge_results(
            job.artifact_root, results, workspace=workspace, level=job.level, floor=job.floor
        )
    except ReproBridgeError as exc:
        run.verdict = "unsupported"
        run.findings.extend(as_audit_finding(item) for item in exc.findings)
        return
    text = json.dumps(judgement.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    (folder / "judgement.json").write_text(text, encoding="utf-8")
    claim = next((c for c in judgement.claims if c.task == job.task), None)
    if claim is None:
        return
    run.support = claim.support
    run.verdict = claim.verdict
    run.icml = claim.icml
    run.value = claim.value
    run.extracted = claim.extracted
    run.progress = claim.landmarks.progress
    run.findings.extend(claim.findings)


def _not_reported(job: _Job, workspace: Path, run: BenchRun) -> None:
    """A run without a results file: the judge's reading of an empty one (the claim
    ``not-reported``, its landmark progress 0 where its launcher has landmarks)."""
    from .judge import judge_results  # noqa: PLC0415

    empty = Path(job.out) / job.folder / "no-results.json"
    empty.write_text('{"bench_results_version": "1.0", "results": []}\n', encoding="utf-8")
    try:
        judgement = judge_results(job.artifact_root, empty, workspace=workspace)
    except ReproBridgeError:
        return
    finally:
        empty.unlink()
    claim = next((c for c in judgement.claims if c.task == job.task), None)
    if claim is not None:
        run.support = claim.support
        run.progress = claim.landmarks.progress


def _ended(run: BenchRun, exit_code: int | None) -> None:
    from reprobridge_sdk.audit.verdict import as_audit_finding  # noqa: PLC0415

    if run.outcome == "finished":
        return
    why = {
        "crash": f"the agent failed (exit code {exit_code})",
        "timeout": "the agent ran past its wall-time budget and was stopped",
        "over-cost": "the agent reported a cost over its budget and was stopped",
        "flood": "the agent's output passed its cap and it was stopped",
        "cpu-limit": "the agent used up its CPU-time budget",
        "over-memory": "the agent ran out of its memory budget",
        "wrote-outside": "the agent tried to write outside its workspace; the sandbox refused",
        "not-started": "the agent's command could not be started",
        "no-workspace": "the workspace could not be made",
    }[run.outcome]
    run.findings.insert(
        0,
        as_audit_finding(
            finding(
                "A101",
                f"{why}: outcome {run.outcome}",
                path=f"{run.folder}/agent.log",
                hint="see the run's agent.log; the batch went on",
            )
        ),
    )


#: Seconds between two reads of the usage channel under a cost cap.
COST_POLL = 0.5


def _watch_cost(
    workspace: Path, cap: float, cancel: threading.Event, done: threading.Event
) -> None:
    """Set ``cancel`` once the cost the agent reported passes ``cap`` (until ``done``)."""
    while not done.wait(COST_POLL):
        cost = read_usage(workspace).cost
        if cost is not None and cost > cap:
            cancel.set()
            return


def run_job(job: _Job) -> BenchRun:
    """One run of the agent: workspace, prompt, sandboxed run, outcome and judgement."""
    from reprobridge_sdk.api import load  # noqa: PLC0415
    from reprobridge_sdk.run.process import run_process  # noqa: PLC0415

    folder = Path(job.out) / job.folder
    run = BenchRun(
        submission=job.submission,
        artifact=job.artifact_id,
        task=job.task,
        variant=job.variant,
        repeat=job.repeat,
        agent=job.agent,
        outcome="no-workspace",
        seconds=0.0,
        folder=job.folder,
    )
    workspace = folder / WORKSPACE_DIR
    log = folder / "agent.log"
    try:
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        shutil.copytree(job.source, workspace, symlinks=True)
        prompt = folder / "prompt.md"
        manifest = load(job.artifact_root).manifest
        text = render_prompt(job.prompt, manifest, job.task, job.variant, workspace, job.network)
        prompt.write_text(text, encoding="utf-8")
        log.write_bytes(b"")
        cancel, done = threading.Event(), threading.Event()
        if job.budget.max_cost is not None:
            threading.Thread(
                target=_watch_cost,
                args=(workspace, job.budget.max_cost, cancel, done),
                daemon=True,
            ).start()
        with _command(job, workspace, prompt) as prepared:
            outcome = run_process(
                _limited(prepared.command, job.budget),
                cwd=workspace,
                env=prepared.env,
                log_path=log,
                timeout=job.budget.timeout,
                grace=2.0,
                pass_fds=prepared.fds,
                max_output=job.budget.max_output,
                cancel=cancel,
            )
            done.set()
            if prepared.proxy is not None:
                run.proxy = ProxyCounts(
                    allowed=prepared.proxy.allowed, refused=prepared.proxy.refused
                )
    except (OSError, ReproBridgeError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        with contextlib.suppress(OSError):
            log.write_text(f"bench: {message}\n", encoding="utf-8")
        _ended(run, None)
        return _save(folder, run)
    run.outcome = classify(outcome, log)
    run.exit_code = outcome.exit_code
    run.seconds = round(outcome.duration, 3)
    try:
        _judge(job, workspace, run)
        run.usage = read_usage(workspace)
        if job.rerun:
            run.rerun = _rerun(job, workspace)
    except OSError as exc:
        run.findings.append(_io_finding(run, exc))
    _ended(run, outcome.exit_code)
    return _save(folder, run)


def _rerun(job: _Job, workspace: Path) -> RerunCounts | None:
    """The auditor's re-execution of ``job.rerun`` of the agent's recorded runs per launcher
    and task (``reprobridge run`` records under ``runs/``), in the current interpreter and
    the sandbox; None when the workspace holds none or cannot be audited."""
    from reprobridge_sdk.audit import audit  # noqa: PLC0415

    if not (workspace / "runs").is_dir() or (workspace / "runs").is_symlink():
        return None
    try:
        result = audit(
            workspace,
            rerun=job.rerun,
            rerun_seed=0,
            rerun_env="current",
            rerun_sandbox=job.sandbox,
        )
    except ReproBridgeError:
        return None
    return RerunCounts(
        reran=sum(a.reran for a in result.attempts),
        mismatches=sum(a.rerun_mismatches for a in result.attempts),
    )


def _io_finding(run: BenchRun, exc: OSError) -> Any:
    from reprobridge_sdk.audit.verdict import as_audit_finding  # noqa: PLC0415

    return as_audit_finding(
        finding(
            "A102",
            f"the workspace could not be read: {exc.strerror or exc}",
            path=f"{run.folder}/{WORKSPACE_DIR}",
            hint="leave regular files in the workspace",
        )
    )


def _save(folder: Path, run: BenchRun) -> BenchRun:
    with contextlib.suppress(OSError):
        text = json.dumps(run.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
        (folder / "run.json").write_text(text, encoding="utf-8")
    return run


# --------------------------------------------------------------------------- the batch


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


def _refusal(findings: list[Finding], items: Sequence[Finding]) -> None:
    findings.extend(items)


def _plan(
    batch: Any, opened: list[Any], out: Path, agent: str, options: BenchOptions
) -> tuple[list[_Job], list[Finding]]:
    from reprobridge_sdk.api import load  # noqa: PLC0415
    from reprobridge_sdk.authoring.batch import digest_finding  # noqa: PLC0415

    from .variants import generate_variants  # noqa: PLC0415

    argv = tuple(agent_argv(agent))
    jobs: list[_Job] = []
    problems: list[Finding] = []
    defaults = batch.model.defaults
    for index, (entry, item) in enumerate(zip(batch.model.submission, opened, strict=True)):
        if item.root is None:
            _refusal(problems, item.findings)
            continue
        mismatch = digest_finding(batch, index, entry, item)
        if mismatch is not None:
            problems.append(mismatch)
            continue
        try:
            art = load(item.root)
        except ReproBridgeError as exc:
            _refusal(problems, exc.findings)
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
                _refusal(problems, exc.findings)
                continue
            source = target / variant / WORKSPACE_DIR
            for task in tasks:
                for repeat in range(options.repeats):
                    jobs.append(
                        _Job(
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
    """Run each of ``agents`` over the suite (module docstring); the report, also written to
    ``OUT/report.json``. Raises :class:`UsageError` for a suite that cannot be read (A090,
    A091), an output folder that is something else (N004) or a sandbox that cannot hold
    here (N011); nothing an agent does raises."""
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
        for agent in agents:
            jobs, found = _plan(batch, opened, target / _agent_dir(agent, agents), agent, options)
            if agent == agents[0]:
                problems.extend(found)
            with make_executor(options.executor, jobs=options.jobs) as executor:
                done = executor.map(run_job, jobs)
            prefix = _agent_dir(agent, agents)
            for run in done:
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
    text = json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    from reprobridge_sdk.io._fs import atomic_write_bytes  # noqa: PLC0415

    atomic_write_bytes(target / "report.json", text.encode("utf-8"))
    return report


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
