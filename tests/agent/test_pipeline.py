"""The build's frame in process: the default OUT, and what the human summary lists."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_fixtures import write_repo

from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.agent.pipeline import BuildOptions, build, render_summary
from reprobridge_sdk.model.build import BuildReport, ClaimSummary


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
