"""Raw research repositories with real defects, written as real git repositories.

Every fixture is a tiny script on scikit-learn toy data that imports the one shared
dependency set (numpy, scipy, scikit-learn, matplotlib), so every build resolves the same
lock and one cached environment serves them all. Every fixture is committed with the same
date, so the resolver's ``--exclude-newer`` bound is the same too.
"""

from __future__ import annotations

import json
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
    #: Built end to end by test_build_e2e (False: only its phase's tests use it, with a reason).
    end_to_end: bool = True


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
            "main.py": "import pickle\n"
            + _COMMON
            + "X, y = load_digits(return_X_y=True)\n"
            + "half = len(X) / 2\n"
            + "model = LogisticRegression(max_iter=300).fit(X[:half] / 16.0, y[:half])\n"
            + "fout = open('model.pkl', 'w')\n"
            + "pickle.dump(model.coef_, fout, pickle.HIGHEST_PROTOCOL)\n"
            + "fout.close()\n"
            + "fin = open('model.pkl')\n"
            + "model.coef_ = pickle.load(fin)\n"
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
        ("python 2 print", "integer division", "a pickle stored and read back as text"),
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
        "fixed-seed",
        {
            # GCN's shape: the script seeds itself with a constant, and the published value is
            # a mean over initialisations, which seed 123 alone (0.8348, its floor from 0.8265)
            # misses; the mean over seeds 123 to 127 (0.8194) holds it
            "run.py": _COMMON
            + "\n# np.random.seed(7) in a comment seeds nothing\n"
            + "seed = 123\n"
            + "np.random.seed(seed)\n"
            + 'print("np.random.seed(0) in a string seeds nothing either")\n'
            + 'print("test accuracy: %.4f" % (0.80 + 0.05 * np.random.rand()))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.82,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("a script that seeds itself with a constant, a published mean over initialisations",),
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

# The paper reports the mean over seeds 1 and 2 (0.96; the seeds alone give about 0.978 and
# 0.942): only the statistic over both seeds reproduces it, one seed does not. Two seeds keep
# the five repetitions (ten runs) cheap.
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
                "measured": "test accuracy on digits, mean over two seeds",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy", "seeds": [1, 2], "statistic": "mean"},
            }
        ],
        ("a statistic over several seeds",),
        {"accuracy": True},
    )
)


_add(
    Fixture(
        "seed-flag",
        {
            # The claim names its seed; the script takes none. Its parser has another name,
            # lives in main() behind the __main__ guard and parses with parse_known_args.
            "experiment.py": _COMMON
            + "from argparse import ArgumentParser\n\n\n"
            + "def main():\n"
            + '    cli = ArgumentParser(description="digits")\n'
            + '    cli.add_argument("--c", type=float, default=1.0)\n'
            + "    opts, _rest = cli.parse_known_args()\n"
            + "    X, y = load_digits(return_X_y=True)\n"
            + "    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5)\n"
            + "    model = LogisticRegression(C=opts.c, max_iter=200)\n"
            + "    model.fit(X_train / 16.0, y_train)\n"
            + '    print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n\n\n'
            + 'if __name__ == "__main__":\n'
            + "    main()\n",
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy", "seeds": [1, 2], "statistic": "mean"},
            }
        ],
        ("a claim over two seeds, a script without a seed option",),
        {"accuracy": True},
    )
)

# Repositories as they are published (issue: the build agent on real repositories). Each
# stopped today's agent; each is a class of the real repositories' failures in a few files.
_ACCURACY: list[dict[str, object]] = [
    {
        "id": "accuracy",
        "measured": "test accuracy",
        "value": 0.96,
        "direction": "higher",
        "hints": {"label": "test accuracy"},
    }
]
_PRINT_ACCURACY = 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n'

# The README cds into the folder of the script, and the claim's hint is the README's own
# command: today B002 ('train.py' is not in the repository) ends the build.
_add(
    Fixture(
        "cd-subfolder",
        {
            "gcn/train.py": _SEEDED + _PRINT_ACCURACY,
            "gcn/utils.py": "def unused():\n    return 0\n",
            "README.md": ("# Graph digits\n\nTo train:\n\n```bash\ncd gcn\npython train.py\n```\n"),
        },
        [
            {
                **_ACCURACY[0],
                "hints": {"label": "test accuracy", "command": "python train.py"},
            }
        ],
        ("a README command inside a folder the README cds into",),
        {"accuracy": True},
    )
)

# The README's one line makes an environment, installs into it and runs the script; the
# claim's hint is that line. The environment is the build's (from its lock), so the install
# and the activation are left out and the launcher runs the script alone, with no shell
# (which would run pip in a sandbox that reaches no index).
_add(
    Fixture(
        "setup-hint",
        {
            "train.py": _SEEDED + _PRINT_ACCURACY,
            "requirements.txt": "numpy\nscipy\nscikit-learn\nmatplotlib\n",
            "README.md": (
                "# Digits\n\n```bash\nconda create -n digits python=3.11\n"
                "conda activate digits && pip install -r requirements.txt && python train.py\n"
                "```\n"
            ),
        },
        [
            {
                **_ACCURACY[0],
                "hints": {
                    "label": "test accuracy",
                    "command": "conda activate digits && pip install -r requirements.txt"
                    " && python train.py",
                },
            }
        ],
        ("a command that activates an environment and installs before it runs",),
        {"accuracy": True},
    )
)

# The README runs the experiment over five seeds in a shell loop, and the claim's hint is
# that loop: it is read as one launcher, whose seeds the build chooses.
_add(
    Fixture(
        "seed-loop",
        {
            "train.py": _SEEDED + _PRINT_ACCURACY,
            "README.md": (
                "# Digits\n\n```bash\nfor seed in 0 1 2 3 4; do\n"
                "    python train.py --seed $seed\ndone\n```\n"
            ),
        },
        [
            {
                **_ACCURACY[0],
                "hints": {
                    "label": "test accuracy",
                    "command": "for seed in 0 1 2 3 4; do python train.py --seed $seed; done",
                },
            }
        ],
        ("a README that runs the script over seeds in a shell loop",),
        {"accuracy": True},
    )
)

# A side script imports a distribution that cannot be installed; the claim's script never
# imports it. A distribution no index serves stands in for one with no wheel whose source
# build is refused: both stop today's resolution the same way (B005 at every step).
UNINSTALLABLE = "reprobridge_fixture_unavailable_xyz"
_add(
    Fixture(
        "side-script",
        {
            "train.py": _SEEDED + _PRINT_ACCURACY,
            "experiments/legacy/plot_old.py": (
                f"import {UNINSTALLABLE}\n\n{UNINSTALLABLE}.plot()\n"
            ),
        },
        _ACCURACY,
        ("a side script importing an uninstallable package",),
        {"accuracy": True},
    )
)

# The script lives in scripts/ and imports the repository's own package: run as written
# it stops with ModuleNotFoundError (today B007 at the smoke run).
_add(
    Fixture(
        "own-package",
        {
            "digitlib/__init__.py": "from .data import split\n",
            "digitlib/data.py": (
                "from sklearn.datasets import load_digits\n"
                "from sklearn.model_selection import train_test_split\n\n\n"
                "def split(seed):\n"
                "    X, y = load_digits(return_X_y=True)\n"
                "    return train_test_split(X / 16.0, y, random_state=seed)\n"
            ),
            "scripts/train.py": _COMMON
            + "import argparse\n\n"
            + "from digitlib import split\n\n"
            + "parser = argparse.ArgumentParser()\n"
            + 'parser.add_argument("--seed", type=int, default=0)\n'
            + "args = parser.parse_args()\n"
            + "X_train, X_test, y_train, y_test = split(args.seed)\n"
            + "model = LogisticRegression(max_iter=200).fit(X_train, y_train)\n"
            + 'print("test accuracy: %.4f" % model.score(X_test, y_test))\n',
            "README.md": "# Digits\n\n    python scripts/train.py --seed 0\n",
        },
        _ACCURACY,
        ("the repository's own package, imported from a script in a subfolder",),
        {"accuracy": True},
    )
)

# The code imports the repository under its authors' folder name (``digits.models``), and
# the script sits beside a module named like its own package (``training/training.py``):
# writing the imports from the root lets that module shadow the package ``training/``
# (ImportError: partially initialized module 'training'). The self-import fix rule makes
# the repository importable under that name instead.
_add(
    Fixture(
        "self-named",
        {
            "models/__init__.py": "",
            "models/linear.py": (
                "from sklearn.linear_model import LogisticRegression\n\n\n"
                "def make():\n    return LogisticRegression(max_iter=200)\n"
            ),
            "training/range_evaluation.py": (
                "def score(model, X, y):\n    return model.score(X, y)\n"
            ),
            "training/training.py": (
                "from digits.models import linear\n"
                "from digits.training import range_evaluation\n\n\n"
                "def fit_and_score(X_train, y_train, X_test, y_test):\n"
                "    model = linear.make().fit(X_train, y_train)\n"
                "    return range_evaluation.score(model, X_test, y_test)\n"
            ),
            "training/example.py": _COMMON
            + "import argparse\n\n"
            + "from digits.training import training\n\n"
            + "parser = argparse.ArgumentParser()\n"
            + 'parser.add_argument("--seed", type=int, default=0)\n'
            + "args = parser.parse_args()\n"
            + "X, y = load_digits(return_X_y=True)\n"
            + "X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, "
            + "random_state=args.seed)\n"
            + 'print("test accuracy: %.4f" % training.fit_and_score(X_train, y_train, '
            + "X_test, y_test))\n",
            "README.md": "# Digits\n\n    python3 training/example.py\n",
        },
        _ACCURACY,
        ("the repository imported under its authors' folder name, a module shadowing it",),
        {"accuracy": True},
        end_to_end=False,  # test_self_named_fixture runs its phases
    )
)

# The repository's package reads its own version from its distribution's metadata when it
# is imported. On PYTHONPATH it imports, but nothing installed it: PackageNotFoundError at
# the smoke run (B007 before the own-distribution-metadata fix rule).
_add(
    Fixture(
        "own-metadata",
        {
            "pyproject.toml": (
                '[project]\nname = "digitlib"\nversion = "0.3.1"\n'
                'dependencies = ["numpy", "scipy", "scikit-learn", "matplotlib"]\n'
            ),
            "digitlib/__init__.py": (
                "from importlib.metadata import version\n\n"
                "__version__ = version(__name__)\n\n"
                "from .data import split  # noqa: E402\n"
            ),
            "digitlib/data.py": (
                "from sklearn.datasets import load_digits\n"
                "from sklearn.model_selection import train_test_split\n\n\n"
                "def split(seed):\n"
                "    X, y = load_digits(return_X_y=True)\n"
                "    return train_test_split(X / 16.0, y, random_state=seed)\n"
            ),
            "scripts/train.py": _COMMON
            + "import argparse\n\n"
            + "import digitlib\n\n"
            + "parser = argparse.ArgumentParser()\n"
            + 'parser.add_argument("--seed", type=int, default=0)\n'
            + "args = parser.parse_args()\n"
            + 'print("digitlib", digitlib.__version__)\n'
            + "X_train, X_test, y_train, y_test = digitlib.split(args.seed)\n"
            + "model = LogisticRegression(max_iter=200).fit(X_train, y_train)\n"
            + 'print("test accuracy: %.4f" % model.score(X_test, y_test))\n',
            "README.md": "# Digits\n\n    pip install -e .\n    python scripts/train.py --seed 0\n",
        },
        _ACCURACY,
        ("the repository's own package reads its distribution's metadata on import",),
        {"accuracy": True},
        end_to_end=False,  # its phases: tests/agent/test_own_metadata_fixture.py
    )
)

# setup.py imports setuptools; the code never does. Today setuptools becomes a requirement
# (and, when the era's step fails, the oldest release with a wheel: one of 2013).
_add(
    Fixture(
        "setup-py",
        {
            "train.py": _SEEDED + _PRINT_ACCURACY,
            "setup.py": (
                "from setuptools import find_packages, setup\n\n"
                "REQUIRES = ['numpy', 'scipy', 'scikit-learn', 'matplotlib']\n\n"
                "setup(name='digits', version='0.1', packages=find_packages(),\n"
                "      install_requires=REQUIRES)\n"
            ),
        },
        _ACCURACY,
        ("a build tool imported only by setup.py",),
        {"accuracy": True},
    )
)

# Seed 1 prints a line that seed 2 never prints: the probe run (seed 1) reaches it, the
# repetitions of seed 2 do not. Such a line is never a landmark (the clean-room check would
# wait for it in vain).
_add(
    Fixture(
        "seed-line",
        {
            "train.py": _SEEDED
            + "if args.seed % 2:\n"
            + '    print("early stop: patience exhausted")\n'
            + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy on digits, mean over two seeds",
                "value": 0.96,
                "direction": "higher",
                "hints": {"label": "test accuracy", "seeds": [1, 2], "statistic": "mean"},
            }
        ],
        ("a line only some seeds print",),
        {"accuracy": True},
    )
)

#: A value that follows the iteration order of a set of strings (hash randomisation): the
#: same seed prints another value in every process unless PYTHONHASHSEED is fixed.
HASH_ORDER = (
    'names = {"feature-%d" % i for i in range(40)}\n'
    'jitter = sum(i * int(name.split("-")[1]) for i, name in enumerate(names)) / 1e7\n'
)
_add(
    Fixture(
        "hash-order",
        {
            "train.py": _SEEDED
            + HASH_ORDER
            + 'print("test accuracy: %.6f" % (model.score(X_test / 16.0, y_test) + jitter))\n',
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy on digits",
                "value": 0.9614,
                "direction": "higher",
                "hints": {"label": "test accuracy"},
            }
        ],
        ("the same seed prints another value in every process (hash randomisation)",),
        {"accuracy": True},
    )
)
_add(
    Fixture(
        "unseeded-generator",
        {
            "train.py": _SEEDED
            + "import random\n"
            + "jitter = random.random() / 1000  # random is never seeded\n"
            + 'print("test accuracy: %.6f" % (model.score(X_test / 16.0, y_test) + jitter))\n',
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
        ("the same seed prints another value: a generator the seed does not reach",),
        {"accuracy": True},
        end_to_end=False,  # B046 is a Reproducer finding; see tests/agent/test_words.py
    )
)


def notebook(*cells: str | list[str], outputs: str = "") -> str:
    """An nbformat 4 notebook of code ``cells`` (a string, or a list of lines as Jupyter
    saves them) after a markdown cell; each code cell's saved output is ``outputs``."""
    saved = [{"output_type": "stream", "name": "stdout", "text": [outputs]}] if outputs else []
    document = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Digits\n", "import os\n"]},
            *(
                {
                    "cell_type": "code",
                    "execution_count": index,
                    "metadata": {},
                    "outputs": saved,
                    "source": cell,
                }
                for index, cell in enumerate(cells, start=1)
            ),
        ],
    }
    return json.dumps(document, indent=1) + "\n"


_add(
    Fixture(
        "notebook",
        {
            "analysis.ipynb": notebook(
                ["%matplotlib inline\n", *_COMMON.splitlines(keepends=True)],
                "!pip install -r requirements.txt",
                "X, y = load_digits(return_X_y=True)\n"
                "X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)\n"
                "model = LogisticRegression(max_iter=200).fit(X_train / 16.0, y_train)\n"
                "model?",
                ["test_accuracy = model.score(X_test / 16.0, y_test)\n", "test_accuracy"],
                # a saved output the agent must never read as a result
                outputs="test_accuracy: 0.1234\n",
            ),
            "README.md": "# Digits\n\nOpen analysis.ipynb in Jupyter and run every cell.\n",
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy on digits",
                "value": 0.96,
                "direction": "higher",
                "hints": {"script": "analysis.ipynb", "label": "test_accuracy"},
            }
        ],
        (
            "the claim's number is computed in a Jupyter notebook, shown only as a cell's last "
            "expression, beside IPython-only lines and a saved output of another value",
        ),
        {"accuracy": True},
        end_to_end=False,  # its phases: tests/agent/test_notebooks.py (the e2e suite is slow)
    )
)

#: Seconds of one epoch of the slow fixtures: their full run takes EPOCHS * EPOCH_SECONDS.
EPOCH_SECONDS = 0.25
_SLOW = (
    '"""Train for a fixed number of epochs; each takes a while."""\n'
    "import time\n"
    "{knob}\n\n"
    "def train(epochs):\n"
    "    accuracy = 0.0\n"
    "    for epoch in range(epochs):\n"
    f"        time.sleep({EPOCH_SECONDS})\n"
    "        accuracy = 0.95 + 0.04 * (1 - 0.5 ** (epoch + 1))\n"
    "    return accuracy\n\n\n"
    'print("test accuracy: %.4f" % train({epochs}))\n'
)
_SLOW_CLAIMS: list[dict[str, object]] = [
    {
        "id": "accuracy",
        "measured": "test accuracy",
        "value": 0.99,
        "direction": "higher",
        "hints": {"label": "test accuracy"},
    }
]
_add(
    Fixture(
        "long-smoke",
        {"train.py": _SLOW.format(knob="EPOCHS = 80", epochs="EPOCHS")},
        _SLOW_CLAIMS,
        ("a smoke run past its budget, with the epoch count a module constant",),
        {"accuracy": True},
        end_to_end=False,  # scored runs of 20 s by design; see tests/agent/test_reproducer.py
    )
)
_add(
    Fixture(
        "long-smoke-option",
        {
            "train.py": _SLOW.format(
                knob="import argparse\n\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--rounds", type=int, default=80)\n'
                "args = parser.parse_args()",
                epochs="args.rounds",
            )
        },
        _SLOW_CLAIMS,
        ("a smoke run past its budget, with an option for the number of rounds",),
        {"accuracy": True},
        end_to_end=False,  # as long-smoke
    )
)

_add(
    Fixture(
        "huge-epochs",
        # GAT's shape: ``nb_epochs = 100000`` (early stopping ends the published run); a run
        # of that many never ends within any smoke budget, and the code says so before it runs
        {"train.py": _SLOW.format(knob="EPOCHS = 100000", epochs="EPOCHS")},
        _SLOW_CLAIMS,
        ("a count of 100000 epochs in the code, made short before the first smoke run",),
        {"accuracy": True},
        end_to_end=False,  # as long-smoke
    )
)
_add(
    Fixture(
        "huge-loop",
        # the count is the literal bound of an unnamed loop, at least the large count: the
        # code shows it before any run, as a named one
        {
            "train.py": _SLOW.format(knob="", epochs="100000").replace(
                "for epoch in range(epochs)", "for epoch in range(100000)"
            )
        },
        _SLOW_CLAIMS,
        ("a loop of 100000 steps with no name, made short before the first smoke run",),
        {"accuracy": True},
        end_to_end=False,  # as long-smoke
    )
)

_add(
    Fixture(
        "long-smoke-module",
        {
            # APPNP's shape: the script passes a propagation's power iterations (niter), and
            # the training runs until early stopping, whose max_epochs is in another module
            "training/__init__.py": "",
            "training/stopping.py": "stopping_args = dict(patience=100, max_epochs=80)\n",
            "train.py": _SLOW.format(
                knob="from training.stopping import stopping_args\n\n\n"
                "def propagation(alpha, niter):\n"
                "    return [alpha] * niter\n\n\n"
                "prop = propagation(alpha=0.1, niter=10)",
                epochs="stopping_args['max_epochs']",
            ),
        },
        _SLOW_CLAIMS,
        ("a smoke run past its budget, the training's length in an imported module",),
        {"accuracy": True},
        end_to_end=False,  # as long-smoke
    )
)

_add(
    Fixture(
        "long-smoke-splits",
        {
            # the dropout experiments' shape: the whole experiment repeats over splits whose
            # count is read from a data file, and no count of epochs is in the code
            "data/n_splits.txt": "80\n",
            "experiment.py": (
                "import time\n\n"
                "n_splits = int(open('data/n_splits.txt').read())\n"
                "scores = []\n"
                "for split in range(int(n_splits)):\n"
                f"    time.sleep({EPOCH_SECONDS})\n"
                "    scores.append(0.97)\n"
                'print("test accuracy: %.4f over %d splits" % (sum(scores) / len(scores), '
                "len(scores)))\n"
            ),
        },
        _SLOW_CLAIMS,
        ("a smoke run past its budget, repeating the experiment over a file's count of splits",),
        {"accuracy": True},
        end_to_end=False,  # as long-smoke
    )
)


_add(
    Fixture(
        "prerequisite",
        {
            "data/generate.py": _COMMON
            + """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--num-samples", type=int, default=1797)
parser.add_argument("--suffix", default="")
args = parser.parse_args()
X, y = load_digits(return_X_y=True)
np.save("features" + args.suffix + ".npy", X[: args.num_samples] / 16.0)
np.save("labels" + args.suffix + ".npy", y[: args.num_samples])
print("wrote %d samples" % min(args.num_samples, len(X)))
""",
            "train.py": _COMMON
            + """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
X = np.load("data/features_small.npy")
y = np.load("data/labels_small.npy")
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=args.seed)
model = LogisticRegression(max_iter=200).fit(X_train, y_train)
print("test accuracy: %.4f" % model.score(X_test, y_test))
""",
            "README.md": "# Digits from generated data\n\nFirst make the data:\n\n"
            "```\ncd data\npython generate.py --num-samples 1500 --suffix _small\n```\n\n"
            "Then train:\n\n```\npython train.py --seed 0\n```\n",
        },
        [
            {
                "id": "accuracy",
                "measured": "test accuracy on generated digits",
                "value": 0.96,
                "direction": "higher",
                "hints": {"script": "train.py", "label": "test accuracy"},
            }
        ],
        ("data written by another step first",),
        {"accuracy": True},
        end_to_end=False,  # its phases are tested in test_prerequisite (the suite is slow)
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


def build_fixture(base: Path, name: str, cache: Path) -> str:
    """Write fixture ``name`` under ``base`` and build it into ``base/<name>-rra`` with the
    environment cache ``cache``; return the build's report as JSON.

    Run in a process of its own (test_build_e2e starts one a build), so the cache is set in
    this process's environment, which the build's subprocesses inherit.
    """
    from reprobridge_sdk.agent.pipeline import BuildOptions, build

    os.environ["REPROBRIDGE_CACHE_DIR"] = str(cache)
    repo, claims = write_repo(base / "raw", name)
    report = build(BuildOptions(source=str(repo), claims=claims, out=base / f"{name}-rra"))
    return report.model_dump_json()
