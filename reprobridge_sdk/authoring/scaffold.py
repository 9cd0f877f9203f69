"""Authoring: scaffold a new artifact that validates clean (``reprobridge init``).

Its placeholders come from :mod:`reprobridge_sdk.validation.placeholders`, so what the
scaffold writes is what the validator recognises.
"""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reprobridge_sdk.api import ArtifactDir, create
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.model import ID_PATTERN, MANIFEST_NAME, Manifest
from reprobridge_sdk.validation.placeholders import (
    MARK,
    PAPER_TITLE,
    PLACEHOLDER_COMMIT,
    REPOSITORY,
    SCAFFOLD_SEEDS,
    SCAFFOLD_SOURCE,
    experiment_value,
    scaffold_sample_log,
)

__all__ = [
    "PLACEHOLDER_COMMIT",
    "PLACEHOLDER_REPOSITORY",
    "InitOptions",
    "default_id",
    "experiment_value",
    "scaffold",
]

PLACEHOLDER_REPOSITORY = REPOSITORY

_SEEDS = SCAFFOLD_SEEDS
_TASK = "main-result"

_EXPERIMENT = '''\
"""A placeholder experiment scaffolded by `reprobridge init`: replace it with the paper's code.

It prints two progress lines (the launchers' landmarks) and the measured value on a line that
the scored launcher's regular expression reads, e.g. ``accuracy: 0.9010``. The value depends
only on the seed, so every run with the same seed prints the same line.
"""

from __future__ import annotations

import argparse
import random


def accuracy(seed: int, steps: int) -> float:
    """The share of ``steps`` random draws below 0.9: about 0.9, varying with the seed."""
    rng = random.Random(seed)
    return sum(rng.random() < 0.9 for _ in range(steps)) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description="Placeholder experiment.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a quick, reduced run")
    args = parser.parse_args()
    print("training started", flush=True)
    value = accuracy(args.seed, 10 if args.smoke else 1000)
    print("training finished", flush=True)
    print(f"accuracy: {value:.4f}", flush=True)


if __name__ == "__main__":
    main()
'''

_REQUIREMENTS_IN = """\
# Declared requirements of the experiment, one per line (e.g. "scikit-learn>=1.4").
# Resolve them into the hashed lock environment/requirements.txt with `reprobridge lock`.
"""

_LOCK = """\
# Hashed lock of environment/requirements.in (no requirements yet: the scaffolded
# experiment uses the standard library only). Regenerate it with `reprobridge lock`.
"""

_GUIDE = """\
# {title}

This guide tells a person or an agent, starting from this directory alone, how to reproduce
the results of "{paper}". Write it for a reader who has not seen the original repository.

## What is reproduced

One task (`{task}`): replace the scaffolded experiment in `code/` with the paper's refined
code and describe here which table or figure each task comes from.

## How to reproduce

1. Create the environment from the lock `environment/requirements.txt` (Python {python}).
2. Run the `smoke` launcher: a quick run that checks the environment and the code paths.
3. Run the `scored` launcher for every seed it declares; the measured value is read from the
   log line `accuracy: <value>`.

## Records

The records below are generated from `rra.yaml` by `reprobridge guide`; edit them there.

"""


@dataclass
class InitOptions:
    """What ``reprobridge init`` asks for."""

    id: str
    title: str
    paper_title: str = PAPER_TITLE
    license: str = "Apache-2.0"
    repository: str = PLACEHOLDER_REPOSITORY
    commit: str = PLACEHOLDER_COMMIT
    python: str = field(default_factory=lambda: "{}.{}".format(*sys.version_info[:2]))
    author: str | None = None


def default_id(directory: Path) -> str:
    """A valid artifact id derived from a directory name (``My Study`` -> ``my-study``)."""
    name = directory.resolve().name.lower()
    slug = re.sub(r"[^a-z0-9._-]+", "-", name).strip("-._")[:64]
    return slug if re.match(ID_PATTERN, slug) else "my-artifact"


def _manifest(options: InitOptions, root: Path) -> dict[str, Any]:
    today = datetime.now(UTC).date().isoformat()
    values = [experiment_value(seed) for seed in _SEEDS]
    published = round(statistics.fmean(values), 4)
    observations = [
        {
            "value": value,
            "provenance": {
                "source": SCAFFOLD_SOURCE,
                "date": today,
                "hardware": "any CPU",
                "note": (
                    f"printed by `python code/experiment.py --seed {seed}`; "  # noqa: S608 - not SQL
                    "replace with the values of your reference runs"
                ),
            },
        }
        for seed, value in zip(_SEEDS, values, strict=True)
    ]
    artifact: dict[str, Any] = {
        "id": options.id,
        "title": options.title,
        "license": options.license,
        "paper": {"title": options.paper_title},
    }
    if options.author:
        artifact["authors"] = [{"name": options.author}]
    regex = {"kind": "regex", "pattern": r"^accuracy: ([0-9.]+)$", "occurrence": "last"}
    landmarks = [
        {"id": "started", "pattern": "^training started$"},
        {"id": "finished", "pattern": "^training finished$"},
    ]
    return {
        "rra_version": "1.0",
        "artifact": artifact,
        "codebase": {
            "upstream": {"repository": options.repository, "commit": options.commit},
            "refined": {"kind": "directory", "path": "code"},
            "tree_digest": tree_digest(root / "code"),
        },
        "environment": {
            "python": options.python,
            "requirements": "environment/requirements.in",
            "lock": {
                "path": "environment/requirements.txt",
                "format": "requirements",
                "sha256": file_sha256(root / "environment" / "requirements.txt"),
            },
        },
        "tasks": [
            {
                "id": _TASK,
                "title": f"Main result {MARK}",
                "location": {"table": "1", "row": "Ours", "column": "Accuracy"},
                "dataset": f"synthetic draws {MARK}",
                "metric": "accuracy",
                "statistic": {"aggregate": "single", "seeds": 1},
                "published": {"value": published},
                "direction": "higher",
                "kind": "full",
                "hardware": "CPU",
                "reference": {"observations": observations},
            }
        ],
        "launchers": [
            {
                "id": "smoke",
                "description": "A quick run that checks the environment and the code paths.",
                "argv": ["python", "code/experiment.py", "--seed", "0", "--smoke"],
                "timeout": 60,
                "scope": "smoke",
                "landmarks": landmarks,
            },
            {
                "id": "scored",
                "description": "The run whose log gives the task's value.",
                "argv": ["python", "code/experiment.py", "--seed", "{seed}"],
                "seeds": [_SEEDS[0]],
                "timeout": 600,
                "scope": "scored",
                "landmarks": landmarks,
                "measurements": [{"task": _TASK, "extract": regex, "aggregate": "single"}],
                "samples": [
                    {
                        "log": "samples/scored-seed1.log",
                        "seed": _SEEDS[0],
                        "expected": {_TASK: values[0]},
                    }
                ],
            },
        ],
        "guide": {"path": "GUIDE.md"},
    }


def scaffold(directory: str | Path, options: InitOptions, *, force: bool = False) -> ArtifactDir:
    """Write a new artifact into ``directory``; return it loaded. An existing scaffold file is an
    :class:`ArtifactError` unless ``force``; invalid options are a :class:`UsageError`."""
    root = Path(directory)
    if (root / MANIFEST_NAME).exists() and not force:
        msg = f"{root / MANIFEST_NAME} exists already; use --force to overwrite the scaffold"
        raise ArtifactError(msg)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a directory")
    _check_options(options)
    files = {
        "code/experiment.py": _EXPERIMENT,
        "environment/requirements.in": _REQUIREMENTS_IN,
        "environment/requirements.txt": _LOCK,
        "samples/scored-seed1.log": scaffold_sample_log(_SEEDS[0]),
    }
    if not force:
        taken = [name for name in [*files, "GUIDE.md"] if root.joinpath(*name.split("/")).exists()]
        if taken:
            msg = f"{root} already has {', '.join(taken)}; use --force to overwrite them"
            raise ArtifactError(msg)
    for relative, text in files.items():
        atomic_write_text(root.joinpath(*relative.split("/")), text)
    manifest = Manifest.model_validate(_manifest(options, root))
    guide = _GUIDE.format(
        title=options.title, paper=options.paper_title, task=_TASK, python=options.python
    )
    return create(root, manifest, guide_text=guide, overwrite=force)


def _check_options(options: InitOptions) -> None:
    probe = _manifest_probe(options)
    try:
        Manifest.model_validate(probe)
    except ValidationError as exc:
        names = {
            ("artifact", "id"): "--id",
            ("artifact", "title"): "--title",
            ("artifact", "license"): "--license",
            ("artifact", "paper", "title"): "--paper-title",
            ("codebase", "upstream", "repository"): "--repository",
            ("codebase", "upstream", "commit"): "--commit",
            ("environment", "python"): "--python",
        }
        problems = []
        for error in exc.errors():
            option = names.get(
                tuple(str(part) for part in error["loc"]), "/".join(map(str, error["loc"]))
            )
            problems.append(f"{option}: {error['msg']}")
        raise UsageError("invalid option(s): " + "; ".join(problems)) from None


def _manifest_probe(options: InitOptions) -> dict[str, Any]:
    return {
        "rra_version": "1.0",
        "artifact": {
            "id": options.id,
            "title": options.title,
            "license": options.license,
            "paper": {"title": options.paper_title},
        },
        "codebase": {
            "upstream": {"repository": options.repository, "commit": options.commit},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": options.python},
        "tasks": [
            {
                "id": _TASK,
                "dataset": "d",
                "metric": "m",
                "published": {"value": 0},
                "direction": "higher",
                "kind": "full",
            }
        ],
        "launchers": [{"id": "smoke", "argv": ["true"], "scope": "smoke"}],
    }
