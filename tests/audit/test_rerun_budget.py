"""A submission's budget bounds its re-execution (spec audit.md#submissions).

The toy's script sleeps when the artifact holds a file ``SLEEP``, and allocates the bytes a
file ``HOG`` names (both written after its honest runs were recorded, so the code and the
runs are unchanged). Re-executed through ``audit --table --submissions`` with a budget of two
seconds, the first run is stopped by the budget, the others never start, and A094 names
them; with a memory budget below the allocation, every run runs out of memory and A094 names
them too. None counts as a run the committee made. A submission without a budget re-executes
as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from audit_support import make_artifact
from evidence_support import honest_runs
from rerun_support import edit_manifest
from toy_study import TRAIN

from reprobridge_sdk.audit import audit
from reprobridge_sdk.digest import tree_digest

SLEEPY = TRAIN.replace(
    "args = sys.argv[1:]",
    'if Path("SLEEP").exists():\n'
    "    import time\n"
    '    time.sleep(float(Path("SLEEP").read_text()))\n'
    'if Path("HOG").exists():\n'
    '    hog = bytearray(int(Path("HOG").read_text()))\n'
    "args = sys.argv[1:]",
)


def _sleepy(root: Path) -> Path:
    make_artifact(root, tasks=("acc",), launchers=("scored",))
    (root / "code" / "train.py").write_text(SLEEPY)

    def retree(data: dict[str, Any]) -> None:
        data["codebase"]["tree_digest"] = tree_digest(root / "code")

    edit_manifest(root, retree)
    honest_runs(root, "scored", [0, 1, 2])
    (root / "SLEEP").write_text("120")  # from now on each run would take two minutes
    return root


def _audit_with_a_budget(base: Path, budget: str = "{ time = 2, cpus = 1 }") -> dict[str, Any]:
    """``audit --table --submissions`` with ``budget`` (by default 2 seconds), in a
    subprocess; run inside the test (not a fixture), so that the code census counts the A094
    it gives."""
    if not (base / "sleepy").exists():
        _sleepy(base / "sleepy")
    (base / "submissions.toml").write_text(
        'batch_version = "1.0"\n\n'
        '[[submission]]\nid = "p1-budget"\npath = "sleepy"\n'
        f"budget = {budget}\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "audit",
            "--table",
            "--submissions",
            str(base / "submissions.toml"),
            "--format",
            "json",
            "--rerun",
            "all",
            "--rerun-env",
            "current",
            "--no-rerun-sandbox",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_a_run_over_its_time_budget_is_stopped_and_reported(tmp_path: Path) -> None:
    report = _audit_with_a_budget(tmp_path)
    [row] = report["rows"]
    [artifact] = report["artifacts"]
    [attempt] = artifact["attempts"]
    budget = [f for f in attempt["findings"] if f["code"] == "A094"]
    assert len(budget) == 1, attempt["findings"]
    assert budget[0]["severity"] == "warning"
    assert "time budget of 2 s ran out: 3 sampled run(s)" in budget[0]["message"]
    # stopped by the committee's budget: neither confirmed nor refuted
    assert (row["reran"], row["rerun_mismatches"], row["committee_runs"]) == (0, 0, 0)
    codes = {f["code"] for run in attempt["runs"] for f in run["findings"]}
    assert not codes & {"A058", "A059"}
    assert row["badges"]["results"] == "consistent"  # the authors' runs alone
    assert {k: v for k, v in row["submission"]["budget"].items() if v is not None} == {
        "time": 2.0,
        "cpus": 1,
    }


def test_without_a_budget_the_same_runs_are_re_executed(tmp_path: Path) -> None:
    root = _sleepy(tmp_path / "sleepy")
    (root / "SLEEP").write_text("0")
    result = audit(root, rerun="all", rerun_env="current", rerun_sandbox=False)
    [attempt] = result.attempts
    assert attempt.reran == 3
    assert not [f for f in attempt.findings if f.code == "A094"]


def test_a_run_over_its_memory_budget_is_stopped_and_reported(tmp_path: Path) -> None:
    """Each run allocates 512 MiB; the budget grants 256 MiB of address space."""
    root = _sleepy(tmp_path / "sleepy")
    (root / "SLEEP").write_text("0")
    (root / "HOG").write_text(str(512 * 2**20))
    report = _audit_with_a_budget(tmp_path, '{ memory = "256MiB", cpus = 1 }')
    [row] = report["rows"]
    [attempt] = report["artifacts"][0]["attempts"]
    budget = [f for f in attempt["findings"] if f["code"] == "A094"]
    assert len(budget) == 1, attempt["findings"]
    assert "memory budget of 256 MiB was exceeded: 3 sampled run(s)" in budget[0]["message"]
    assert (row["reran"], row["rerun_mismatches"], row["committee_runs"]) == (0, 0, 0)
    codes = {f["code"] for run in attempt["runs"] for f in run["findings"]}
    assert not codes & {"A058", "A059"}  # neither refuted nor confirmed
    assert row["badges"]["results"] == "consistent"


def test_runs_within_their_memory_budget_are_re_executed(tmp_path: Path) -> None:
    """The same budget, an allocation of 16 MiB: every run holds and is the committee's."""
    root = _sleepy(tmp_path / "sleepy")
    (root / "SLEEP").write_text("0")
    (root / "HOG").write_text(str(16 * 2**20))
    report = _audit_with_a_budget(tmp_path, '{ memory = "256MiB", cpus = 1 }')
    [row] = report["rows"]
    assert (row["reran"], row["rerun_mismatches"], row["committee_runs"]) == (3, 0, 3)
    [attempt] = report["artifacts"][0]["attempts"]
    assert not [f for f in attempt["findings"] if f["code"] == "A094"]
