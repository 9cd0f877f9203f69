"""One run of an agent: its workspace's command (sandboxed, under the budget's limits), how
it ended, what it left judged, and its record saved. See spec §18.5."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.errors import ReproBridgeError, UsageError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io.atomic import atomic_write_text, json_text
from reprobridge_sdk.model.bench import (
    BenchRun,
    ProxyCounts,
    RerunCounts,
)

from .judge import RESULTS_NAME
from .outcome import USAGE_NAME, classify, read_usage
from .prompt import render_prompt
from .variants import WORKSPACE_DIR

if TYPE_CHECKING:
    from reprobridge_sdk.run.process import ResourceLimits

__all__ = ["AGENTS", "Budget", "Job", "agent_argv", "run_job"]


#: The reference agents shipped with the package (``reprobridge_sdk.bench.agents``).
AGENTS = ("null", "readme", "oracle")


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

    def limits(self) -> ResourceLimits:
        """The runner's resource limits of this budget (CPU time, memory, file size), which
        also size the sandbox's private ``/tmp``."""
        from reprobridge_sdk.run.process import ResourceLimits  # noqa: PLC0415 - on use

        cpu = None if self.cpu is None else max(1, round(self.cpu))
        return ResourceLimits(memory=self.memory, cpu_seconds=cpu, max_file=self.max_file)


#: The agent's temporary folder (``TMPDIR``), in its workspace: on disk, not in memory.
TMP_DIR = ".tmp"


@dataclass(frozen=True)
class Job:
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
def _command(job: Job, workspace: Path, prompt: Path) -> Iterator[_Prepared]:
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
        "TMPDIR": str(workspace / TMP_DIR),
        "PYTHONUNBUFFERED": "1",
        **{name: os.environ[name] for name in job.pass_env if name in os.environ},
    }
    (workspace / TMP_DIR).mkdir(exist_ok=True)
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
            tmp_size=job.budget.limits().tmp_size,
        )
        yield _Prepared(command, env, (fd,), proxy)


def _judge(job: Job, workspace: Path, run: BenchRun) -> None:
    from reprobridge_sdk.audit.verdict import as_audit_finding, audit_finding  # noqa: PLC0415

    from .judge import judge_results  # noqa: PLC0415

    results = workspace / RESULTS_NAME
    folder = Path(job.out) / job.folder
    if not results.exists() and not results.is_symlink():
        results = _from_records(job, workspace, folder)
    if not results.exists() and not results.is_symlink():
        _not_reported(job, workspace, run)
        run.findings.append(
            audit_finding(
                "A102",
                f"the agent left no {RESULTS_NAME} and no evidence records of the task",
                path=f"{run.folder}/{WORKSPACE_DIR}/{RESULTS_NAME}",
                hint="the prompt says what to leave: the results file and its logs",
            )
        )
        return
    if results.is_symlink() or not results.is_file():
        run.support = "log-refused"
        run.verdict = "unsupported"
        run.findings.append(
            audit_finding(
                "A102",
                f"{RESULTS_NAME} is a link or not a regular file: not read",
                path=f"{run.folder}/{WORKSPACE_DIR}/{RESULTS_NAME}",
                hint="leave the results file itself in the workspace",
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
    text = json_text(judgement.model_dump(mode="json"), sort_keys=True)
    atomic_write_text(folder / "judgement.json", text)
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


#: The results file read from the agent's evidence records, kept beside the workspace.
FROM_RECORDS = "results-from-records.json"


def _from_records(job: Job, workspace: Path, folder: Path) -> Path:
    """Where no results file is: the results the agent's evidence records give for the task
    (:func:`~reprobridge_sdk.bench.records.results_from_records`, against the artifact the
    harness holds), written beside the workspace; else the missing results file's path."""
    from reprobridge_sdk.api import load  # noqa: PLC0415

    from .records import results_from_records  # noqa: PLC0415

    found = results_from_records(load(job.artifact_root).manifest, workspace, job.task)
    if found is None:
        return workspace / RESULTS_NAME
    derived = folder / FROM_RECORDS
    atomic_write_text(derived, json_text(found.model_dump(mode="json", exclude_none=True)))
    return derived


def _not_reported(job: Job, workspace: Path, run: BenchRun) -> None:
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
    from reprobridge_sdk.audit.verdict import audit_finding  # noqa: PLC0415

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
        audit_finding(
            "A101",
            f"{why}: outcome {run.outcome}",
            path=f"{run.folder}/agent.log",
            hint="see the run's agent.log; the batch went on",
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


def run_job(job: Job) -> BenchRun:
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
                prepared.command,
                cwd=workspace,
                env=prepared.env,
                log_path=log,
                timeout=job.budget.timeout,
                grace=2.0,
                pass_fds=prepared.fds,
                max_output=job.budget.max_output,
                cancel=cancel,
                limits=job.budget.limits(),  # bubblewrap and all it starts inherit them
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


def _rerun(job: Job, workspace: Path) -> RerunCounts | None:
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
    from reprobridge_sdk.audit.verdict import audit_finding  # noqa: PLC0415

    return audit_finding(
        "A102",
        f"the workspace could not be read: {exc.strerror or exc}",
        path=f"{run.folder}/{WORKSPACE_DIR}",
        hint="leave regular files in the workspace",
    )


def _save(folder: Path, run: BenchRun) -> BenchRun:
    with contextlib.suppress(OSError):
        text = json_text(run.model_dump(mode="json"), sort_keys=True)
        atomic_write_text(folder / "run.json", text)
    return run
