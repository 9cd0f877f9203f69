"""Write the conformance suite (``validators/cases/``) and its manifest (``conformance.yaml``).

Usage: ``python spec/tools/build_cases.py [--out DIR]`` from the repository root. The cases
are data and are committed; this script is how they were authored (digests computed,
GUIDE.md rendered from each case's records) and regenerates them byte for byte. Expected
findings are written here by hand from the specification (spec/rra-1.0.md), never from a
validator's output.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _casekit import (
    GUIDE,
    Case,
    Symlink,
    _Guide,
    add,
    base_manifest,
    delete,
    fake_hash,
    lock_line,
    put,
    rename,
    write_case,
    write_conformance,
)

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "validators" / "cases"

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


def with_lock(text: str) -> dict[str, str | None]:
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


def cases() -> list[Case]:
    c: list[Case] = []

    # ------------------------------------------------------------------ valid artifacts
    c.append(Case("minimal-valid", "A small complete artifact: every digest pinned, no findings."))
    c.append(
        Case(
            "minimal-without-digests",
            "No tree digest and no lock: valid, with a warning for the unpinned refined code.",
            [f("F007", "/codebase/tree_digest")],
            mutate=[delete("/codebase/tree_digest"), delete("/environment/lock")],
            files={LOCK: None},
        )
    )
    c.append(
        Case(
            "full-featured",
            "Every part of the format used at once: paper metadata, data and checkpoints, four "
            "tasks, smoke and scored launchers with all extractor kinds, samples, guide records.",
            tags=["required", "digests", "locks", "replay", "guide"],
            manifest=full_manifest(),
            files=FULL_FILES,
        )
    )
    c.append(
        Case(
            "patches-codebase",
            "The refined code is an ordered series of patches on the upstream commit.",
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined",
                    {
                        "kind": "patches",
                        "patches": [
                            {
                                "path": "patches/0001-seed-flag.patch",
                                "sha256": "@sha256:patches/0001-seed-flag.patch",
                                "summary": "Add a --seed flag.",
                            }
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
                put("/launchers/0/argv", ["python", "train.py", "--seed", "{seed}"]),
            ],
            files={"code/train.py": None, "patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "pylock-lock",
            "The lock is a PEP 751 pylock.toml with hashed wheels.",
            tags=["locks", "pylock", "digests"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock()},
        )
    )
    c.append(
        Case(
            "extension-keys",
            "Keys starting with 'x-' are allowed on every object and their content is free.",
            mutate=[
                put("/x-generator", {"name": "hand", "Any Key": [1, 2, {"nested": None}]}),
                put("/artifact/x-internal-id", 42),
                put("/tasks/0/x-notes", "checked twice"),
                put("/launchers/0/x-cluster", {"partition": "cpu"}),
                put(EXTRACT + "/x-comment", "last line wins"),
            ],
        )
    )
    c.append(
        Case(
            "newer-minor-with-unknown-key",
            "A newer minor version: the unknown key may be a field added since, so it warns.",
            [f("V003", "/rra_version"), f("S005", "/tasks/0/baseline")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.9"), put("/tasks/0/baseline", 0.8)],
        )
    )
    c.append(
        Case(
            "newer-minor-version",
            "rra_version 1.1 is newer than 1.0: a warning, the document is still checked.",
            [f("V003", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.1")],
        )
    )
    c.append(
        Case(
            "shell-launcher",
            "A shell launcher with exactly one argv element.",
            mutate=[
                put("/launchers/0/shell", True),
                put("/launchers/0/argv", ["python code/train.py --seed {seed} 2>&1 | tee out.log"]),
            ],
        )
    )
    c.append(
        Case(
            "templates-and-escapes",
            "Templates name the seed, the run directory and params; '{{' and '}}' are literal "
            "braces.",
            mutate=[
                put("/launchers/0/params", {"lr": 0.1, "tag": "base", "fast": True}),
                put(
                    "/launchers/0/argv",
                    [
                        "python",
                        "code/train.py",
                        "--seed",
                        "{seed}",
                        "--lr={lr}",
                        "--tag",
                        "{tag}",
                        "--format",
                        "{{json}}",
                        "--fast={fast}",
                    ],
                ),
                put("/launchers/0/env", {"OUT": "{run_dir}/out", "LITERAL": "{{seed}}"}),
                put("/launchers/0/outputs", [{"id": "log", "path": "{run_dir}/{tag}-{seed}.txt"}]),
            ],
        )
    )
    c.append(
        Case(
            "published-range",
            "The published value is a range; its midpoint counts.",
            mutate=[put("/tasks/0/published", {"range": [0.905, 0.919], "unit": "fraction"})],
        )
    )
    c.append(
        Case(
            "lower-is-better",
            "A task whose metric is better when lower.",
            mutate=[
                put("/tasks/0/metric", "error rate"),
                put("/tasks/0/direction", "lower"),
                put("/tasks/0/published", {"value": 8.8, "unit": "%"}),
                put("/tasks/0/reference", obs(8.7, 8.8, 8.9, 8.85, 8.75)),
                put(EXTRACT + "/pattern", r"error rate: ([0-9.]+)%"),
            ],
        )
    )
    c.append(
        Case(
            "single-run-default-aggregate",
            "A single-run statistic with the measurement's default aggregate (mean of one value).",
            mutate=[
                delete("/tasks/0/statistic"),
                delete("/launchers/0/seeds"),
                delete(M0 + "/aggregate"),
                put("/launchers/0/argv", ["python", "code/train.py"]),
            ],
        )
    )
    c.append(
        Case(
            "same-id-in-different-lists",
            "Ids are unique per list: a task, a launcher and a guide record may share one.",
            mutate=[
                put("/launchers/0/id", "accuracy"),
                add(
                    "/guide/pitfalls",
                    {"id": "accuracy", "summary": "Accuracy varies with the BLAS library."},
                ),
            ],
            tags=["required", "guide"],
        )
    )
    c.append(
        Case(
            "yaml-anchors-within-limits",
            "Anchors and aliases used with restraint are plain YAML.",
            text_edit=_anchors,
        )
    )
    c.append(
        Case(
            "sample-replay-transform",
            "A shipped sample log replays to the expected value after the transform.",
            tags=["replay"],
            mutate=[
                put(EXTRACT + "/pattern", r"accuracy \(%\): ([0-9.]+)"),
                put(M0 + "/transform", {"scale": 0.01, "round": 3}),
                with_sample(),
            ],
            files={"samples/train.log": "epoch 1\naccuracy (%): 91.23\n"},
        )
    )
    c.append(
        Case(
            "gated-data-with-instructions",
            "A gated dataset that says how to obtain it; data need not be present to validate.",
            tags=["required"],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "faces",
                        "source": {"url": "https://example.org/faces.tar.gz"},
                        "sha256": fake_hash("faces"),
                        "size": 2048,
                        "destination": "data/faces.tar.gz",
                        "access": "gated",
                        "instructions": "Request access on the dataset's page.",
                    },
                ),
                put("/launchers/0/data", ["faces"]),
            ],
        )
    )
    c.append(
        Case(
            "evaluation-task-with-checkpoint",
            "An evaluation-only task may read a checkpoint that stands in for training.",
            mutate=[
                put("/tasks/0/kind", "evaluation"),
                add("/environment/data", CKPT),
                put("/launchers/0/data", ["weights"]),
            ],
        )
    )
    c.append(
        Case(
            "data-from-codebase",
            "A data item shipped inside the refined code needs no digest of its own.",
            mutate=[
                add(
                    "/environment/data",
                    {"id": "labels", "source": {"codebase": "labels.txt"}},
                ),
                put("/launchers/0/data", ["labels"]),
            ],
            files={"code/labels.txt": "0\n1\n2\n"},
        )
    )

    # ------------------------------------------------------------------ YAML level
    c.append(
        Case(
            "not-yaml",
            "The manifest is not well-formed YAML (an unclosed flow sequence).",
            [f("Y001", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nartifact: [unclosed\ntasks: []\n',
            base=False,
        )
    )
    c.append(
        Case(
            "document-is-a-list",
            "The document is a sequence, not a mapping.",
            [f("Y002", "")],
            tags=["required", "yaml"],
            raw=b'- rra_version: "1.0"\n- tasks: []\n',
            base=False,
        )
    )
    c.append(
        Case(
            "empty-manifest",
            "An empty rra.yaml is a null document, not a mapping.",
            [f("Y002", "")],
            tags=["required", "yaml"],
            raw=b"# nothing here yet\n",
            base=False,
        )
    )
    c.append(
        Case(
            "duplicate-key",
            "A key occurs twice in the same mapping.",
            [f("Y003", "/artifact/title")],
            tags=["required", "yaml"],
            text_edit=_insert_after(
                "  title: Logistic regression on a small image dataset\n",
                "  title: Another title\n",
            ),
        )
    )
    c.append(
        Case(
            "alias-bomb",
            "A 'billion laughs' document: aliases expand to 10^9 nodes.",
            [f("Y004", "")],
            tags=["required", "yaml"],
            raw=BILLION_LAUGHS.encode(),
            base=False,
        )
    )
    c.append(
        Case(
            "recursive-alias",
            "An alias inside the node its anchor names.",
            [f("Y004", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nx-loop: &loop\n  self: *loop\n',
            base=False,
        )
    )
    c.append(
        Case(
            "too-deep",
            "An extension value nested 200 levels deep.",
            [f("Y005", "")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-deep: " + "[" * 200 + "]" * 200 + "\n",
        )
    )
    c.append(
        Case(
            "too-large",
            "A manifest of 9 MiB (the limit is 8 MiB), padded with comments.",
            [f("Y006", "")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + ("# " + "padding " * 15 + "\n") * 76000,
        )
    )
    c.append(
        Case(
            "not-utf8",
            "The title contains a Latin-1 byte.",
            [f("Y007", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nartifact:\n  title: "R\xe9sum\xe9 of baselines"\n',
            base=False,
        )
    )
    c.append(
        Case(
            "forbidden-python-tag",
            "A Python object tag, which an unsafe loader would execute.",
            [f("Y008", "/x-note")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-note: !!python/object/apply:os.system ['true']\n",
        )
    )
    c.append(
        Case(
            "forbidden-local-tag",
            "A local tag such as '!include' is not part of the core schema.",
            [f("Y008", "/x-include")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-include: !include other.yaml\n",
        )
    )
    c.append(
        Case(
            "non-string-key",
            "An integer key inside an extension mapping.",
            [f("Y009", "/x-meta")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-meta:\n  name: ok\n  42: answer\n",
        )
    )
    c.append(
        Case(
            "manifest-misnamed",
            "The manifest is called rra.yml: the artifact has no rra.yaml.",
            [f("Y010", "")],
            tags=["required", "layout"],
            base=False,
            write_manifest=False,
            files={"rra.yml": 'rra_version: "1.0"\n'},
        )
    )

    # ------------------------------------------------------------------ versioning
    c.append(
        Case(
            "version-missing",
            "No rra_version.",
            [f("V001", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[delete("/rra_version")],
        )
    )
    c.append(
        Case(
            "version-unknown-major",
            "rra_version 2.0: nothing else is checked, since the document's meaning is unknown.",
            [f("V002", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "2.0"), put("/tasks/0/metrik", "accuracy")],
        )
    )
    c.append(
        Case(
            "version-malformed",
            "rra_version must be MAJOR.MINOR.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "v1")],
        )
    )
    c.append(
        Case(
            "version-with-patch",
            "rra_version has no patch component.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.0.0")],
        )
    )
    c.append(
        Case(
            "version-as-number",
            "rra_version written as the YAML float 1.0 instead of the string '1.0'.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", 1.0)],
        )
    )

    # ------------------------------------------------------------------ structure
    c.append(
        Case(
            "unknown-key-under-known-version",
            "A misspelled key under version 1.0 is an error (and the real key is missing).",
            [f("S001", "/tasks/0/metrik"), f("S002", "/tasks/0/metric")],
            mutate=[rename("/tasks/0/metric", "metrik")],
        )
    )
    c.append(
        Case(
            "unknown-top-level-key",
            "A key at the top of the document that the format does not define.",
            [f("S001", "/readme")],
            mutate=[put("/readme", "README.md")],
        )
    )
    c.append(
        Case(
            "unknown-key-in-extractor",
            "A misspelled optional key in an extractor.",
            [f("S001", EXTRACT + "/occurence")],
            mutate=[put(EXTRACT + "/occurence", "last")],
        )
    )
    c.append(
        Case(
            "extension-prefix-is-case-sensitive",
            "'X-' is not the extension prefix 'x-'.",
            [f("S001", "/X-notes")],
            mutate=[put("/X-notes", "upper case")],
        )
    )
    c.append(
        Case(
            "unknown-key-in-guide-record",
            "A misspelled key in a change record (and the required key it replaces is missing).",
            [f("S001", "/guide/changes/0/reason"), f("S002", "/guide/changes/0/rationale")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "seed-flag",
                            "kind": "execution-fix",
                            "summary": "Add a --seed flag.",
                            "reason": "The upstream script seeded from the clock.",
                            "tasks": ["accuracy"],
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "missing-artifact-title",
            "A required key is missing.",
            [f("S002", "/artifact/title")],
            mutate=[delete("/artifact/title")],
        )
    )
    c.append(
        Case(
            "missing-task-dataset",
            "A task without its dataset.",
            [f("S002", "/tasks/0/dataset")],
            mutate=[delete("/tasks/0/dataset")],
        )
    )
    c.append(
        Case(
            "missing-observation-provenance",
            "A reference observation without provenance.",
            [f("S002", "/tasks/0/reference/observations/2/provenance")],
            mutate=[delete("/tasks/0/reference/observations/2/provenance")],
        )
    )
    c.append(
        Case(
            "missing-tasks",
            "No tasks at all: the measurement's reference is not checked against a missing list.",
            [f("S002", "/tasks")],
            mutate=[delete("/tasks")],
        )
    )
    c.append(
        Case(
            "missing-extractor-kind",
            "An extractor without its kind.",
            [f("S002", EXTRACT + "/kind")],
            mutate=[delete(EXTRACT + "/kind")],
        )
    )
    c.append(
        Case(
            "wrong-type-argv-string",
            "argv is a string, not a list of strings.",
            [f("S003", "/launchers/0/argv")],
            mutate=[put("/launchers/0/argv", "python code/train.py --seed {seed}")],
        )
    )
    c.append(
        Case(
            "wrong-type-seeds-string",
            "seeds is a string; the seeds-versus-statistic check is skipped on it.",
            [f("S003", "/launchers/0/seeds")],
            mutate=[put("/launchers/0/seeds", "0,1,2")],
        )
    )
    c.append(
        Case(
            "wrong-type-nullable",
            "An optional string given as a number.",
            [f("S003", "/artifact/paper/venue")],
            mutate=[put("/artifact/paper/venue", 2026)],
        )
    )
    c.append(
        Case(
            "wrong-type-boolean-as-string",
            "shell: 'yes' is a string (YAML 1.2), not a boolean.",
            [f("S003", "/launchers/0/shell")],
            mutate=[put("/launchers/0/shell", "yes")],
        )
    )
    c.append(
        Case(
            "wrong-type-regex-group",
            "A regex group is a name or a number, not a float.",
            [f("S003", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/group", 1.5)],
        )
    )
    c.append(
        Case(
            "wrong-type-param-list",
            "A param value is a scalar, not a list.",
            [f("S003", "/launchers/0/params/lr")],
            mutate=[put("/launchers/0/params", {"lr": [0.1, 0.01]})],
        )
    )
    c.append(
        Case(
            "wrong-type-observation-value",
            "An observation value given as a string.",
            [f("S003", "/tasks/0/reference/observations/1/value")],
            mutate=[put("/tasks/0/reference/observations/1/value", "0.912")],
        )
    )
    c.append(
        Case(
            "null-for-required-string",
            "A required string given as null is of the wrong type (the key is present).",
            [f("S003", "/artifact/title")],
            mutate=[put("/artifact/title", None)],
        )
    )
    c.append(
        Case(
            "empty-argv",
            "argv needs at least the command.",
            [f("S004", "/launchers/0/argv")],
            mutate=[put("/launchers/0/argv", [])],
        )
    )
    c.append(
        Case(
            "invalid-enum-direction",
            "direction must be 'higher' or 'lower'.",
            [f("S004", "/tasks/0/direction")],
            mutate=[put("/tasks/0/direction", "up")],
        )
    )
    c.append(
        Case(
            "invalid-commit-branch-name",
            "The upstream commit is a branch name, not a full commit id.",
            [f("S004", "/codebase/upstream/commit")],
            mutate=[put("/codebase/upstream/commit", "main")],
        )
    )
    c.append(
        Case(
            "invalid-short-commit",
            "An abbreviated commit id is not enough.",
            [f("S004", "/codebase/upstream/commit")],
            mutate=[put("/codebase/upstream/commit", "3f9c2a7")],
        )
    )
    c.append(
        Case(
            "invalid-identifier",
            "Ids are lower-case slugs; the reference to the same id is equally invalid.",
            [f("S004", "/tasks/0/id"), f("S004", M0 + "/task")],
            mutate=[put("/tasks/0/id", "Top-1 Accuracy"), put(M0 + "/task", "Top-1 Accuracy")],
        )
    )
    c.append(
        Case(
            "invalid-empty-tasks",
            "tasks must not be empty; the measurement's task then does not resolve.",
            [f("S004", "/tasks"), f("R002", M0 + "/task")],
            mutate=[put("/tasks", [])],
        )
    )
    c.append(
        Case(
            "invalid-negative-gpus",
            "A negative GPU count.",
            [f("S004", "/environment/accelerator/gpus")],
            mutate=[put("/environment/accelerator", {"kind": "cuda", "cuda": "12.1", "gpus": -1})],
        )
    )
    c.append(
        Case(
            "invalid-zero-timeout",
            "A timeout must be positive.",
            [f("S004", "/launchers/0/timeout")],
            mutate=[put("/launchers/0/timeout", 0)],
        )
    )
    c.append(
        Case(
            "invalid-paper-year",
            "A publication year before 1900.",
            [f("S004", "/artifact/paper/year")],
            mutate=[put("/artifact/paper/year", 1850)],
        )
    )
    c.append(
        Case(
            "invalid-extractor-kind",
            "An extractor kind the format does not define; nothing else is said about it.",
            [f("S004", EXTRACT + "/kind")],
            mutate=[put(EXTRACT + "/kind", "xpath")],
        )
    )
    c.append(
        Case(
            "invalid-change-kind",
            "A change record kind outside execution-fix, correctness-fix, convenience.",
            [f("S004", "/guide/changes/0/kind")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "tidy",
                            "kind": "refactor",
                            "summary": "Rename variables.",
                            "rationale": "Readability.",
                        }
                    ],
                )
            ],
        )
    )

    # ------------------------------------------------------------------ semantics
    c.append(
        Case(
            "duplicate-task-id",
            "Two tasks share an id.",
            [f("R001", "/tasks/1/id")],
            mutate=[add("/tasks", task("accuracy"))],
        )
    )
    c.append(
        Case(
            "duplicate-launcher-id",
            "Two launchers share an id.",
            [f("R001", "/launchers/1/id")],
            mutate=[add("/launchers", scored("train", "accuracy"))],
        )
    )
    c.append(
        Case(
            "duplicate-output-id",
            "Two outputs of one launcher share an id.",
            [f("R001", "/launchers/0/outputs/1/id")],
            mutate=[
                put(
                    "/launchers/0/outputs",
                    [
                        {"id": "metrics", "path": "{run_dir}/metrics.json"},
                        {"id": "metrics", "path": "{run_dir}/metrics-2.json"},
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "duplicate-guide-record-id",
            "Two pitfalls share an id.",
            [f("R001", "/guide/pitfalls/1/id")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/pitfalls",
                    [
                        {"id": "threads", "summary": "BLAS threads change results."},
                        {"id": "threads", "summary": "So does the BLAS vendor."},
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "unknown-task-in-measurement",
            "A measurement names a task that does not exist; the real task is then unmeasured.",
            [f("R002", M0 + "/task"), f("R006", "/tasks/0")],
            mutate=[put(M0 + "/task", "acuracy")],
        )
    )
    c.append(
        Case(
            "unknown-task-in-change-record",
            "A change record names a task that does not exist.",
            [f("R002", "/guide/changes/0/tasks/1")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "seed-flag",
                            "kind": "execution-fix",
                            "summary": "Add a --seed flag.",
                            "rationale": "The upstream script seeded from the clock.",
                            "tasks": ["accuracy", "top5"],
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "unknown-task-in-ambiguity",
            "An ambiguity names a task that does not exist.",
            [f("R002", "/guide/ambiguities/0/tasks/0")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/ambiguities",
                    [
                        {
                            "id": "split",
                            "source": "paper §4.1",
                            "gap": "The test split size is not stated.",
                            "resolution": "25%, as in the upstream script.",
                            "tasks": ["acc"],
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "unknown-task-in-sample-expected",
            "A sample expects a value for a task that does not exist.",
            [f("R002", "/launchers/0/samples/0/expected/top5")],
            mutate=[with_sample({"accuracy": 0.912, "top5": 0.99})],
            files={"samples/train.log": "final accuracy: 0.912\n"},
        )
    )
    c.append(
        Case(
            "unknown-launcher-in-needs",
            "needs names a launcher that does not exist.",
            [f("R003", "/launchers/0/needs/0")],
            mutate=[put("/launchers/0/needs", ["prepare"])],
        )
    )
    c.append(
        Case(
            "unknown-output-in-extractor",
            "An extractor reads an output the launcher does not declare.",
            [f("R004", EXTRACT + "/output")],
            mutate=[put(M0 + "/extract", {"kind": "json", "output": "metrics", "pointer": "/acc"})],
        )
    )
    c.append(
        Case(
            "unknown-output-in-sample",
            "A sample ships a file for an output the launcher does not declare.",
            [f("R004", "/launchers/0/samples/0/outputs/metrics")],
            mutate=[
                put(
                    "/launchers/0/samples",
                    [{"outputs": {"metrics": "samples/metrics.json"}, "expected": {}}],
                )
            ],
            files={"samples/metrics.json": "{}\n"},
        )
    )
    c.append(
        Case(
            "unknown-data-in-launcher",
            "A launcher reads a data item that does not exist.",
            [f("R005", "/launchers/0/data/0")],
            mutate=[put("/launchers/0/data", ["imagenet"])],
        )
    )
    c.append(
        Case(
            "task-measured-only-by-smoke",
            "Only a smoke launcher measures the task: nothing scored does.",
            [f("R006", "/tasks/0")],
            mutate=[put("/launchers/0/scope", "smoke")],
        )
    )
    c.append(
        Case(
            "second-task-not-measured",
            "The second task has no measurement.",
            [f("R006", "/tasks/1")],
            mutate=[add("/tasks", task("top5", value=0.99, reference=obs(0.99, 0.991, 0.989)))],
        )
    )
    c.append(
        Case(
            "published-missing",
            "published has neither a value nor a range.",
            [f("R007", "/tasks/0/published")],
            mutate=[put("/tasks/0/published", {"unit": "fraction"})],
        )
    )
    c.append(
        Case(
            "published-value-and-range",
            "published has both a value and a range.",
            [f("R007", "/tasks/0/published")],
            mutate=[put("/tasks/0/published", {"value": 0.912, "range": [0.905, 0.919]})],
        )
    )
    c.append(
        Case(
            "published-range-inverted",
            "The range's low end is above its high end.",
            [f("R007", "/tasks/0/published")],
            mutate=[put("/tasks/0/published", {"range": [0.919, 0.905]})],
        )
    )
    c.append(
        Case(
            "seeds-fewer-than-statistic",
            "The paper reports a mean over 3 seeds; the scored launcher runs one.",
            [f("R008", "/launchers/0/seeds")],
            mutate=[put("/launchers/0/seeds", [0])],
        )
    )
    c.append(
        Case(
            "seeds-missing-for-statistic",
            "No seeds (one run) for a statistic over 3 seeds.",
            [f("R008", "/launchers/0/seeds")],
            mutate=[
                delete("/launchers/0/seeds"),
                put("/launchers/0/argv", ["python", "code/train.py"]),
            ],
        )
    )
    c.append(
        Case(
            "aggregate-differs-from-statistic",
            "The paper reports a median; the measurement aggregates by mean.",
            [f("R009", M0 + "/aggregate")],
            mutate=[put("/tasks/0/statistic/aggregate", "median")],
        )
    )
    c.append(
        Case(
            "one-reference-observation",
            "One reference observation: the interval is floor-only.",
            [f("R010", "/tasks/0/reference/observations")],
            tags=["required", "compatibility-interval"],
            mutate=[put("/tasks/0/reference", obs(0.912))],
        )
    )
    c.append(
        Case(
            "no-reference-observations",
            "No reference at all: the interval is undefined.",
            [f("R010", "/tasks/0/reference/observations")],
            tags=["required", "compatibility-interval"],
            mutate=[delete("/tasks/0/reference")],
        )
    )
    c.append(
        Case(
            "published-outside-references",
            "The paper's 0.95 lies far above every reference run (0.80 to 0.82).",
            [f("R011", "/tasks/0/published")],
            tags=["required", "compatibility-interval"],
            mutate=[
                put("/tasks/0/published", {"value": 0.95}),
                put("/tasks/0/reference", obs(0.80, 0.81, 0.82, 0.805, 0.815)),
            ],
        )
    )
    c.append(
        Case(
            "refined-directory-without-path",
            "kind 'directory' needs 'path'.",
            [f("R012", "/codebase/refined")],
            mutate=[delete("/codebase/refined/path")],
        )
    )
    c.append(
        Case(
            "refined-patches-empty",
            "kind 'patches' needs at least one patch.",
            [f("R012", "/codebase/refined")],
            mutate=[
                put("/codebase/refined", {"kind": "patches", "patches": []}),
                delete("/codebase/tree_digest"),
            ],
        )
    )
    c.append(
        Case(
            "refined-directory-with-patches",
            "kind 'directory' must not also list patches.",
            [f("R012", "/codebase/refined")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined/patches",
                    [
                        {
                            "path": "patches/0001-seed-flag.patch",
                            "sha256": "@sha256:patches/0001-seed-flag.patch",
                        }
                    ],
                )
            ],
            files={"patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "shell-with-several-argv-elements",
            "A shell launcher must have exactly one argv element.",
            [f("R013", "/launchers/0/argv")],
            mutate=[put("/launchers/0/shell", True)],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-argv",
            "argv names a template that is neither seed, run_dir nor a param.",
            [f("R014", "/launchers/0/argv/5")],
            mutate=[add("/launchers/0/argv", "--lr"), add("/launchers/0/argv", "{lr}")],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-env",
            "An environment variable names an unknown template.",
            [f("R014", "/launchers/0/env/OUT_DIR")],
            mutate=[put("/launchers/0/env", {"OUT_DIR": "{outdir}/results"})],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-output-path",
            "An output path names an unknown template.",
            [f("R014", "/launchers/0/outputs/0/path")],
            mutate=[put("/launchers/0/outputs", [{"id": "m", "path": "{run_dir}/{split}.json"}])],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-extract-file",
            "An extractor's file names an unknown template.",
            [f("R014", EXTRACT + "/file")],
            mutate=[put(EXTRACT + "/file", "results/{name}.log")],
        )
    )
    c.append(
        Case(
            "template-seed-without-seeds",
            "A launcher without seeds runs once with no seed, so '{seed}' names nothing.",
            [f("R014", "/launchers/0/argv/3")],
            mutate=[
                delete("/launchers/0/seeds"),
                put("/tasks/0/statistic", {"aggregate": "single", "seeds": 1}),
                put(M0 + "/aggregate", "single"),
            ],
        )
    )
    c.append(
        Case(
            "template-lone-brace",
            "A lone '{' that is not written '{{'.",
            [f("R014", "/launchers/0/argv/4")],
            mutate=[add("/launchers/0/argv", "--format={json")],
        )
    )
    c.append(
        Case(
            "unknown-task-in-open-choice",
            "An open choice names a task that does not exist.",
            [f("R002", "/guide/open_choices/0/tasks/0")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/open_choices",
                    [{"id": "max-iter", "question": "How many iterations?", "tasks": ["top5"]}],
                )
            ],
        )
    )
    c.append(
        Case(
            "dependency-cycle",
            "Two launchers need each other.",
            [f("R015", "/launchers/0/needs")],
            mutate=[
                put("/launchers/0/needs", ["prepare"]),
                add(
                    "/launchers",
                    {"id": "prepare", "argv": ["true"], "scope": "smoke", "needs": ["train"]},
                ),
            ],
        )
    )
    c.append(
        Case(
            "dependency-on-itself",
            "A launcher needs itself.",
            [f("R015", "/launchers/0/needs")],
            mutate=[put("/launchers/0/needs", ["train"])],
        )
    )
    c.append(
        Case(
            "invalid-regex-in-extractor",
            "An unbalanced parenthesis in an extractor's pattern.",
            [f("R016", EXTRACT + "/pattern")],
            mutate=[put(EXTRACT + "/pattern", "final accuracy: ([0-9.]+")],
        )
    )
    c.append(
        Case(
            "invalid-regex-in-landmark",
            "An unclosed character class in a landmark's pattern.",
            [f("R016", "/launchers/0/landmarks/0/pattern")],
            mutate=[put("/launchers/0/landmarks", [{"id": "epoch", "pattern": "[epoch"}])],
        )
    )
    c.append(
        Case(
            "regex-named-group-missing",
            "The extractor names a group the pattern does not define.",
            [f("R017", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/group", "acc")],
        )
    )
    c.append(
        Case(
            "regex-group-number-too-high",
            "Group 2 of a pattern with one group.",
            [f("R017", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/group", 2)],
        )
    )
    c.append(
        Case(
            "data-without-source",
            "A data item must name exactly one source; this one names none.",
            [f("R018", "/environment/data/0/source")],
            mutate=[add("/environment/data", {"id": "digits", "source": {}})],
        )
    )
    c.append(
        Case(
            "data-with-two-sources",
            "A data item names both a URL and a package.",
            [f("R018", "/environment/data/0/source")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "digits",
                        "source": {"url": "https://example.org/digits.npz", "package": "sklearn"},
                        "sha256": fake_hash("digits.npz"),
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "gated-data-without-instructions",
            "A gated item that does not say how to obtain it.",
            [f("R019", "/environment/data/0")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "faces",
                        "source": {"url": "https://example.org/faces.tar.gz"},
                        "sha256": fake_hash("faces"),
                        "access": "gated",
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "manual-data-without-instructions",
            "A manual item that does not say how to obtain it.",
            [f("R019", "/environment/data/0")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "scans",
                        "source": {"url": "https://example.org/scans"},
                        "sha256": fake_hash("scans"),
                        "access": "manual",
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "checkpoint-substitutes-full-task",
            "A launcher measuring a full-procedure task reads a checkpoint that may stand in "
            "for training.",
            [f("R020", "/launchers/0/data/0")],
            mutate=[add("/environment/data", CKPT), put("/launchers/0/data", ["weights"])],
        )
    )

    # ------------------------------------------------------------------ files and paths
    c.append(
        Case(
            "absolute-lock-path",
            "An absolute path (reported as F001 only, not also as a pattern violation).",
            [f("F001", "/environment/lock/path")],
            mutate=[put("/environment/lock/path", "/srv/locks/requirements.txt")],
        )
    )
    c.append(
        Case(
            "absolute-extract-file",
            "An extractor reads an absolute file.",
            [f("F001", EXTRACT + "/file")],
            mutate=[put(EXTRACT + "/file", "/var/log/train.log")],
        )
    )
    c.append(
        Case(
            "lock-path-escapes",
            "The lock path leaves the artifact; nothing outside is read.",
            [f("F002", "/environment/lock/path")],
            mutate=[put("/environment/lock/path", "../requirements.txt")],
        )
    )
    c.append(
        Case(
            "refined-path-escapes-after-normalisation",
            "A path that leaves the artifact once '..' is resolved.",
            [f("F002", "/codebase/refined/path")],
            mutate=[put("/codebase/refined/path", "code/../../code")],
        )
    )
    c.append(
        Case(
            "workdir-escapes",
            "The working directory is the artifact's parent.",
            [f("F002", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "..")],
        )
    )
    c.append(
        Case(
            "windows-drive-workdir",
            "A working directory with a drive letter is absolute.",
            [f("F001", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "C:/experiments")],
        )
    )
    c.append(
        Case(
            "data-destination-escapes",
            "A data item would be placed outside the artifact.",
            [f("F002", "/environment/data/0/destination")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "labels",
                        "source": {"url": "https://example.org/labels.txt"},
                        "sha256": fake_hash("labels"),
                        "destination": "../shared/labels.txt",
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "dot-segments-that-stay-inside",
            "'.' and '..' segments are fine while the path stays inside the artifact.",
            mutate=[
                put("/codebase/refined/path", "./environment/../code"),
                put("/launchers/0/workdir", "code/.."),
            ],
        )
    )
    c.append(
        Case(
            "symlink-escapes-unreferenced",
            "A symbolic link at the artifact root points outside it.",
            [f("F003", "")],
            tags=["required", "symlinks"],
            files={"hosts": Symlink("/etc/hosts")},
        )
    )
    c.append(
        Case(
            "symlink-escapes-in-refined-code",
            "A symbolic link inside the refined code points outside the artifact.",
            [f("F003", "")],
            tags=["required", "symlinks"],
            files={"code/system": Symlink("../../../../../../../../etc")},
        )
    )
    c.append(
        Case(
            "symlink-escapes-as-lock",
            "The lock file is a symbolic link to a file outside the artifact.",
            [f("F003", "/environment/lock/path")],
            tags=["required", "symlinks"],
            mutate=[put("/environment/lock/sha256", fake_hash("outside"))],
            files={LOCK: Symlink("/etc/hosts")},
        )
    )
    c.append(
        Case(
            "symlink-inside-artifact",
            "A symbolic link that stays inside the artifact is fine.",
            tags=["required", "symlinks"],
            files={"train.py": Symlink("code/train.py")},
        )
    )
    c.append(
        Case(
            "lock-file-missing",
            "The lock file does not exist.",
            [f("F004", "/environment/lock/path")],
            mutate=[put("/environment/lock/sha256", fake_hash("missing"))],
            files={LOCK: None},
        )
    )
    c.append(
        Case(
            "refined-directory-missing",
            "The refined code directory does not exist.",
            [f("F004", "/codebase/refined/path")],
            mutate=[put("/codebase/refined/path", "src"), put("/codebase/tree_digest", OTHER_TREE)],
        )
    )
    c.append(
        Case(
            "patch-file-missing",
            "A patch of the series does not exist.",
            [f("F004", "/codebase/refined/patches/0/path")],
            mutate=[
                put(
                    "/codebase/refined",
                    {
                        "kind": "patches",
                        "patches": [
                            {"path": "patches/0001-seed-flag.patch", "sha256": fake_hash("p")}
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
            ],
        )
    )
    c.append(
        Case(
            "sample-log-missing",
            "A sample names a log that is not shipped.",
            [f("F004", "/launchers/0/samples/0/log")],
            tags=["required", "replay"],
            mutate=[with_sample()],
        )
    )
    c.append(
        Case(
            "workdir-missing",
            "The working directory does not exist.",
            [f("F004", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "experiments")],
        )
    )
    c.append(
        Case(
            "requirements-file-missing",
            "The declared requirements file does not exist.",
            [f("F004", "/environment/requirements")],
            mutate=[put("/environment/requirements", "environment/requirements.in")],
        )
    )
    c.append(
        Case(
            "change-record-patch-missing",
            "A change record names a patch file that does not exist.",
            [f("F004", "/guide/changes/0/patch")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "seed-flag",
                            "kind": "execution-fix",
                            "summary": "Add a --seed flag.",
                            "rationale": "The upstream script seeded from the clock.",
                            "files": ["train.py"],
                            "patch": "patches/0001-seed-flag.patch",
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "lock-digest-mismatch",
            "The lock's declared SHA-256 is not the file's.",
            [f("F005", "/environment/lock/sha256")],
            tags=["required", "digests"],
            mutate=[put("/environment/lock/sha256", fake_hash("stale"))],
        )
    )
    c.append(
        Case(
            "patch-digest-mismatch",
            "A patch's declared SHA-256 is not the file's.",
            [f("F005", "/codebase/refined/patches/0/sha256")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined",
                    {
                        "kind": "patches",
                        "patches": [
                            {"path": "patches/0001-seed-flag.patch", "sha256": fake_hash("p")}
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
            ],
            files={"patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "data-digest-mismatch",
            "A data item present at its destination has another SHA-256 than declared.",
            [f("F005", "/environment/data/0/sha256")],
            tags=["required", "digests"],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "labels",
                        "source": {"url": "https://example.org/labels.txt"},
                        "sha256": fake_hash("labels"),
                        "destination": "data/labels.txt",
                    },
                ),
                put("/launchers/0/data", ["labels"]),
            ],
            files={"data/labels.txt": "0\n1\n"},
        )
    )
    c.append(
        Case(
            "tree-digest-mismatch",
            "The refined code changed after its tree digest was taken.",
            [f("F006", "/codebase/tree_digest")],
            tags=["required", "digests"],
            mutate=[put("/codebase/tree_digest", OTHER_TREE)],
        )
    )
    c.append(
        Case(
            "lock-digest-missing",
            "The lock has no declared SHA-256.",
            [f("F007", "/environment/lock/sha256")],
            tags=["required", "digests"],
            mutate=[delete("/environment/lock/sha256")],
        )
    )
    c.append(
        Case(
            "patch-digest-missing",
            "A patch has no declared SHA-256.",
            [f("F007", "/codebase/refined/patches/0/sha256")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined",
                    {"kind": "patches", "patches": [{"path": "patches/0001-seed-flag.patch"}]},
                ),
                delete("/codebase/tree_digest"),
            ],
            files={"patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "data-url-digest-missing",
            "A data item downloaded from a URL has no declared SHA-256.",
            [f("F007", "/environment/data/0/sha256")],
            tags=["required", "digests"],
            mutate=[
                add(
                    "/environment/data",
                    {"id": "digits", "source": {"url": "https://example.org/digits.npz"}},
                )
            ],
        )
    )
    c.append(
        Case(
            "refined-path-is-a-file",
            "The refined code path names a file, not a directory.",
            [f("F008", "/codebase/refined/path")],
            mutate=[put("/codebase/refined/path", "code/train.py")],
        )
    )
    c.append(
        Case(
            "workdir-is-a-file",
            "The working directory names a file.",
            [f("F008", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "code/train.py")],
        )
    )
    c.append(
        Case(
            "lock-path-is-a-directory",
            "The lock path names a directory.",
            [f("F009", "/environment/lock/path")],
            mutate=[put("/environment/lock/path", "environment")],
        )
    )
    c.append(
        Case(
            "guide-path-is-a-directory",
            "The guide path names a directory; the guide checks are skipped.",
            [f("F009", "/guide/path")],
            tags=["required", "guide"],
            mutate=[put("/guide/path", "code")],
        )
    )

    # ------------------------------------------------------------------ locks
    c.append(
        Case(
            "lock-unpinned-requirement",
            "A requirement pinned with '>=' instead of '=='.",
            [f("L001", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(
                lock_line("numpy", "1.26.4")
                + f"scipy>=1.14 \\\n    --hash=sha256:{fake_hash('scipy')}\n"
            ),
        )
    )
    c.append(
        Case(
            "lock-unhashed-requirement",
            "A requirement without --hash.",
            [f("L002", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(lock_line("numpy", "1.26.4") + "scipy==1.14.1\n"),
        )
    )
    c.append(
        Case(
            "lock-unparseable-line",
            "A line that is not a requirement.",
            [f("L003", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(lock_line("numpy", "1.26.4") + "numpy===?? (latest)\n"),
        )
    )
    c.append(
        Case(
            "lock-local-find-links",
            "The lock points pip at a machine-local wheel directory.",
            [f("L004", "", file=LOCK)],
            tags=["locks"],
            files=with_lock("--find-links /home/alice/wheels\n" + lock_line("numpy", "1.26.4")),
        )
    )
    c.append(
        Case(
            "lock-file-index-url",
            "The lock's index is a file:// URL.",
            [f("L004", "", file=LOCK)],
            tags=["locks"],
            files=with_lock("--index-url file:///srv/pypi/simple\n" + lock_line("numpy", "1.26.4")),
        )
    )
    c.append(
        Case(
            "lock-includes-another-file",
            "The lock includes another requirements file with -r.",
            [f("L009", "", file=LOCK)],
            tags=["locks"],
            files=with_lock("-r base.txt\n" + lock_line("numpy", "1.26.4")),
        )
    )
    c.append(
        Case(
            "lock-duplicate-requirement",
            "numpy is pinned twice.",
            [f("L008", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(lock_line("numpy", "1.26.4") + lock_line("numpy", "1.26.3")),
        )
    )
    c.append(
        Case(
            "lock-python-mismatch",
            "The lock was resolved for Python 3.10; the environment declares 3.11.",
            [f("L007", "/environment/lock/resolved_for/python")],
            tags=["locks"],
            mutate=[put("/environment/lock/resolved_for/python", "3.10.14")],
        )
    )
    c.append(
        Case(
            "pylock-unknown-major",
            "pylock.toml lock-version 2.0.",
            [f("L005", "/lock-version", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock("2.0")},
        )
    )
    c.append(
        Case(
            "pylock-newer-minor",
            "pylock.toml lock-version 1.9: a warning.",
            [f("L006", "/lock-version", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock("1.9")},
        )
    )
    c.append(
        Case(
            "pylock-unhashed-wheel",
            "A pylock wheel without hashes.",
            [f("L002", "/packages/0/wheels/0/hashes", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock(hashed=False)},
        )
    )
    c.append(
        Case(
            "pylock-not-toml",
            "pylock.toml is not valid TOML.",
            [f("L003", "", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": 'lock-version = "1.0"\n[[packages]\n'},
        )
    )

    # ------------------------------------------------------------------ extraction replay
    c.append(
        Case(
            "extraction-no-match",
            "The shipped sample log has no line the pattern matches.",
            [f("X001", EXTRACT)],
            tags=["replay"],
            mutate=[with_sample()],
            files={"samples/train.log": "epoch 1 loss 0.41\ntraining interrupted\n"},
        )
    )
    c.append(
        Case(
            "extraction-not-a-number",
            "The pattern captures a word, not a number.",
            [f("X002", EXTRACT)],
            tags=["replay"],
            mutate=[put(EXTRACT + "/pattern", r"final accuracy: (\S+)"), with_sample()],
            files={"samples/train.log": "final accuracy: high\n"},
        )
    )
    c.append(
        Case(
            "extraction-value-differs",
            "The sample log says 0.905; the sample expects 0.912.",
            [f("X003", "/launchers/0/samples/0/expected/accuracy")],
            tags=["replay"],
            mutate=[with_sample()],
            files={"samples/train.log": "final accuracy: 0.905\n"},
        )
    )
    c.append(
        Case(
            "extraction-json-pointer-absent",
            "The JSON pointer names a key the sample output does not have.",
            [f("X001", EXTRACT)],
            tags=["replay"],
            mutate=[
                put("/launchers/0/outputs", [{"id": "metrics", "path": "{run_dir}/metrics.json"}]),
                put(
                    M0 + "/extract",
                    {"kind": "json", "output": "metrics", "pointer": "/test/accuracy"},
                ),
                put(
                    "/launchers/0/samples",
                    [
                        {
                            "outputs": {"metrics": "samples/metrics.json"},
                            "expected": {"accuracy": 0.912},
                        }
                    ],
                ),
            ],
            files={"samples/metrics.json": '{"validation": {"accuracy": 0.9}}\n'},
        )
    )
    c.append(
        Case(
            "extraction-csv-not-a-number",
            "The CSV cell holds 'n/a'.",
            [f("X002", EXTRACT)],
            tags=["replay"],
            mutate=[
                put("/launchers/0/outputs", [{"id": "results", "path": "{run_dir}/results.csv"}]),
                put(
                    M0 + "/extract",
                    {"kind": "csv", "output": "results", "column": "accuracy", "row": -1},
                ),
                put(
                    "/launchers/0/samples",
                    [
                        {
                            "outputs": {"results": "samples/results.csv"},
                            "expected": {"accuracy": 0.9},
                        }
                    ],
                ),
            ],
            files={"samples/results.csv": "split,accuracy\ntest,n/a\n"},
        )
    )

    # ------------------------------------------------------------------ guide
    c.append(
        Case(
            "guide-missing",
            "GUIDE.md does not exist.",
            [f("G001", "/guide/path")],
            tags=["required", "guide"],
            files={"GUIDE.md": None},
        )
    )
    c.append(
        Case(
            "guide-out-of-date",
            "GUIDE.md renders other records than the manifest holds.",
            [f("G002", "", file="GUIDE.md")],
            tags=["guide"],
            mutate=[
                put(
                    "/guide/pitfalls",
                    [{"id": "threads", "summary": "BLAS threads change results."}],
                )
            ],
            files={"GUIDE.md": _Guide(GUIDE.before, GUIDE.after, records={})},
        )
    )
    c.append(
        Case(
            "guide-without-markers",
            "GUIDE.md has no generated-records block.",
            [f("G003", "", file="GUIDE.md")],
            tags=["guide"],
            files={"GUIDE.md": "# Reproduction guide\n\nRun the scored launcher.\n"},
        )
    )
    return c


def main(argv: list[str] | None = None) -> int:
    """Write every case; ``--out DIR`` writes the suite elsewhere (to compare with git)."""
    args = sys.argv[1:] if argv is None else argv
    suite = Path(args[1]) if len(args) == 2 and args[0] == "--out" else REPO / "validators"
    cases_dir = suite / "cases"
    all_cases = cases()
    names = [case.name for case in all_cases]
    duplicates = {name for name in names if names.count(name) > 1}
    if duplicates:
        sys.stderr.write(f"duplicate case names: {sorted(duplicates)}\n")
        return 1
    cases_dir.mkdir(parents=True, exist_ok=True)
    for existing in cases_dir.iterdir():
        if existing.name not in names and existing.is_dir():
            shutil.rmtree(existing)
    for case in all_cases:
        write_case(case, cases_dir)
    write_conformance(all_cases, suite / "conformance.yaml")
    sys.stderr.write(f"wrote {len(all_cases)} cases to {cases_dir}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
