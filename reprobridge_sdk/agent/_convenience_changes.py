"""The Reproducer's two convenience changes, each gated, and the re-planning they allow.

Rules: a smoke run stopped at its budget gets an iteration knob
(:func:`~reprobridge_sdk.agent.convenience.smoke_knob`, which reads the script and the
repository modules it imports), and one repetition of a loop over splits or folds, on the
smoke launcher alone; kept when
the shortened run ends within the budget, else undone with B021 (error), as when there is no
knob (the same knob is applied before the first smoke run when the code names a count of
the work of at least :data:`LARGE_COUNT`, or the knob's loop reads one: its literal bound, or
the default of the option its bound reads; with that count as its evidence); but when the
script never ends on its own (an endless loop its run reaches,
:mod:`~reprobridge_sdk.agent._endless`), its claims are un-planned instead, with the loop's
place and the time the run was stopped after (B061, a warning), and the build goes on. A
passing smoke script that takes no seed while its claims name seeds (or while it fixes its
own) gets a seed option
(:func:`~reprobridge_sdk.agent.convenience.add_seed_option`); kept when two runs with the first
seed pass and print the same labelled lines (then every launcher of the script passes
``{seed}`` and the "takes no seed" pitfall is resolved), else undone with B020 (warning). Each
kept change is recorded as a patch of kind ``convenience`` with its evidence. Afterwards a
claim over several seeds is re-planned with its statistic when the option was kept, or over
its first seed alone with B018 (warning) when it was not. An option is passed once: an
earlier ``flag``, ``flag=`` or argparse abbreviation of it in the argv is dropped
(:func:`~reprobridge_sdk.agent.commands.with_option`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from reprobridge_sdk.agent._endless import endless_loop
from reprobridge_sdk.agent._smoke import OutOfTime, RunOutcome, _labelled, _passes, _Phase, _values
from reprobridge_sdk.agent.commands import argparse_flags, with_option
from reprobridge_sdk.agent.convenience import Knob, add_seed_option, is_iteration_count, smoke_knob
from reprobridge_sdk.agent.fixes import Fix
from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.agent.imports import closure
from reprobridge_sdk.agent.planner import (
    fixed_seed_pitfall_id,
    seeds_decision_id,
    unseeded_pitfall_id,
)
from reprobridge_sdk.agent.prerequisite import shorter_step
from reprobridge_sdk.model.build import (
    AppliedFix,
    BuildFinding,
    ClaimPlan,
    LauncherPlan,
    PlanRecord,
    PrepareStep,
)
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.guide import Ambiguity

#: A count of the work (epochs, iterations, steps; see ``is_iteration_count``; or the count
#: the knob's loop reads) at least this large, read from the code as a literal or an option's
#: default, makes the smoke run short before its first run: a smoke run shows that the code
#: runs, and runs of that many would mostly end at the budget.
LARGE_COUNT = 1000


def _seed_option(state: _Phase, smoke: LauncherPlan, tasks: list[str], labels: list[str]) -> None:
    """Give an unseeded script the seed option its claims ask for (a convenience change).

    Gate: two smoke runs with the claim's first seed pass and print the same labelled lines
    (for a script that seeded itself with a constant, the runs pass: one that prints different
    values with one seed did so as published, and the option still varies its initialisation,
    the evidence says so). Kept, it is recorded and every launcher of the script passes the
    seed; rejected, the script is left as it was (B020, warning) and its runs are repeated
    unseeded.
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
    asked = (
        f"The claims ask for seed(s) {seeds} and {current.script} took none. "
        if current.fixed_seed is None or _claimed(state, current)
        else "The reference runs are taken over seeds ("
        + ", ".join(str(seed) for seed in _scored_seeds(state, current))
        + "). "
    )
    if option.fixed is not None:
        summary = (  # a change's summary is one line of at most 80 characters
            f"{current.script}: the seed constant {option.fixed} reads the launcher's seed "
            f"({option.flag})"
        )
        why = (
            f"{current.script} seeded its generators ({', '.join(option.seeds)}) with the "
            f"constant {option.fixed}, so every "
            "run repeated one initialisation, and a seed given before its own seeding would "
            f"have been overridden: the constant now reads the launcher's seed ({option.flag}), "
            f"and without one it is {option.fixed}, so the published command runs as before. "
        )
    else:
        summary = f"{current.script} takes a seed through {how}, seeding {', '.join(option.seeds)}"
        why = "Without a seed given the script runs as before. "
    update: dict[str, object] = {"seed_flag": option.flag}
    if option.how == "env":
        update["env"] = {**current.env, option.flag: "{seed}"}
    else:
        update["argv"] = with_option(
            list(current.argv), option.flag, "{seed}", argparse_flags(option.text)
        )
    trial = current.model_copy(update=update)
    path.write_text(option.text, "utf-8")
    try:
        first = state.run(trial)
        second = state.run(trial) if _passes(first, labels) else first
    except OutOfTime:
        path.write_text(text, "utf-8")  # no change stays in the code unrecorded
        raise
    for outcome in (first, second) if second is not first else (first,):
        status = outcome.exit_status
        state.attempt(trial, outcome, None if status == 0 else f"seeded run: exit status {status}")
    fix = Fix(
        rule="seed-option",
        kind="convenience",
        summary=summary,
        files={current.script: option.text},
        env={option.flag: "{seed}"} if option.how == "env" else {},
        evidence=asked + why,
    )
    same = _values(first, labels) == _values(second, labels)
    # A script that seeded itself with a constant and still prints different values with one
    # seed (TensorFlow 1's threaded CPU kernels) varies beyond its seed as published too: the
    # constant read from the launcher's seed changes the initialisation, and the references
    # over seeds take in both. Only an unseeded script's option must make its runs repeat.
    beyond = option.fixed is not None and not same
    if not (_passes(first, labels) and _passes(second, labels) and (same or beyond)):
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
    seen = (
        f"Two smoke runs with seed {current.seeds[0]} printed the same values ({lines})."
        if same
        else f"Two smoke runs with seed {current.seeds[0]} printed different values ({lines}; "
        + "; ".join(_labelled(second, labels))[:300]
        + "): the script varies beyond its seed, as published with its constant, and the "
        "references over seeds take in both."
    )
    fix = replace(fix, evidence=fix.evidence + seen)
    change = state.record(fix, None, state.tasks_reaching(sorted(fix.files), tasks))
    state.fixes.append(_convenience(current, fix, "").model_copy(update={"change": change}))
    for item in list(state.launchers.values()):
        if item.script == current.script and item.workdir == current.workdir:
            passes: dict[str, object] = {"seed_flag": option.flag}
            if option.how == "env":
                passes["env"] = {**item.env, option.flag: "{seed}"}
            else:
                passes["argv"] = with_option(
                    list(item.argv), option.flag, "{seed}", argparse_flags(option.text)
                )
            state.launchers[item.id] = item.model_copy(update=passes)
    for item in state.launchers.values():
        if item.script == current.script and item.scope == "scored":
            fixed = item.fixed_seed is not None
            state.resolved.append(
                (fixed_seed_pitfall_id if fixed else unseeded_pitfall_id)(item.id)
            )


def _scored_seeds(state: _Phase, launcher: LauncherPlan) -> list[int]:
    """The seeds of the scored launchers of ``launcher``'s script, in order."""
    found = [
        item.seeds
        for item in state.launchers.values()
        if item.script == launcher.script and item.scope == "scored"
    ]
    return list(dict.fromkeys(seed for seeds in found for seed in seeds))


def _claimed(state: _Phase, launcher: LauncherPlan) -> bool:
    """Whether a claim of ``launcher``'s script names its seeds (else the Planner chose them
    for a script that fixes its own seed)."""
    by_id = {claim.id: claim for claim in state.claims.claims}
    ids = {item.id for item in state.launchers.values() if item.script == launcher.script}
    return any(
        by_id[plan.claim].hints.seeds
        for plan in state.plan.claims
        if plan.claim in by_id and {plan.smoke, plan.scored} & ids
    )


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


def _imported(state: _Phase, script: str, workdir: str, *, module: bool) -> dict[str, str]:
    """The repository modules ``script`` imports (run from ``workdir``; as ``python -m`` with
    ``module``), in the order its imports reach them, with their text (those that cannot be
    read are left out)."""
    reached = closure(state.code_dir, script, workdir=workdir, module=module)
    texts: dict[str, str] = {}
    for rel in reached.files:
        if rel == script:
            continue
        try:
            texts[rel] = (state.code_dir / rel).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def _read(state: _Phase, rel: str) -> str:
    try:
        return (state.code_dir / rel).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _knobs(knob: Knob | None) -> list[Knob]:
    return [] if knob is None else [knob, *([knob.also] if knob.also is not None else [])]


def _env_how(item: Knob, holder: str) -> str:
    [(variable, value)] = item.env.items()
    return f"sets {variable}={value}; {holder} reads it for {item.name} ({item.default})"


@dataclass(frozen=True)
class _Short:
    """A knob applied to the smoke launcher: the trial launcher, what it does (``how``), the
    files it writes and their texts before, the variables it sets. ``knob`` is its script's
    (None: only the steps it runs first are shortened)."""

    knob: Knob | None
    trial: LauncherPlan
    how: str
    files: dict[str, str]
    originals: dict[str, str]
    env: dict[str, str]

    def write(self, state: _Phase) -> None:
        for rel, new_text in self.files.items():
            (state.code_dir / rel).write_text(new_text, "utf-8")

    def undo(self, state: _Phase) -> None:  # no change stays in the code unrecorded
        for rel, old_text in self.originals.items():
            (state.code_dir / rel).write_text(old_text, "utf-8")

    def try_out(self, state: _Phase) -> RunOutcome:
        """Write the change and run the trial launcher; undone when the build's time ends."""
        self.write(state)
        try:
            return state.run(self.trial)
        except OutOfTime:
            self.undo(state)
            raise


def _shorter_steps(
    state: _Phase, current: LauncherPlan, files: dict[str, str], env: dict[str, str]
) -> tuple[list[PrepareStep], list[str]]:
    """The smoke launcher's steps run first, shortened as its script is: each step's size
    options at their smallest and its iteration counts small in its smoke argv
    (:func:`~reprobridge_sdk.agent.prerequisite.shorter_step`), or a count of its code that
    the smoke launcher's environment sets (``env``; the file's new text joins ``files``, a
    file already changed there is left alone). The steps and what each now does."""
    steps, hows = [], []
    for step in current.prepare:
        text = _read(state, step.script)
        module = step.console_script is not None or step.argv[1:2] == ["-m"]
        modules = _imported(state, step.script, step.workdir, module=module)
        # every option counts, a large value the README gives too: the step's argv is no claim
        counts, step_hows = [], []
        # its loops over its options need no code change: its argv passes them small
        for item in _knobs(smoke_knob(text, [], modules, option_loops=False)):
            holder = item.file or step.script
            if item.args:
                counts.append((item.args[0], item.args[1], item.default))
            elif item.text is not None and (holder not in files or holder == step.script):
                files[holder] = item.text  # the repetitions' edit is on the shortened text
                env.update(item.env)
                step_hows.append(_env_how(item, holder))
        shorter, changed = shorter_step(step, text, tuple(counts))
        if changed:
            step_hows.insert(0, f"passes {' '.join(changed)}")
        steps.append(shorter)
        if step_hows:
            hows.append(f"its step {step.script} {' and '.join(step_hows)}")
    return steps, hows


def _short(
    state: _Phase, current: LauncherPlan, labels: list[str], *, steps: bool = False
) -> _Short | None:
    """The smoke launcher made short by the knob of its script (see ``smoke_knob``; its small
    count lets the claims' ``labels`` be printed) and, with ``steps``, by those of the steps
    it runs first; None when there is no knob."""
    text = _read(state, current.script)
    module = bool({"-m", "-c"} & set(current.argv[:3]))
    modules = _imported(state, current.script, current.workdir, module=module)
    knob = smoke_knob(text, current.argv, modules, labels=labels)
    if current.shell and knob is not None:  # a shell line takes no appended option
        kept = [k for k in (knob, knob.also) if k is not None and not k.args]
        knob = replace(kept[0], also=kept[1] if len(kept) > 1 else None) if kept else None
    knobs = _knobs(knob)
    trial, hows, files = current, [], {}
    for item in knobs:
        if item.args:
            argv = with_option(list(trial.argv), item.args[0], item.args[1], argparse_flags(text))
            trial = trial.model_copy(update={"argv": argv})
            hows.append(f"passes {item.args[0]} {item.args[1]} (default {item.default})")
        else:
            trial = trial.model_copy(update={"env": {**trial.env, **item.env}})
            hows.append(_env_how(item, item.file or current.script))
        if item.text is not None:  # the repetitions' edit is made on the script's shortened text
            files[item.file or current.script] = item.text
    env = {key: value for item in knobs for key, value in item.env.items()}
    shorter, step_hows = _shorter_steps(state, current, files, env) if steps else ([], [])
    if not hows and not step_hows:
        return None
    if step_hows:
        trial = trial.model_copy(update={"prepare": shorter, "env": {**trial.env, **env}})
    originals = {rel: _read(state, rel) for rel in files}
    return _Short(knob, trial, " and ".join([*hows, *step_hows]), files, originals, env)


def _fix(current: LauncherPlan, short: _Short, evidence: str) -> Fix:
    """The ``smoke-scope`` convenience change of ``short``."""
    return Fix(
        rule="smoke-scope",
        kind="convenience",
        summary=f"the smoke run of {current.script} is short: it {short.how}",
        files=short.files,
        env=short.env,
        evidence=evidence,
    )


def _keep(
    state: _Phase,
    current: LauncherPlan,
    short: _Short,
    fix: Fix,
    outcome: RunOutcome,
    *,
    error: str,
    tasks: list[str],
) -> tuple[LauncherPlan, RunOutcome]:
    """Record a short scope whose run (``outcome``) ended within the budget, its time in the
    evidence; the smoke launcher is short, and the shortened run is the next attempt."""
    ended = (
        f"ended successfully in {outcome.seconds:.1f} s"
        if outcome.exit_status == 0
        else f"stopped within the budget, after {outcome.seconds:.1f} s, with exit status "
        f"{outcome.exit_status}: its error is the next attempt's to diagnose"
    )
    fix = replace(
        fix, evidence=f"{fix.evidence}Shortened, it {ended}. The scored launcher is unchanged."
    )
    change = (
        state.record(fix, None, state.tasks_reaching(sorted(short.files), tasks))
        if short.files
        else None
    )
    state.fixes.append(_convenience(current, fix, error).model_copy(update={"change": change}))
    state.launchers[current.id] = short.trial
    return short.trial, outcome


def _large(knob: Knob) -> int | None:
    """The count ``knob`` reads when it is at least :data:`LARGE_COUNT`, else None: a count
    named as one of the work (a constant, an attribute, a keyword, an option; not a count of
    repetitions), or the count a loop's bound reads before any run (its literal, or the
    default of the option it reads, such as ``range(int(args.budget) // steps_per_epoch)``
    with ``--budget`` 300000 by default)."""
    if knob.kind == "loop":
        return knob.count if knob.count is not None and knob.count >= LARGE_COUNT else None
    name = knob.name.rsplit(".", 1)[-1]  # an attribute's: total_steps of args.total_steps
    if knob.default is None or not is_iteration_count(name):
        return None
    try:
        value = ast.literal_eval(knob.default)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if type(value) is int and value >= LARGE_COUNT else None


def _count_read(knob: Knob, count: int, where: str) -> str:
    """What the code says of ``knob``'s count before any run: ``total_steps is 6000 in the
    code (x.py:40)``, or for a loop what its bound reads."""
    if knob.kind != "loop":
        return f"{knob.name} is {count} in the code ({where})"
    if knob.reads is not None:
        return (
            f"the loop over range({knob.default}) ({where}) reads {knob.reads}, {count} by default"
        )
    return f"the loop over range({knob.default}) ({where}) runs {count} times"


def shorten_upfront(
    state: _Phase, current: LauncherPlan, tasks: list[str], labels: list[str]
) -> tuple[LauncherPlan, RunOutcome] | None:
    """Make the smoke run short before it runs, when its code already shows a large count of
    the work (a convenience change; see :func:`_large`), or None to run it as it is.

    The same knob and gate as :func:`_shorten`: the shortened run ends within the budget.
    Kept, the change is recorded with the count read from the code as its evidence, and the
    run is returned as the attempt (it may fail on another error: the fix rules take it). A
    shortened run that still runs past the budget is returned undone (the phase's B021
    follows); one that exits 0 without a claim's label is undone and None is returned: the
    launcher runs as written, and the short scope waits for a run past the budget.
    """
    short = _short(state, current, labels)
    knob = short.knob if short is not None else None
    count = _large(knob) if knob is not None else None
    if short is None or knob is None or count is None:
        return None
    where = f"{knob.file or current.script}:{knob.line}" if knob.line else current.script
    reason = _count_read(knob, count, where)
    outcome = short.try_out(state)
    fix = _fix(
        current,
        short,
        f"{reason}, a count a smoke run does not need to show that the code runs: the smoke "
        "run was made short before its first run, not after a run to its budget. ",
    )
    if outcome.exit_status is None or (outcome.exit_status == 0 and not _passes(outcome, labels)):
        short.undo(state)
        why = (
            f"the shortened run still ran past its budget of {state.timeout:g} s"
            if outcome.exit_status is None
            else f"the shortened run printed none of {labels}"
        )
        state.rejected.append(_convenience(current, fix, f"{reason}; {why}"))
        if outcome.exit_status is None:
            return short.trial, outcome
        state.attempt(short.trial, outcome, why)
        return None
    return _keep(state, current, short, fix, outcome, error=reason, tasks=tasks)


def _shorten(
    state: _Phase,
    current: LauncherPlan,
    outcome: RunOutcome,
    tasks: list[str],
    labels: list[str],
) -> tuple[LauncherPlan, RunOutcome] | None:
    """Make a smoke run that ran past its budget short (a convenience change), or None.

    The knob (:func:`~reprobridge_sdk.agent.convenience.smoke_knob`) changes the smoke launcher
    only: its script's, and those of the steps it runs first (their smoke argv, or a count
    its environment sets). Gate: the shortened run ends within the budget. Kept, a patch is
    recorded; the shortened run is returned as the next attempt (it may still fail on
    another error).
    Rejected or without a knob: :func:`over_budget` (B021, an error, and the phase stops; or
    B061 for a script that never ends on its own).
    """
    budget = f"{state.timeout:g} s"
    short = _short(state, current, labels, steps=True)
    if short is None:
        scripts = ", ".join(step.script for step in current.prepare)
        over_budget(
            state,
            current,
            outcome,
            tasks,
            build_finding(
                "B021",
                f"smoke launcher {current.id!r} ran past its budget of {budget}; "
                f"{current.script} has no iteration count and no count of splits, folds "
                "or repetitions to make it short"
                + (f", nor do the steps it runs first ({scripts})" if scripts else ""),
                hint="give the script an option for the number of epochs or iterations",
            ),
        )
        return None
    again = short.try_out(state)
    fix = _fix(
        current,
        short,
        f"The smoke run of {current.script} was stopped at its budget of {budget} "
        f"({outcome.seconds:.1f} s). ",
    )
    error = f"timed out after {outcome.seconds:.1f} s (budget {budget})"
    if again.exit_status is None:
        short.undo(state)
        state.attempt(short.trial, again, error)
        state.rejected.append(_convenience(current, fix, error))
        over_budget(
            state,
            current,
            again,
            tasks,
            build_finding(
                "B021",
                f"smoke launcher {current.id!r} still runs past its budget of {budget} "
                f"when it {short.how}",
                hint="give the script an option for the number of epochs or iterations",
            ),
        )
        return None
    return _keep(state, current, short, fix, again, error=error, tasks=tasks)


def over_budget(
    state: _Phase,
    current: LauncherPlan,
    outcome: RunOutcome,
    tasks: list[str],
    b021: BuildFinding,
) -> None:
    """A smoke run past its budget that no knob made short: B021 (the phase stops), or, when
    the script never ends on its own (:func:`~reprobridge_sdk.agent._endless.endless_loop`),
    its claims un-planned with what was seen (B061, a warning) and the build goes on."""
    module = bool({"-m", "-c"} & set(current.argv[:3]))
    reached = closure(state.code_dir, current.script, workdir=current.workdir, module=module)
    loop = endless_loop(_read(state, current.script), state.code_dir, reached)
    if loop is None:  # hanging is not an endless loop: the agent claims only what it saw
        state.findings.append(b021)
        return
    place = f"{loop.file or current.script}:{loop.line}"
    seen = (
        f"{current.script} never ends on its own: its loop '{loop.header}' at "
        f"{place} has no break, return, raise or exit, and its smoke "
        f"run was stopped at its budget after {outcome.seconds:.0f} s"
    )
    state.findings.append(
        build_finding(
            "B061",
            f"smoke launcher {current.id!r}: {seen}; not run: {', '.join(tasks)}",
            hint=f"add an iteration count or an exit condition to the loop at "
            f"{place}, record it with 'reprobridge code record --kind "
            "execution-fix --why ...', then 'reprobridge build --resume'",
        )
    )
    plans = {item.claim: item for item in state.plan.claims}
    state.unplanned += [
        plans[task].model_copy(update={"status": "unplanned", "reason": f"{seen} (B061)"})
        for task in tasks
        if task in plans
    ]


def _over_seeds(
    claim: str, scored: LauncherPlan, seeds: list[int], statistic: str, *, chosen: bool
) -> Ambiguity:
    """The decision that plans ``claim`` as the ``statistic`` over ``seeds``."""
    resolution = (
        f"{scored.id} declares seeds {seeds} and the task's statistic is the {statistic} over "
        f"{len(seeds)} seeds (each reference observation is one repetition of every seed)"
    )
    if chosen:
        return Ambiguity(
            id=seeds_decision_id(claim),
            source=f"{scored.script}, its seeding with the constant {scored.fixed_seed}",
            gap=(
                f"the claim names no seeds, and {scored.script} seeds its generators with the "
                f"constant {scored.fixed_seed}: every run repeats one initialisation, so its "
                "references would show nothing of the spread over initialisations that a "
                "published value is most often the mean of"
            ),
            resolution=(
                "the constant reads the launcher's seed (a convenience change; without a seed "
                f"it is {scored.fixed_seed}, as published); the seeds are the constant and the "
                f"four after it; {resolution}"
            ),
            sensitivity="medium",
            tasks=[claim],
        )
    return Ambiguity(
        id=seeds_decision_id(claim),
        source=f"claims file, claim {claim}",
        gap=f"the claim is the {statistic} over seeds {seeds}, but {scored.script} took no seed",
        resolution=(
            f"a seed option ({scored.seed_flag}) was added as a convenience change; {resolution}"
        ),
        sensitivity="low",
        tasks=[claim],
    )


def _replan(
    state: _Phase, claims: Claims, plan: PlanRecord
) -> tuple[list[ClaimPlan], list[Ambiguity]]:
    """Re-plan the claims over several seeds whose script the Planner found unseeded.

    Such a claim (two or more distinct ``hints.seeds`` and a ``hints.statistic``, or no seeds
    for a script that fixes its own, planned as the mean over the Planner's seeds) was planned
    with every seed on its scored launcher but no statistic, waiting for the seed option.
    With the option kept, the scored launcher declares every seed and the claim's plan gets
    the statistic (each reference observation one repetition), recorded as a decision;
    without it, B018 (warning) and the scored launcher keeps the first seed alone (its runs
    repeated unseeded), or, for seeds the Planner chose, the command as published, repeated.
    """
    planned = {item.id: item for item in plan.launchers}
    index_of = {claim.id: index for index, claim in enumerate(claims.claims)}
    by_id = {claim.id: claim for claim in claims.claims}
    replanned: list[ClaimPlan] = list(state.unplanned)
    unplanned = {item.claim for item in state.unplanned}
    decisions: list[Ambiguity] = []
    for claim_plan in plan.claims:
        claim = by_id.get(claim_plan.claim)
        before = planned.get(claim_plan.scored or "")
        if claim is None or before is None or claim_plan.status != "planned":
            continue
        if claim.id in unplanned:
            continue
        seeds = list(dict.fromkeys(claim.hints.seeds))
        statistic = claim.hints.statistic
        chosen = not seeds and before.fixed_seed is not None and len(before.seeds) > 1
        if chosen:  # the Planner's seeds for a script that fixes its own (see the planner)
            seeds, statistic = list(before.seeds), "mean"
        if len(seeds) < 2 or statistic is None or before.seed_flag is not None:
            continue
        scored = state.launchers[before.id]
        if scored.seed_flag is not None:
            state.launchers[scored.id] = scored.model_copy(update={"seeds": seeds})
            replanned.append(claim_plan.model_copy(update={"statistic": statistic}))
            decisions.append(_over_seeds(claim.id, scored, seeds, statistic, chosen=chosen))
            continue
        if chosen:  # no seed option: the command as published, repeated (B020 says why)
            state.launchers[scored.id] = scored.model_copy(update={"seeds": []})
            smoke = state.launchers.get(claim_plan.smoke or "")
            if smoke is not None and smoke.seed_flag is None:
                state.launchers[smoke.id] = smoke.model_copy(update={"seeds": []})
            replanned.append(claim_plan.model_copy(update={"statistic": None}))
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
