"""``reprobridge references``: turn recorded runs into reference observations."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

from pathlib import Path

import click

from reprobridge_sdk.cli import SuggestingGroup, artifact_alias, pairs
from reprobridge_sdk.cli._output import echo_finding, failing, format_option, note, write_json

__all__ = ["references"]


@click.group("references", cls=SuggestingGroup)
def references() -> None:
    """Reference observations of the tasks, from evidence.

    \b
    Exit codes: 0 written, 1 a run cannot be a reference, 2 usage or I/O error.
    """


@references.command("add")
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "-C",
    "--artifact",
    type=click.Path(path_type=Path, file_okay=False),
    default=".",
    show_default=True,
    help="The artifact directory.",
)
@click.option("--task", help="Only this task's values.")
@click.option("--replace", is_flag=True, help="Replace the tasks' observations, not add to them.")
@click.option("--source", default="reference run", show_default=True, help="Who ran them.")
@format_option("text", "json")
def add(  # noqa: PLR0917 - click passes options positionally
    runs: tuple[str, ...],
    artifact: Path,
    task: str | None,
    replace: bool,
    source: str,
    fmt: str,
) -> None:
    """Add the values measured by RUNS (run directories, run ids or folders of runs).

    Each run is verified as the auditor would; provenance records the run id, the digest of
    its record, and its code and lock digests. For a task whose statistic is over several
    seeds, each folder is one repetition (one run of every declared seed) and gives one
    observation, valued as the auditor values that folder as an attempt; its provenance
    lists every run. Runs of one launcher and seed that are identical (values and bytes)
    propose 'deterministic: true' for the launcher (C027, information).
    """
    from reprobridge_sdk.authoring.references import ReferencesError, add_references

    with failing(ReferencesError):
        result = add_references(artifact, runs, task=task, replace=replace, source=source)
    if fmt == "json":
        data = {
            "added": {
                task_id: [o.model_dump(mode="json", exclude_none=True) for o in observations]
                for task_id, observations in result.added.items()
            },
            "replaced": result.replaced,
            "skipped": result.skipped,
            "warnings": [f.to_dict() for f in result.warnings],
            "suggestions": [f.to_dict() for f in result.suggestions],
        }
        write_json(data)
    for task_id, observations in result.added.items():
        verb = "replaced by" if task_id in result.replaced else "added"
        note(f"{task_id}: {verb} {len(observations)} observation(s)")
    if result.skipped:
        note(f"skipped (already cited): {', '.join(result.skipped)}")
    for item in [*result.warnings, *result.suggestions]:
        echo_finding(item)


@references.command("import-mlflow")
@click.argument("store", type=click.Path(path_type=Path))
@click.argument(
    "artifact",
    metavar="[PATH]",
    required=False,
    default=".",
    type=click.Path(path_type=Path, file_okay=False),
)
@click.option("--experiment", required=True, help="The MLflow experiment (name or id).")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    required=True,
    metavar="METRIC=TASK",
    help="An MLflow metric and the task it measures (repeatable).",
)
@click.option("--run", "runs", multiple=True, help="Only these MLflow run ids (repeatable).")
@click.option("--replace", is_flag=True, help="Replace the tasks' observations, not add to them.")
@click.option("--source", default="mlflow", show_default=True, help="Who ran them.")
@artifact_alias("artifact")
def import_mlflow_command(  # noqa: PLR0917 - click passes options positionally
    store: Path,
    artifact: Path,
    experiment: str,
    metrics: tuple[str, ...],
    runs: tuple[str, ...],
    replace: bool,
    source: str,
) -> None:
    """Add the metrics of finished MLflow runs in STORE (a local mlruns directory).

    Needs the mlflow extra. Each run's latest value of METRIC becomes one observation of TASK,
    with the run's date, its hardware tag and its MLflow id as provenance.
    """
    from reprobridge_sdk.authoring.mlflow_import import import_mlflow
    from reprobridge_sdk.authoring.references import ReferencesError

    mapping = pairs(metrics, "METRIC=TASK", "--metric")
    with failing(ReferencesError):
        result = import_mlflow(
            artifact,
            store,
            experiment=experiment,
            metrics=mapping,
            runs=runs,
            replace=replace,
            source=source,
        )
    for task_id, observations in result.added.items():
        verb = "replaced by" if task_id in result.replaced else "added"
        note(f"{task_id}: {verb} {len(observations)} observation(s)")
    if result.skipped:
        note(f"skipped: {', '.join(result.skipped)}")
