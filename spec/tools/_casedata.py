"""Shared data of the conformance cases: builders, the full-featured manifest, fixtures."""

from __future__ import annotations

from typing import Any

from _casekit import base_manifest, fake_hash, put

M0 = "/launchers/0/measurements/0"
EXTRACT = M0 + "/extract"
LOCK = "environment/requirements.txt"
OTHER_TREE = "sha256-tree1:" + fake_hash("another tree")


def f(code: str, path: str, **extra: Any) -> dict[str, Any]:
    """An expected finding."""
    return {"code": code, "path": path, **extra}


def obs(*values: float) -> dict[str, Any]:
    return {
        "observations": [
            {"value": v, "provenance": {"source": "artifact maintainers"}} for v in values
        ]
    }


def scored(launcher_id: str, task: str, **fields: Any) -> dict[str, Any]:
    launcher: dict[str, Any] = {
        "id": launcher_id,
        "argv": ["python", "code/train.py", "--seed", "{seed}"],
        "seeds": [0, 1, 2],
        "scope": "scored",
        "measurements": [
            {
                "task": task,
                "extract": {"kind": "regex", "pattern": r"final accuracy: ([0-9.]+)"},
                "aggregate": "mean",
            }
        ],
    }
    launcher.update(fields)
    return launcher


def task(task_id: str, value: float = 0.912, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": task_id,
        "dataset": "digits",
        "metric": "accuracy",
        "statistic": {"aggregate": "mean", "seeds": 3},
        "published": {"value": value},
        "direction": "higher",
        "kind": "full",
        "reference": obs(0.905, 0.912, 0.915, 0.909, 0.918),
    }
    data.update(fields)
    return data


CKPT = {
    "id": "weights",
    "kind": "checkpoint",
    "source": {"url": "https://example.org/weights/model-v1.pt"},
    "sha256": fake_hash("model-v1.pt"),
    "size": 1048576,
    "destination": "checkpoints/model.pt",
    "license": "CC-BY-4.0",
    "access": "public",
    "substitutes_training": True,
}

PATCH = """--- a/train.py
+++ b/train.py
@@ -1,3 +1,4 @@
 import argparse
+import random
 parser = argparse.ArgumentParser()
 parser.add_argument("--seed", type=int, default=0)
"""

PYLOCK = """lock-version = "{version}"
created-by = "uv"
requires-python = ">=3.11"
environments = ["sys_platform == 'linux'"]

[[packages]]
name = "numpy"
version = "1.26.4"
index = "https://pypi.org/simple"

[[packages.wheels]]
name = "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
url = "https://files.pythonhosted.org/packages/3a/d0/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
{hashes}
[[packages]]
name = "scikit-learn"
version = "1.5.2"
index = "https://pypi.org/simple"

[[packages.wheels]]
name = "scikit_learn-1.5.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
url = "https://files.pythonhosted.org/packages/9c/8f/scikit_learn-1.5.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
hashes = {{ sha256 = "{h2}" }}
"""


def pylock(version: str = "1.0", hashed: bool = True) -> str:
    hashes = f'hashes = {{ sha256 = "{fake_hash("numpy")}" }}\n' if hashed else ""
    return PYLOCK.format(version=version, hashes=hashes, h2=fake_hash("scikit-learn"))


def use_pylock(m: dict[str, Any]) -> None:
    m["environment"]["lock"] = {
        "path": "environment/pylock.toml",
        "format": "pylock",
        "sha256": "@sha256:environment/pylock.toml",
        "resolved_for": {"python": "3.11.9", "platform": "linux-x86_64", "resolver": "uv 0.5.1"},
    }


def with_lock(text: str) -> dict[str, Any]:
    return {LOCK: text}


def with_sample(expected: dict[str, float] | None = None) -> Any:
    sample: dict[str, Any] = {"log": "samples/train.log", "seed": 0}
    sample["expected"] = {"accuracy": 0.912} if expected is None else expected
    return put("/launchers/0/samples", [sample])


FULL_GUIDE = {
    "path": "GUIDE.md",
    "ambiguities": [
        {
            "id": "split",
            "source": "paper §4.1",
            "gap": "The test split size is not stated.",
            "resolution": "A stratified 25% split, as in the upstream script.",
            "sensitivity": "low",
            "tasks": ["accuracy", "accuracy-eval"],
        }
    ],
    "changes": [
        {
            "id": "seed-flag",
            "kind": "execution-fix",
            "summary": "Add a --seed flag.",
            "rationale": "The upstream script seeded from the clock.",
            "files": ["train.py"],
            "patch": "patches/0001-seed-flag.patch",
            "tasks": ["accuracy"],
        },
        {
            "id": "solver",
            "kind": "correctness-fix",
            "summary": "Use the lbfgs solver as the paper states.",
            "rationale": "The upstream default differs from the paper's setup.",
            "tasks": ["accuracy", "loss"],
        },
        {
            "id": "progress",
            "kind": "convenience",
            "summary": "Print one line per epoch.",
            "rationale": "Landmarks need a progress line.",
        },
    ],
    "discrepancies": [
        {
            "id": "regularisation",
            "paper": "C = 1.0",
            "code": "C = 0.5",
            "followed": "paper",
            "rationale": "The paper's table uses C = 1.0.",
            "tasks": ["accuracy"],
        }
    ],
    "pitfalls": [
        {
            "id": "threads",
            "summary": "Results differ slightly with many BLAS threads.",
            "remedy": "Keep OMP_NUM_THREADS=1.",
        }
    ],
    "open_choices": [
        {
            "id": "max-iter",
            "question": "How many iterations?",
            "options": ["100", "1000"],
            "default": "1000",
            "tasks": ["loss"],
        }
    ],
}


def full_manifest() -> dict[str, Any]:
    m = base_manifest()
    m["artifact"].update(
        {
            "version": "1.2.0",
            "paper": {
                "title": "A study of linear baselines",
                "venue": "ICML",
                "year": 2026,
                "doi": "10.48550/arXiv.2601.01234",
                "arxiv": "2601.01234v2",
                "url": "https://example.org/papers/linear-baselines",
            },
            "authors": [
                {"name": "Ada Example", "email": "ada@example.org", "orcid": "0000-0002-1825-0097"}
            ],
        }
    )
    m["environment"] = {
        "python": "3.11",
        "requirements": "environment/requirements.in",
        "lock": m["environment"]["lock"],
        "system_packages": [{"name": "libgomp1", "version": ">=12", "command": "gcc"}],
        "accelerator": {"kind": "none", "gpus": 0},
        "data": [
            {
                "id": "digits",
                "kind": "dataset",
                "source": {"package": "scikit-learn"},
                "license": "CC-BY-4.0",
            },
            dict(CKPT),
            {
                "id": "extra-images",
                "kind": "dataset",
                "source": {"url": "hf://datasets/example/extra-images"},
                "sha256": fake_hash("extra-images"),
                "access": "gated",
                "instructions": "Accept the dataset's terms on its page, then log in.",
            },
        ],
    }
    m["tasks"] = [
        task("accuracy", title="Test accuracy, full training", hardware="1 CPU core"),
        task(
            "loss",
            value=0.31,
            metric="log loss",
            direction="lower",
            reference=obs(0.305, 0.31, 0.312, 0.308, 0.314),
        ),
        task(
            "accuracy-eval",
            kind="evaluation",
            statistic={"aggregate": "single", "seeds": 1},
            published={"range": [0.905, 0.915], "unit": "fraction"},
            reference=obs(0.908, 0.91, 0.911, 0.909, 0.912),
            location={"table": "3", "row": "LogReg (ckpt)", "column": "Acc.", "page": 7},
        ),
        task(
            "f1",
            value=0.89,
            metric="macro F1",
            statistic={"aggregate": "single", "seeds": 1},
            kind="evaluation",
            reference=obs(0.886, 0.89, 0.893, 0.889, 0.891),
            location={"figure": "2", "section": "5.2"},
        ),
    ]
    m["launchers"] = [
        {
            "id": "smoke",
            "description": "One quick epoch to check that everything runs.",
            "argv": ["python", "code/train.py", "--seed", "0"],
            "scope": "smoke",
            "timeout": 60,
            "landmarks": [{"id": "epoch", "pattern": r"^epoch \d+", "description": "An epoch"}],
        },
        {
            "id": "train",
            "argv": ["python", "code/train.py", "--seed", "{seed}", "--epochs", "{epochs}"],
            "workdir": ".",
            "env": {"OMP_NUM_THREADS": "1", "RESULTS_DIR": "{run_dir}"},
            "seeds": [0, 1, 2],
            "params": {"epochs": 5},
            "timeout": 600,
            "scope": "scored",
            "needs": ["smoke"],
            "outputs": [{"id": "metrics", "path": "{run_dir}/metrics.json"}],
            "landmarks": [{"id": "epoch", "pattern": r"^epoch \d+"}],
            "measurements": [
                {
                    "task": "accuracy",
                    "extract": {
                        "kind": "regex",
                        "pattern": r"final accuracy: (?P<acc>[0-9.]+)",
                        "group": "acc",
                        "occurrence": "last",
                    },
                    "aggregate": "mean",
                },
                {
                    "task": "loss",
                    "extract": {"kind": "json", "output": "metrics", "pointer": "/test/loss"},
                    "transform": {"scale": 1.0, "offset": 0.0, "round": 4},
                    "aggregate": "mean",
                },
            ],
            "samples": [
                {
                    "log": "samples/train.log",
                    "outputs": {"metrics": "samples/metrics.json"},
                    "seed": 0,
                    "expected": {"accuracy": 0.912, "loss": 0.31},
                }
            ],
        },
        {
            "id": "evaluate",
            "argv": ["python", "train.py", "--evaluate", "{run_dir}"],
            "workdir": "code",
            "seeds": [0],
            "scope": "scored",
            "data": ["weights"],
            "outputs": [
                {"id": "results", "path": "{run_dir}/results.csv"},
                {"id": "summary", "path": "{run_dir}/summary.yaml", "required": False},
            ],
            "measurements": [
                {
                    "task": "accuracy-eval",
                    "extract": {
                        "kind": "csv",
                        "output": "results",
                        "column": "accuracy",
                        "where": {"split": "test"},
                    },
                    "transform": {"scale": 0.01, "round": 4},
                    "aggregate": "single",
                },
                {
                    "task": "f1",
                    "extract": {"kind": "yaml", "output": "summary", "key": "eval.f1"},
                    "aggregate": "single",
                },
            ],
            "samples": [
                {
                    "outputs": {
                        "results": "samples/results.csv",
                        "summary": "samples/summary.yaml",
                    },
                    "expected": {"accuracy-eval": 0.91, "f1": 0.89},
                }
            ],
        },
    ]
    m["guide"] = FULL_GUIDE
    return m


FULL_FILES: dict[str, Any] = {
    "patches/0001-seed-flag.patch": PATCH,
    "environment/requirements.in": "numpy\nscikit-learn\nscipy\n",
    "samples/train.log": "seed 0\nepoch 1 loss 0.41\nepoch 2 loss 0.33\nfinal accuracy: 0.912\n",
    "samples/metrics.json": '{"test": {"loss": 0.31002, "accuracy": 0.912}}\n',
    "samples/results.csv": "split,accuracy\nvalidation,90.2\ntest,91.0\n",
    "samples/summary.yaml": "eval:\n  f1: 0.89\n  precision: 0.9\n",
}

BILLION_LAUGHS = (
    'rra_version: "1.0"\n'
    "x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    "x-b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "x-c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "x-d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "x-e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "x-f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "x-g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
    "x-h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
    "x-i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n"
)


def _insert_after(anchor: str, text: str) -> Any:
    def edit(doc: str) -> str:
        assert anchor in doc, anchor
        return doc.replace(anchor, anchor + text, 1)

    return edit


def _replace(old: str, new: str) -> Any:
    def edit(doc: str) -> str:
        assert old in doc, old
        return doc.replace(old, new, 1)

    return edit


def _anchors(doc: str) -> str:
    """Share one provenance mapping through an anchor and aliases."""
    plain = "provenance:\n        source: artifact maintainers\n"
    anchored = "provenance: &maintainers\n        source: artifact maintainers\n"
    assert plain in doc
    doc = doc.replace(plain, anchored, 1)
    return doc.replace(plain, "provenance: *maintainers\n")
