"""Raw research repositories with real defects, written as real git repositories.

Every fixture is a tiny script on scikit-learn toy data that imports the one shared
dependency set (numpy, scipy, scikit-learn, matplotlib), so every build resolves the same
lock and one cached environment serves them all. Every fixture is committed with the same
date, so the resolver's ``--exclude-newer`` bound is the same too.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

#: Committer date of every fixture commit (the Builder's --exclude-newer bound).
COMMIT_DATE = "2024-06-01T12:00:00+00:00"

_COMMON = """\
import numpy as np
import scipy
import matplotlib
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
"""

_SEEDED = (
    _COMMON
    + """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--max-iter", type=int, default=200)
args = parser.parse_args()
np.random.seed(args.seed)
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=args.seed)
model = LogisticRegression(max_iter=args.max_iter).fit(X_train / 16.0, y_train)
"""
)


@dataclass(frozen=True)
class Fixture:
    """One raw repository and the claims file that goes with it."""

    name: str
    files: dict[str, str]
    claims: list[dict[str, object]]
    defects: tuple[str, ...]
    #: Expected curation outcome per claim id (True: reproducible).
    expected: dict[str, bool] = field(default_factory=dict)


FIXTURES: dict[str, Fixture] = {}


def _add(fixture: Fixture) -> None:
    FIXTURES[fixture.name] = fixture


_add(
    Fixture(
        "no-deps",
        {
            "train.py": _SEEDED
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
            "README.md": "# Digits\n\nRun:\n\n    python train.py --seed 0\n",
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy on digits",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("no dependency file",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "python2",
        {
            "main.py": _COMMON
            + "X, y = load_digits(return_X_y=True)\n"
            + "half = len(X) / 2\n"
            + "model = LogisticRegression(max_iter=300).fit(X[:half] / 16.0, y[:half])\n"
            + 'print "holdout accuracy: %.4f" % model.score(X[half:] / 16.0, y[half:])\n',
            "requirements.txt": "numpy\nscipy\nscikit-learn\nmatplotlib\n",
        },
        [
            {
                "id": "holdout",
                "measured": "holdout accuracy",
                "value": 0.71,
                "direction": "higher",
                "hints": {"label": "holdout accuracy"},
            }
        ],
        ("python 2 print", "integer division"),
        {"holdout": True},
    )
)

_add(
    Fixture(
        "scipy-misc",
        {
            "score.py": _SEEDED.replace("import scipy\n", "from scipy.misc import logsumexp\n")
            + "proba = model.predict_log_proba(X_test / 16.0)\n"
            + "norm = logsumexp(proba, axis=1)\n"
            + 'print("log-normaliser: %.4f" % float(np.abs(norm).max()))\n'
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.96,
                "direction": "higher",
                "hints": {"script": "score.py", "label": "test accuracy"},
            }
        ],
        ("scipy.misc.logsumexp",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "gui-show",
        {
            "plot.py": _SEEDED.replace(
                "import matplotlib\n",
                'import matplotlib\nmatplotlib.use("TkAgg")\nimport matplotlib.pyplot as plt\n',
            )
            + "acc = model.score(X_test / 16.0, y_test)\n"
            + "plt.bar([0], [acc])\n"
            + "plt.show()\n"
            + 'print("test accuracy: %.4f" % acc)\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("blocking GUI backend",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "cuda-device",
        {
            "device.py": (
                "import os\n\n\n"
                "def place(array, device):\n"
                '    """Move an array to a device (CPU arrays stay put)."""\n'
                '    if device.startswith("cuda") and not os.path.exists("/dev/nvidia0"):\n'
                '        raise RuntimeError("CUDA error: no CUDA-capable device is detected")\n'
                "    return array\n"
            ),
            "train.py": _SEEDED
            + "from device import place\n"
            + 'DEVICE = "cuda:0"\n'
            + "X_test = place(X_test, DEVICE)\n"
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("cuda:0 hard-coded",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "cwd-data",
        {
            "src/train.py": _COMMON
            + "import argparse\n"
            + "parser = argparse.ArgumentParser()\n"
            + 'parser.add_argument("--seed", type=int, default=0)\n'
            + "args = parser.parse_args()\n"
            + 'scale = float(open("../data/scale.txt").read())\n'
            + "X, y = load_digits(return_X_y=True)\n"
            + "X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=args.seed)\n"
            + "model = LogisticRegression(max_iter=200).fit(X_train / scale, y_train)\n"
            + 'print("test accuracy: %.4f" % model.score(X_test / scale, y_test))\n',
            "data/scale.txt": "16.0\n",
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("cwd-relative data path",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "cuda-pins",
        {
            "train.py": _SEEDED
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
            "requirements.txt": (
                "numpy\nscipy\nscikit-learn\nmatplotlib\n"
                "nvidia-cublas-cu12==12.1.3.1\nnvidia-cudnn-cu12==8.9.2.26\ntriton==2.1.0\n"
            ),
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("CUDA-only pins",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "unseeded",
        {
            "run.py": _COMMON
            + "X, y = load_digits(return_X_y=True)\n"
            + "X_train, X_test, y_train, y_test = train_test_split(X, y)\n"
            + "model = LogisticRegression(max_iter=200).fit(X_train / 16.0, y_train)\n"
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.97,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("unseeded script",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "many-numbers",
        {
            "train.py": _SEEDED
            + "for epoch in range(3):\n"
            + "    loss, acc = 0.5 / (epoch + 1), 0.8 + epoch / 100\n"
            + '    print("epoch %d loss %.4f accuracy %.4f" % (epoch, loss, acc))\n'
            + 'print("train accuracy: %.4f" % model.score(X_train / 16.0, y_train))\n'
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n'
            + 'print("test error: %.4f" % (1 - model.score(X_test / 16.0, y_test)))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "accuracy on the test split",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("a number among many similar ones",),
        {"accuracy": True},
    )
)

_add(
    Fixture(
        "not-reproducible",
        {
            "train.py": _SEEDED.replace(
                "train_test_split(X, y, random_state=args.seed)",
                "train_test_split(X, y, random_state=0)  # the paper's split",
            )
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.999,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("a claim that is not reproducible",),
        {"accuracy": False},
    )
)

# The paper reports the mean over seeds 1, 2 and 3 (about 0.961; the seeds alone give about
# 0.978, 0.942 and 0.962): only a statistic over all three seeds reproduces it, one seed
# does not.
_add(
    Fixture(
        "multi-seed",
        {
            "train.py": _SEEDED
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
            "README.md": "# Digits\n\nRun:\n\n    python train.py --seed 1\n",
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy on digits, mean over three seeds",
                "value": 0.961,
                "direction": "higher",
                "hints": {"label": "test accuracy", "seeds": [1, 2, 3], "statistic": "mean"},
            }
        ],
        ("a statistic over several seeds",),
        {"accuracy": True},
    )
)


def git(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="Research Author",
        GIT_AUTHOR_EMAIL="author@example.org",
        GIT_COMMITTER_NAME="Research Author",
        GIT_COMMITTER_EMAIL="author@example.org",
        GIT_AUTHOR_DATE=COMMIT_DATE,
        GIT_COMMITTER_DATE=COMMIT_DATE,
    )
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def write_repo(base: Path, fixture: Fixture | str) -> tuple[Path, Path]:
    """Write ``fixture`` as a git repository under ``base``; return (repo, claims file)."""
    if isinstance(fixture, str):
        fixture = FIXTURES[fixture]
    repo = base / fixture.name
    repo.mkdir(parents=True)
    for rel, text in fixture.files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    git("init", "--quiet", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "Initial code", cwd=repo)
    claims = base / f"{fixture.name}.claims.yaml"
    document = {
        "claims_version": "1.0",
        "paper": {"title": f"A study of {fixture.name}", "year": 2024},
        "claims": fixture.claims,
    }
    claims.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    return repo, claims


RepoFactory = Callable[[str], tuple[Path, Path]]
