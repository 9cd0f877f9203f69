"""The Independent Reviewer in process: a clean-room check that fails is B012 and fails the gate;
an artifact built inside its own repository (upstream ``..``) passes; a miss of a launcher
without seeds is judged again by a second attempt (B062), a seeded one's is not.

The end-to-end builds reach the Reviewer only through ``reprobridge build`` in a subprocess;
this test calls it directly, on a copy of the bundled example whose guide is missing, so that
the clean-room check stops at its first step (validation) without building an environment.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
from build_fixtures import git, write_repo

from reprobridge_sdk.agent.pipeline import BuildOptions, build, render_summary
from reprobridge_sdk.agent.reviewer import chance_misses, plan_review, review
from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.check import CheckReport, CheckStep
from reprobridge_sdk.authoring.codebase import import_code
from reprobridge_sdk.authoring.digests import refresh
from reprobridge_sdk.authoring.pack import packed_files
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model.build import ReviewRecord
from reprobridge_sdk.model.claims import Claims

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


def test_a_failing_clean_room_check_is_b012_and_fails_the_gate(tmp_path: Path) -> None:
    artifact = tmp_path / "digits-logreg"
    shutil.copytree(EXAMPLE, artifact, ignore=shutil.ignore_patterns("runs"))
    (artifact / "GUIDE.md").unlink()  # G001: validation, the check's first step, fails
    claims = Claims.model_validate(
        {
            "claims_version": "1.0",
            "paper": {"title": "Digits"},
            "claims": [
                {
                    "id": "logreg-accuracy",
                    "measured": "test accuracy of logistic regression",
                    "value": 96.9,
                    "direction": "higher",
                }
            ],
        }
    )
    record = review(load(artifact), claims, tmp_path / "state", inputs_digest="0" * 64)
    assert not record.gate.passed
    [failed] = [f for f in record.gate.findings if f.code == "B012"]
    assert "validate" in failed.message


def _claims(task: str, value: float) -> Claims:
    return Claims.model_validate(
        {
            "claims_version": "1.0",
            "paper": {"title": "Tiny"},
            "claims": [{"id": task, "measured": "accuracy", "value": value, "direction": "higher"}],
        }
    )


@pytest.mark.slow
def test_a_patch_series_of_the_enclosing_repository_passes_the_reviewer(
    env_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream ``..``: the Reviewer packs the artifact where it stands (a copy elsewhere no
    longer sits inside the repository and its upstream cannot be fetched, C001), and the
    archive carries the upstream as a bundle for the clean-room check."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    scaffold(tmp_path / "template", InitOptions(id="tiny", title="Tiny"))
    paper = tmp_path / "paper"
    paper.mkdir()
    shutil.copy(tmp_path / "template" / "code" / "experiment.py", paper / "experiment.py")
    git("init", "--quiet", "-b", "main", cwd=paper)
    git("add", "-A", cwd=paper)
    git("commit", "--quiet", "-m", "paper code", cwd=paper)
    root = paper / "artifact"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    import_code(root, str(paper), as_="patches", force=True)
    art = load(root)
    assert art.manifest.codebase.upstream.repository == ".."
    (root / "runs").mkdir()  # the build's runs stay out of the archive
    record = review(art, _claims("main-result", 0.895), root / ".rra-build", inputs_digest="0" * 64)
    assert record.gate.passed, record.gate.findings
    assert record.check_passed
    assert record.verdicts == {"main-result": "reproduced"}
    assert record.archive is not None
    with tarfile.open(root / record.archive) as tar:
        names = tar.getnames()
    assert [n for n in names if n.startswith("upstream/")] == [
        f"upstream/{art.manifest.codebase.upstream.commit}.bundle"
    ]
    assert not [n for n in names if n.startswith((".rra-build/", "runs/", "code/"))]


@pytest.mark.slow
def test_an_artifact_built_inside_its_repository_passes_the_reviewer(
    env_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build agent's output inside the repository it was built from (upstream ``..``)."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    repo, claims = write_repo(tmp_path / "raw", "no-deps")
    out = repo / "rra"
    report = build(BuildOptions(source=str(repo), claims=claims, out=out))
    assert report.passed, render_summary(report)
    assert load(out).manifest.codebase.upstream.repository == ".."
    record = ReviewRecord.model_validate_json((out / ".rra-build/reviewer.json").read_text())
    assert record.check_passed and record.gate.passed
    assert record.archive is not None and record.archive_sha256 is not None
    # the archive is the artifact as a stranger receives it: no build state, no runs
    with tarfile.open(
        record.archive if Path(record.archive).is_absolute() else out / record.archive
    ) as tar:
        names = tar.getnames()
    assert "rra.yaml" in names
    assert not [n for n in names if n.startswith((".rra-build/", "runs/"))]
    assert sorted(names) == sorted(packed_files(out))


_DRAWS = '''"""Prints a new draw at every run: far off at the first, near the references after."""
import pathlib

counter = pathlib.Path({counter!r})
runs = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(runs + 1))
print("training started")
print("training finished")
print("accuracy: %.4f" % ({first} if runs == {miss} else 0.896))
'''


def _drawing(tmp_path: Path, *, seeded: bool, first: float = 0.5) -> Path:
    """A scaffolded artifact whose scored run prints ``first`` at its first scored run (the
    clean-room check's; the smoke run counts too) and 0.896 afterwards, its launcher without
    seeds unless ``seeded``. The counter lives outside the artifact (no sandbox here)."""
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    counter = tmp_path / "draws"
    (root / "code" / "experiment.py").write_text(
        _DRAWS.format(counter=str(counter), first=first, miss=1)
    )
    art = load(root)
    scored = next(launcher for launcher in art.manifest.launchers if launcher.scope == "scored")
    scored.argv = ["python", "code/experiment.py"] + (["--seed", "{seed}"] if seeded else [])
    if not seeded:
        scored.seeds = []
        scored.samples = []
    art.save()
    refresh(root, write=True)
    return root


@pytest.mark.slow
def test_an_unseeded_miss_in_the_clean_room_is_judged_again_by_a_second_attempt(
    env_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launcher without seeds draws anew at every run: one draw outside the interval is
    chance one time in twenty, so a second independent attempt decides (B062, a warning)."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    root = _drawing(tmp_path, seeded=False)
    record = review(
        load(root), _claims("main-result", 0.895), tmp_path / "st", inputs_digest="0" * 64
    )
    assert record.gate.passed, record.gate.findings
    assert record.check_passed
    [again] = [f for f in record.gate.findings if f.code == "B062"]
    assert "main-result" in again.message and again.severity == "warning"
    assert "audit-scored: failed" in record.check_steps
    assert record.check_steps[-1] == "second attempt, audit-scored: ok"
    assert int((tmp_path / "draws").read_text()) == 4  # two smoke runs, two scored runs


@pytest.mark.slow
def test_a_seeded_miss_in_the_clean_room_is_not_tried_again(
    env_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seeded launcher gives its value again: a miss is a real difference, B012."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    root = _drawing(tmp_path, seeded=True)
    record = review(
        load(root), _claims("main-result", 0.895), tmp_path / "st", inputs_digest="0" * 64
    )
    assert not record.gate.passed
    assert [f.code for f in record.gate.findings] == ["B012"]
    assert not any(step.startswith("second attempt") for step in record.check_steps)


@pytest.mark.slow
def test_a_check_without_time_for_its_scored_runs_checks_the_rest_and_says_so(
    env_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The references came first and the time left holds the check's setup only: the
    clean room runs validation and the smoke run, no scored run (the seeded miss that fails
    a scored check is never drawn), and B063 says so; the claims are still judged."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    root = _drawing(tmp_path, seeded=True)
    record = review(
        load(root),
        _claims("main-result", 0.895),
        tmp_path / "st",
        inputs_digest="0" * 64,
        scored=False,
        left_out="it needs about 900 s and 300 s remain",
    )
    assert record.gate.passed, record.gate.findings
    assert record.check_passed
    [unscored] = [f for f in record.gate.findings if f.code == "B063"]
    assert unscored.severity == "warning" and "900 s" in unscored.message
    assert not any("scored" in step for step in record.check_steps)
    assert int((tmp_path / "draws").read_text()) == 1  # the smoke run alone
    assert record.verdicts == {"main-result": "reproduced"}


@pytest.mark.parametrize(
    ("full", "setup", "left", "planned"),
    [
        (900.0, 100.0, None, (True, 900.0)),  # no limit: the whole check
        (900.0, 100.0, 1000.0, (True, 900.0)),  # it fits
        (900.0, 100.0, 300.0, (False, 100.0)),  # the setup fits, the scored runs do not
        (900.0, 100.0, 50.0, (True, 900.0)),  # nothing fits: B016 before the Reviewer
        (100.0, 100.0, 50.0, (True, 100.0)),  # no scored run to leave out
        (900.0, 100.0, -5.0, (True, 900.0)),  # past the limit already
    ],
)
def test_the_reviewer_leaves_out_the_scored_runs_only_when_the_setup_alone_fits(
    full: float, setup: float, left: float | None, planned: tuple[bool, float]
) -> None:
    assert plan_review(full, setup, left) == planned


def _report(*steps: CheckStep) -> CheckReport:
    return CheckReport(source="a.tar.gz", copy="copy", scored=True, steps=list(steps))


def test_only_an_incompatible_draw_of_launchers_without_seeds_is_tried_again(
    tmp_path: Path,
) -> None:
    """Hostile and edge cases of the chance-miss rule: a failed run, invalid evidence, a task
    that a seeded launcher measures too, and a failure before the scored audit are final."""
    root = _drawing(tmp_path, seeded=False)
    manifest = load(root).manifest
    ran = [CheckStep(name, True, 0.1) for name in ("copy", "validate", "smoke", "audit", "scored")]

    def audited(verdict: str) -> CheckReport:
        step = CheckStep("audit-scored", False, 0.1, verdicts={"main-result": verdict})
        return _report(*ran, step)

    assert chance_misses(audited("incompatible"), manifest) == ["main-result"]
    assert chance_misses(audited("invalid-evidence"), manifest) == []
    assert chance_misses(audited("not-executed"), manifest) == []
    failed_run = _report(*ran[:4], CheckStep("scored", False, 0.1))
    assert chance_misses(failed_run, manifest) == []
    passed = _report(
        *ran, CheckStep("audit-scored", True, 0.1, verdicts={"main-result": "compatible"})
    )
    assert chance_misses(passed, manifest) == []
    # a seeded launcher measuring the same task repeats its value: no second attempt
    scored = next(launcher for launcher in manifest.launchers if launcher.scope == "scored")
    twin = scored.model_copy(update={"id": "scored-seeded", "seeds": [1]})
    manifest.launchers.append(twin)
    assert chance_misses(audited("incompatible"), manifest) == []
