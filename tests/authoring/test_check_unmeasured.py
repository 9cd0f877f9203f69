"""``check --scored`` runs again only the scored launchers that measure a task the artifact
measures: one whose tasks are all marked not measured (``reference.not_measured``: its
reference runs did not fit the build, its script never ends) cannot change a verdict, and
running it would take its whole timeout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from toy_study import make_artifact

from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.check import _measuring, check

#: A scored launcher that never ends, measuring a task the artifact does not measure.
_ENDLESS: dict[str, Any] = {
    "id": "endless",
    "argv": ["python", "-c", "while True: pass"],
    "scope": "scored",
    "timeout": 60,
    "measurements": [
        {"task": "loss", "extract": {"kind": "regex", "pattern": r"loss ([0-9.]+)"}},
    ],
}
_LOSS: dict[str, Any] = {
    "id": "loss",
    "dataset": "toy",
    "metric": "loss",
    "published": {"value": 0.1},
    "direction": "lower",
    "kind": "full",
    "reference": {"not_measured": "the script never ends on its own (B061)"},
}


def _toy(root: Path, *, endless: bool = True) -> Path:
    artifact = make_artifact(root, version="1.1", tasks=("acc",))
    manifest = root / "rra.yaml"
    data = yaml.safe_load(manifest.read_text("utf-8"))
    data["tasks"].append(_LOSS)
    if endless:
        data["launchers"].append(_ENDLESS)
    else:  # the scored launcher's only task is not measured either
        data["tasks"] = [_LOSS]
        for launcher in data["launchers"]:
            launcher.update(measurements=_ENDLESS["measurements"], seeds=[0])
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return artifact


def test_a_scored_launcher_of_unmeasured_tasks_is_not_run_again(tmp_path: Path) -> None:
    artifact = _toy(tmp_path / "toy")
    assert _measuring(load(artifact).manifest) == ["scored"]
    report = check(artifact, scored=True, sandbox=False, work_dir=tmp_path)
    steps = {step.name: step for step in report.steps}
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    assert steps["scored"].detail == "3 scored run(s) succeeded, every landmark reached"
    assert steps["scored"].seconds < 50  # not the endless launcher's timeout


def test_every_scored_launcher_measuring_is_run_as_before(tmp_path: Path) -> None:
    """None: the run is not told which, it takes every scored launcher."""
    assert _measuring(load(make_artifact(tmp_path / "toy")).manifest) is None


def test_no_scored_launcher_that_measures_is_a_step_with_nothing_to_run(tmp_path: Path) -> None:
    artifact = _toy(tmp_path / "toy", endless=False)
    assert _measuring(load(artifact).manifest) == []
    report = check(artifact, scored=True, sandbox=False, work_dir=tmp_path)
    steps = {step.name: step for step in report.steps}
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    assert steps["scored"].seconds == 0.0
    assert steps["scored"].detail == "no scored launcher measures a task the artifact measures"
