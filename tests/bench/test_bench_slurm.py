"""``bench run --executor slurm``: the agents' runs are Slurm batch jobs (dask-jobqueue's
SLURMCluster) on a real one-node Slurm cluster, and judge as local runs do.

CI starts the cluster with ``.ci/start-slurm``. Elsewhere the test runs where ``sinfo``
answers and is skipped, with the reason, where no Slurm controller is reachable; under CI
(``CI`` set) a missing cluster is a failure instead.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from slurm_support import require_slurm
from toy_study import make_artifact

pytest.importorskip("dask_jobqueue", reason="the slurm extra is not installed")


require_slurm()

from reprobridge_sdk.bench.harness import BenchOptions, Budget, run_bench  # noqa: E402
from reprobridge_sdk.run.executors import ExecutorOptions  # noqa: E402
from reprobridge_sdk.run.sandbox import check_sandbox  # noqa: E402

#: An agent that leaves the Slurm job it ran in (passed to it with --pass-env) and no results.
_WHERE = "import os; open('slurm-job.txt', 'w').write(os.environ.get('SLURM_JOB_ID', ''))"


def test_bench_runs_are_slurm_batch_jobs(tmp_path: Path) -> None:
    make_artifact(tmp_path / "toy", tasks=("acc",), launchers=("scored",))
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'batch_version = "1.0"\n[[submission]]\nid = "toy"\npath = "toy"\n', encoding="utf-8"
    )
    where = shlex.join([sys.executable, "-c", _WHERE])
    options = BenchOptions(
        variants=("raw", "refined"),
        executor="slurm",
        executor_options=ExecutorOptions(shared_fs=True),
        jobs=2,
        sandbox=check_sandbox() is None,
        pass_env=("SLURM_JOB_ID",),
        budget=Budget(timeout=300),
    )
    report = run_bench(["oracle", where], suite, tmp_path / "out", options)
    assert report.executor == "slurm"
    outcomes = {(r.agent, r.variant): (r.outcome, r.icml) for r in report.runs}
    assert outcomes == {
        ("oracle", "raw"): ("finished", "inconclusive"),
        ("oracle", "refined"): ("finished", "verified"),
        (where, "raw"): ("finished", "inconclusive"),
        (where, "refined"): ("finished", "inconclusive"),
    }
    jobs = {
        (tmp_path / "out" / r.folder / "workspace" / "slurm-job.txt").read_text("utf-8")
        for r in report.runs
        if r.agent == where
    }
    assert all(job.isdigit() for job in jobs), jobs  # each ran inside a Slurm job
    # the batch jobs ended with the bench (at most completing; other tests' jobs may run)
    queue = subprocess.run(
        ["squeue", "-h", "-t", "PD,R", "-o", "%i"], capture_output=True, text=True, check=True
    )
    assert not jobs & set(queue.stdout.split())
