"""A sampled run whose re-execution does not succeed leaves its values unconfirmed (A059).

The re-execution is real: the runner starts the launcher again in a subprocess (in the
current interpreter); it fails because the code it runs is no longer there.
"""

from __future__ import annotations

from pathlib import Path

from audit_support import make_artifact
from evidence_support import honest_runs

from reprobridge_sdk.audit import audit


def test_a_re_execution_that_fails_is_a059(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "toy")
    honest_runs(root, "scored", [0])
    (root / "code" / "train.py").unlink()  # the launcher's script: the re-run exits 2
    result = audit(root, rerun="all", rerun_env="current", rerun_sandbox=False)
    (run,) = result.attempts[0].runs
    assert [(f.code, f.severity) for f in run.findings] == [("A059", "error")]
    assert result.attempts[0].reran == 1
    assert not result.passed
