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

Two convenience changes (:mod:`reprobridge_sdk.agent.convenience`), each only when needed,
each a patch recorded like a fix (``code record --kind convenience``) with its reason and
evidence instead of an error:

* **Short smoke scope.** A smoke run that ran past its budget (``timeout``, killed there) gets
  an iteration knob: an option the smoke launcher now passes small, or a patch that lets the
  smoke launcher set the count through the environment. Gate: the shortened run ends within
  the budget (B021, error, otherwise, and when there is no knob). Only the smoke launcher
  changes; a smoke run within its budget is never touched.
* **Seed option.** After the smoke launcher passes, a script that takes no seed while its
  claims name seeds (the plan's launchers carry those seeds with no ``seed_flag``) gets a seed
  option (``--seed``, or ``REPRO_SEED`` for a script without an argument parser). Gate: two
  seeded smoke runs pass and print the same labelled lines. Kept, every launcher of the
  script passes ``{seed}`` and the plan's pitfall "takes no seed" is resolved; rejected, B020
  (warning) and the runs are repeated unseeded, as planned.

At most :data:`MAX_FIXES` fixes per launcher: a repository that needs more is beyond the
heuristics, and looping on it would hide that.

Tracebacks and error messages are written with :meth:`Failure.portable`: no path of this
machine (the artifact's directory, environments, the standard library) reaches the record,
the findings, the change record or the advisor.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from reprobridge_sdk.agent.convenience import add_seed_option, smoke_knob
from reprobridge_sdk.agent.fixes import Failure, Fix, classify, portable, propose
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.planner import seeds_decision_id, unseeded_pitfall_id
from reprobridge_sdk.model.build import (
    AppliedFix,
    BuildFinding,
    ClaimPlan,
    LauncherPlan,
    PlanRecord,
    ReproducerRecord,
    SmokeAttempt,
)
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.guide import Ambiguity

__all__ = ["MAX_FIXES", "Advice", "Recorder", "RunOutcome", "reproduce", "run_launcher"]

#: Fixes tried per launcher before the Reproducer gives up.
MAX_FIXES = 8
#: Seconds a smoke run may take.
SMOKE_TIMEOUT = 600.0

#: ``record(fix, failure, tasks) -> change id``: records the working change (``code record``);
#: ``failure`` is None for a convenience change (its ``evidence`` says why).
Recorder = Callable[[Fix, "Failure | None", list[str]], "str | None"]
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
    given = launcher.env
    if seed is not None:
        argv = [word.replace("{seed}", str(seed)) for word in argv]
        given = {key: value.replace("{seed}", str(seed)) for key, value in given.items()}
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA"))
    }
    env.update(given)
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
    attempts: list[SmokeAttempt] = field(default_factory=list)
    fixes: list[AppliedFix] = field(default_factory=list)
    rejected: list[AppliedFix] = field(default_factory=list)
    findings: list[BuildFinding] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)

    def run(self, launcher: LauncherPlan) -> RunOutcome:
        seed = launcher.seeds[0] if launcher.seeds else None
        return run_launcher(
            launcher, self.code_dir, self.interpreter, seed=seed, timeout=self.timeout
        )

    def attempt(self, launcher: LauncherPlan, outcome: RunOutcome, error: str | None) -> None:
        self.attempts.append(
            SmokeAttempt(
                launcher=launcher.id,
                argv=launcher.argv,
                workdir=launcher.workdir,
                exit_status=outcome.exit_status,
                seconds=round(outcome.seconds, 3),
                error=error,
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


def _with_option(argv: list[str], flag: str, value: str) -> list[str]:
    """``argv`` passing ``flag value`` once (an earlier ``flag``/``flag=`` is dropped)."""
    out: list[str] = []
    skip = False
    for index, word in enumerate(argv):
        if skip:
            skip = False
            continue
        if word == flag:
            skip = index + 1 < len(argv)
            continue
        if word.startswith(f"{flag}="):
            continue
        out.append(word)
    return [*out, flag, value]


def _seed_option(state: _Phase, smoke: LauncherPlan, tasks: list[str], labels: list[str]) -> None:
    """Give an unseeded script the seed option its claims ask for (a convenience change).

    Gate: two smoke runs with the claim's first seed pass and print the same labelled lines.
    Kept, it is recorded and every launcher of the script passes the seed; rejected, the
    script is left as it was (B020, warning) and its runs are repeated unseeded.
    """
    current = state.launchers[smoke.id]
    path = state.code_dir / current.script
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        state.findings.append(
            build_finding("B020", f"{current.script}: no seed option added: {exc}")
        )
        return
    option = add_seed_option(text)
    if option is None:
        state.findings.append(
            build_finding(
                "B020",
                f"{current.script} takes no seed and does not parse as Python 3; "
                "no seed option was added",
                hint="add a seed option by hand and record it with 'reprobridge code record'",
            )
        )
        return
    seeds = ", ".join(str(s) for s in current.seeds)
    how = (
        f"a {option.flag} option ({option.how})"
        if option.how != "env"
        else f"the environment variable {option.flag}"
    )
    update: dict[str, object] = {"seed_flag": option.flag}
    if option.how == "env":
        update["env"] = {**current.env, option.flag: "{seed}"}
    else:
        update["argv"] = _with_option(list(current.argv), option.flag, "{seed}")
    trial = current.model_copy(update=update)
    path.write_text(option.text, "utf-8")
    first = state.run(trial)
    second = state.run(trial) if _passes(first, labels) else first
    for outcome in (first, second) if second is not first else (first,):
        status = outcome.exit_status
        state.attempt(trial, outcome, None if status == 0 else f"seeded run: exit status {status}")
    seeded = ", ".join(option.seeds)
    fix = Fix(
        rule="seed-option",
        kind="convenience",
        summary=f"{current.script} takes a seed through {how}, seeding {seeded}",
        files={current.script: option.text},
        env={option.flag: "{seed}"} if option.how == "env" else {},
        evidence=(
            f"The claims ask for seed(s) {seeds} and {current.script} took none. Without a seed "
            "given the script runs as before. "
        ),
    )
    same = _labelled(first, labels) == _labelled(second, labels)
    if not (_passes(first, labels) and _passes(second, labels) and same):
        path.write_text(text, "utf-8")
        why = (
            "the seeded smoke run failed"
            if not _passes(first, labels) or not _passes(second, labels)
            else "two runs with the same seed printed different values"
        )
        state.rejected.append(_convenience(current, fix, why))
        state.findings.append(
            build_finding(
                "B020",
                f"a seed option for {current.script} was undone: {why}",
                hint="seed the script by hand and record it with 'reprobridge code record'",
            )
        )
        return
    lines = "; ".join(_labelled(first, labels))[:300]
    fix = replace(
        fix,
        evidence=fix.evidence
        + f"Two smoke runs with seed {current.seeds[0]} printed the same values ({lines}).",
    )
    change = state.record(fix, None, tasks)
    state.fixes.append(_convenience(current, fix, "").model_copy(update={"change": change}))
    for item in list(state.launchers.values()):
        if item.script == current.script and item.workdir == current.workdir:
            passes: dict[str, object] = {"seed_flag": option.flag}
            if option.how == "env":
                passes["env"] = {**item.env, option.flag: "{seed}"}
            else:
                passes["argv"] = _with_option(list(item.argv), option.flag, "{seed}")
            state.launchers[item.id] = item.model_copy(update=passes)
    for item in state.launchers.values():
        if item.script == current.script and item.scope == "scored":
            state.resolved.append(unseeded_pitfall_id(item.id))


def _convenience(launcher: LauncherPlan, fix: Fix, error: str) -> AppliedFix:
    return AppliedFix(
        launcher=launcher.id,
        rule=fix.rule,
        kind="convenience",
        summary=fix.summary,
        files=sorted(fix.files),
        error=error,
        evidence=fix.evidence,
    )


def _shorten(
    state: _Phase, current: LauncherPlan, outcome: RunOutcome, tasks: list[str]
) -> tuple[LauncherPlan, RunOutcome] | None:
    """Make a smoke run that ran past its budget short (a convenience change), or None.

    The knob (:func:`~reprobridge_sdk.agent.convenience.smoke_knob`) changes the smoke launcher
    only. Gate: the shortened run ends within the budget. Kept, a patch is recorded; the
    shortened run is returned as the next attempt (it may still fail on another error).
    Rejected or without a knob: B021 (error), and the phase stops.
    """
    budget = f"{state.timeout:g} s"
    path = state.code_dir / current.script
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    knob = smoke_knob(text, current.argv)
    if knob is None:
        state.findings.append(
            build_finding(
                "B021",
                f"smoke launcher {current.id!r} ran past its budget of {budget}; "
                f"{current.script} has no iteration count to make it short",
                hint="give the script an option for the number of epochs or iterations",
            )
        )
        return None
    if knob.args:
        trial = current.model_copy(
            update={"argv": _with_option(list(current.argv), knob.args[0], knob.args[1])}
        )
        how = f"passes {knob.args[0]} {knob.args[1]} (default {knob.default})"
    else:
        trial = current.model_copy(update={"env": {**current.env, **knob.env}})
        [(variable, value)] = knob.env.items()
        how = f"sets {variable}={value}; {current.script} reads it for {knob.name} ({knob.default})"
    files = {current.script: knob.text} if knob.text is not None else {}
    if knob.text is not None:
        path.write_text(knob.text, "utf-8")
    again = state.run(trial)
    fix = Fix(
        rule="smoke-scope",
        kind="convenience",
        summary=f"the smoke run of {current.script} is short: it {how}",
        files=files,
        env=dict(knob.env),
        evidence=(
            f"The smoke run of {current.script} was stopped at its budget of {budget} "
            f"({outcome.seconds:.1f} s). "
        ),
    )
    error = f"timed out after {outcome.seconds:.1f} s (budget {budget})"
    if again.exit_status is None:
        if knob.text is not None:
            path.write_text(text, "utf-8")
        state.attempt(trial, again, error)
        state.rejected.append(_convenience(current, fix, error))
        state.findings.append(
            build_finding(
                "B021",
                f"smoke launcher {current.id!r} still runs past its budget of {budget} "
                f"when it {how}",
                hint="give the script an option for the number of epochs or iterations",
            )
        )
        return None
    fix = replace(
        fix,
        evidence=fix.evidence
        + f"Shortened, it ended in {again.seconds:.1f} s. The scored launcher is unchanged.",
    )
    change = state.record(fix, None, tasks) if files else None
    state.fixes.append(_convenience(current, fix, error).model_copy(update={"change": change}))
    state.launchers[current.id] = trial
    return trial, again


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
    artifact: Path | None = None,
) -> ReproducerRecord:
    """Run every smoke launcher of ``plan`` until it passes or no fix helps.

    ``timeout`` is the smoke budget in seconds. ``artifact`` (default: ``code_dir``'s parent)
    is what paths in the record are written relative to.
    """
    begin = time.monotonic()
    state = _Phase(
        claims=claims,
        plan=plan,
        code_dir=code_dir,
        artifact=artifact or code_dir.parent,
        interpreter=interpreter,
        record=record,
        timeout=timeout,
        launchers={item.id: item for item in plan.launchers},
    )
    findings = state.findings
    for smoke in [item for item in plan.launchers if item.scope == "smoke"]:
        tasks, labels = _labels(claims, plan, smoke.id)
        current = state.launchers[smoke.id]
        pending: RunOutcome | None = None
        shortened = False
        passed = False
        for _round in range(MAX_FIXES + 1):
            outcome = pending or state.run(current)
            pending = None
            raw = None
            if outcome.exit_status not in {0, None}:
                raw = classify(outcome.stderr, code_dir, code_dir / current.workdir)
            failure = raw.portable(state.artifact) if raw is not None else None
            ok = _passes(outcome, labels)
            state.attempt(
                current,
                outcome,
                failure.signature
                if failure
                else "timed out"
                if outcome.exit_status is None
                else None,
            )
            if ok:
                passed = True
                break
            if outcome.exit_status is None:
                if shortened:
                    findings.append(
                        build_finding(
                            "B021",
                            f"smoke launcher {current.id!r} still runs past its budget of "
                            f"{timeout:g} s after it was made short",
                        )
                    )
                    break
                shortened = True
                made = _shorten(state, current, outcome, tasks)
                if made is None:
                    break
                current, pending = made
                continue
            if raw is None or failure is None:
                reason = (
                    f"exit status {outcome.exit_status}"
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
            fix = propose(raw, code_dir, current.script)
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
                detail = portable(str(exc), state.artifact)
                findings.append(
                    build_finding("B008", f"fix {fix.rule!r} cannot be applied: {detail}")
                )
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
            again = state.run(trial)
            after = (
                classify(again.stderr, code_dir, code_dir / trial.workdir)
                if again.exit_status not in {0, None}
                else None
            )
            applied = _applied(current, fix, failure, source)
            if after is not None and after.same_error(raw):
                _undo(before, code_dir)
                state.rejected.append(applied)
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
            state.fixes.append(applied.model_copy(update={"change": change}))
            if trial is not current:
                for item in list(state.launchers.values()):
                    if item.script == current.script and item.workdir == current.workdir:
                        state.launchers[item.id] = item.model_copy(
                            update={
                                "argv": _rebase(item, trial.workdir),
                                "workdir": trial.workdir,
                                "env": {**item.env, **fix.env},
                            }
                        )
                current = state.launchers[smoke.id]
            pending = again  # the run after the fix is the next attempt
        else:
            findings.append(
                build_finding(
                    "B007",
                    f"smoke launcher {current.id!r} still fails after {MAX_FIXES} fixes",
                )
            )
        if passed and current.seed_flag is None and current.seeds:
            _seed_option(state, current, tasks, labels)
    replanned, decisions = _replan(state, claims, plan)
    return ReproducerRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        attempts=state.attempts,
        fixes=state.fixes,
        rejected=state.rejected,
        launchers=[state.launchers[item.id] for item in plan.launchers],
        resolved_pitfalls=sorted(set(state.resolved)),
        replanned=replanned,
        decisions=decisions,
    )


def _replan(
    state: _Phase, claims: Claims, plan: PlanRecord
) -> tuple[list[ClaimPlan], list[Ambiguity]]:
    """Re-plan the claims over several seeds whose script the Planner found unseeded.

    Such a claim (two or more distinct ``hints.seeds`` and a ``hints.statistic``) was planned
    with every seed on its scored launcher but no statistic, waiting for the seed option.
    With the option kept, the scored launcher declares every seed and the claim's plan gets
    the statistic (each reference observation one repetition), recorded as a decision;
    without it, B018 (warning) and the scored launcher keeps the first seed alone (its runs
    repeated unseeded).
    """
    planned = {item.id: item for item in plan.launchers}
    index_of = {claim.id: index for index, claim in enumerate(claims.claims)}
    by_id = {claim.id: claim for claim in claims.claims}
    replanned: list[ClaimPlan] = []
    decisions: list[Ambiguity] = []
    for claim_plan in plan.claims:
        claim = by_id.get(claim_plan.claim)
        before = planned.get(claim_plan.scored or "")
        if claim is None or before is None or claim_plan.status != "planned":
            continue
        seeds = list(dict.fromkeys(claim.hints.seeds))
        statistic = claim.hints.statistic
        if len(seeds) < 2 or statistic is None or before.seed_flag is not None:
            continue
        scored = state.launchers[before.id]
        if scored.seed_flag is not None:
            state.launchers[scored.id] = scored.model_copy(update={"seeds": seeds})
            replanned.append(claim_plan.model_copy(update={"statistic": statistic}))
            decisions.append(
                Ambiguity(
                    id=seeds_decision_id(claim.id),
                    source=f"claims file, claim {claim.id}",
                    gap=(
                        f"the claim is the {statistic} over seeds {seeds}, but {scored.script} "
                        "took no seed"
                    ),
                    resolution=(
                        f"a seed option ({scored.seed_flag}) was added as a convenience change; "
                        f"{scored.id} declares seeds {seeds} and the task's statistic is the "
                        f"{statistic} over {len(seeds)} seeds (each reference observation is "
                        "one repetition of every seed)"
                    ),
                    sensitivity="low",
                    tasks=[claim.id],
                )
            )
            continue
        state.launchers[scored.id] = scored.model_copy(update={"seeds": seeds[:1]})
        replanned.append(claim_plan.model_copy(update={"statistic": None}))
        state.findings.append(
            build_finding(
                "B018",
                f"claim {claim.id!r} is the {statistic} over {len(seeds)} seeds, but "
                f"{scored.script} takes no seed and no seed option could be added: "
                f"planned over seed {seeds[0]} alone",
                path=f"/claims/{index_of[claim.id]}/hints/seeds",
                hint="give the script a seed option by hand, record it and build again",
            )
        )
    return replanned, decisions
