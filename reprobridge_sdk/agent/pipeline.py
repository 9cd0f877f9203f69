"""``reprobridge build``: the phases in order, each behind its gate, resumable by digest.

Rules:

* The claims file is read first; a bad one is a :class:`ClaimsError` (B001) and nothing runs.
* ``OUT`` (default ``./<repo>-rra``) must not hold an artifact unless ``resume`` is given.
* Each phase's ``inputs_digest`` covers what it reads (see :mod:`reprobridge_sdk.agent.state`):
  Intake the source, the resolved commit and the claims; Planner the Intake's digest and the
  advisor setting; Builder the Planner's and the interpreter; every later phase the previous
  phase's digest. With ``resume`` a phase whose record has the same digest and a passed gate
  is reused; the first that is not, and every one after it, runs again. A stored record with
  another digest is B013 (info).
* A phase whose gate fails stops the build; the report names it (``stopped_at``). Past
  ``max_minutes`` the build stops before the next phase (B016). The Reviewer's clean-room
  check, one more run of each scored launcher that measures a claim over its seeds in a
  fresh environment (the Distiller's estimate, ``review_seconds``), runs without those runs
  when only its setup ends within them (B063), and the build stops before it when not even
  that does (B016).
  The Distiller takes only as many reference runs as fit, keeping the Reviewer's share when
  at least the minimum fits beside it (B058, B059).
* The report (``.rra-build/report.json``) and the human summary list per claim its status
  (compatible, incompatible, not extracted, not run), the time per phase, the fixes applied
  and the advisor's calls.
* A stopped build's report names the phase, the failure class, what was tried and the steps
  that unblock it (:mod:`reprobridge_sdk.agent.failure`).
* ``--resume`` keeps the changes the author recorded with ``reprobridge code record``: they
  are part of the Reproducer's inputs (so recording one runs the Reproducer and what follows
  again, while the phases before it are reused), and the Reproducer's re-assembly of the
  artifact records each again, same id, kind and rationale, before its smoke runs. A kept
  change that no longer applies stops the build (B040); one that does is reported (B041).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from reprobridge_sdk.agent.advisor import Advisor, AdvisorConfig
from reprobridge_sdk.agent.builder import (
    ENV_DIR,
    ENVIRONMENTS,
    build_environment,
    era_decision,
    in_use,
    relaxation_decision,
    still_in_use,
    undeclared_import,
)
from reprobridge_sdk.agent.claims import author_patch, load_claims
from reprobridge_sdk.agent.distiller import distill
from reprobridge_sdk.agent.failure import failure_report
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.intake import SourceError, checkout, inventory
from reprobridge_sdk.agent.notebooks import rationale, write_script
from reprobridge_sdk.agent.packager import (
    assemble,
    finalize,
    manifest_launcher,
    replace_environment,
)
from reprobridge_sdk.agent.patching import apply_patch
from reprobridge_sdk.agent.planner import plan, unseeded_pitfall_id
from reprobridge_sdk.agent.prerequisite import with_step_imports
from reprobridge_sdk.agent.reproducer import SMOKE_TIMEOUT, OutOfTime, reproduce
from reprobridge_sdk.agent.reviewer import plan_review, review, setup_seconds
from reprobridge_sdk.agent.state import BuildState, RecordedChange, inputs_digest
from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.codebase import record_patch
from reprobridge_sdk.checkout._git import GitError, git
from reprobridge_sdk.env.venv import ensure_environment
from reprobridge_sdk.errors import ReproBridgeError, UsageError
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.model.build import (
    BUILD_VERSION,
    BuilderRecord,
    BuildFinding,
    BuildReport,
    ClaimSummary,
    DistillerRecord,
    IntakeRecord,
    PackagerRecord,
    PhaseName,
    PhaseRecord,
    PlanRecord,
    PrepareStep,
    ReachedImport,
    ReproducerRecord,
    ReviewRecord,
)
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.guide import Discrepancy, Pitfall
from reprobridge_sdk.model.task import Statistic
from reprobridge_sdk.run.runner import require_sandbox

__all__ = ["BuildOptions", "build", "render_summary", "reproducer_digest"]

RecordT = TypeVar("RecordT", bound=PhaseRecord)


@dataclass(frozen=True)
class BuildOptions:
    """The options of one build (the command line's flags)."""

    source: str
    claims: Path
    commit: str | None = None
    out: Path | None = None
    advisor: str | None = None
    advisor_model: str = "gpt-4o-mini"
    resume: bool = False
    max_minutes: float | None = None
    #: Seconds a smoke run may take before the Reproducer stops it and makes its scope short.
    smoke_budget: float = SMOKE_TIMEOUT
    #: Run the repository's code (import probes, smoke runs, the Distiller's and the
    #: Reviewer's runs) in the runner's sandbox; installing the environment stays outside.
    sandbox: bool = True


#: The change-record id of the claims file's patch: recorded by every Reproducer run, so a
#: resume never keeps it as one of the author's own changes (it would apply twice).
CLAIMS_PATCH_CHANGE = "claims-patch"


class _Stop(Exception):
    def __init__(self, phase: PhaseName, findings: list[BuildFinding]) -> None:
        super().__init__(phase)
        self.phase = phase
        self.findings = findings


def _repo_name(source: str) -> str:
    name = re.sub(r"\.git$", "", source.rstrip("/").rsplit("/", 1)[-1]) or "repository"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def build(options: BuildOptions, *, echo: Callable[[str], None] | None = None) -> BuildReport:
    """Run the build; return its report (also written to ``.rra-build/report.json``)."""
    say = echo or (lambda _text: None)
    claims = load_claims(options.claims)
    if options.sandbox:
        require_sandbox()  # N011 before anything of the repository is read or run
    patch_text = author_patch(claims, options.claims)
    out = (options.out or Path.cwd() / f"{_repo_name(options.source)}-rra").resolve()
    if (out / "rra.yaml").exists() and not options.resume:
        msg = f"{out} holds an artifact already; pass --resume to continue its build"
        raise UsageError(msg)
    state = BuildState(out)
    started = time.monotonic()
    seconds: dict[str, float] = {}
    reused: list[PhaseName] = []
    notes: list[BuildFinding] = []
    advisor = (
        Advisor(
            AdvisorConfig(base_url=options.advisor, model=options.advisor_model),
            state.root / "advisor.jsonl",
        )
        if options.advisor
        else None
    )
    records: dict[str, PhaseRecord] = {}
    report_commit: str | None = None

    deadline = None if options.max_minutes is None else started + options.max_minutes * 60

    def phase(
        name: PhaseName,
        model: type[RecordT],
        digest: str,
        compute: Callable[[], RecordT],
        needs: float = 0.0,
    ) -> RecordT:
        if options.resume:
            kept = state.reusable(name, model, digest)
            if kept is not None:
                reused.append(name)
                seconds[name] = 0.0
                records[name] = kept
                say(f"[{name}] reused")
                return kept
        stored = state.stored(name, model)
        if stored is not None and stored.inputs_digest != digest:
            notes.append(build_finding("B013", f"{name}: its inputs changed; it runs again"))
        limit = options.max_minutes
        if limit is not None and time.monotonic() - started > limit * 60:
            late = build_finding("B016", f"stopped before {name}: past {limit} minutes")
            raise _Stop(name, [late])
        if deadline is not None and needs and time.monotonic() + needs > deadline:
            left = max(deadline - time.monotonic(), 0.0)
            late = build_finding(
                "B016",
                f"stopped before {name}: it needs about {needs:.0f} s and {left:.0f} s of "
                f"the {limit} minutes remain",
            )
            raise _Stop(name, [late])
        say(f"[{name}] running")
        begin = time.monotonic()
        record = compute()
        seconds[name] = round(time.monotonic() - begin, 3)
        state.save(record)
        records[name] = record
        if not record.gate.passed:
            raise _Stop(name, list(record.gate.findings))
        return record

    checkout_dir = state.root / "source"
    stopped: PhaseName | None = None
    stop_findings: list[BuildFinding] = []
    discrepancies: list[Discrepancy] = []
    kept: list[RecordedChange] = []
    try:
        try:
            commit, commit_date = checkout(options.source, checkout_dir, options.commit)
        except SourceError as exc:
            raise _Stop("intake", [exc.finding]) from None
        report_commit = commit
        if patch_text is not None and claims.patch is not None:
            refused = apply_patch(patch_text, checkout_dir, name=claims.patch.path)
            if refused is not None:
                raise _Stop("intake", [refused])
        claims_data = claims.model_dump(mode="json", exclude_none=True)
        d_intake = inputs_digest(
            phase="intake",
            version=BUILD_VERSION,
            source=options.source,
            commit=commit,
            claims=claims_data,
            **({"patch": patch_text} if patch_text is not None else {}),
        )
        intake = phase(
            "intake",
            IntakeRecord,
            d_intake,
            lambda: inventory(
                checkout_dir,
                claims,
                source=options.source,
                commit=commit,
                commit_date=commit_date,
                inputs_digest=d_intake,
            ),
        )
        d_plan = inputs_digest(phase="planner", intake=d_intake, advisor=bool(advisor))
        planned = phase(
            "planner",
            PlanRecord,
            d_plan,
            lambda: _plan(claims, intake, checkout_dir, d_plan, advisor),
        )
        d_builder = inputs_digest(phase="builder", planner=d_plan, python=intake.python.target)
        built = phase(
            "builder",
            BuilderRecord,
            d_builder,
            lambda: build_environment(
                intake,
                state.root,
                inputs_digest=d_builder,
                plan=planned,
                claims=claims,
                sandbox=options.sandbox,
                deadline=deadline,
            ),
        )
        era = _Era(
            built, intake, planned, claims, state, out, options.sandbox, records, deadline=deadline
        )
        kept = _author_changes(out, state, _agent_made(claims, planned)) if options.resume else []
        d_repro = reproducer_digest(d_builder, options, kept)
        repro = phase(
            "reproducer",
            ReproducerRecord,
            d_repro,
            lambda: _reproduce(
                options, claims, intake, planned, out, state, d_repro, advisor, kept, era
            ),
        )
        built = era.built
        # the imports of the steps run first, when the Reproducer added any, stay the plan's
        widened = planned.model_copy(update={"imports": era.planned.imports})
        replanned = _replanned(widened, repro)
        if replanned != planned:
            # the re-plan is the planner record from now on (the same inputs digest: the
            # Reproducer re-decides it from the claims whenever it runs again)
            state.save(replanned)
            planned = records["planner"] = replanned
        # the claims of a script that never ends (B061) are not run; the planner record keeps
        # them planned, so that a resume after the author's fix tries them again
        planned = _unplanned(planned, repro)
        d_distill = inputs_digest(phase="distiller", reproducer=d_repro)
        distilled_holder: list[list[Discrepancy]] = []

        def run_distiller() -> DistillerRecord:
            record, found = distill(
                load(out),
                claims,
                planned,
                repro.launchers,
                state.root,
                inputs_digest=d_distill,
                ask_line=advisor.choose_line if advisor is not None else None,
                sandbox=options.sandbox,
                deadline=deadline,
                review=setup_seconds(repro),
            )
            distilled_holder.append(found)
            return record

        distilled = phase("distiller", DistillerRecord, d_distill, run_distiller)
        discrepancies = distilled_holder[0] if distilled_holder else _stored_discrepancies(out)
        d_pack = inputs_digest(phase="packager", distiller=d_distill)
        phase(
            "packager",
            PackagerRecord,
            d_pack,
            lambda: _package(
                out,
                _as_seen(_with_relaxation(_still_true(planned, repro), built), out),
                distilled,
                discrepancies,
                d_pack,
            ),
        )
        # one independent attempt of the scored plan in a fresh environment; a record of an
        # older build has no estimate: the Distiller's time, as it then was. Without the
        # time for its scored runs, the check's setup alone (B063)
        full = (
            distilled.review_seconds if distilled.review_seconds is not None else distilled.seconds
        )
        left = None if deadline is None else deadline - time.monotonic()
        scored, needs = plan_review(full, setup_seconds(repro), left)
        left_out = "" if left is None else f"it needs about {full:.0f} s and {left:.0f} s remain"
        # a check without its scored attempt is not reused by a build with the time for it
        d_review = inputs_digest(
            phase="reviewer", packager=d_pack, **({} if scored else {"scored": False})
        )
        phase(
            "reviewer",
            ReviewRecord,
            d_review,
            lambda: review(
                load(out),
                claims,
                state.root,
                inputs_digest=d_review,
                sandbox=options.sandbox,
                deadline=deadline,
                scored=scored,
                left_out=left_out,
            ),
            needs=needs,
        )
    except _Stop as stop:
        stopped = stop.phase
        stop_findings = stop.findings
    if kept and "reproducer" in records and "reproducer" not in reused:
        notes.append(
            build_finding(
                "B041",
                f"kept {len(kept)} recorded change(s): {', '.join(c.id for c in kept)}",
            )
        )
    failure = (
        failure_report(
            stopped,
            stop_findings,
            records.get(stopped),
            source=options.source,
            claims=options.claims,
            out=out,
            options=_resume_options(options),
            max_minutes=options.max_minutes,
        )
        if stopped is not None
        else None
    )
    # the warnings of the phases that passed (fewer reference runs, a claim not extracted,
    # an optional import left out ...) are the author's to read too, not only the stop's
    warnings = [
        item
        for name, record in records.items()
        if name != stopped
        for item in record.gate.findings
        if item.severity != "error"
    ]
    findings = [*stop_findings, *warnings, *notes, *(advisor.findings if advisor else [])]
    report = BuildReport(
        source=options.source,
        commit=report_commit,
        artifact=str(out),
        passed=stopped is None,
        stopped_at=stopped,
        reviewed=isinstance(records.get("reviewer"), ReviewRecord)
        and records["reviewer"].gate.passed,
        claims=_summaries(claims, records),
        phase_seconds=seconds,
        reused=reused,
        fixes=[f.summary for f in getattr(records.get("reproducer"), "fixes", [])],
        advisor_calls=advisor.calls if advisor else 0,
        findings=findings,
        failure=failure,
    )
    atomic_write_text(state.root / "report.json", report.model_dump_json(indent=2) + "\n")
    return report


def reproducer_digest(
    builder: str, options: BuildOptions, kept: list[RecordedChange] | None = None
) -> str:
    """The Reproducer's inputs: the Builder's digest, the options it reads (the smoke
    budget) and the changes the author recorded, so ``--resume`` with another budget or
    after a ``code record`` runs the Reproducer and what follows again."""
    if not kept:
        return inputs_digest(phase="reproducer", builder=builder, smoke_budget=options.smoke_budget)
    changes = [(c.id, hashlib.sha256(c.patch.encode("utf-8")).hexdigest()) for c in kept]
    return inputs_digest(
        phase="reproducer",
        builder=builder,
        smoke_budget=options.smoke_budget,
        changes=changes,
    )


def _resume_options(options: BuildOptions) -> list[str]:
    """The options other than the defaults that a resume must repeat (same digests)."""
    extra: list[str] = []
    if options.commit:
        extra += ["--commit", options.commit]
    if options.advisor:
        extra += ["--advisor", options.advisor, "--advisor-model", options.advisor_model]
    if options.smoke_budget != SMOKE_TIMEOUT:
        extra += ["--smoke-budget", f"{options.smoke_budget:g}"]
    return extra


def _agent_made(claims: Claims, planned: PlanRecord) -> frozenset[str]:
    """The ids of the changes every Reproducer run records again by itself: the scripts made
    from the planned notebooks, and the claims file's patch when it declares one."""
    made = {item.change for item in planned.notebooks}
    if claims.patch is not None:
        made.add(CLAIMS_PATCH_CHANGE)
    return frozenset(made)


def _author_changes(
    out: Path, state: BuildState, made: frozenset[str] = frozenset()
) -> list[RecordedChange]:
    """The changes the author recorded in the artifact: every change-record entry with a
    patch that no fix of the stored Reproducer record made and that the agent does not
    record again by itself (``made``: a script made from a notebook, the claims file's
    patch), or those kept by a resume that stopped before recording them again."""
    kept = state.kept_changes()
    if kept is not None:
        return kept
    try:
        art = load(out)
    except Exception:  # no artifact yet, or one the author broke: nothing recorded to keep
        return []
    stored = state.stored("reproducer", ReproducerRecord)
    agent = {f.change for f in stored.fixes if f.change} if stored is not None else set()
    changes = []
    for change in art.manifest.guide.changes:
        if change.patch is None or change.id in agent or change.id in made:
            continue
        try:
            text = (out / change.patch).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        changes.append(
            RecordedChange(
                id=change.id,
                kind=change.kind,
                summary=change.summary,
                rationale=change.rationale,
                tasks=list(change.tasks),
                patch=text,
            )
        )
    return changes


def _forget_patches(out: Path) -> None:
    """Remove the patch files of the artifact's change record (the re-assembly records the
    kept ones again and the Reproducer makes its own fixes again): none is left orphaned."""
    try:
        art = load(out)
    except Exception:  # no artifact yet
        return
    for change in art.manifest.guide.changes:
        if change.patch is not None:
            (out / change.patch).unlink(missing_ok=True)


def _record_kept(out: Path, kept: list[RecordedChange]) -> None:
    """Apply and record each kept change in the freshly imported ``code/`` (B040 if one no
    longer applies)."""
    tasks = {t.id for t in load(out).manifest.tasks}
    for change in kept:
        try:
            git(
                ["apply", "--whitespace=nowarn", "-"],
                cwd=out / "code",
                input_=change.patch.encode("utf-8"),
            )
        except GitError as exc:
            stop = build_finding(
                "B040",
                f"the recorded change {change.id!r} does not apply to the imported code: "
                f"{exc.stderr.strip()[:300]}",
                hint="edit code/ again and record the change with 'reprobridge code record'",
            )
            raise _Stop("reproducer", [stop]) from None
        record_patch(
            out,
            kind=change.kind,
            why=change.rationale,
            tasks=[t for t in change.tasks if t in tasks],
            summary=change.summary,
            change_id=change.id,
        )


def _plan(
    claims: Claims,
    intake: IntakeRecord,
    root: Path,
    digest: str,
    advisor: Advisor | None,
) -> PlanRecord:
    record = plan(claims, intake, root=root, inputs_digest=digest)
    if advisor is None:
        return record
    unplanned = [c.claim for c in record.claims if c.status == "unplanned"]
    if not unplanned or not intake.entry_points:
        return record
    updated = []
    for original in claims.claims:
        claim = original
        if claim.id in unplanned:
            answer = advisor.choose_script(claim, list(intake.entry_points))
            if answer is not None:
                hints = claim.hints.model_copy(update={"script": answer.script})
                claim = claim.model_copy(update={"hints": hints})
        updated.append(claim)
    advised = claims.model_copy(update={"claims": updated})
    return plan(advised, intake, root=root, inputs_digest=digest)


def _reproduce(  # noqa: PLR0917 - private helper of build()
    options: BuildOptions,
    claims: Claims,
    intake: IntakeRecord,
    planned: PlanRecord,
    out: Path,
    state: BuildState,
    digest: str,
    advisor: Advisor | None,
    kept: list[RecordedChange],
    era: _Era,
) -> ReproducerRecord:
    if kept:
        state.keep_changes(kept)  # written before the re-assembly drops them from the manifest
    _forget_patches(out)
    art = assemble(
        out,
        options.source,
        claims=claims,
        intake=intake,
        plan=planned,
        env_dir=state.root / ENV_DIR,
    )
    if kept:
        _record_kept(out, kept)
        state.drop_kept()
    interpreter = ensure_environment(art.root)
    code = art.root / "code"
    _author_patch(options, claims, out, code)
    _notebook_scripts(out, code, planned)

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str | None:
        # The failure's paths are already relative to the artifact (Failure.portable).
        if failure is None:  # a convenience change: its reason and evidence
            why = f"{fix.summary}. {fix.evidence}".strip()
        else:
            why = (
                f"{fix.summary}. Without it the smoke run failed with {failure.type}: "
                f"{failure.message}\n\n{failure.tail}"
            )
        change = record_patch(out, kind=fix.kind, why=why, tasks=tasks, summary=fix.summary)
        return change.id

    advise = (
        (lambda failure, launcher: advisor.propose_fix(failure, launcher, code))
        if advisor is not None
        else None
    )
    result = reproduce(
        claims,
        planned,
        code,
        interpreter,
        inputs_digest=digest,
        record=record,
        advise=advise,
        timeout=options.smoke_budget,
        sandbox=options.sandbox,
        rebuild=era.rebuild,
        widen=era.widen,
        deadline=era.deadline,
    )
    art = load(out)
    shipped = {item.id for item in result.launchers}  # a smoke run that never ends is not
    changed = len(shipped) != len(art.manifest.launchers)
    art.manifest.launchers = [item for item in art.manifest.launchers if item.id in shipped]
    for item in result.launchers:
        launcher = art.manifest.launcher(item.id)
        wanted = manifest_launcher(item)
        now = (launcher.workdir, launcher.argv, launcher.env, launcher.seeds, launcher.shell)
        if now != (
            wanted["workdir"],
            wanted["argv"],
            wanted.get("env", {}),
            wanted.get("seeds", []),
            wanted.get("shell", False),
        ):
            launcher.workdir, launcher.argv = wanted["workdir"], list(wanted["argv"])
            launcher.shell = bool(wanted.get("shell", False))
            launcher.env, launcher.seeds = (
                dict(wanted.get("env", {})),
                list(wanted.get("seeds", [])),
            )
            changed = True
    scored = {item.id: item for item in result.launchers}
    for claim_plan in result.replanned:
        task = art.manifest.task(claim_plan.claim)
        launcher_seeds = len(scored[claim_plan.scored].seeds) if claim_plan.scored else 1
        wanted_statistic = (
            Statistic(aggregate=claim_plan.statistic, seeds=launcher_seeds)
            if claim_plan.statistic is not None
            else Statistic()
        )
        if task.statistic != wanted_statistic:
            task.statistic = wanted_statistic
            changed = True
    if changed:
        art.save()
    return result


@dataclass
class _Era:
    """The Builder's next environments of the code's era, for a smoke run no fix rule
    mends: each is built, its record replaces the Builder's, and the artifact's environment
    (lock, requirements, ``environment`` of the manifest) becomes it."""

    built: BuilderRecord
    intake: IntakeRecord
    planned: PlanRecord
    claims: Claims
    state: BuildState
    out: Path
    sandbox: bool
    records: dict[str, PhaseRecord]
    #: Modules an installed package imports undeclared that were added (each once).
    undeclared: set[str] = field(default_factory=set)
    #: The build's time limit (a :func:`time.monotonic` value): no environment is built
    #: again past it.
    deadline: float | None = None

    def _in_time(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise OutOfTime(
                "the build's time limit passed before the environment could be built again"
            )

    def _late(self, record: BuilderRecord) -> None:
        late = [f for f in record.gate.findings if f.code == "B016"]
        if late:
            # the environments not tried stay to try: a resume with more time tries them
            self._save(self.built.model_copy(update={"attempts": record.attempts}))
            raise OutOfTime(late[0].message.removeprefix("stopped in builder: "))

    def rebuild(self, failure: Failure) -> tuple[Path | None, list[BuildFinding]]:
        undeclared = self._with_undeclared(failure)
        if undeclared is not None:
            return undeclared, []
        if self.built.environment == ENVIRONMENTS[-1]:
            return None, []
        self._in_time()
        record = build_environment(
            self.intake,
            self.state.root,
            inputs_digest=self.built.inputs_digest,
            plan=self.planned,
            claims=self.claims,
            sandbox=self.sandbox,
            after=self.built,
            because=f"the smoke run failed with {failure.signature} in the "
            f"{self.built.environment} environment, and no fix rule applies",
            deadline=self.deadline,
        )
        self._late(record)
        if not record.gate.passed:
            self._save(still_in_use(self.built, record))
            return None, [f for f in record.gate.findings if f.code == "B048"]
        self._save(record)
        replace_environment(self.out, self.state.root / ENV_DIR)
        return ensure_environment(self.out), []

    def _with_undeclared(self, failure: Failure) -> Path | None:
        """The environment in use built again with the module an installed package imports
        without declaring it (:func:`~reprobridge_sdk.agent.builder.undeclared_import`), once
        per module; None when the failure is not that, or the environment built again does
        not pass its gate (the era's next environments are tried then)."""
        found = undeclared_import(failure.tail, self.built.pins)
        if found is None or found[1] in self.undeclared:
            return None
        installed, module, distribution = found
        self.undeclared.add(module)
        use = ReachedImport(module=module, files=[f"{installed} (an installed package)"])
        wider = self.planned.model_copy(
            update={"imports": sorted([*self.planned.imports, use], key=lambda u: u.module)}
        )
        interpreter = self._again(
            wider,
            f"the smoke run failed with {failure.signature}: the installed {installed} imports "
            f"{module!r}, which its distribution does not declare; {distribution} added",
        )
        if interpreter is not None:
            self.planned = wider
        return interpreter

    def widen(self, steps: list[PrepareStep]) -> tuple[Path | None, list[BuildFinding]]:
        """The environment built again with the imports of ``steps`` (launchers run them
        first) that the plan lacks, in the environment in use: the plan keeps them for every
        later environment. None when nothing is new, or when the environment built again
        does not pass its gate (the one in use stays; the step's own gate says why)."""
        wider = with_step_imports(self.planned, self.out / "code", steps)
        if wider is self.planned:
            return None, []
        self._in_time()
        added = sorted({u.module for u in wider.imports} - {u.module for u in self.planned.imports})
        self.planned = wider
        return self._again(wider, f"the steps run first import {', '.join(added)}"), []

    def _again(self, wider: PlanRecord, because: str) -> Path | None:
        """The environment in use built again for the ``wider`` plan, saved and made the
        artifact's, with its interpreter; None, the environment in use kept (the attempt
        recorded), when the one built again does not pass its gate."""
        self._in_time()
        used = in_use(self.built)
        record = build_environment(
            self.intake,
            self.state.root,
            inputs_digest=self.built.inputs_digest,
            plan=wider,
            claims=self.claims,
            sandbox=self.sandbox,
            after=self.built,
            again=used.name if used is not None else ENVIRONMENTS[0],
            because=because,
            deadline=self.deadline,
        )
        self._late(record)
        if not record.gate.passed:
            self._save(self.built.model_copy(update={"attempts": record.attempts}))
            return None
        self._save(record)
        replace_environment(self.out, self.state.root / ENV_DIR)
        return ensure_environment(self.out)

    def _save(self, record: BuilderRecord) -> None:
        self.built = record
        self.state.save(record)
        self.records["builder"] = record


def _author_patch(options: BuildOptions, claims: Claims, out: Path, code: Path) -> None:
    """The claims file's patch on the refined code, recorded as the artifact's first change
    (it applied to the checkout at Intake, so it applies here)."""
    text = author_patch(claims, options.claims)
    if text is None or claims.patch is None:
        return
    refused = apply_patch(text, code, name=claims.patch.path)
    if refused is not None:
        raise _Stop("reproducer", [refused])
    record_patch(
        out,
        kind=claims.patch.kind,
        why=f"{claims.patch.why} (the author's patch {claims.patch.path}, declared in the "
        "claims file)",
        tasks=[claim.id for claim in claims.claims],
        summary=f"the author's patch {claims.patch.path}",
        change_id=CLAIMS_PATCH_CHANGE,
    )


def _notebook_scripts(out: Path, code: Path, planned: PlanRecord) -> None:
    """The scripts made from the planned notebooks, each written into the refined code and
    recorded as a convenience patch (B050 stops the build when one cannot be written)."""
    tasks = {t.id for t in load(out).manifest.tasks} if planned.notebooks else set()
    for item in planned.notebooks:
        converted = write_script(code, item)
        if isinstance(converted, str):
            stop = build_finding(
                "B050",
                f"notebook {item.notebook!r} cannot be run as a script: {converted}",
                hint="remove the file in the way, or name a script in the claims file",
            )
            raise _Stop("reproducer", [stop])
        record_patch(
            out,
            kind="convenience",
            why=rationale(item, converted),
            tasks=[t for t in item.tasks if t in tasks],
            summary=f"{item.notebook} runs as {item.script}, its code cells in order",
            change_id=item.change,
        )


def _replanned(planned: PlanRecord, repro: ReproducerRecord) -> PlanRecord:
    """The plan with the Reproducer's re-planned claims, their launchers' seeds and decisions."""
    if not repro.replanned and not repro.decisions:
        return planned
    claims = {c.claim: c for c in repro.replanned if c.status == "planned"}
    seeds = {item.id: item.seeds for item in repro.launchers}
    known = {a.id for a in planned.ambiguities}
    return planned.model_copy(
        update={
            "claims": [claims.get(c.claim, c) for c in planned.claims],
            "launchers": [
                item.model_copy(update={"seeds": seeds.get(item.id, item.seeds)})
                for item in planned.launchers
            ],
            "ambiguities": [
                *planned.ambiguities,
                *(d for d in repro.decisions if d.id not in known),
            ],
        }
    )


def _unplanned(planned: PlanRecord, repro: ReproducerRecord) -> PlanRecord:
    """The plan with the claims the Reproducer un-planned (B061) not planned, with its reason."""
    unplanned = {c.claim: c for c in repro.replanned if c.status == "unplanned"}
    if not unplanned:
        return planned
    claims = [unplanned.get(c.claim, c) for c in planned.claims]
    return planned.model_copy(update={"claims": claims})


def _still_true(planned: PlanRecord, repro: ReproducerRecord) -> PlanRecord:
    """The plan without the pitfalls the Reproducer's convenience changes resolved."""
    resolved = set(repro.resolved_pitfalls)
    pitfalls = [p for p in planned.pitfalls if p.id not in resolved]
    return planned.model_copy(update={"pitfalls": pitfalls})


def _as_seen(planned: PlanRecord, out: Path) -> PlanRecord:
    """The plan with each "takes no seed" pitfall said as the reference runs showed it: when
    every task of it has reference runs that all gave one value (PBP's script seeds itself
    inside, which the Planner could not read in its Python 2 code), the runs repeat, and the
    interval shows no spread over initialisations."""
    unseeded = {unseeded_pitfall_id(c.scored) for c in planned.claims if c.scored}
    if not any(p.id in unseeded for p in planned.pitfalls):
        return planned
    try:
        tasks = {t.id: t for t in load(out).manifest.tasks}
    except ReproBridgeError:  # the Packager's validation reports what is wrong with it
        return planned

    def seen(pitfall: Pitfall) -> Pitfall:
        values = [
            [o.value for o in tasks[task].reference.observations] if task in tasks else []
            for task in pitfall.tasks
        ]
        if not values or not all(len(v) > 1 and len(set(v)) == 1 for v in values):
            return pitfall
        runs = min(len(v) for v in values)
        return pitfall.model_copy(
            update={
                "summary": pitfall.summary.split(" takes no seed", 1)[0] + " takes no seed, yet "
                f"its {runs} reference runs gave one value: the script fixes its own "
                "randomness, or has none",
                "remedy": "the compatibility interval is that of one initialisation and shows "
                "no spread over seeds; a seed option, recorded as a convenience change, would "
                "show it",
            }
        )

    pitfalls = [seen(p) if p.id in unseeded else p for p in planned.pitfalls]
    return planned.model_copy(update={"pitfalls": pitfalls})


def _with_relaxation(planned: PlanRecord, built: BuilderRecord) -> PlanRecord:
    """The plan with the guide record of requirements the Builder relaxed, if it did."""
    tasks = [c.claim for c in planned.claims if c.status == "planned"]
    decisions = [
        d for d in (relaxation_decision(built, tasks), era_decision(built, tasks)) if d is not None
    ]
    if not decisions:
        return planned
    return planned.model_copy(update={"ambiguities": [*planned.ambiguities, *decisions]})


def _stored_discrepancies(out: Path) -> list[Discrepancy]:
    try:
        return list(load(out).manifest.guide.discrepancies)
    except Exception:
        return []


def _package(
    out: Path,
    planned: PlanRecord,
    distilled: DistillerRecord,
    discrepancies: list[Discrepancy],
    digest: str,
) -> PackagerRecord:
    begin = time.monotonic()
    rows = []
    for result in distilled.claims:
        mean = sum(result.references) / len(result.references) if result.references else None
        rows.append(
            (
                result.claim,
                f"{result.published:g}",
                "-" if mean is None else f"{mean:.6g}",
                {True: "yes", False: "no", None: "-"}[result.reproduced],
            )
        )
    findings = finalize(load(out), planned, discrepancies, rows)
    return PackagerRecord(
        inputs_digest=digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        artifact=str(out),
        discrepancies=[d.id for d in discrepancies],
    )


def _summaries(claims: Claims, records: dict[str, PhaseRecord]) -> list[ClaimSummary]:
    """One summary per claim of the claims file, each with its status and its reason.

    The reason is, in order: the Distiller's (a failed run, a refused reference set, no
    matching number), the Planner's for an unplanned claim, the phase the build stopped
    before for a claim no Distiller judged, then for a judged claim the curation audit's
    verdict (and its codes) or, unreviewed, the build's own reference interval.
    """
    planned = records.get("planner")
    distilled = records.get("distiller")
    reviewed = records.get("reviewer")
    plans = {p.claim: p for p in planned.claims} if isinstance(planned, PlanRecord) else {}
    results = (
        {r.claim: r for r in distilled.claims} if isinstance(distilled, DistillerRecord) else {}
    )
    out = []
    for claim in claims.claims:
        result = results.get(claim.id)
        plan = plans.get(claim.id)
        reason: str | None = result.reason if result is not None else None
        if result is None or result.status == "not-run":
            status = "not run"
            if reason is None and plan is not None and plan.status == "unplanned":
                reason = plan.reason or "no plan"
            if reason is None:
                reason = "the build stopped before the Distiller judged it"
        elif result.status == "not-extracted":
            status = "not extracted"
            reason = reason or "no printed number matches the claim"
        else:
            verdict = (
                reviewed.verdicts.get(claim.id) if isinstance(reviewed, ReviewRecord) else None
            )
            reproduced = verdict == "reproduced" if verdict else bool(result.reproduced)
            status = "compatible" if reproduced else "incompatible"
            inside = "inside" if reproduced else "outside"
            if verdict and isinstance(reviewed, ReviewRecord):
                codes = reviewed.audit_codes.get(claim.id) or []
                reason = f"curation audit: {verdict}" + (f" ({', '.join(codes)})" if codes else "")
            else:
                reason = (
                    f"the published value lies {inside} the interval of the build's own "
                    f"{len(result.references)} reference observations"
                )
        mean = (
            sum(result.references) / len(result.references)
            if result is not None and result.references
            else None
        )
        out.append(
            ClaimSummary(
                claim=claim.id,
                status=status,
                published=claim.target,
                references_mean=mean,
                interval=result.interval if result is not None else None,
                reason=reason,
            )
        )
    return out


def render_summary(report: BuildReport) -> str:
    """The human summary printed at the end of a build."""
    lines = [f"reprobridge build: {report.artifact}"]
    if report.stopped_at:
        lines.append(f"stopped at {report.stopped_at}: its gate did not pass")
    elif not report.reviewed:
        lines.append(
            "not reviewed: no clean-room check has run; the statuses below judge the "
            "published values against the build's own reference runs"
        )
    lines.append("")
    lines.append("claims:")
    for claim in report.claims:
        extra = ""
        if claim.references_mean is not None:
            extra = f" (published {claim.published:g}, references {claim.references_mean:.6g}"
            if claim.interval:
                extra += f", interval [{claim.interval[0]:.6g}, {claim.interval[1]:.6g}]"
            extra += ")"
        lines.append(f"  {claim.claim}: {claim.status}{extra}")
        if claim.reason:
            lines.append(f"    why: {claim.reason}")
    lines.append("")
    lines.append("time per phase:")
    total = sum(report.phase_seconds.values()) or 1.0
    for name, value in report.phase_seconds.items():
        note = " (reused)" if name in report.reused else ""
        lines.append(f"  {name:<11} {value:8.1f} s  {100 * value / total:5.1f}%{note}")
    lines.append("")
    lines.append(f"fixes applied: {len(report.fixes)}")
    lines.extend(f"  - {summary}" for summary in report.fixes)
    lines.append(f"advisor calls: {report.advisor_calls}")
    if report.failure is not None:
        failure = report.failure
        lines.append("")
        lines.append(
            f"failure: {failure.failure_class} at {failure.phase} ({', '.join(failure.codes)})"
        )
        if failure.tried:
            lines.append("tried:")
            lines.extend(f"  - {item}" for item in failure.tried)
        lines.append("to unblock it:")
        lines.extend(f"  {n}. {step}" for n, step in enumerate(failure.unblock, start=1))
    if report.findings:
        lines.append("")
        lines.append("findings:")
        lines.extend(
            f"  {f.code} {f.severity}: {f.message}" + (f" [{f.path}]" if f.path else "")
            for f in report.findings
        )
    return "\n".join(lines) + "\n"
