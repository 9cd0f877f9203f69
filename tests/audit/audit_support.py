"""Helpers of the auditor's tests: a tiny real artifact and honest runs of it.

The artifact's launchers run a real Python script in a real subprocess, started by the real
runner (``reprobridge_sdk.run.run`` in the current environment), which writes the evidence.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model import RECORD_NAME, Manifest
from reprobridge_sdk.run import run

TRAIN = '''\
"""A deterministic toy experiment: accuracy depends on the seed only."""
import json
import sys
from pathlib import Path

args = sys.argv[1:]
seed = int(args[args.index("--seed") + 1])
epochs = int(args[args.index("--epochs") + 1])
out = Path(args[args.index("--out") + 1])
acc = 90.0 + (seed % 3) * 0.1 - (0.0 if epochs >= 10 else 5.0)
for epoch in range(epochs):
    print(f"epoch {epoch} loss {1.0 / (epoch + 1):.4f}")
print(f"test accuracy: {acc:.4f}")
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps({"test": {"f1": round(acc - 1.0, 4)}}))
'''

LOCK = "# a hashed lock of no distributions: the experiment needs only the standard library\n"


def _observations(values: list[float]) -> list[dict[str, Any]]:
    return [
        {"value": v, "provenance": {"source": f"reference run {i}"}} for i, v in enumerate(values)
    ]


def manifest_data(tree: str, lock_sha: str) -> dict[str, Any]:
    launcher_common: dict[str, Any] = {
        "seeds": [0, 1, 2],
        "outputs": [{"id": "metrics", "path": "results/metrics-{seed}.json"}],
        "landmarks": [{"id": "done", "pattern": "test accuracy"}],
        "measurements": [
            {
                "task": "acc",
                "extract": {"kind": "regex", "pattern": r"test accuracy: ([0-9.]+)"},
                "aggregate": "mean",
            },
            {
                "task": "f1",
                "extract": {"kind": "json", "output": "metrics", "pointer": "/test/f1"},
                "aggregate": "mean",
            },
        ],
    }
    return {
        "rra_version": "1.0",
        "artifact": {
            "id": "toy-study",
            "title": "A toy study",
            "license": "Apache-2.0",
            "paper": {"title": "A toy paper", "year": 2026},
        },
        "codebase": {
            "upstream": {"repository": "https://example.org/toy.git", "commit": "a" * 40},
            "refined": {"kind": "directory", "path": "code"},
            "tree_digest": tree,
        },
        "environment": {
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "lock": {
                "path": "environment/requirements.lock",
                "format": "requirements",
                "sha256": lock_sha,
            },
        },
        "tasks": [
            {
                "id": "acc",
                "dataset": "toy",
                "metric": "accuracy (%)",
                "statistic": {"aggregate": "mean", "seeds": 3},
                "published": {"value": 90.1},
                "direction": "higher",
                "kind": "full",
                "reference": {"observations": _observations([90.0, 90.1, 90.2, 90.05, 90.15])},
            },
            {
                "id": "f1",
                "dataset": "toy",
                "metric": "F1 (%)",
                "statistic": {"aggregate": "mean", "seeds": 3},
                "published": {"range": [88.9, 89.3]},
                "direction": "higher",
                "kind": "full",
                "reference": {"observations": _observations([89.0, 89.1, 89.2, 89.1, 89.05])},
            },
        ],
        "launchers": [
            {
                "id": "smoke",
                "argv": [
                    "python",
                    "code/train.py",
                    "--seed",
                    "{seed}",
                    "--epochs",
                    "2",
                    "--out",
                    "results/metrics-{seed}.json",
                ],
                "scope": "smoke",
                **launcher_common,
            },
            {
                "id": "scored",
                "argv": [
                    "python",
                    "code/train.py",
                    "--seed",
                    "{seed}",
                    "--epochs",
                    "10",
                    "--out",
                    "results/metrics-{seed}.json",
                ],
                "scope": "scored",
                **launcher_common,
            },
        ],
    }


def make_artifact(root: Path) -> Path:
    """Write the toy artifact at ``root`` and return it."""
    (root / "code").mkdir(parents=True)
    (root / "code" / "train.py").write_text(TRAIN)
    (root / "environment").mkdir()
    (root / "environment" / "requirements.lock").write_text(LOCK)
    (root / "GUIDE.md").write_text("# A toy study\n\nRun the scored launcher.\n")
    data = manifest_data(
        tree_digest(root / "code"), file_sha256(root / "environment" / "requirements.lock")
    )
    Manifest.model_validate(data)
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def run_honestly(artifact: Path, launcher_id: str, seeds: list[int]) -> None:
    """Run a launcher with the real runner (current environment) and name its run dirs."""
    summary = run(artifact, [launcher_id], env_mode="current", seeds=seeds)
    for result in summary.results:
        assert result.record.status == "succeeded", result.record.failure
        assert result.record.seed is not None
        result.run_dir.rename(artifact / "runs" / f"{launcher_id}-s{result.record.seed}")


def edit_record(run_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit a run's record.json in place, as a dishonest producer would."""
    path = run_dir / RECORD_NAME
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
