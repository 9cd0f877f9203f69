"""Independent Reviewer: the clean-room check of the packed artifact, then curation.

The build never judges its own runs. The Reviewer:

1. packs the artifact in place, as a stranger receives it (``reprobridge pack``, which never
   modifies the artifact; the build state in ``.rra-build/`` and the build's ``runs/`` stay
   out of the archive by pack's one rule, :func:`reprobridge_sdk.contents.artifact_files`).
   An upstream that is the enclosing repository (``..``) is resolved from the artifact
   where it stands, and the archive carries it as a bundle;
2. runs ``reprobridge check --scored`` on the archive: a fresh copy, a clean shell, a fresh
   environment, validation, the smoke runs and the scored plan run again as an independent
   attempt, audited against the reference observations. Gate: the check passes (B012);
3. judges every claim in curation mode (``reprobridge audit --curation``): a claim is
   reproduced when its published value lies inside the compatibility interval of the
   references; otherwise the audit gives A031, and the Packager's discrepancy record says
   what the code gives instead. A claim whose task the artifact does not measure
   (``reference.not_measured``) is not run.

A claim that is not reproduced does not fail the gate: an artifact that shows, with
evidence, that a paper's number does not come out of its code is a correct artifact.

**A chance miss.** A launcher without seeds gives a new draw at every run: its clean-room
run lies outside the references' 95% interval one time in twenty by chance alone. When the
check failed only because such tasks were ``incompatible``, the Reviewer makes one more
independent attempt (a second check, when the time limit holds it) and the check passes when
every task is compatible in one of the two attempts, as the audit's *reproduced* asks (some
attempt compatible); the first attempt's miss stays in the record (B062, a warning). A
seeded launcher gives its value again, so its miss is never repeated.

**Its time.** The check is one independent attempt, as a committee's re-execution is: each
scored launcher that measures a claim runs once over its declared seeds (one whose tasks are
all not measured is not run again), one run after another, and the audit
judges that attempt against the reference interval (it needs no more). The build's time
limit gives the Reviewer :func:`setup_seconds` plus those scored runs, by the Distiller's
probe runs' times (``DistillerRecord.review_seconds``). When the references came first and
the time left holds the check's setup but not its scored runs (:func:`plan_review`), the
check runs without them (B063, a warning): the claims are judged on the references, and
the first independent attempt is a committee's, instead of a build stopped before its
review (B016).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from reprobridge_sdk.agent.fixes import portable
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.api import ArtifactDir
from reprobridge_sdk.audit.auditor import audit
from reprobridge_sdk.authoring.check import CheckReport, check
from reprobridge_sdk.authoring.pack import pack
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.model.build import BuildFinding, ReproducerRecord, ReviewRecord
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.manifest import Manifest

__all__ = ["CHECK_SETUP_SECONDS", "plan_review", "review", "setup_seconds"]

#: Seconds the Reviewer takes besides the launchers' runs: the pack, a fresh environment from
#: the lock (the installers' caches are shared, so nothing is downloaded again), validation,
#: two audits, the processes that run them, and the curation audit. The corpus runs of
#: 2026-12-03 took 45 to 110 s for these (a PyTorch or TensorFlow environment, at a load
#: average of 2 to 12).
CHECK_SETUP_SECONDS = 60.0


def setup_seconds(repro: ReproducerRecord) -> float:
    """The Reviewer's seconds besides its scored runs: :data:`CHECK_SETUP_SECONDS` and the
    smoke runs the check makes again (each smoke launcher's last smoke attempt)."""
    smoke = {item.id for item in repro.launchers if item.scope == "smoke"}
    last = {a.launcher: a.seconds for a in repro.attempts if a.launcher in smoke}
    return CHECK_SETUP_SECONDS + sum(last.values())


def plan_review(full: float, setup: float, left: float | None) -> tuple[bool, float]:
    """Whether the check makes its scored attempt, and the seconds it then needs: ``full``
    (setup and scored runs) when ``left`` holds it or there is no limit (None), else the
    ``setup`` alone when that fits (the scored runs left out, B063). A check that fits in
    neither needs ``full``, and the build stops before it (B016)."""
    if left is None or full <= left or setup > left:
        return True, full
    return False, setup


def review(
    art: ArtifactDir,
    claims: Claims,
    state_dir: Path,
    *,
    inputs_digest: str,
    sandbox: bool = False,
    deadline: float | None = None,
    scored: bool = True,
    left_out: str = "",
) -> ReviewRecord:
    """Pack, check from a clean room (its launchers in the sandbox with ``sandbox``), and
    judge the claims in curation mode. ``deadline`` (``time.monotonic()``) bounds a second
    attempt after a chance miss (the module docstring). Without ``scored`` the check makes
    no scored attempt, and B063 says why (``left_out``)."""
    begin = time.monotonic()
    findings: list[BuildFinding] = []
    review_dir = state_dir / "review"
    if review_dir.exists():
        shutil.rmtree(review_dir)
    archive = review_dir / f"{art.root.name}.tar.gz"
    check_passed = False
    steps: list[str] = []
    packed_digest: str | None = None
    second: CheckReport | None = None
    # a task the artifact does not measure (B059, B060, B061) was not run: nothing judges it
    unmeasured = {t.id for t in art.manifest.tasks if t.reference.not_measured is not None}
    if not scored:
        findings.append(
            build_finding(
                "B063",
                f"the clean-room check ran without its scored attempt: {left_out}; the claims "
                "are judged on the reference runs alone",
            )
        )
    try:
        packed_digest = pack(art.root, archive).digest
        result = check(archive, scored=scored, work_dir=review_dir, sandbox=sandbox)
        missed = chance_misses(result, art.manifest)
        if missed and (deadline is None or time.monotonic() + result.seconds < deadline):
            findings.append(
                build_finding(
                    "B062",
                    f"the clean-room attempt found {', '.join(missed)} incompatible; their "
                    "launchers take no seed and draw anew at every run: a second attempt "
                    "was made",
                )
            )
            second = check(archive, scored=True, work_dir=review_dir, sandbox=sandbox)
    except ReproBridgeError as exc:
        detail = "; ".join(f"{f.code} {f.message}" for f in exc.findings[:5]) or exc.message
        detail = portable(detail, art.root)
        what = "the clean-room check could not run" if packed_digest else "pack failed"
        findings.append(build_finding("B012", f"{what}: {detail}"))
    else:
        check_passed = result.ok or (second is not None and _holds(result, second, unmeasured))
        steps = _step_lines(result)
        if second is not None:
            steps += _step_lines(second, "second attempt, ")
        if not check_passed:
            last = second if second is not None else result
            failed = next((step for step in last.steps if not step.ok), None)
            detail = (
                "no step ran"
                if failed is None
                else f"step {failed.name!r}: "
                + (
                    "; ".join(f"{f.code} {f.message}" for f in failed.findings[:5])
                    or failed.detail[-500:]
                )
            )
            detail = portable(detail, art.root)
            findings.append(build_finding("B012", f"the clean-room check failed: {detail}"))
    verdicts: dict[str, str] = {}
    codes: dict[str, list[str]] = {}
    curation = audit(art.root, [], curation=True)
    for task in curation.tasks:
        verdicts[task.id] = (
            "not-run"
            if task.id in unmeasured
            else "reproduced"
            if task.published_compatible
            else "not-reproduced"
        )
        codes[task.id] = sorted(
            {reason.code for attempt in task.attempts for reason in attempt.reasons}
        )
    for claim in claims.claims:
        verdicts.setdefault(claim.id, "not-run")
    return ReviewRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        archive=portable(str(archive), art.root) if packed_digest else None,
        archive_sha256=packed_digest,
        check_passed=check_passed,
        check_steps=steps,
        verdicts=verdicts,
        audit_codes=codes,
    )


def chance_misses(result: CheckReport, manifest: Manifest) -> list[str]:
    """The tasks a second attempt could judge again: every step passed but ``audit-scored``,
    and each task it did not find compatible is ``incompatible`` (no invalid evidence, no run
    that failed) and measured only by scored launchers without seeds, whose runs are new
    draws. Empty when the check failed otherwise, or passed."""
    if result.ok or not result.steps or result.steps[-1].name != "audit-scored":
        return []
    verdicts = result.steps[-1].verdicts
    unmeasured = {t.id for t in manifest.tasks if t.reference.not_measured is not None}
    missed = [t for t, v in verdicts.items() if v != "compatible" and t not in unmeasured]
    drawn: dict[str, bool] = {}
    for launcher in manifest.launchers:
        if launcher.scope != "scored":
            continue
        for measurement in launcher.measurements:
            drawn[measurement.task] = drawn.get(measurement.task, True) and not launcher.seeds
    if missed and all(verdicts[t] == "incompatible" and drawn.get(t, False) for t in missed):
        return missed
    return []


def _holds(first: CheckReport, second: CheckReport, unmeasured: set[str]) -> bool:
    """Whether two attempts pass together: every step of the second passed but its
    ``audit-scored``, and each task is compatible in one attempt, none invalid in either."""
    if not second.steps or second.steps[-1].name != "audit-scored":
        return False
    if not all(step.ok for step in second.steps[:-1]):
        return False
    before, after = first.steps[-1].verdicts, second.steps[-1].verdicts
    return bool(after) and all(
        task in unmeasured
        or verdict == "compatible"
        or (verdict == "incompatible" and before.get(task) == "compatible")
        for task, verdict in after.items()
    )


def _step_lines(result: CheckReport, prefix: str = "") -> list[str]:
    return [f"{prefix}{step.name}: {'ok' if step.ok else 'failed'}" for step in result.steps]
