"""The build's frame in process: the default OUT, and what the human summary lists."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from build_fixtures import write_repo

from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.agent.pipeline import BuildOptions, build, render_summary
from reprobridge_sdk.api import load
from reprobridge_sdk.model.build import BuildReport, ClaimSummary
from reprobridge_sdk.validation import validate


def test_out_defaults_to_the_repository_name_and_the_source_is_never_modified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    before = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*"))
    monkeypatch.chdir(tmp_path)
    # An unknown commit stops the build at Intake, before any environment is built.
    report = build(BuildOptions(source=str(repo), claims=claims, commit="f" * 40))
    assert Path(report.artifact) == (tmp_path / "no-deps-rra").resolve()
    assert (report.stopped_at, report.passed, report.reviewed) == ("intake", False, False)
    assert [f.code for f in report.findings] == ["B003"]
    assert (tmp_path / "no-deps-rra" / ".rra-build" / "report.json").is_file()
    assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*")) == before
    assert report.advisor_calls == 0
    assert not (tmp_path / "no-deps-rra" / ".rra-build" / "advisor.jsonl").exists()


def test_the_summary_lists_each_claim_phase_fix_and_the_advisor_calls() -> None:
    report = BuildReport(
        source="https://example.org/repo.git",
        artifact="repo-rra",
        passed=True,
        reviewed=True,
        claims=[
            ClaimSummary(
                claim="accuracy",
                status="compatible",
                published=0.96,
                references_mean=0.9644,
                interval=[0.955, 0.974],
            ),
            ClaimSummary(claim="loss", status="not extracted", published=0.1),
            ClaimSummary(claim="f1", status="not run", published=0.8),
        ],
        phase_seconds={"intake": 1.0, "builder": 3.0},
        reused=["intake"],
        fixes=["scipy.misc.logsumexp moved to scipy.special"],
        advisor_calls=2,
        findings=[build_finding("B020", "no seed option")],
    )
    lines = render_summary(report).splitlines()
    claims = {line.split(":")[0].strip(): line for line in lines if line.startswith("  ")}
    assert claims["accuracy"].split(": ", 1)[1].startswith("compatible (published 0.96")
    assert "0.9644" in claims["accuracy"] and "0.955" in claims["accuracy"]
    assert claims["loss"].endswith(": not extracted")
    assert claims["f1"].endswith(": not run")
    phases = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  ")}
    assert phases["intake"] == ["1.0", "s", "25.0%", "(reused)"]
    assert phases["builder"][:3] == ["3.0", "s", "75.0%"]
    assert "  - scipy.misc.logsumexp moved to scipy.special" in lines
    assert "fixes applied: 1" in lines
    assert "advisor calls: 2" in lines
    assert any(line.startswith("  B020 warning") for line in lines)


def test_every_claim_has_a_summary_with_its_status_and_reason() -> None:
    """Each claim of the claims file is in the summary, whatever phase spoke for it last: an
    unplanned claim (the Planner's reason), a claim the Distiller left out (the build stopped),
    a refused reference set, a number not found, and judged claims (reviewed or not)."""
    from reprobridge_sdk.agent.pipeline import _summaries, render_summary
    from reprobridge_sdk.model.build import (
        BuildReport,
        ClaimPlan,
        ClaimResult,
        DistillerRecord,
        Gate,
        PlanRecord,
        ReviewRecord,
    )
    from reprobridge_sdk.model.claims import Claims

    ids = ["unplanned", "stopped", "refused", "missing", "judged", "audited"]
    claims = Claims.model_validate(
        {
            "claims_version": "1.0",
            "paper": {"title": "T"},
            "claims": [
                {"id": i, "measured": "accuracy", "value": 0.9, "direction": "higher"} for i in ids
            ],
        }
    )
    zero = "0" * 64
    plan = PlanRecord(
        inputs_digest=zero,
        seconds=0,
        gate=Gate(passed=True),
        claims=[
            ClaimPlan(claim="unplanned", status="unplanned", basis="-", reason="no script"),
            *(ClaimPlan(claim=i, status="planned", scored="run", basis="hint") for i in ids[1:]),
        ],
    )
    found = {"status": "found", "launcher": "run", "published": 0.9}
    distilled = DistillerRecord(
        inputs_digest=zero,
        seconds=0,
        gate=Gate(passed=False),
        claims=[
            ClaimResult(claim="unplanned", status="not-run", published=0.9, reason="no script"),
            ClaimResult(claim="refused", status="not-run", published=0.9, reason="refused (C015)"),
            ClaimResult(claim="missing", status="not-extracted", published=0.9, reason="none"),
            ClaimResult(claim="judged", references=[0.8, 0.81], reproduced=False, **found),
            ClaimResult(claim="audited", references=[0.9, 0.91], reproduced=True, **found),
        ],
    )
    reviewed = ReviewRecord(
        inputs_digest=zero,
        seconds=0,
        gate=Gate(passed=True),
        verdicts={"audited": "not-reproduced"},
        audit_codes={"audited": ["A031"]},
    )
    summaries = _summaries(claims, {"planner": plan, "distiller": distilled, "reviewer": reviewed})
    assert [(s.claim, s.status) for s in summaries] == [
        ("unplanned", "not run"),
        ("stopped", "not run"),
        ("refused", "not run"),
        ("missing", "not extracted"),
        ("judged", "incompatible"),
        ("audited", "incompatible"),
    ]
    assert all(s.reason for s in summaries)
    reasons = {s.claim: s.reason for s in summaries}
    assert reasons["unplanned"] == "no script"
    assert reasons["refused"] == "refused (C015)"
    assert reasons["audited"] is not None and "A031" in reasons["audited"]
    report = BuildReport(source="s", artifact="a", passed=False, claims=summaries)
    text = render_summary(report)
    assert all(f"  {i}: " in text for i in ids)
    assert "refused (C015)" in text


def test_the_reproducers_replan_updates_the_planner_record_consistently() -> None:
    """The Reproducer's re-plan (a claim over seeds once a seed option passed its gate)
    replaces the claim's plan, the scored launcher's seeds and adds the decision; a plan the
    Reproducer did not re-plan is returned as it was."""
    from reprobridge_sdk.agent.pipeline import _replanned, _unplanned
    from reprobridge_sdk.agent.planner import seeds_decision_id
    from reprobridge_sdk.model import Ambiguity
    from reprobridge_sdk.model.build import (
        ClaimPlan,
        Gate,
        LauncherPlan,
        PlanRecord,
        ReproducerRecord,
    )

    zero = "0" * 64
    smoke = LauncherPlan(id="run-smoke", script="run.py", argv=["python", "run.py"], scope="smoke")
    scored = smoke.model_copy(update={"id": "run-scored", "scope": "scored", "seeds": [1, 2]})
    claim = ClaimPlan(
        claim="acc", status="planned", smoke="run-smoke", scored="run-scored", basis="hint"
    )
    planned = PlanRecord(
        inputs_digest=zero,
        seconds=0,
        gate=Gate(passed=True),
        launchers=[smoke.model_copy(update={"seeds": [1]}), scored],
        claims=[claim],
    )
    untouched = ReproducerRecord(inputs_digest=zero, seconds=0, gate=Gate(passed=True))
    assert _replanned(planned, untouched) is planned
    decision = Ambiguity(
        id=seeds_decision_id("acc"), source="claims", gap="g", resolution="r", tasks=["acc"]
    )
    seeded = {"seed_flag": "--seed"}
    repro = ReproducerRecord(
        inputs_digest=zero,
        seconds=0,
        gate=Gate(passed=True),
        launchers=[
            smoke.model_copy(update={**seeded, "seeds": [1]}),
            scored.model_copy(update=seeded),
        ],
        replanned=[claim.model_copy(update={"statistic": "mean"})],
        decisions=[decision],
    )
    again = _replanned(planned, repro)
    assert [(c.claim, c.statistic) for c in again.claims] == [("acc", "mean")]
    assert [(item.id, item.seeds) for item in again.launchers] == [
        ("run-smoke", [1]),
        ("run-scored", [1, 2]),
    ]
    assert [a.id for a in again.ambiguities] == [seeds_decision_id("acc")]
    assert again.inputs_digest == planned.inputs_digest  # the same inputs, decided again
    assert [a.id for a in _replanned(again, repro).ambiguities] == [seeds_decision_id("acc")]
    # a claim of a script that never ends (B061) is not run, but the planner record keeps it
    # planned: a resume after the author's fix plans it again
    endless = claim.model_copy(update={"status": "unplanned", "reason": "run.py:3 (B061)"})
    stopped = repro.model_copy(update={"replanned": [endless], "launchers": [scored]})
    kept = _replanned(planned, stopped)
    assert [(c.claim, c.status) for c in kept.claims] == [("acc", "planned")]
    assert [(c.status, c.reason) for c in _unplanned(kept, stopped).claims] == [
        ("unplanned", "run.py:3 (B061)")
    ]
    assert _unplanned(kept, repro) is kept


@pytest.mark.parametrize("budget", ["0", "-5", "nan", "inf", "ten"])
def test_a_smoke_budget_that_is_not_a_positive_number_of_seconds_is_a_usage_error(
    tmp_path: Path, budget: str
) -> None:
    """Hostile --smoke-budget values exit 2 before anything is read or written."""
    from click.testing import CliRunner

    from reprobridge_sdk.cli import cli

    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    out = tmp_path / "out"
    argv = ["build", str(repo), "--claims", str(claims), "-o", str(out), "--smoke-budget", budget]
    done = CliRunner().invoke(cli, argv)
    assert done.exit_code == 2
    assert "--smoke-budget" in done.stderr
    assert not out.exists()


def test_the_smoke_budget_is_part_of_the_reproducers_inputs() -> None:
    """A changed --smoke-budget changes the Reproducer's digest (so --resume runs it and what
    follows again) and nothing before it."""
    from reprobridge_sdk.agent.pipeline import reproducer_digest
    from reprobridge_sdk.agent.reproducer import SMOKE_TIMEOUT

    default = BuildOptions(source="s", claims=Path("c.yaml"))
    assert default.smoke_budget == SMOKE_TIMEOUT == 600.0
    short = BuildOptions(source="s", claims=Path("c.yaml"), smoke_budget=30.0)
    builder = "1" * 64
    assert reproducer_digest(builder, default) != reproducer_digest(builder, short)
    assert reproducer_digest(builder, short) == reproducer_digest(builder, short)
    assert reproducer_digest(builder, short) != reproducer_digest("2" * 64, short)


_PATCH = """\
diff --git a/train.py b/train.py
--- a/train.py
+++ b/train.py
@@ -1,3 +1,4 @@
+# the author's fix
 import numpy as np
 import scipy
 import matplotlib
"""


def _with_patch(claims: Path, text: str) -> None:
    (claims.parent / "fix.diff").write_text(text, "utf-8")
    document = claims.read_text("utf-8").replace(
        "claims:\n", "patch: {path: fix.diff, why: the author's fix}\nclaims:\n", 1
    )
    claims.write_text(document, "utf-8")


def test_an_author_patch_that_does_not_apply_stops_the_build_at_intake_with_b024(
    tmp_path: Path,
) -> None:
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    _with_patch(claims, _PATCH.replace("+# the author's fix\n import numpy", "-import os\n+x"))
    report = build(BuildOptions(source=str(repo), claims=claims, out=tmp_path / "out"))
    assert (report.stopped_at, report.passed) == ("intake", False)
    assert [(f.code, f.path) for f in report.findings] == [("B024", "/patch/path")]
    assert "# the author's fix" not in (repo / "train.py").read_text("utf-8")


@pytest.mark.slow
def test_an_author_patch_is_the_artifacts_first_recorded_change(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    _with_patch(claims, _PATCH)
    out = tmp_path / "out"
    report = build(BuildOptions(source=str(repo), claims=claims, out=out))
    assert report.passed, render_summary(report)
    art = load(out)
    [change] = art.manifest.guide.changes
    assert (change.kind, change.files, change.tasks) == (
        "execution-fix",
        ["train.py"],
        ["accuracy"],
    )
    assert change.patch is not None and "+# the author's fix" in (out / change.patch).read_text()
    assert (out / "code" / "train.py").read_text("utf-8").startswith("# the author's fix\n")
    assert validate(out, strict=True).findings == []


@pytest.mark.slow
def test_code_that_runs_but_prints_no_such_number_still_gives_a_valid_artifact(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile claims: the paper's number is one the code never prints. The code runs, so
    the build still ends with a valid, reviewed artifact: the claim is not extracted, its
    task is marked not measured with the reason, and the Distiller's warning (B060) is in
    the report the author reads."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    data = yaml.safe_load(claims.read_text("utf-8"))
    data["claims"] = [
        {
            "id": "accuracy",
            "measured": "top-5 error of the transformer on ImageNet",
            "value": 3.57,
            "direction": "lower",
        }
    ]
    claims.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    out = tmp_path / "out"
    report = build(BuildOptions(source=str(repo), claims=claims, out=out))
    assert report.passed, render_summary(report)
    [summary] = report.claims
    assert summary.status == "not extracted"
    assert "B060" in [f.code for f in report.findings]
    assert "B060 warning" in render_summary(report)
    task = load(out).manifest.task("accuracy")
    assert task.reference.observations == []
    assert task.reference.not_measured
    assert validate(out, strict=True).findings == []


def test_a_no_seed_pitfall_says_what_the_reference_runs_showed(tmp_path: Path) -> None:
    """PBP's Python 2 script seeds itself inside, which the Planner could not read: its
    pitfall said the runs are not repeatable, beside five references of one value. A task
    whose references all gave one value gets the pitfall as seen; one whose references
    vary, or that has a single one, keeps the Planner's words."""
    import shutil

    from reprobridge_sdk.agent.pipeline import _as_seen
    from reprobridge_sdk.agent.planner import unseeded_pitfall_id
    from reprobridge_sdk.model import Pitfall
    from reprobridge_sdk.model.build import ClaimPlan, Gate, PlanRecord

    example = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
    out = tmp_path / "rra"
    shutil.copytree(example, out, ignore=shutil.ignore_patterns("runs"))
    art = load(out)
    for observation in art.manifest.task("logreg-accuracy").reference.observations:
        observation.value = 0.9611  # every run gave one value
    single = art.manifest.task("knn-accuracy").reference
    single.observations = single.observations[:1]
    art.save()

    def pitfall(scored: str, task: str) -> Pitfall:
        return Pitfall(
            id=unseeded_pitfall_id(scored),
            summary="train.py takes no seed: its runs are not repeatable",
            remedy="compare values against the compatibility interval of repeated runs",
            tasks=[task],
        )

    ids = {"logreg-accuracy": "a-scored", "logreg-macro-f1": "b-scored", "knn-accuracy": "c"}
    planned = PlanRecord(
        inputs_digest="0" * 64,
        seconds=0,
        gate=Gate(passed=True),
        claims=[
            ClaimPlan(claim=task, status="planned", scored=scored, basis="hint")
            for task, scored in ids.items()
        ],
        pitfalls=[pitfall(scored, task) for task, scored in ids.items()],
    )
    seen = _as_seen(planned, out)
    assert [p.summary for p in seen.pitfalls] == [
        "train.py takes no seed, yet its 5 reference runs gave one value: the script fixes "
        "its own randomness, or has none",
        "train.py takes no seed: its runs are not repeatable",  # the references vary
        "train.py takes no seed: its runs are not repeatable",  # one reference: no evidence
    ]
    assert "no spread over seeds" in seen.pitfalls[0].remedy
    # a pitfall naming a task the artifact does not hold keeps the Planner's words
    gone = planned.model_copy(update={"pitfalls": [pitfall("a-scored", "no-such-task")]})
    assert _as_seen(gone, out).pitfalls == gone.pitfalls
    # an artifact that cannot be read leaves the Planner's words (the Packager reports it)
    (out / "rra.yaml").write_text("tasks: [unclosed\n", "utf-8")
    assert _as_seen(planned, out) is planned
    # a plan with no such pitfall is returned as it was, without reading the artifact
    assert (
        _as_seen(planned.model_copy(update={"pitfalls": []}), tmp_path / "nothing").pitfalls == []
    )
