"""The Distiller's and the Packager's gates in process: B009 and B011 with their values.

The end-to-end builds reach these phases only through ``reprobridge build``; these tests call
them directly on a copy of the bundled example, where each gate fails fast: a scored run whose
script exits at once with an error, and strict validation of a packaged artifact that lost a
file it names.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reprobridge_sdk.agent.distiller import distill
from reprobridge_sdk.agent.packager import finalize
from reprobridge_sdk.api import load
from reprobridge_sdk.model.build import ClaimPlan, Gate, LauncherPlan, PlanRecord
from reprobridge_sdk.model.claims import Claims

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
ZERO = "0" * 64


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "digits-logreg"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    return target


def _claims() -> Claims:
    return Claims.model_validate(
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


def _plan(launcher: str) -> tuple[PlanRecord, list[LauncherPlan]]:
    launchers = [
        LauncherPlan(
            id=launcher,
            script="train.py",
            argv=["python", "train.py", "--seed", "{seed}"],
            scope="scored",
            seed_flag="--seed",
            seeds=[0],
        )
    ]
    claim = ClaimPlan(
        claim="logreg-accuracy", status="planned", scored=launcher, basis="the test's plan"
    )
    record = PlanRecord(
        inputs_digest=ZERO, seconds=0, gate=Gate(passed=True), launchers=launchers, claims=[claim]
    )
    return record, launchers


def test_a_scored_run_that_fails_is_b009_and_the_claim_is_not_run(
    artifact: Path, tmp_path: Path
) -> None:
    art = load(artifact)
    launcher = next(item.id for item in art.manifest.launchers if item.scope == "scored")
    script = artifact / "code" / "train.py"
    script.write_text("raise SystemExit(3)\n" + script.read_text("utf-8"), "utf-8")
    plan, launchers = _plan(launcher)
    record, discrepancies = distill(
        art, _claims(), plan, launchers, tmp_path / "state", inputs_digest=ZERO, runs=2
    )
    assert not record.gate.passed
    assert [f.code for f in record.gate.findings] == ["B009"]
    assert [(c.claim, c.status, c.launcher, c.reason) for c in record.claims] == [
        ("logreg-accuracy", "not-run", launcher, "the scored run failed")
    ]
    assert discrepancies == []
    assert record.reference_runs == []


def test_a_package_that_does_not_validate_strictly_is_b011(artifact: Path) -> None:
    art = load(artifact)
    lock = art.manifest.environment.lock
    assert lock is not None
    (artifact / lock.path).unlink()  # F004: the manifest names a lock that is gone
    plan, _ = _plan("unused")
    findings = finalize(art, plan, [], [("logreg-accuracy", "96.9", "96.8", "yes")])
    assert findings
    assert {f.code for f in findings} == {"B011"}
    # each finding of the strict validation becomes a B011 that starts with its code
    assert [f.path for f in findings if f.message.startswith("F004 ")] == ["/environment/lock/path"]
