"""The verdict steps that honest evidence reaches through the manifest, not through tampering.

Each case starts from honest runs of the toy artifact (real runner, real subprocesses) and
changes the manifest the way an author could: a task no launcher measures (A034), references
missing (A025), single (A026) or not finite (A027), a published value left out (A032, in
curation), a code that writes a value that is not a number (A028), a seed run twice (A033), a
record without digests (A013), and a run still in progress when the auditor looks (A023).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from audit_support import edit_record, make_artifact, run_honestly

from reprobridge_sdk.audit import audit, compatibility_interval
from reprobridge_sdk.audit.facts import TaskFacts
from reprobridge_sdk.audit.verdict import judge_published
from reprobridge_sdk.digest import tree_digest
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.model import RECORD_NAME, Task
from reprobridge_sdk.model.audit import AuditResult, TaskAttempt


def _edit_manifest(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _attempt(result: AuditResult, task: str, attempt: str = "runs") -> TaskAttempt:
    item = next(t for t in result.tasks if t.id == task)
    return next(a for a in item.attempts if a.attempt == attempt)


def _reasons(attempt: TaskAttempt) -> list[tuple[str, str]]:
    return [(r.code, r.path) for r in attempt.reasons]


@pytest.fixture(scope="module")
def nan_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy artifact whose code writes an F1 of NaN for seed 1, with honest scored runs."""
    root = make_artifact(tmp_path_factory.mktemp("nan") / "toy")
    train = root / "code" / "train.py"
    text = train.read_text()
    assert "round(acc - 1.0, 4)" in text
    train.write_text(
        text.replace("round(acc - 1.0, 4)", 'float("nan") if seed == 1 else round(acc - 1.0, 4)')
    )
    _edit_manifest(root, lambda d: d["codebase"].update(tree_digest=tree_digest(root / "code")))
    run_honestly(root, "scored", [0, 1, 2])
    return root


@pytest.fixture
def honest(toy: Path) -> Path:
    return toy


@pytest.fixture
def nan_toy(nan_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(nan_template, target)
    return target


def test_a_task_no_launcher_measures_is_inconclusive(honest: Path) -> None:
    def add_task(data: dict[str, Any]) -> None:
        data["tasks"].append({**data["tasks"][0], "id": "unmeasured"})

    _edit_manifest(honest, add_task)
    result = audit(honest)
    unmeasured = _attempt(result, "unmeasured")
    assert (unmeasured.verdict, unmeasured.icml) == ("inconclusive", "inconclusive")
    assert _reasons(unmeasured) == [("A034", "/tasks/2")]
    assert _attempt(result, "acc").verdict == "compatible"
    assert not result.badges.reproduced


def test_no_reference_observations_is_inconclusive(honest: Path) -> None:
    _edit_manifest(honest, lambda d: d["tasks"][0].pop("reference"))
    acc = _attempt(audit(honest), "acc")
    assert (acc.verdict, acc.icml) == ("inconclusive", "inconclusive")
    assert [code for code, _ in _reasons(acc)] == ["A025"]
    assert acc.value == pytest.approx(90.1)  # the value is known; only the interval is missing


def test_a_non_finite_reference_is_inconclusive(honest: Path) -> None:
    # A manifest cannot carry one: its numbers are JSON's (S004 where it is written) ...
    def poison(data: dict[str, Any]) -> None:
        data["tasks"][0]["reference"]["observations"][2]["value"] = float("inf")

    _edit_manifest(honest, poison)
    with pytest.raises(ArtifactError) as info:
        audit(honest)
    assert [(f.code, f.path) for f in info.value.findings] == [
        ("S004", "/tasks/0/reference/observations/2/value")
    ]
    # ... but the Python API can be given one: the interval is undefined, the verdict
    # inconclusive (A027), whatever the value.
    task = Task.model_validate(
        {"id": "acc", "dataset": "d", "metric": "m", "published": {"value": 90.1}}
        | {"direction": "higher", "kind": "full"}
    )
    interval = compatibility_interval([90.0, math.inf, 90.2])
    assert (interval.defined, interval.non_finite) == (False, True)
    judgement = judge_published(TaskFacts.of(task), interval, 90.1, "/tasks/0")
    assert (judgement.verdict, [(r.code, r.path) for r in judgement.reasons]) == (
        "inconclusive",
        [("A027", "/tasks/0/reference")],
    )


def test_a_single_reference_gives_the_floor_only_interval(honest: Path) -> None:
    def single(data: dict[str, Any]) -> None:
        observations = data["tasks"][0]["reference"]["observations"]
        data["tasks"][0]["reference"]["observations"] = observations[1:2]  # 90.1

    _edit_manifest(honest, single)
    result = audit(honest)
    acc = _attempt(result, "acc")
    # The interval is 90.1 +- 1% (0.901): the mean of the seeds, 90.1, lies inside.
    assert acc.verdict == "compatible"
    assert [code for code, _ in _reasons(acc)] == ["A026"]
    interval = next(t for t in result.tasks if t.id == "acc").interval
    assert (interval.low, interval.high) == pytest.approx((90.1 - 0.901, 90.1 + 0.901))


def test_curation_of_a_task_without_published_value(honest: Path) -> None:
    _edit_manifest(honest, lambda d: d["tasks"][1].update(published={"unit": "%"}))
    result = audit(honest, curation=True)
    f1 = _attempt(result, "f1", "published")
    assert (f1.verdict, f1.value) == ("inconclusive", None)
    assert _reasons(f1) == [("A032", "/tasks/1/published")]
    assert _attempt(result, "acc", "published").verdict == "compatible"
    assert not result.passed


def test_a_value_that_is_not_a_number_is_incompatible(nan_toy: Path) -> None:
    result = audit(nan_toy)
    f1 = _attempt(result, "f1")
    # Seed 1 wrote NaN honestly: the mean over the seeds is NaN, inside no interval.
    assert f1.verdict == "incompatible"
    assert [code for code, _ in _reasons(f1)] == ["A028"]
    assert math.isnan(f1.value)
    assert f1.values[1] is not None
    assert math.isnan(f1.values[1])
    assert all(run.valid for run in result.attempts[0].runs)  # honest evidence, not tampering
    assert _attempt(result, "acc").verdict == "compatible"


def test_a_seed_run_twice_counts_once(honest: Path) -> None:
    before = {p.name for p in (honest / "runs").iterdir()}
    from reprobridge_sdk.run import run

    (again,) = run(honest, ["scored"], env_mode="current", seeds=[0]).results
    assert again.run_dir.name not in before
    # The template's runs have no ledger (see conftest.py); the new run started one that
    # names it alone. Removed, so that only the seeds are judged here.
    for name in ("ledger.jsonl", ".ledger.lock"):
        (honest / "runs" / name).unlink()
    result = audit(honest)
    acc = _attempt(result, "acc")
    assert acc.verdict == "compatible"
    assert acc.seeds == [0, 1, 2]
    duplicates = [r for r in acc.reasons if r.code == "A033"]
    assert len(duplicates) == 1
    assert duplicates[0].path == "/tasks/0"


def test_a_record_without_code_digest_is_a_warning(honest: Path) -> None:
    edit_record(honest / "runs" / "scored-s2", lambda d: d.update(code_tree_digest=None))
    result = audit(honest)
    (run,) = [r for r in result.attempts[0].runs if r.run.endswith("scored-s2")]
    assert [(f.code, f.severity) for f in run.findings] == [("A013", "warning")]
    assert run.valid  # a warning: the values still count
    assert _attempt(result, "acc").verdict == "compatible"


# ---------------------------------------------------------------- a run still in progress

_WAIT = "import os, time\nwhile not os.path.exists('release'):\n    time.sleep(0.05)\n"


@pytest.fixture
def waiting_run(honest: Path) -> Iterator[Path]:
    """A real runner process, still running a launcher, while the test audits."""

    def add_launcher(data: dict[str, Any]) -> None:
        statistic = {"aggregate": "mean", "seeds": 1}  # one run: the launcher has no seeds
        data["tasks"].append({**data["tasks"][0], "id": "awaited", "statistic": statistic})
        data["launchers"].append(
            {
                "id": "waiting",
                "argv": ["python", "-c", _WAIT],
                "scope": "scored",
                "measurements": [
                    {"task": "awaited", "extract": {"kind": "regex", "pattern": r"acc ([0-9.]+)"}}
                ],
            }
        )

    _edit_manifest(honest, add_launcher)
    before = {p.name for p in (honest / "runs").iterdir()}
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            str(honest),
            "waiting",
            "--env",
            "current",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # a hang guard: the runner validates, then starts
        record: Path | None = None
        while record is None and time.monotonic() < deadline and runner.poll() is None:
            fresh = [p for p in (honest / "runs").iterdir() if p.name not in before]
            found = [p / RECORD_NAME for p in fresh if (p / RECORD_NAME).exists()]
            record = found[0] if found else None
            time.sleep(0.05)
        assert record is not None, "the runner wrote no record"
        assert json.loads(record.read_text())["status"] == "running"
        yield record.parent
    finally:
        (honest / "release").write_text("")
        runner.wait(timeout=120)


def test_a_run_in_progress_is_not_executed_yet(honest: Path, waiting_run: Path) -> None:
    result = audit(honest)
    (run,) = [r for r in result.attempts[0].runs if r.run.endswith(waiting_run.name)]
    assert [f.code for f in run.findings] == ["A023"]
    awaited = _attempt(result, "awaited")
    assert awaited.verdict == "not-executed"
    assert [code for code, _ in _reasons(awaited)] == ["A023"]


def _audit_cli(root: Path) -> tuple[int, dict[str, Any]]:
    """``reprobridge audit ROOT --format json`` as a real process: exit code and report."""
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "audit", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def _references(values: list[float]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        observations = data["tasks"][0]["reference"]["observations"]
        data["tasks"][0]["reference"]["observations"] = [
            {**o, "value": v} for o, v in zip(observations, values, strict=False)
        ]

    return change


def test_huge_references_give_their_interval_through_the_cli(honest: Path) -> None:
    """Hostile but valid JSON numbers whose squared deviations overflow a double: the CLI
    reports the interval they define (no crash), and the honest value ~90 lies inside."""
    _edit_manifest(honest, _references([0.0, 1.8961503816218355e154]))
    code, report = _audit_cli(honest)
    acc = next(t for t in report["tasks"] if t["id"] == "acc")
    interval = acc["interval"]
    assert (interval["defined"], interval["n"]) == (True, 2)
    assert interval["mean"] == pytest.approx(9.480751908109177e153, rel=1e-15)
    assert interval["sd"] == pytest.approx(1.3407807929942597e154, rel=1e-15)
    assert interval["low"] < 90.0 < interval["high"]
    attempt = next(a for a in acc["attempts"] if a["attempt"] == "runs")
    assert attempt["verdict"] == "compatible"
    assert code in (0, 1)


def test_an_interval_beyond_the_float_range_is_a063_through_the_cli(honest: Path) -> None:
    """References whose interval cannot be held in binary64: inconclusive with A063 at the
    task's references, exit 1, never a traceback."""
    _edit_manifest(honest, _references([1.79e308, 1.79e308]))
    code, report = _audit_cli(honest)
    acc = next(t for t in report["tasks"] if t["id"] == "acc")
    assert (acc["interval"]["defined"], acc["interval"]["n"]) == (False, 2)
    attempt = next(a for a in acc["attempts"] if a["attempt"] == "runs")
    assert attempt["verdict"] == "inconclusive"
    assert [(r["code"], r["path"]) for r in attempt["reasons"]] == [("A063", "/tasks/0/reference")]
    assert code == 1


def test_huge_values_in_every_seed_are_judged_through_the_cli(tmp_path: Path) -> None:
    """The code prints an F1 of 1.7e308 - seed * 1e306 for every seed, honestly: the mean over
    the seeds (whose sum overflows a double) is 1.69e308, outside the interval: incompatible
    (A029) through the CLI, never an internal error."""
    root = make_artifact(tmp_path / "toy")
    train = root / "code" / "train.py"
    text = train.read_text()
    assert "round(acc - 1.0, 4)" in text
    train.write_text(text.replace("round(acc - 1.0, 4)", "(1.7e308 - seed * 1e306)"))
    _edit_manifest(root, lambda d: d["codebase"].update(tree_digest=tree_digest(root / "code")))
    run_honestly(root, "scored", [0, 1, 2])
    code, report = _audit_cli(root)
    f1 = next(t for t in report["tasks"] if t["id"] == "f1")
    attempt = next(a for a in f1["attempts"] if a["attempt"] == "runs")
    assert attempt["verdict"] == "incompatible"
    assert attempt["value"] == pytest.approx(1.69e308, rel=1e-15)
    assert [r["code"] for r in attempt["reasons"]] == ["A029"]
    assert code == 1
