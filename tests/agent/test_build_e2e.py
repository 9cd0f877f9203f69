"""``reprobridge build`` end to end on every fixture: real git repositories, environments,
runs, patches, references, the clean-room check and the curation audit.

The fixtures share one environment (same lock) in a session cache, so the first build pays
for it and the others reuse it. Each fixture is built by the first test that names it, in a
process of its own; the tests of one fixture form one unit of pytest-xdist's schedule
(``tests/conftest.py``), so the builds spread over the workers like the suite's files do.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from build_fixtures import FIXTURES, build_fixture
from generated_docs import problems

from reprobridge_sdk.agent._determinism import same_seed_decision_id
from reprobridge_sdk.agent.distiller import reached_by_all
from reprobridge_sdk.agent.pipeline import render_summary
from reprobridge_sdk.agent.planner import seeds_decision_id
from reprobridge_sdk.agent.reviewer import setup_seconds
from reprobridge_sdk.api import load
from reprobridge_sdk.audit import audit
from reprobridge_sdk.model.build import (
    BuildReport,
    DistillerRecord,
    PlanRecord,
    ReproducerRecord,
    ReviewRecord,
)
from reprobridge_sdk.validation import validate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(
    env_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[BuildReport, Path]]:
    """``built(name)``: the fixture built once per module (tests share the result).

    The first test that names a fixture builds it, while that test runs (so the codes the
    build produces count in the census of finding codes), in a fresh interpreter that
    inherits the test's environment. Every build uses the session's environment cache: each
    test's own cache (``_private_cache``) would give every build an empty cache and a fresh
    environment of the same lock.
    """
    done: dict[str, tuple[BuildReport, Path]] = {}
    base = tmp_path_factory.mktemp("built")

    def get(name: str) -> tuple[BuildReport, Path]:
        if name not in done:
            context = multiprocessing.get_context("spawn")  # a fresh interpreter per build
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                text = pool.submit(build_fixture, base, name, env_cache).result()
            done[name] = (BuildReport.model_validate_json(text), base / f"{name}-rra")
        return done[name]

    return get


EXPECTED_FIXES = {
    "no-deps": [],
    "python2": ["python2", "integer-division", "python2-pickle-write", "python2-pickle"],
    "scipy-misc": ["removed-api"],
    "gui-show": ["gui-backend"],
    "cuda-device": ["cuda-device"],
    "cwd-data": [],
    "cuda-pins": [],
    "unseeded": [],
    "many-numbers": [],
    "not-reproducible": [],
    "multi-seed": [],
    "seed-flag": ["seed-option"],
    "fixed-seed": ["seed-option"],
    "cd-subfolder": [],
    "setup-hint": [],
    "seed-loop": [],
    "side-script": [],
    "own-package": [],
    "setup-py": [],
    "seed-line": [],
    "hash-order": [],
}


@pytest.mark.parametrize("name", sorted(n for n, f in FIXTURES.items() if f.end_to_end))
def test_every_fixture_builds_into_a_valid_artifact_with_the_expected_verdict(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    report, out = built(name)
    assert report.passed, render_summary(report)
    assert report.reviewed
    fixture = FIXTURES[name]
    statuses = {c.claim: c.status for c in report.claims}
    assert statuses == {
        claim: "compatible" if ok else "incompatible" for claim, ok in fixture.expected.items()
    }
    # a valid artifact, strictly
    result = validate(out, strict=True)
    assert [(f.code, f.path) for f in result.findings] == []
    # every code change is in the change record, with its patch
    art = load(out)
    repro = ReproducerRecord.model_validate_json((out / ".rra-build/reproducer.json").read_text())
    assert [f.rule for f in repro.fixes] == EXPECTED_FIXES[name]
    patched = [f for f in repro.fixes if f.files]
    planned = PlanRecord.model_validate_json((out / ".rra-build/planner.json").read_text())
    conveniences = [c.id for c in planned.conveniences]  # how the code runs: no patch
    assert [c.id for c in art.manifest.guide.changes] == [
        *conveniences,
        *(f.change for f in patched),
    ]
    for change in art.manifest.guide.changes:
        if change.id in conveniences:
            assert (change.kind, change.patch, change.files) == ("convenience", None, [])
        else:
            assert change.patch is not None and (out / change.patch).is_file()
    # references from at least five runs
    for task in art.manifest.tasks:
        assert len(task.reference.observations) >= 5
    # the curation audit gives the expected verdict; A031 and a discrepancy when not
    curation = audit(out, [], curation=True)
    for task in curation.tasks:
        codes = {r.code for a in task.attempts for r in a.reasons}
        if fixture.expected[task.id]:
            assert task.published_compatible is True
            assert "A031" not in codes
        else:
            assert task.published_compatible is False
            assert "A031" in codes
            assert [d.tasks for d in art.manifest.guide.discrepancies] == [[task.id]]
    # one typed record per phase, and the report
    for phase in (
        "intake",
        "planner",
        "builder",
        "reproducer",
        "distiller",
        "packager",
        "reviewer",
    ):
        data = json.loads((out / ".rra-build" / f"{phase}.json").read_text("utf-8"))
        assert data["phase"] == phase and data["gate"]["passed"] is True
    assert BuildReport.model_validate_json((out / ".rra-build/report.json").read_text()) == report
    # no path of the build machine in the records of what was fixed, nor in the guide
    for rel in (".rra-build/reproducer.json", ".rra-build/reviewer.json", "rra.yaml", "GUIDE.md"):
        if (out / rel).is_file():
            text = (out / rel).read_text("utf-8")
            assert str(out) not in text and str(out.resolve()) not in text, rel


@pytest.mark.parametrize("name", ["seed-flag"])
def test_a_seed_option_is_a_recorded_convenience_change_and_the_launchers_pass_the_seed(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    report, out = built(name)
    art = load(out)
    [change] = art.manifest.guide.changes
    assert (change.kind, change.files, change.tasks) == (
        "convenience",
        ["experiment.py"],
        ["accuracy"],
    )
    assert art.manifest.guide.pitfalls == []  # "takes no seed" no longer holds
    assert [(item.scope, item.seeds) for item in art.manifest.launchers] == [
        ("smoke", [1]),
        ("scored", [1, 2]),
    ]
    for launcher in art.manifest.launchers:
        assert launcher.argv[-2:] == ["--seed", "{seed}"]
    assert [f.code for f in report.findings if f.code in {"B018", "B020"}] == []
    # the claim over two seeds was re-planned once the seed option passed its gate: the
    # planner record, the task's statistic and a guide record agree
    [task] = art.manifest.tasks
    assert (task.statistic.aggregate, task.statistic.seeds) == ("mean", 2)
    planned = PlanRecord.model_validate_json((out / ".rra-build/planner.json").read_text())
    assert [(c.claim, c.statistic) for c in planned.claims] == [("accuracy", "mean")]
    assert [item.seeds for item in planned.launchers] == [[1], [1, 2]]
    decision = seeds_decision_id("accuracy")
    assert decision in {a.id for a in planned.ambiguities}
    assert decision in {a.id for a in art.manifest.guide.ambiguities}
    # each reference observation is a repetition of both seeds
    assert len(task.reference.observations) == 5
    for observation in task.reference.observations:
        assert [item.seed for item in observation.provenance.runs or []] == [1, 2]


@pytest.mark.parametrize("name", ["fixed-seed"])
def test_a_script_that_fixes_its_seed_is_measured_over_seeds_and_the_guide_says_why(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    """GCN's ``seed = 123``: the constant reads the launcher's seed (a recorded convenience
    change), the claim is the mean over seeds 123 to 127, and the guide says what was
    changed and why; the published mean over initialisations is then compatible."""
    report, out = built(name)
    art = load(out)
    [change] = art.manifest.guide.changes
    assert (change.kind, change.files, change.tasks) == ("convenience", ["run.py"], ["accuracy"])
    assert "constant 123" in change.summary and "REPRO_SEED" in change.summary
    assert art.manifest.guide.pitfalls == []  # "repeats one initialisation" no longer holds
    assert [
        (item.scope, item.seeds, item.env.get("REPRO_SEED")) for item in art.manifest.launchers
    ] == [
        ("smoke", [123], "{seed}"),
        ("scored", [123, 124, 125, 126, 127], "{seed}"),
    ]
    [task] = art.manifest.tasks
    assert (task.statistic.aggregate, task.statistic.seeds) == ("mean", 5)
    decision = next(
        a for a in art.manifest.guide.ambiguities if a.id == seeds_decision_id("accuracy")
    )
    assert "constant 123" in decision.gap
    assert report.claims[0].status == "compatible"
    for observation in task.reference.observations:
        assert [item.seed for item in observation.provenance.runs or []] == [
            123,
            124,
            125,
            126,
            127,
        ]
    guide = (out / "GUIDE.md").read_text("utf-8")
    assert "constant 123" in guide
    patched = (out / "code" / "run.py").read_text("utf-8")
    assert "seed = _repro_seed_or(123)" in patched
    assert "# np.random.seed(7) in a comment" in patched


@pytest.mark.parametrize("name", ["many-numbers"])
def test_the_number_among_many_is_the_labelled_one(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    _, out = built(name)
    distilled = DistillerRecord.model_validate_json((out / ".rra-build/distiller.json").read_text())
    [claim] = distilled.claims
    assert claim.line is not None and claim.line.startswith("test accuracy: ")
    assert claim.pattern is not None and claim.pattern.startswith("^test accuracy: ")


@pytest.mark.parametrize("name", ["multi-seed"])
def test_a_claim_over_seeds_is_a_statistic_whose_references_are_repetitions(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    _, out = built(name)
    art = load(out)
    [task] = art.manifest.tasks
    assert (task.statistic.aggregate, task.statistic.seeds) == ("mean", 2)
    scored = next(item for item in art.manifest.launchers if item.scope == "scored")
    assert scored.seeds == [1, 2]
    assert [m.aggregate for m in scored.measurements] == ["mean"]
    # five repetitions, each one observation citing one run of every seed
    assert len(task.reference.observations) == 5
    for observation in task.reference.observations:
        runs = observation.provenance.runs or []
        assert [item.seed for item in runs] == [1, 2]
        assert observation.provenance.run is None
    # each observation is the value the auditor gives its repetition as an attempt
    repetitions = sorted((out / ".rra-build/repetitions" / scored.id).iterdir())
    assert len(repetitions) == 5
    audited = audit(out, [str(r) for r in repetitions])
    values = [a.value for a in audited.tasks[0].attempts]
    assert values == [o.value for o in task.reference.observations]
    # the Distiller ran one probe (the first seed) and five repetitions of both seeds: the
    # probe is no reference, since one seed's run is no observation of a claim over seeds
    distilled = DistillerRecord.model_validate_json((out / ".rra-build/distiller.json").read_text())
    assert len(distilled.reference_runs) == 10
    assert len(list((out / ".rra-build/probe").glob("*/record.json"))) == 1
    # its estimate of the Reviewer's time: one attempt of the two seeds, each as long as the
    # probe, beside the setup (exactly, from the records: no bound on how long runs take)
    [probe] = [
        json.loads(p.read_text("utf-8")) for p in (out / ".rra-build/probe").glob("*/record.json")
    ]
    reproduced = ReproducerRecord.model_validate_json(
        (out / ".rra-build/reproducer.json").read_text()
    )
    assert distilled.review_seconds == pytest.approx(
        setup_seconds(reproduced) + 2 * probe["duration"], abs=0.01
    )
    # the Reviewer's clean-room check ran every seed once, and the audit judged it
    review = ReviewRecord.model_validate_json((out / ".rra-build/reviewer.json").read_text())
    assert review.check_passed
    assert {"scored: ok", "audit-scored: ok"} <= set(review.check_steps)
    assert review.verdicts == {"accuracy": "reproduced"}
    assert review.audit_codes["accuracy"] == []


@pytest.mark.parametrize("name", ["python2", "not-reproducible", "hash-order"])
def test_generated_documents_name_real_commands_and_existing_paths(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    _, out = built(name)
    assert problems(out) == []
    # patches/ exists exactly when code record wrote a patch (python2 has two fixes)
    assert (out / "patches").is_dir() == (name == "python2")


@pytest.mark.parametrize("name", ["not-reproducible"])
def test_a_discrepancy_states_the_references_and_that_nothing_was_varied(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    _, out = built(name)
    art = load(out)
    [task] = art.manifest.tasks
    [discrepancy] = art.manifest.guide.discrepancies
    assert discrepancy.paper.endswith(": 0.999")
    for observation in task.reference.observations:
        assert f"{observation.value:.6g}" in discrepancy.code
    scored = next(item for item in art.manifest.launchers if item.scope == "scored")
    assert " ".join(scored.argv) in discrepancy.code
    assert discrepancy.rationale is not None
    assert "nothing was varied" in discrepancy.rationale
    assert f"seed {scored.seeds[0]}" in discrepancy.rationale


@pytest.mark.parametrize("name", ["not-reproducible"])
def test_a_claim_the_code_does_not_reach_is_reported_and_reviewed_as_not_reproduced(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    """The code runs and prints about 0.97 against a claim of 0.999: the build passes (so
    ``reprobridge build`` exits 0), its summary names the claim's published value and the
    references' mean, and the Reviewer's verdict is not-reproduced. (The build already
    checked above, shared: a second build of a far claim would only repeat it.)"""
    report, out = built(name)
    assert report.passed and report.failure is None
    [summary] = report.claims
    assert (summary.claim, summary.status, summary.published) == (
        "accuracy",
        "incompatible",
        0.999,
    )
    assert summary.references_mean is not None and 0.9 < summary.references_mean < 0.999
    review = ReviewRecord.model_validate_json((out / ".rra-build/reviewer.json").read_text())
    assert review.verdicts == {"accuracy": "not-reproduced"}


@pytest.mark.parametrize("name", ["seed-line"])
def test_landmarks_are_lines_every_reference_run_reaches(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    report, out = built(name)
    assert report.passed, render_summary(report)
    art = load(out)
    scored = next(item for item in art.manifest.launchers if item.scope == "scored")
    patterns = [lm.pattern for lm in scored.landmarks]
    assert not any("early stop" in p for p in patterns)
    assert any(p.startswith("^test accuracy") for p in patterns)
    logs = [
        log.read_text("utf-8")
        for log in sorted((out / ".rra-build/repetitions" / scored.id).glob("*/*/log.txt"))
    ]
    assert len(logs) == 10  # five repetitions of seeds 1 and 2
    assert reached_by_all(scored.landmarks, logs) == scored.landmarks
    # the sample (seed 1) prints the line; the references of seed 2 do not
    assert "early stop" in (out / scored.samples[0].log).read_text("utf-8")  # type: ignore[operator]


@pytest.mark.parametrize("name", ["hash-order"])
def test_a_seed_that_does_not_reproduce_is_fixed_before_the_references(
    built: Callable[[str], tuple[BuildReport, Path]], name: str
) -> None:
    _, out = built(name)
    repro = ReproducerRecord.model_validate_json((out / ".rra-build/reproducer.json").read_text())
    assert [f.code for f in repro.gate.findings] == ["B045"]
    art = load(out)
    for launcher in art.manifest.launchers:
        assert launcher.env.get("PYTHONHASHSEED") == "0"
    assert same_seed_decision_id("train.py") in {a.id for a in art.manifest.guide.ambiguities}
    # the references of one seed are one value again
    [task] = art.manifest.tasks
    assert len({o.value for o in task.reference.observations}) == 1
