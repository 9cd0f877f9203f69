"""The Independent Reviewer in process: a clean-room check that fails is B012 and fails the gate.

The end-to-end builds reach the Reviewer only through ``reprobridge build`` in a subprocess;
this test calls it directly, on a copy of the bundled example whose guide is missing, so that
the clean-room check stops at its first step (validation) without building an environment.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from reprobridge_sdk.agent.reviewer import review
from reprobridge_sdk.api import load
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
