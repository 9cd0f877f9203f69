"""``references import-mlflow``: runs logged with the real mlflow-skinny into a local mlruns store.

The runs are written by a separate Python process with MLflow's fluent API (as a training
script would), then imported by the ``reprobridge`` command line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.api import load

pytestmark = pytest.mark.slow  # MLflow's import and client take tens of seconds here

REPO = Path(__file__).resolve().parents[2]

LOGGER = """
import math, sys
import mlflow
mlflow.set_tracking_uri(sys.argv[1])
mlflow.set_experiment("digits")
for seed, acc in [(0, 95.1), (1, 95.9), (2, 96.4)]:
    with mlflow.start_run(run_name=f"seed-{seed}"):
        mlflow.set_tag("hardware", "8 vCPU")
        mlflow.log_metric("knn_acc", acc - 10, step=0)
        mlflow.log_metric("knn_acc", acc, step=1)
with mlflow.start_run(run_name="diverged"):
    mlflow.log_metric("knn_acc", math.nan)
run = mlflow.start_run(run_name="crashed")
mlflow.log_metric("knn_acc", 99.0)
mlflow.end_run(status="FAILED")
"""


@pytest.fixture(scope="module")
def mlruns(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("mlflow") / "mlruns"
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true"}
    subprocess.run(
        [sys.executable, "-c", LOGGER, store.as_uri()], check=True, env=env, capture_output=True
    )
    return store


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "art"
    shutil.copytree(
        REPO / "examples" / "digits-logreg", target, ignore=shutil.ignore_patterns("runs")
    )
    manifest = target / "rra.yaml"
    text = manifest.read_text()
    start = text.index("  - id: knn-accuracy")
    head, tail = text[:start], text[start:]
    tail = tail.replace(
        "statistic: {aggregate: mean, seeds: 5}", "statistic: {aggregate: mean, seeds: 1}", 1
    )
    manifest.write_text(head + tail)
    return target


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REPROBRIDGE_", "MLFLOW_"))}
    return subprocess.run(
        [sys.executable, "-m", "reprobridge", "references", "import-mlflow", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def test_finished_runs_become_observations_with_provenance(mlruns: Path, artifact: Path) -> None:
    before = len(load(artifact).manifest.tasks[2].reference.observations)
    args = (
        str(mlruns),
        "-C",
        str(artifact),
        "--experiment",
        "digits",
        "--metric",
        "knn_acc=knn-accuracy",
    )
    proc = _cli(*args)
    assert proc.returncode == 0, proc.stderr
    task = next(t for t in load(artifact).manifest.tasks if t.id == "knn-accuracy")
    imported = [
        o for o in task.reference.observations if (o.provenance.run or "").startswith("mlflow:")
    ]
    assert len(task.reference.observations) == before + 3
    assert sorted(o.value for o in imported) == [95.1, 95.9, 96.4]  # latest step, finished only
    first = imported[0].provenance
    assert (first.source, first.hardware) == ("mlflow", "8 vCPU")
    assert first.date is not None and len(first.date) == 10
    assert first.note is not None and first.note.startswith("metric knn_acc of MLflow run seed-")
    # Importing again adds nothing: the runs are already cited.
    again = _cli(*args)
    assert again.returncode == 0
    task = next(t for t in load(artifact).manifest.tasks if t.id == "knn-accuracy")
    assert len(task.reference.observations) == before + 3


def test_mapping_and_store_errors_have_codes(mlruns: Path, artifact: Path, tmp_path: Path) -> None:
    base = ("-C", str(artifact), "--experiment", "digits")
    proc = _cli(str(mlruns), *base, "--metric", "knn_acc=no-such-task")
    assert (proc.returncode, "C014" in proc.stdout) == (1, True)
    proc = _cli(str(mlruns), *base, "--metric", "knn_acc=logreg-accuracy")  # five seeds
    assert (proc.returncode, "C015" in proc.stdout) == (1, True)
    proc = _cli(
        str(mlruns),
        "-C",
        str(artifact),
        "--experiment",
        "digitz",
        "--metric",
        "knn_acc=knn-accuracy",
    )
    assert (proc.returncode, "E019" in proc.stdout) == (2, True)
    proc = _cli(str(tmp_path / "nowhere"), *base, "--metric", "knn_acc=knn-accuracy")
    assert (proc.returncode, "E019" in proc.stdout) == (2, True)
    proc = _cli(str(mlruns), *base, "--metric", "knn_acc")
    assert proc.returncode == 2  # not METRIC=TASK
