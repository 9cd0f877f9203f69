"""One smoke run of a launcher, and what the Reproducer phase collects while it works.

Rules: a launcher runs once in the repository's working copy at its working directory; a
``python`` or ``python3`` in ``argv[0]`` becomes the built environment's interpreter, and
that interpreter's folder is first on PATH, as in the runner's runs (a script that starts
``python other.py`` itself starts the environment's; a shell launcher runs through
``/bin/sh -c``); with a
seed, ``{seed}`` is replaced in the argv and the environment values. The environment is the
caller's without ``PYTHON*``, ``VIRTUAL_ENV*`` and ``CONDA*`` variables, plus the launcher's,
with byte-code writing off and unbuffered output; stdin is empty. A run past ``timeout`` has
exit status None and keeps what it printed. With the build's ``deadline`` a run's timeout is
at most the time left; a run the deadline stopped, or one due after it, raises
:class:`OutOfTime` (the build's time limit, B016), never a smoke budget's verdict. A run
passes when it exits 0 and prints every label of its claims (case-insensitive); its labelled
lines are the lines that carry a label (all of stdout when there is none). With ``sandbox``
(the build's default) the run is confined by the runner's sandbox
(:mod:`reprobridge_sdk.agent._sandbox`): the environment and the artifact are read-only; the
code is a private copy of the run's own, writable (what the run writes there is dropped with
it), and so is a scratch directory, its ``HOME``. With ``caches`` (the build's,
:mod:`reprobridge_sdk.agent._caches`) the compile caches that tools keep under ``HOME`` are
there instead, shared with the build's other runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.agent._caches import CACHE_DIR, cache_env
from reprobridge_sdk.agent._sandbox import confined
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.imports import closure
from reprobridge_sdk.agent.prerequisite import compose
from reprobridge_sdk.agent.state import BUILD_DIR
from reprobridge_sdk.model.build import (
    AppliedFix,
    BuildFinding,
    ClaimPlan,
    LauncherPlan,
    PlanRecord,
    SmokeAttempt,
)
from reprobridge_sdk.model.claims import Claims

__all__ = ["SMOKE_TIMEOUT", "OutOfTime", "Recorder", "RunOutcome", "run_launcher"]

#: Seconds a smoke run may take.
SMOKE_TIMEOUT = 600.0

#: ``record(fix, failure, tasks) -> change id``: records the working change (``code record``);
#: ``failure`` is None for a convenience change (its ``evidence`` says why).
Recorder = Callable[[Fix, "Failure | None", list[str]], "str | None"]


class OutOfTime(Exception):
    """The build's time limit came before or during a run (``detail`` says which)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class RunOutcome:
    """What one run of a launcher did."""

    argv: list[str]
    exit_status: int | None
    stdout: str
    stderr: str
    seconds: float


def run_launcher(
    launcher: LauncherPlan,
    code_dir: Path,
    interpreter: Path,
    *,
    seed: int | None = None,
    timeout: float = SMOKE_TIMEOUT,
    sandbox: bool = False,
    visible: Path | None = None,
    caches: Path | None = None,
) -> RunOutcome:
    """Run ``launcher`` once in ``code_dir`` with ``interpreter`` (in the sandbox with
    ``sandbox``; ``visible``, default ``code_dir``, is the tree it may read; ``caches`` the
    build's compile caches); its prerequisite steps first, in the same shell line."""
    composed, shell = compose(launcher)
    argv = [
        str(interpreter) if index == 0 and word in {"python", "python3"} and not shell else word
        for index, word in enumerate(composed)
    ]
    given = launcher.env
    if seed is not None:
        argv = [word.replace("{seed}", str(seed)) for word in argv]
        given = {key: value.replace("{seed}", str(seed)) for key, value in given.items()}
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA"))
    }
    shared = cache_env(caches, given) if caches is not None else {}
    env.update(shared)
    env.update(given)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    # a ``python`` the code starts itself (a shell line, ``os.system("python x.py")``) is the
    # environment's, as in the runner's runs
    env["PATH"] = f"{interpreter.parent}{os.pathsep}{env.get('PATH', '')}"
    if shell:
        argv = ["/bin/sh", "-c", argv[0]]
    workdir = code_dir / launcher.workdir
    if not sandbox:
        return _run(argv, argv, workdir, env, timeout)
    keep = {**shared, **given, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    with confined(
        argv,
        workdir=workdir.absolute(),
        visible=[visible or code_dir],
        environment=interpreter.absolute().parent.parent,
        caller=env,
        declared=keep,
        private=code_dir,
        writable=[caches.absolute()] if shared and caches is not None else [],
    ) as (command, inside, fds):
        return _run(command, argv, workdir, inside, timeout, fds)


def _run(  # noqa: PLR0917 - a private helper with one caller
    command: list[str],
    argv: list[str],
    workdir: Path,
    env: dict[str, str],
    timeout: float,
    fds: tuple[int, ...] = (),
) -> RunOutcome:
    started = time.monotonic()
    try:
        proc = subprocess.run(
            command,
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            pass_fds=fds,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        err = exc.stderr if isinstance(exc.stderr, str) else ""
        return RunOutcome(argv, None, out, err, time.monotonic() - started)
    return RunOutcome(argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


@dataclass
class _Phase:
    """What :func:`reproduce` collects while it works through the smoke launchers."""

    claims: Claims
    plan: PlanRecord
    code_dir: Path
    artifact: Path
    interpreter: Path
    record: Recorder
    timeout: float
    launchers: dict[str, LauncherPlan]
    sandbox: bool = False
    #: The build's time limit (a :func:`time.monotonic` value), or None.
    deadline: float | None = None
    attempts: list[SmokeAttempt] = field(default_factory=list)
    fixes: list[AppliedFix] = field(default_factory=list)
    rejected: list[AppliedFix] = field(default_factory=list)
    findings: list[BuildFinding] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    #: The claims of a smoke launcher that never ends on its own, un-planned (B061).
    unplanned: list[ClaimPlan] = field(default_factory=list)

    @property
    def caches(self) -> Path:
        """The build's compile caches, in its state beside the artifact it writes."""
        return self.artifact / BUILD_DIR / CACHE_DIR

    def run(self, launcher: LauncherPlan) -> RunOutcome:
        seed = launcher.seeds[0] if launcher.seeds else None
        timeout = self.timeout
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and left <= 0:
            raise OutOfTime(
                f"smoke launcher {launcher.id!r}: the build's time limit passed before its run"
            )
        bounded = left is not None and left < timeout
        outcome = run_launcher(
            launcher,
            self.code_dir,
            self.interpreter,
            seed=seed,
            timeout=left if bounded and left is not None else timeout,
            sandbox=self.sandbox,
            visible=self.artifact,
            caches=self.caches,
        )
        if bounded and outcome.exit_status is None:
            self.attempt(launcher, outcome, "stopped at the build's time limit")
            raise OutOfTime(
                f"smoke launcher {launcher.id!r}: its run was stopped at the build's time "
                f"limit after {outcome.seconds:.0f} s (the smoke budget is {self.timeout:g} s)",
            )
        return outcome

    def tasks_reaching(self, files: list[str], tasks: list[str]) -> list[str]:
        """``tasks``, and the claims of every other planned launcher that runs one of
        ``files`` or imports it (its script's import closure): a change of a file that
        several launchers share is theirs too (GCN's seed change serves its Cora and its
        Citeseer launcher alike)."""
        changed = set(files)
        found = list(tasks)
        reached: dict[str, bool] = {}
        for plan in self.plan.claims:
            if plan.claim in found:
                continue
            for launcher_id in (plan.smoke, plan.scored):
                launcher = self.launchers.get(launcher_id) if launcher_id else None
                if launcher is None:
                    continue
                if launcher.id not in reached:
                    module = bool({"-m", "-c"} & set(launcher.argv[:3]))
                    where = closure(
                        self.code_dir, launcher.script, workdir=launcher.workdir, module=module
                    )
                    reached[launcher.id] = bool(changed & {launcher.script, *where.files})
                if reached[launcher.id]:
                    found.append(plan.claim)
                    break
        return found

    def attempt(self, launcher: LauncherPlan, outcome: RunOutcome, error: str | None) -> None:
        self.attempts.append(
            SmokeAttempt(
                launcher=launcher.id,
                argv=compose(launcher)[0],
                workdir=launcher.workdir,
                exit_status=outcome.exit_status,
                seconds=round(outcome.seconds, 3),
                error=error,
                caches=self.caches.relative_to(self.artifact).as_posix(),
            )
        )


def _passes(outcome: RunOutcome, labels: list[str]) -> bool:
    output = (outcome.stdout + outcome.stderr).lower()
    return outcome.exit_status == 0 and all(label.lower() in output for label in labels)


def _labelled(outcome: RunOutcome, labels: list[str]) -> list[str]:
    """The output lines that carry a claim's number (all of stdout without labels)."""
    lines = outcome.stdout.splitlines()
    if not labels:
        return lines
    return [line for line in lines if any(label.lower() in line.lower() for label in labels)]


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _values(outcome: RunOutcome, labels: list[str]) -> list[str]:
    """What two runs are compared by: in each line that carries a claim's number, the number
    after its label (a time printed on the same line, as GCN's ``accuracy= 0.71300 time=
    0.01578``, is not the claim's); the whole line when no number follows the label, and all
    of stdout without labels."""
    if not labels:
        return _labelled(outcome, labels)
    out: list[str] = []
    for line in _labelled(outcome, labels):
        lower = line.lower()
        found = None
        for label in labels:
            at = lower.find(label.lower())
            number = _NUMBER.search(line, at + len(label)) if at >= 0 else None
            if number is not None:
                found = number.group()
                break
        out.append(found if found is not None else line)
    return out
