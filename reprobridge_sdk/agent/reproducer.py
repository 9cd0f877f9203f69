"""Reproducer: run the smoke plan, classify failures, apply known fixes, record each one.

For each smoke launcher of the plan, in order:

1. Run it with the built environment's interpreter (``python`` in ``argv[0]`` is replaced by
   it), in the repository's working copy at the launcher's working directory, with the
   launcher's environment variables and its first seed.
2. Success: exit status 0 and, when the claim names a label, the label appears in the output
   (the smoke landmark). Then the launcher is done.
3. Failure: :func:`~reprobridge_sdk.agent.fixes.classify` reads the traceback and
   :func:`~reprobridge_sdk.agent.fixes.propose` looks for a fix; if none, a missing file
   that a command of the repository writes gets that command as a step run first
   (:mod:`reprobridge_sdk.agent.prerequisite`); if none, the launcher runs again in the next
   environment of the code's era the Builder has (its versions for the running interpreter,
   then with an interpreter of the era), and only when none is left is the advisor (when
   enabled) asked for a fix. The repository's own distribution metadata missing, with the
   rule ``own-distribution-metadata`` refusing to write it (B052, B053), goes to no era
   environment: no environment installs the repository. The fix is applied and the launcher
   runs again. The fix's gate: the error it targeted (type, message, place) must be gone. A
   fix that passes is recorded through ``record`` (``code record``: the working change
   becomes the next patch and a change-record entry, the traceback as its evidence); a fix
   that fails is undone and reported as B008. A failure no fix removes is B007 and ends the
   phase. A fix may add a file (the own distribution's ``.dist-info``): it is written
   atomically inside the code, never through a link that leads out, and undone with the
   folders it made. A rule that recognises a failure but refuses to fix it gives its warning
   (B052, B053) and the next rule is tried.
4. A step run first is kept when the launcher then passes the error it missed, or when the
   step fails with an error a fix rule mends (the next round fixes the step's code): the
   step failing otherwise, or the file still missing, is B057; a step that needs a file the
   launcher's own script writes is B056 (a cycle). A kept step joins every launcher of the
   script (the smoke launcher's with its size options small), the plan's argv unchanged, and
   a guide decision records it; no patch is written.

Two convenience changes (:mod:`reprobridge_sdk.agent.convenience`), each only when needed,
each a patch recorded like a fix (``code record --kind convenience``) with its reason and
evidence instead of an error:

* **Short smoke scope.** A smoke run that ran past its budget (``timeout``, killed there) gets
  an iteration knob: an option the smoke launcher now passes small, or a patch (of the script,
  or of a repository module it imports that holds the training's length) that lets the
  smoke launcher set the count through the environment; the steps it runs first are
  shortened so too (their smoke argv, and the guide's decision says what they now run).
  Gate: the shortened run ends within the budget (B021, error, otherwise, and when there is
  no knob). When the code already names
  a count of the work of at least ``LARGE_COUNT`` (``nb_epochs = 100000``, an option's
  default, a keyword), the smoke launcher is made short before its first run instead, with
  that count as the evidence: its run is the attempt and any other error it meets goes to
  the fix rules; still past the budget it is undone (B021), and without a claim's label it
  is undone and the launcher runs as written. Only the smoke launcher
  changes; a smoke run within its budget is never touched. A script that never ends on its
  own (a ``while True:`` its run reaches with no way out, :mod:`~reprobridge_sdk.agent._endless`)
  is not an error of the build: its claims are un-planned (``replanned``, with the loop's
  place and the time its run was stopped after; B061, a warning), its smoke launcher is left
  out of the record (no short run to ship), and the build goes on to an artifact whose tasks
  say they are not measured.
* **Seed option.** After the smoke launcher passes, a script that takes no seed while its
  claims name seeds, or while it fixes its own (the plan's launchers carry those seeds with no
  ``seed_flag``) gets a seed option (``--seed``, or ``REPRO_SEED`` for a script without an
  argument parser or one whose seeding constant now reads it). Gate: two
  seeded smoke runs pass and print the same labelled lines. Kept, every launcher of the
  script passes ``{seed}`` and the plan's pitfall "takes no seed" is resolved; rejected, B020
  (warning) and the runs are repeated unseeded, as planned.

**Same seed, same value.** After a smoke launcher that takes a seed passes, it runs again
with that seed; different labelled lines are a finding before any reference run is taken,
with the likely cause and the recorded environment setting that removes it
(:mod:`reprobridge_sdk.agent._determinism`: ``PYTHONHASHSEED=0``, then one thread; B045, or
B046 when neither helps).

At most :data:`MAX_FIXES` fixes per launcher: a repository that needs more is beyond the
heuristics, and looping on it would hide that.

Tracebacks and error messages are written with :meth:`Failure.portable`: no path of this
machine (the artifact's directory, environments, the standard library) reaches the record,
the findings, the change record or the advisor.

This module owns the loop over the smoke launchers and their fixes; one run of a launcher and
what the phase collects are in ``_smoke``, the two convenience changes and the re-planning
after them in ``_convenience_changes``.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reprobridge_sdk.agent._convenience_changes import (
    _replan,
    _seed_option,
    _shorten,
    over_budget,
    shorten_upfront,
)
from reprobridge_sdk.agent._determinism import same_seed
from reprobridge_sdk.agent._smoke import (
    SMOKE_TIMEOUT,
    OutOfTime,
    Recorder,
    RunOutcome,
    _passes,
    _Phase,
    run_launcher,
)
from reprobridge_sdk.agent.fixes import Failure, Fix, classify, portable, propose
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.own_distribution import missing_distribution
from reprobridge_sdk.agent.prerequisite import decision, gate, prerequisite_fix
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.io.safefs import UnsafeFileError
from reprobridge_sdk.model.build import (
    AppliedFix,
    BuildFinding,
    LauncherPlan,
    PlanRecord,
    PrepareStep,
    ReproducerRecord,
)
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.guide import Ambiguity

__all__ = [
    "MAX_FIXES",
    "SMOKE_TIMEOUT",
    "Advice",
    "OutOfTime",
    "Rebuild",
    "Recorder",
    "RunOutcome",
    "Widen",
    "reproduce",
    "run_launcher",
]

#: What the rule ``own-distribution-metadata`` gives when it recognises its failure but
#: refuses to fix it (:mod:`reprobridge_sdk.agent.own_distribution`).
_OWN_METADATA_REFUSALS = {"B052", "B053"}

#: Fixes tried per launcher before the Reproducer gives up.
MAX_FIXES = 8

#: ``advise(failure, launcher) -> fix or None``: the advisor's proposal, when enabled.
Advice = Callable[[Failure, LauncherPlan], "Fix | None"]

#: ``rebuild(failure) -> (interpreter or None, findings)``: the next environment of the
#: code's era, built; None when none is left (the findings say why).
Rebuild = Callable[[Failure], "tuple[Path | None, list[BuildFinding]]"]

#: ``widen(steps) -> (interpreter or None, findings)``: the environment built again to serve
#: the imports of the steps a launcher runs first too; None when it stays as it is.
Widen = Callable[[list[PrepareStep]], "tuple[Path | None, list[BuildFinding]]"]


def _labels(claims: Claims, plan: PlanRecord, launcher_id: str) -> tuple[list[str], list[str]]:
    tasks = [c.claim for c in plan.claims if launcher_id in {c.smoke, c.scored}]
    by_id = {c.id: c for c in claims.claims}
    labels = [by_id[t].hints.label for t in tasks if t in by_id and by_id[t].hints.label]
    return tasks, [label for label in labels if label]


@dataclass(frozen=True)
class _Before:
    """What a fix replaced: each file's previous text (None: new), and the folders it made
    (deepest first)."""

    texts: dict[str, str | None]
    folders: list[str]


def _apply(fix: Fix, code_dir: Path) -> _Before:
    """Write the fix's files; return what they replaced, for undoing.

    A new file is written atomically inside ``code_dir`` (its folders made there; a link
    that leads out is refused).
    """
    texts: dict[str, str | None] = {}
    folders: list[str] = []
    for rel, text in fix.files.items():
        path = code_dir / rel
        if not os.path.lexists(path):
            made = [
                str(folder)
                for folder in PurePosixPath(rel).parents
                if str(folder) != "." and not os.path.lexists(code_dir / folder)
            ]
            texts[rel] = None
            atomic_write_text(path, text, root=code_dir)
            folders += made
            continue
        texts[rel] = path.read_text("utf-8")
        path.write_text(text, "utf-8")
    return _Before(texts, folders)


def _undo(before: _Before, code_dir: Path) -> None:
    for rel, text in before.texts.items():
        if text is None:
            (code_dir / rel).unlink(missing_ok=True)
        else:
            (code_dir / rel).write_text(text, "utf-8")
    for folder in before.folders:  # deepest first: each is empty once its files are gone
        (code_dir / folder).rmdir()


def _rebase(launcher: LauncherPlan, workdir: str) -> list[str]:
    """``argv`` with the script's path rewritten relative to a new working directory (a
    shell line is kept as written: its own ``cd``s say where it runs)."""
    if launcher.shell:
        return list(launcher.argv)
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


def _own_metadata_refused(failure: Failure, refusals: list[BuildFinding]) -> bool:
    """Whether ``failure`` is the repository's own distribution metadata missing and the
    rule ``own-distribution-metadata`` refused to write it (B052, B053): the code reads
    metadata of the repository itself, which no environment of any era installs."""
    if missing_distribution(failure.type, failure.message) is None:
        return False
    return any(note.code in _OWN_METADATA_REFUSALS for note in refusals)


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
    sandbox: bool = False,
    rebuild: Rebuild | None = None,
    widen: Widen | None = None,
    deadline: float | None = None,
) -> ReproducerRecord:
    """Run every smoke launcher of ``plan`` until it passes or no fix helps.

    A failure no fix rule removes is retried in the next environment of the code's era
    (``rebuild``, while one is left) before the advisor is asked: fix rules, then the era
    environment, then the advisor.

    A step run first (:mod:`reprobridge_sdk.agent.prerequisite`) gets its imports into the
    environment through ``widen`` before the launcher runs again with it.

    ``timeout`` is the smoke budget in seconds. ``artifact`` (default: ``code_dir``'s parent)
    is what paths in the record are written relative to. With ``sandbox`` every run is
    confined by the runner's sandbox.

    ``deadline`` (a :func:`time.monotonic` value: the build's time limit) bounds every run:
    a run it stops, or one due after it (and a ``rebuild`` or ``widen`` that raises
    :class:`~reprobridge_sdk.agent._smoke.OutOfTime`), ends the phase with B016; the
    attempts and fixes so far stay in the record.
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
        sandbox=sandbox,
        deadline=deadline,
    )
    findings = state.findings
    fixed_seeds: list[Ambiguity] = []
    prepared: list[Ambiguity] = []
    try:
        _smoke_all(state, claims, plan, code_dir, advise, rebuild, widen, fixed_seeds, prepared)
    except OutOfTime as late:
        findings.append(
            build_finding(
                "B016",
                f"stopped in reproducer: {late.detail}",
                hint="build again with --resume and a larger --max-minutes",
            )
        )
    replanned, decisions = _replan(state, claims, plan)
    endless = {item.smoke for item in state.unplanned}  # no short smoke run to ship
    return ReproducerRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        attempts=state.attempts,
        fixes=state.fixes,
        rejected=state.rejected,
        launchers=[state.launchers[item.id] for item in plan.launchers if item.id not in endless],
        resolved_pitfalls=sorted(set(state.resolved)),
        replanned=replanned,
        decisions=[*decisions, *prepared, *fixed_seeds],
    )


def _smoke_all(  # noqa: PLR0917 - the loop reproduce() had inline
    state: _Phase,
    claims: Claims,
    plan: PlanRecord,
    code_dir: Path,
    advise: Advice | None,
    rebuild: Rebuild | None,
    widen: Widen | None,
    fixed_seeds: list[Ambiguity],
    prepared: list[Ambiguity],
) -> None:
    """Every smoke launcher until it passes or no fix helps (see :func:`reproduce`)."""
    findings = state.findings
    timeout = state.timeout
    for smoke in [item for item in plan.launchers if item.scope == "smoke"]:
        tasks, labels = _labels(claims, plan, smoke.id)
        current = state.launchers[smoke.id]
        pending: RunOutcome | None = None
        shortened = False
        passed = False
        last: RunOutcome | None = None
        for _round in range(MAX_FIXES + 1):
            if pending is None and not shortened:  # an undone short scope is not tried again
                tried = any(
                    f.rule == "smoke-scope" and f.launcher == smoke.id for f in state.rejected
                )
                upfront = None if tried else shorten_upfront(state, current, tasks, labels)
                if upfront is not None:
                    shortened = True
                    current, pending = upfront
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
                last = outcome
                break
            if outcome.exit_status is None:
                if shortened:
                    over_budget(
                        state,
                        current,
                        outcome,
                        tasks,
                        build_finding(
                            "B021",
                            f"smoke launcher {current.id!r} still runs past its budget of "
                            f"{timeout:g} s after it was made short",
                        ),
                    )
                    break
                shortened = True
                made = _shorten(state, current, outcome, tasks, labels)
                if made is None:
                    break
                current, pending = made
                # the decisions say what the smoke launcher's steps run now
                fresh = {d.id: d for d in (decision(s, current, tasks) for s in current.prepare)}
                prepared[:] = [fresh.get(d.id, d) for d in prepared]
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
            refusals: list[BuildFinding] = []
            fix = propose(raw, code_dir, current.script, refusals)
            findings.extend(note for note in refusals if note not in findings)
            source = "heuristic"
            if fix is None:
                fix = prerequisite_fix(raw, code_dir, current, findings)
            if fix is None and rebuild is not None and not _own_metadata_refused(raw, refusals):
                rebuilt, notes = rebuild(failure)
                findings.extend(notes)
                if rebuilt is not None:
                    state.interpreter = rebuilt
                    continue  # the same launcher again, in the era's environment
                rebuild = None  # no environment left: the advisor next
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
            except (OSError, UnicodeDecodeError, UnsafeFileError) as exc:
                detail = portable(str(exc), state.artifact)
                findings.append(
                    build_finding("B008", f"fix {fix.rule!r} cannot be applied: {detail}")
                )
                break
            if fix.prepare and widen is not None:
                widened, notes = widen(list(fix.prepare))
                findings.extend(notes)
                state.interpreter = widened or state.interpreter
            trial = current
            if fix.workdir is not None or fix.env or fix.prepare:
                trial = current.model_copy(
                    update={
                        "argv": _rebase(current, fix.workdir or current.workdir),
                        "workdir": fix.workdir or current.workdir,
                        "env": {**current.env, **fix.env},
                        "prepare": list(fix.prepare) or current.prepare,
                    }
                )
            try:
                again = state.run(trial)
            except OutOfTime:
                _undo(before, code_dir)  # no change stays in the code unrecorded
                raise
            after = (
                classify(again.stderr, code_dir, code_dir / trial.workdir)
                if again.exit_status not in {0, None}
                else None
            )
            applied = _applied(current, fix, failure, source)
            step_refused = (
                gate(
                    fix.prepare,
                    trial,
                    raw,
                    after.portable(state.artifact) if after is not None else None,
                    code_dir,
                    fixable=after is not None
                    and propose(after, code_dir, fix.prepare[-1].script) is not None,
                    failed=again.exit_status not in {0, None},
                )
                if fix.prepare
                else None
            )
            if step_refused is not None:
                _undo(before, code_dir)
                state.rejected.append(applied)
                findings.append(step_refused)
                findings.append(
                    build_finding(
                        "B007",
                        f"smoke launcher {current.id!r} fails with {failure.signature}",
                        hint="fix the code by hand and record it with 'reprobridge code record'",
                    )
                )
                break
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
            change = (
                state.record(fix, failure, state.tasks_reaching(sorted(fix.files), tasks))
                if fix.files
                else None
            )
            state.fixes.append(applied.model_copy(update={"change": change}))
            findings.extend(note for note in fix.notes if note not in findings)
            if trial is not current:
                for item in list(state.launchers.values()):
                    if item.script == current.script and item.workdir == current.workdir:
                        state.launchers[item.id] = item.model_copy(
                            update={
                                "argv": _rebase(item, trial.workdir),
                                "workdir": trial.workdir,
                                "env": {**item.env, **fix.env},
                                "prepare": list(fix.prepare) or item.prepare,
                            }
                        )
                current = state.launchers[smoke.id]
            if fix.prepare:
                prepared.append(decision(fix.prepare[-1], current, tasks))
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
        elif passed and last is not None:
            fixed_seeds += same_seed(state, current, last, labels, tasks)
