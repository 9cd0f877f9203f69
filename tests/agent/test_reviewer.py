"""The Independent Reviewer in process: a clean-room check that fails is B012 and fails the gate;
an artifact built inside its own repository (upstream ``..``) passes.

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
from reprobridge_sdk.agent.reviewer import review
from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.codebase import import_code
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
