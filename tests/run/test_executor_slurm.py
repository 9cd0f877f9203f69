"""The Slurm route (dask-jobqueue's SLURMCluster) on a real one-node Slurm cluster.

CI starts the cluster with ``.ci/start-slurm`` (Debian's slurm-wlm and munge on this host).
Elsewhere the tests run where ``sinfo`` answers, and are skipped, with the reason, where no
Slurm controller is reachable; under CI (``CI`` set) a missing cluster is a failure instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from catalog_check import check_as_catalogued
from slurm_support import require_slurm

pytest.importorskip("dask_jobqueue", reason="the slurm extra is not installed")


require_slurm()

from reprobridge_sdk.run import run  # noqa: E402
from reprobridge_sdk.run.executors import ExecutorOptions  # noqa: E402
from reprobridge_sdk.run.executors._dask import slurm_capacities  # noqa: E402

CLI = [sys.executable, "-m", "reprobridge_sdk"]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


def test_slurm_runs_give_the_records_of_a_local_run(toy: Path, tmp_path: Path) -> None:
    local = run(toy, ["ok"], env_mode="current", runs_dir=tmp_path / "local")
    for shared in (True, False):
        runs = tmp_path / f"slurm-{shared}"
        summary = run(
            toy,
            ["ok"],
            env_mode="current",
            runs_dir=runs,
            executor="slurm",
            jobs=1,
            executor_options=ExecutorOptions(shared_fs=shared),
        )
        assert summary.exit_code == 0
        assert {r.record.executor for r in summary.results} == {"slurm"}
        assert sorted((r.record.seed, r.record.measurements) for r in summary.results) == sorted(
            (r.record.seed, r.record.measurements) for r in local.results
        )
        on_disk = sorted(p.name for p in runs.iterdir() if p.is_dir())
        assert on_disk == sorted(r.run_id for r in summary.results)
        # as an editor reads them (SchemaStore's mapping, check-jsonschema), under runs/
        catalogued = tmp_path / f"catalogued-{shared}" / "runs"
        for result in summary.results:
            (catalogued / result.run_id).mkdir(parents=True)
            shutil.copyfile(
                result.run_dir / "record.json", catalogued / result.run_id / "record.json"
            )
        records = sorted(catalogued.glob("*/record.json"))
        assert len(records) == len(summary.results)
        assert check_as_catalogued(records) == {str(p): [] for p in records}


def test_the_cluster_capacity_is_read_from_sinfo() -> None:
    capacities = slurm_capacities()
    assert capacities
    assert all(c.cpus >= 1 and (c.memory or 0) > 0 for c in capacities)


def test_a_run_bigger_than_every_node_is_refused_before_submission(toy: Path) -> None:
    manifest = toy / "rra.yaml"
    text = manifest.read_text("utf-8").replace('rra_version: "1.0"', 'rra_version: "1.1"')
    text = text.replace(
        "    workdir: code\n    params: {tag: alpha, sleep: 0}",
        "    workdir: code\n    params: {tag: alpha, sleep: 0}\n    resources: {gpus: 8}",
        1,
    )
    manifest.write_text(text, "utf-8")
    done = subprocess.run(
        [*CLI, "run", str(toy), "ok", "--env", "current", "--no-validate", "--executor", "slurm"],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard: importing the dask stack takes tens of seconds under load
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "N022 error" in done.stdout
    queue = subprocess.run(["squeue", "-h"], capture_output=True, text=True, check=True)
    assert "dask-wor" not in queue.stdout


def test_the_example_reaches_the_same_verdicts_on_every_executor(tmp_path: Path) -> None:
    verdicts = []
    for executor in ("local", "dask-local", "slurm"):
        artifact = tmp_path / executor
        shutil.copytree(EXAMPLE, artifact, ignore=shutil.ignore_patterns("runs"))
        ran = subprocess.run(
            [*CLI, "run", str(artifact), "--env", "current", "-j", "2", "--executor", executor],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        audited = subprocess.run(
            [*CLI, "audit", str(artifact), "--format", "json"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert audited.returncode == 0, audited.stderr
        report = json.loads(audited.stdout)
        verdicts.append(
            sorted(
                (t["id"], a["verdict"], a["value"]) for t in report["tasks"] for a in t["attempts"]
            )
        )
    assert verdicts[0] == verdicts[1] == verdicts[2]
    assert {v for _, v, _ in verdicts[0]} == {"compatible"}
