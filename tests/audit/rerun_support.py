"""Helpers of the re-execution tests: the toy study with runs that differ by seed.

The toy's script prints no seed and its values repeat every three seeds, so runs with seeds
0 and 3 would be byte-identical (A079, a seed without effect). These tests need more than
three honest runs (a sample of four, a shift over four or more), so their toy prints its seed and
writes it to its output; the manifest's code digest is recomputed to match.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from audit_support import make_artifact
from toy_study import TRAIN

from reprobridge_sdk.audit.verify import RunEvidence
from reprobridge_sdk.digest import tree_digest
from reprobridge_sdk.run import load_record

__all__ = ["edit_manifest", "run_evidence", "seeded_toy"]


def edit_manifest(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the artifact's rra.yaml (format 1.1) in place."""
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["rra_version"] = "1.1"
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def seeded_toy(root: Path, seeds: int = 8) -> Path:
    """The toy reduced to its scored launcher and ``acc`` task, its log and output naming the
    seed (no two runs are byte-identical), declaring ``seeds`` seeds 0, 1, ... (the task's
    statistic is over as many)."""
    make_artifact(root, tasks=("acc",), launchers=("scored",))
    script = TRAIN.replace(
        'print(f"test accuracy: {acc:.4f}")',
        'print(f"seed {seed}")\nprint(f"test accuracy: {acc:.4f}")',
    ).replace('{"test": {"f1": round(acc - 1.0, 4)}}', '{"seed": seed}')
    assert script != TRAIN
    (root / "code" / "train.py").write_text(script)

    def retree(data: dict[str, Any]) -> None:
        data["codebase"]["tree_digest"] = tree_digest(root / "code")
        data["launchers"][0]["seeds"] = list(range(seeds))
        data["tasks"][0]["statistic"]["seeds"] = seeds  # R008 otherwise

    edit_manifest(root, retree)
    return root


def run_evidence(root: Path) -> list[RunEvidence]:
    """The run directories of ``root/runs`` as the auditor sees them (to draw a sample)."""
    dirs = sorted(d for d in (root / "runs").iterdir() if (d / "record.json").is_file())
    return [RunEvidence(d, d.name, load_record(d)) for d in dirs]
