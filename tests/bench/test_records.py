"""Evidence records in place of a results file: an agent that ran the artifact's launchers
through ``reprobridge run`` in its workspace is judged from its records, which the judge
believes no more than a results file (real runs of the toy study; one sandboxed bench)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sandbox_support import needs_sandbox
from toy_study import make_artifact

from reprobridge_sdk.api import load
from reprobridge_sdk.bench.harness import BenchOptions, Budget, run_bench
from reprobridge_sdk.bench.job import Job, _rerun
from reprobridge_sdk.bench.judge import judge_results
from reprobridge_sdk.bench.records import RECORDS_AGENT, results_from_records
from reprobridge_sdk.bench.variants import WORKSPACE_DIR, generate_variants

_RUN = (sys.executable, "-m", "reprobridge_sdk", "run")


def _reprobridge_run(workspace: Path, launcher: str) -> None:
    subprocess.run(
        [*_RUN, str(workspace), launcher, "--env", "current", "--no-validate"],
        capture_output=True,
        check=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The toy artifact and a refined workspace where its scored launcher ran (seeds 0-2)."""
    base = tmp_path_factory.mktemp("records")
    toy = make_artifact(base / "toy")
    generate_variants(toy, base / "out", ["refined"])
    workspace = base / "out" / "refined" / WORKSPACE_DIR
    _reprobridge_run(workspace, "scored")
    return toy, workspace


@pytest.fixture
def setup(recorded: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    toy, workspace = recorded
    copy = tmp_path / "ws"
    shutil.copytree(workspace, copy, symlinks=True)
    return toy, copy


def _judged(toy: Path, workspace: Path, task: str, tmp_path: Path) -> object:
    found = results_from_records(load(toy).manifest, workspace, task)
    assert found is not None
    path = tmp_path / "from-records.json"
    path.write_text(found.model_dump_json(), encoding="utf-8")
    judgement = judge_results(toy, path, workspace=workspace)
    return next(c for c in judgement.claims if c.task == task)


def test_records_are_read_as_the_results_of_a_task(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    toy, workspace = setup
    found = results_from_records(load(toy).manifest, workspace, "acc")
    assert found is not None and found.agent == RECORDS_AGENT
    (entry,) = found.results
    assert (entry.task, entry.launcher, entry.value) == ("acc", "scored", pytest.approx(90.1))
    assert sorted(run.seed for run in entry.runs) == [0, 1, 2]
    assert all(run.log and run.log.startswith("runs/") for run in entry.runs)
    acc = _judged(toy, workspace, "acc", tmp_path)
    assert (acc.support, acc.verdict, acc.icml) == ("log-backed", "compatible", "verified")
    assert acc.landmarks.progress == 1.0
    f1 = _judged(toy, workspace, "f1", tmp_path)  # read from the records' output files
    assert (f1.support, f1.icml) == ("log-backed", "verified")


def test_a_record_edited_to_state_another_value_is_contradicted(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    toy, workspace = setup
    for path in (workspace / "runs").glob("*/record.json"):
        data = json.loads(path.read_text("utf-8"))
        for measured in data["measurements"]:
            measured["value"] = 99.0
        path.write_text(json.dumps(data), encoding="utf-8")
    claim = _judged(toy, workspace, "acc", tmp_path)
    assert (claim.support, claim.verdict) == ("contradicted", "unsupported")
    assert [f.code for f in claim.findings] == ["A077"]


def test_links_failed_and_unreadable_records_give_nothing(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    toy, workspace = setup
    manifest = load(toy).manifest
    runs = workspace / "runs"
    elsewhere = tmp_path / "elsewhere"
    runs.rename(elsewhere)
    runs.mkdir()
    for child in elsewhere.iterdir():  # each run folder a link out: not read
        (runs / child.name).symlink_to(child)
    (runs / "junk").mkdir()
    (runs / "junk" / "record.json").write_text("{not json")
    assert results_from_records(manifest, workspace, "acc") is None
    shutil.rmtree(runs)
    runs.symlink_to(elsewhere)  # runs/ itself a link out
    assert results_from_records(manifest, workspace, "acc") is None
    runs.unlink()
    shutil.copytree(elsewhere, runs)
    for path in runs.glob("*/record.json"):
        data = json.loads(path.read_text("utf-8"))
        data["status"] = "failed"
        path.write_text(json.dumps(data), encoding="utf-8")
    assert results_from_records(manifest, workspace, "acc") is None


#: An agent that runs the scored launcher through reprobridge run and leaves no results file.
RECORDER = """
import subprocess, sys
subprocess.run([sys.executable, "-m", "reprobridge_sdk", "run", sys.argv[1], "scored",
                "--env", "current", "--no-validate"], check=False)
"""


@needs_sandbox
def test_the_harness_judges_an_agent_that_left_records(tmp_path: Path) -> None:
    make_artifact(tmp_path / "suite" / "toy", tasks=("acc",), launchers=("scored",))
    suite = tmp_path / "suite" / "suite.toml"
    suite.write_text(
        'batch_version = "1.0"\n[[submission]]\nid = "toy"\npath = "toy"\n', encoding="utf-8"
    )
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER, encoding="utf-8")
    agents = [f"{sys.executable} {script} {{workspace}}", "null"]
    options = BenchOptions(
        variants=("refined",), budget=Budget(timeout=300), visible=(str(script),)
    )
    report = run_bench(agents, suite, tmp_path / "out", options)
    recorder, null = report.runs
    assert (recorder.outcome, recorder.support, recorder.icml) == (
        "finished",
        "log-backed",
        "verified",
    )
    assert recorder.extracted == pytest.approx(90.1) and recorder.findings == []
    kept = tmp_path / "out" / recorder.folder / "results-from-records.json"
    assert json.loads(kept.read_text("utf-8"))["agent"] == RECORDS_AGENT
    assert [f.code for f in null.findings] == ["A102"]  # neither a results file nor records


@needs_sandbox
def test_rerun_finds_records_that_do_not_hold_up(tmp_path: Path) -> None:
    """--rerun re-executes the agent's recorded runs as the auditor does: honest records hold
    up; a record edited to state another value is a mismatch (A058)."""
    root = make_artifact(tmp_path / "toy", tasks=("acc",), launchers=("scored",))
    data = yaml.safe_load((root / "rra.yaml").read_text("utf-8"))
    for launcher in data["launchers"]:  # the run writes only into its run folder
        launcher["argv"][-1] = "{run_dir}/metrics.json"
        launcher["outputs"][0]["path"] = "{run_dir}/metrics.json"
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    generate_variants(root, tmp_path / "out", ["refined"])
    workspace = tmp_path / "out" / "refined" / WORKSPACE_DIR
    _reprobridge_run(workspace, "scored")
    job = Job(
        out=str(tmp_path / "out"),
        folder="run",
        agent="agent",
        argv=(),
        submission="toy",
        artifact_id="toy-study",
        artifact_root=str(root),
        source=str(workspace),
        task="acc",
        variant="refined",
        repeat=0,
        prompt="",
        budget=Budget(),
        sandbox=True,
        network="none",
        allow_hosts=(),
        visible=(),
        pass_env=(),
        level=0.95,
        floor=0.01,
        rerun=1,
    )
    honest = _rerun(job, workspace)
    assert honest is not None and (honest.reran, honest.mismatches) == (1, 0)
    for path in (workspace / "runs").glob("*/record.json"):
        record = json.loads(path.read_text("utf-8"))
        for measured in record["measurements"]:
            measured["value"] = 99.0
        path.write_text(json.dumps(record), encoding="utf-8")
    edited = _rerun(job, workspace)
    assert edited is not None and (edited.reran, edited.mismatches) == (1, 1)
