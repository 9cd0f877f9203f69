"""Reference observations from MLflow runs (``reprobridge references import-mlflow``).

Reads a local MLflow store through MLflow's client (the ``mlflow`` extra): each FINISHED run
that logged a mapped metric gives its task one observation, with provenance, as
``references add`` does. Rules and codes (C014, C015, E019): ``spec/runner.md#imports``.
Nothing is written unless every mapping is valid.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reprobridge_sdk.api import ArtifactDir, load
from reprobridge_sdk.authoring.references import ReferenceResult, ReferencesError
from reprobridge_sdk.errors import UsageError, require_extra
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model.task import Observation, Provenance, Task

__all__ = ["import_mlflow"]


@contextlib.contextmanager
def _file_store_allowed() -> Iterator[None]:
    """MLflow 3 refuses a file store unless ``MLFLOW_ALLOW_FILE_STORE`` is set; reading an
    existing ``mlruns`` directory is exactly what the importer is for."""
    previous = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)
        else:
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = previous


def _unreadable(message: str, hint: str) -> UsageError:
    return UsageError(message, [finding("E019", message, hint=hint)])


def _mlflow_runs(store: Path, experiment: str) -> tuple[str, list[Any]]:
    require_extra("mlflow", "mlflow", feature="references import-mlflow")
    from mlflow.exceptions import MlflowException  # noqa: PLC0415 - optional extra
    from mlflow.tracking import MlflowClient  # noqa: PLC0415 - optional extra

    if not store.is_dir():
        msg = f"{store} is not an MLflow store directory"
        raise _unreadable(msg, "name the mlruns directory the runs were logged to")
    with _file_store_allowed():
        try:
            client = MlflowClient(tracking_uri=store.resolve().as_uri())
            found = client.get_experiment_by_name(experiment)
            if found is None and experiment.isdigit():
                found = client.get_experiment(experiment)
        except MlflowException as exc:
            raise _unreadable(f"cannot read the MLflow store {store}: {exc}", "") from None
        if found is None:
            msg = f"the MLflow store {store} has no experiment {experiment!r}"
            raise _unreadable(msg, "name the experiment by its name or id")
        runs = client.search_runs([found.experiment_id], max_results=50_000)
    return str(found.experiment_id), list(runs)


def import_mlflow(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    store: str | os.PathLike[str],
    *,
    experiment: str,
    metrics: Mapping[str, str],
    runs: Sequence[str] = (),
    replace: bool = False,
    source: str = "mlflow",
) -> ReferenceResult:
    """Turn the MLflow runs' metrics into reference observations; save the manifest."""
    art = artifact_dir if isinstance(artifact_dir, ArtifactDir) else load(artifact_dir)
    manifest = art.manifest
    tasks = {t.id: t for t in manifest.tasks}
    problems = _mapping_problems(manifest.tasks, tasks, metrics)
    if problems:
        raise ReferencesError(f"{len(problems)} mapping(s) cannot be imported", problems)
    experiment_id, found = _mlflow_runs(Path(store), experiment)
    wanted = set(runs)
    result = ReferenceResult()
    values: dict[str, list[Observation]] = {}
    for run in found:
        info = run.info
        if wanted and info.run_id not in wanted:
            continue
        if info.status != "FINISHED":
            result.skipped.append(f"{info.run_id} ({info.status.lower()})")
            continue
        for task_id, observation in _observations(run, metrics, experiment_id, source, result):
            values.setdefault(task_id, []).append(observation)
    if not values:
        item = finding("C014", f"no finished run of {experiment!r} logged the mapped metrics")
        raise ReferencesError("nothing to import", [item])
    for task_id, observations in values.items():
        reference = tasks[task_id].reference
        if replace:
            reference.observations = list(observations)
            result.replaced.append(task_id)
            result.added[task_id] = list(observations)
        else:
            cited = {o.provenance.run for o in reference.observations if o.provenance.run}
            fresh = [o for o in observations if o.provenance.run not in cited]
            result.skipped.extend(o.provenance.run or "" for o in observations if o not in fresh)
            reference.observations = [*reference.observations, *fresh]
            result.added[task_id] = fresh
        tasks[task_id].reference = reference
    art.save()
    return result


def _mapping_problems(
    declared: Sequence[Task], tasks: Mapping[str, Task], metrics: Mapping[str, str]
) -> list[Finding]:
    """Each metric must map to a declared task over a single seed (C014, C015)."""
    problems: list[Finding] = []
    for metric, task_id in metrics.items():
        if task_id not in tasks:
            problems.append(
                finding("C014", f"metric {metric!r} maps to no task {task_id!r}", path="/tasks")
            )
        elif tasks[task_id].statistic.seeds > 1:
            problems.append(
                finding(
                    "C015",
                    f"task {task_id!r} reports a statistic over "
                    f"{tasks[task_id].statistic.seeds} seeds: one run is not one observation",
                    path=f"/tasks/{list(declared).index(tasks[task_id])}/statistic",
                )
            )
    return problems


def _observations(
    run: Any, metrics: Mapping[str, str], experiment_id: str, source: str, result: ReferenceResult
) -> list[tuple[str, Observation]]:
    """One observation per mapped metric the finished ``run`` logged as a finite number."""
    info = run.info
    started = datetime.fromtimestamp(info.start_time / 1000, tz=UTC)
    found: list[tuple[str, Observation]] = []
    for metric, task_id in metrics.items():
        value = run.data.metrics.get(metric)
        if value is None:
            continue
        if not math.isfinite(value):
            result.skipped.append(f"{info.run_id} ({metric} is {value})")
            continue
        provenance = Provenance(
            source=source,
            date=started.strftime("%Y-%m-%d"),
            hardware=run.data.tags.get("hardware"),
            run=f"mlflow:{experiment_id}/{info.run_id}",
            note=f"metric {metric} of MLflow run {info.run_name or info.run_id}",
        )
        found.append((task_id, Observation(value=value, provenance=provenance)))
    return found
