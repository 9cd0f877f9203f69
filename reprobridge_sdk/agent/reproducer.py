"""Reproducer: run the smoke plan, classify failures, apply known fixes, record each one.

For each smoke launcher of the plan, in order:

1. Run it with the built environment's interpreter (``python`` in ``argv[0]`` is replaced by
   it), in the repository's working copy at the launcher's working directory, with the
   launcher's environment variables and its first seed.
2. Success: exit status 0 and, when the claim names a label, the label appears in the output
   (the smoke landmark). Then the launcher is done.
3. Failure: :func:`~reprobridge_sdk.agent.fixes.classify` reads the traceback and
   :func:`~reprobridge_sdk.agent.fixes.propose` looks for a fix; if none, the advisor (when
   enabled) is asked for one. The fix is applied and the launcher runs again. The fix's gate:
   the error it targeted (type, message, place) must be gone. A fix that passes is recorded
   through ``record`` (``code record``: the working change becomes the next patch and a
   change-record entry, the traceback as its evidence); a fix that fails is undone and
   reported as B008. A failure no fix removes is B007 and ends the phase.

At most :data:`MAX_FIXES` fixes per launcher: a repository that needs more is beyond the
heuristics, and looping on it would hide that.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reprobridge_sdk.agent.fixes import Failure, Fix, classify, propose
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.model.build import (
    AppliedFix,
    BuildFinding,
    LauncherPlan,
    PlanRecord,
    ReproducerRecord,
    SmokeAttempt,
)
from reprobridge_sdk.model.claims import Claims

__all__ = ["MAX_FIXES", "Advice", "Recorder", "RunOutcome", "reproduce", "run_launcher"]

#: Fixes tried per launcher before the Reproducer gives up.
MAX_FIXES = 8
#: Seconds a smoke run may take.
SMOKE_TIMEOUT = 600.0

#: ``record(fix, failure, tasks) -> change id``: records the working change (``code record``).
Recorder = Callable[[Fix, Failure, list[str]], "str | None"]
#: ``advise(failure, launcher) -> fix or None``: the advisor's proposal, when enabled.
Advice = Callable[[Failure, LauncherPlan], "Fix | None"]


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
) -> RunOutcome:
    """Run ``launcher`` once in ``code_dir`` with ``interpreter``."""
    argv = [
        str(interpreter) if index == 0 and word in {"python", "python3"} else word
        for index, word in enumerate(launcher.argv)
    ]
    if seed is not None:
        argv = [word.replace("{seed}", str(seed)) for word in argv]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA"))
    }
    env.update(launcher.env)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            cwd=code_dir / launcher.workdir,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        err = exc.stderr if isinstance(exc.stderr, str) else ""
        return RunOutcome(argv, None, out, err, time.monotonic() - started)
    return RunOutcome(argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def _labels(claims: Claims, plan: PlanRecord, launcher_id: str) -> tuple[list[str], list[str]]:
    tasks = [c.claim for c in plan.claims if launcher_id in {c.smoke, c.scored}]
    by_id = {c.id: c for c in claims.claims}
    labels = [by_id[t].hints.label for t in tasks if t in by_id and by_id[t].hints.label]
    return tasks, [label for label in labels if label]


def _apply(fix: Fix, code_dir: Path) -> dict[str, str]:
    """Write the fix's files; return their previous texts (for undoing)."""
    before: dict[str, str] = {}
    for rel, text in fix.files.items():
        path = code_dir / rel
        before[rel] = path.read_text("utf-8")
        path.write_text(text, "utf-8")
    return before


def _undo(before: dict[str, str], code_dir: Path) -> None:
    for rel, text in before.items():
        (code_dir / rel).write_text(text, "utf-8")


def _rebase(launcher: LauncherPlan, workdir: str) -> list[str]:
    """``argv`` with the script's path rewritten relative to a new working directory."""
    new_argv = []
    for word in launcher.argv:
        moved = word
        if word.endswith(".py"):
            full = posixpath.normpath(posixpath.join(launcher.workdir, word))
            moved = posixpath.relpath(full, workdir)
        new_argv.append(moved)
    return new_argv


def _applied(launcher: LauncherPlan, fix: Fix, failure: Failure, source: str) -> AppliedFix:
    return AppliedFix(
        launcher=launcher.id,
        rule=fix.rule,
        source=source,
        kind=fix.kind,
        summary=fix.summary,
        files=sorted(fix.files),
        workdir=fix.workdir,
        error=failure.signature,
        traceback=failure.tail,
    )


def reproduce(
    claims: Claims,
    plan: PlanRecord,
    code_dir: Path,
    interpreter: Path,
    *,
    inputs_digest: str,
    record: Recorder,
    advise: Advice | None = None,
    timeout: float = SMOKE_TIMEOUT,
) -> ReproducerRecord:
    """Run every smoke launcher of ``plan`` until it passes or no fix helps."""
    begin = time.monotonic()
    attempts: list[SmokeAttempt] = []
    fixes: list[AppliedFix] = []
    rejected: list[AppliedFix] = []
    findings: list[BuildFinding] = []
    launchers = {item.id: item for item in plan.launchers}
    for smoke in [item for item in plan.launchers if item.scope == "smoke"]:
        tasks, labels = _labels(claims, plan, smoke.id)
        current = launchers[smoke.id]
        seed = current.seeds[0] if current.seeds else None
        pending: RunOutcome | None = None
        for _round in range(MAX_FIXES + 1):
            outcome = pending or run_launcher(
                current, code_dir, interpreter, seed=seed, timeout=timeout
            )
            pending = None
            output = outcome.stdout + outcome.stderr
            failure = None
            if outcome.exit_status != 0:
                failure = classify(outcome.stderr, code_dir, code_dir / current.workdir)
            ok = outcome.exit_status == 0 and all(
                label.lower() in output.lower() for label in labels
            )
            attempts.append(
                SmokeAttempt(
                    launcher=current.id,
                    argv=current.argv,
                    workdir=current.workdir,
                    exit_status=outcome.exit_status,
                    seconds=round(outcome.seconds, 3),
                    error=failure.signature if failure else None,
                )
            )
            if ok:
                break
            if failure is None:
                reason = (
                    "timed out"
                    if outcome.exit_status is None
                    else f"exit status {outcome.exit_status}"
                    if outcome.exit_status
                    else f"the output lacks {labels}"
                )
                findings.append(
                    build_finding(
                        "B007",
                        f"smoke launcher {current.id!r} failed ({reason}) without a traceback",
                        hint="run the command by hand and give hints.command in the claims",
                    )
                )
                break
            fix = propose(failure, code_dir, current.script)
            source = "heuristic"
            if fix is None and advise is not None:
                fix = advise(failure, current)
                source = "advisor"
            if fix is None:
                findings.append(
                    build_finding(
                        "B007",
                        f"smoke launcher {current.id!r} fails with {failure.signature}; "
                        "no known fix applies",
                        hint="fix the code by hand and record it with 'reprobridge code record'",
                    )
                )
                break
            try:
                before = _apply(fix, code_dir)
            except (OSError, UnicodeDecodeError) as exc:
                findings.append(build_finding("B008", f"fix {fix.rule!r} cannot be applied: {exc}"))
                break
            trial = current
            if fix.workdir is not None or fix.env:
                trial = current.model_copy(
                    update={
                        "argv": _rebase(current, fix.workdir or current.workdir),
                        "workdir": fix.workdir or current.workdir,
                        "env": {**current.env, **fix.env},
                    }
                )
            again = run_launcher(trial, code_dir, interpreter, seed=seed, timeout=timeout)
            after = (
                classify(again.stderr, code_dir, code_dir / trial.workdir)
                if again.exit_status != 0
                else None
            )
            applied = _applied(current, fix, failure, source)
            if after is not None and after.same_error(failure):
                _undo(before, code_dir)
                rejected.append(applied)
                findings.append(
                    build_finding(
                        "B008",
                        f"fix {fix.rule!r} did not remove {failure.signature}; it was undone",
                    )
                )
                findings.append(
                    build_finding(
                        "B007",
                        f"smoke launcher {current.id!r} fails with {failure.signature}",
                    )
                )
                break
            change = record(fix, failure, tasks) if fix.files else None
            fixes.append(applied.model_copy(update={"change": change}))
            if trial is not current:
                for item in list(launchers.values()):
                    if item.script == current.script and item.workdir == current.workdir:
                        launchers[item.id] = item.model_copy(
                            update={
                                "argv": _rebase(item, trial.workdir),
                                "workdir": trial.workdir,
                                "env": trial.env,
                            }
                        )
                current = launchers[smoke.id]
            pending = again  # the run after the fix is the next attempt
        else:
            findings.append(
                build_finding(
                    "B007",
                    f"smoke launcher {current.id!r} still fails after {MAX_FIXES} fixes",
                )
            )
    return ReproducerRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        attempts=attempts,
        fixes=fixes,
        rejected=rejected,
        launchers=[launchers[item.id] for item in plan.launchers],
    )
