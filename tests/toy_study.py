"""The toy study that the auditor's and the plugins' tests share: a real artifact whose
launchers run a deterministic Python script (accuracy ``90.0 + (seed % 3) * 0.1`` with ten
epochs or more, 5 points less below; F1 one point less, written to a JSON output).

:func:`manifest_data` varies it: ``version`` (``rra_version``), ``acc_extract`` (the extractor
of the ``acc`` measurement, e.g. a plugin kind), ``tasks`` and ``launchers`` (the ids kept, of
``acc``/``f1`` and ``smoke``/``scored``), ``sample`` (a sample log of seed 1 on the last
launcher, expecting ``acc`` 90.1) and ``guide`` (a ``guide`` part and its GUIDE.md block).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.guide import render_block
from reprobridge_sdk.model import Manifest

__all__ = ["LOCK", "SAMPLE_LOG", "TRAIN", "make_artifact", "manifest_data", "observations"]

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

#: The log of the sample (seed 1) that ``sample=True`` declares.
SAMPLE_LOG = "epoch 0 loss 1.0000\ntest accuracy: 90.1000\n"

LOCK = "# a hashed lock of no distributions: the experiment needs only the standard library\n"


def observations(values: list[float]) -> list[dict[str, Any]]:
    return [
        {"value": v, "provenance": {"source": f"reference run {i}"}} for i, v in enumerate(values)
    ]


def manifest_data(
    tree: str,
    lock_sha: str,
    *,
    version: str = "1.0",
    acc_extract: dict[str, Any] | None = None,
    tasks: tuple[str, ...] = ("acc", "f1"),
    launchers: tuple[str, ...] = ("smoke", "scored"),
    sample: bool = False,
    guide: bool = False,
) -> dict[str, Any]:
    """The toy manifest; the keywords vary it (see the module)."""
    launcher_common: dict[str, Any] = {
        "seeds": [0, 1, 2],
        "outputs": [{"id": "metrics", "path": "results/metrics-{seed}.json"}],
        "landmarks": [{"id": "done", "pattern": "test accuracy"}],
        "measurements": [
            {
                "task": "acc",
                "extract": acc_extract or {"kind": "regex", "pattern": r"test accuracy: ([0-9.]+)"},
                "aggregate": "mean",
            },
            {
                "task": "f1",
                "extract": {"kind": "json", "output": "metrics", "pointer": "/test/f1"},
                "aggregate": "mean",
            },
        ],
    }
    launcher_common["measurements"] = [
        m for m in launcher_common["measurements"] if m["task"] in tasks
    ]
    data: dict[str, Any] = {
        "rra_version": version,
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
                "reference": {"observations": observations([90.0, 90.1, 90.2, 90.05, 90.15])},
            },
            {
                "id": "f1",
                "dataset": "toy",
                "metric": "F1 (%)",
                "statistic": {"aggregate": "mean", "seeds": 3},
                "published": {"range": [88.9, 89.3]},
                "direction": "higher",
                "kind": "full",
                "reference": {"observations": observations([89.0, 89.1, 89.2, 89.1, 89.05])},
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
    data["tasks"] = [t for t in data["tasks"] if t["id"] in tasks]
    data["launchers"] = [item for item in data["launchers"] if item["id"] in launchers]
    if sample:
        expected = {"log": "samples/log.txt", "seed": 1, "expected": {"acc": 90.1}}
        data["launchers"][-1]["samples"] = [expected]
    if guide:
        data["guide"] = {"path": "GUIDE.md"}
    return data


def make_artifact(root: Path, **options: Any) -> Path:
    """Write the toy artifact at ``root`` and return it (``options``: :func:`manifest_data`'s
    keywords; with ``sample``, the sample log is written too)."""
    (root / "code").mkdir(parents=True)
    (root / "code" / "train.py").write_text(TRAIN)
    (root / "environment").mkdir()
    (root / "environment" / "requirements.lock").write_text(LOCK)
    if options.get("sample"):
        (root / "samples").mkdir()
        (root / "samples" / "log.txt").write_text(SAMPLE_LOG)
    data = manifest_data(
        tree_digest(root / "code"),
        file_sha256(root / "environment" / "requirements.lock"),
        **options,
    )
    Manifest.model_validate(data)
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    text = "# A toy study\n\nRun the scored launcher.\n"
    if "guide" in data:
        text += "\n" + render_block(data["guide"])
    (root / "GUIDE.md").write_text(text)
    return root
