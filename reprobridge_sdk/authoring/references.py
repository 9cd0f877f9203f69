"""Reference observations from recorded runs (``reprobridge references add``).

Rules:

* Each argument names a run directory (holding ``record.json``), a run id under the
  artifact's ``runs/``, or a directory of run directories (every run in it).
* Every run is verified as the auditor verifies evidence
  (:func:`reprobridge_sdk.audit.verify.check_run`): a run with invalid evidence, or that did
  not succeed, is C012; a run whose code tree digest is not the manifest's ``tree_digest``
  (made on other code) is C013. Nothing is written unless every run passes.
* Each value a run measured for a task (``task`` keeps one task) becomes one observation,
  with provenance: ``source`` (default ``reference run``), the run's date and hardware, the
  run id, the SHA-256 of its ``record.json``, its code tree digest and its lock digest
  (format 1.1 fields). A task whose statistic is over several seeds (``statistic.seeds`` > 1)
  is C015: one run is not one observation of such a statistic.
* Without ``replace`` the observations are added (a run already cited by the task is
  skipped); with ``replace`` the observations of each task that receives values are replaced.
  No value for any task is C014.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.api import ArtifactDir, load
from reprobridge_sdk.audit.verify import artifact_facts, check_run
from reprobridge_sdk.authoring.codebase import require_version
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.model.evidence import RECORD_NAME, EvidenceRecord
from reprobridge_sdk.model.task import Observation, Provenance
from reprobridge_sdk.run.evidence import record_environment

__all__ = ["ReferenceResult", "ReferencesError", "add_references", "find_runs"]


class ReferencesError(ArtifactError):
    """The runs cannot become reference observations; ``findings`` (C codes) say why."""


@dataclass
class ReferenceResult:
    """What :func:`add_references` wrote: observations added per task, runs skipped."""

    added: dict[str, list[Observation]] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def find_runs(root: Path, names: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The run directories ``names`` stand for (see the module docstring), in order."""
    found: list[Path] = []
    for name in names:
        path = Path(name)
        if not path.exists() and (root / "runs" / path).is_dir():
            path = root / "runs" / path
        if (path / RECORD_NAME).is_file():
            found.append(path)
        elif path.is_dir():
            inner = sorted(p for p in path.iterdir() if (p / RECORD_NAME).is_file())
            if not inner:
                raise _error("C012", f"{name}: no run directory (no {RECORD_NAME})")
            found.extend(inner)
        else:
            raise _error("C012", f"{name}: no such run")
    return found


def _error(code: str, message: str, *, path: str = "") -> ReferencesError:
    return ReferencesError(message, [finding(code, message, path=path)])


def _hardware(directory: Path, record: EvidenceRecord) -> str | None:
    env = record_environment(directory, record)  # embedded, or named by digest (1.1)
    if env is None:
        return None
    parts = [env.cpu or env.machine]
    if env.gpus:
        parts.append(", ".join(gpu.name for gpu in env.gpus))
    return "; ".join(p for p in parts if p) or None


def add_references(
    artifact_dir: str | os.PathLike[str] | ArtifactDir,
    runs: Sequence[str | os.PathLike[str]],
    *,
    task: str | None = None,
    replace: bool = False,
    source: str = "reference run",
) -> ReferenceResult:
    """Turn recorded runs into reference observations with provenance; save the manifest."""
    art = artifact_dir if isinstance(artifact_dir, ArtifactDir) else load(artifact_dir)
    manifest = art.manifest
    tasks = {t.id: t for t in manifest.tasks}
    if task is not None and task not in tasks:
        raise _error("C014", f"there is no task {task!r}", path="/tasks")
    directories = find_runs(art.root, runs)
    facts = artifact_facts(art)
    problems: list[Finding] = []
    values: dict[str, list[Observation]] = {}
    for directory in directories:
        rel = directory.name
        evidence = check_run(facts, directory, rel)
        record = evidence.record
        declared = manifest.codebase.tree_digest
        if record is not None and declared is not None and record.code_tree_digest != declared:
            problems.append(
                finding(
                    "C013",
                    f"run {rel} used code {record.code_tree_digest}, not the declared tree",
                    file=str(directory / RECORD_NAME),
                    hint="rerun the references on the code as recorded",
                )
            )
            continue
        if record is None or not evidence.valid or not evidence.succeeded:
            detail = "; ".join(f"{f.code} {f.message}" for f in evidence.findings[:3])
            state = record.status if record is not None else "unreadable"
            problems.append(
                finding(
                    "C012",
                    f"run {rel} cannot be a reference ({state}{': ' + detail if detail else ''})",
                    file=str(directory / RECORD_NAME),
                )
            )
            continue
        digest = file_sha256(directory / RECORD_NAME)
        for measured in record.measurements:
            if measured.value is None or (task is not None and measured.task != task):
                continue
            target = tasks.get(measured.task)
            if target is None:
                continue
            if target.statistic.seeds > 1:
                problems.append(
                    finding(
                        "C015",
                        f"task {measured.task!r} reports a statistic over "
                        f"{target.statistic.seeds} seeds: one run is not one observation",
                        path=f"/tasks/{manifest.tasks.index(target)}/statistic",
                    )
                )
                continue
            value = evidence.values.get(measured.task, measured.value)
            if value is None:
                continue
            provenance = Provenance(
                source=source,
                date=record.started_at[:10],
                hardware=_hardware(directory, record),
                run=record.run_id,
                record_sha256=digest,
                code_tree_digest=record.code_tree_digest,
                lock_digest=record.lock_digest,
            )
            values.setdefault(measured.task, []).append(
                Observation(value=value, provenance=provenance)
            )
    if problems:
        raise ReferencesError(f"{len(problems)} run(s) cannot be references", problems)
    if not values:
        raise _error(
            "C014", "the runs measured no value for any task" + (f" {task!r}" if task else "")
        )
    result = ReferenceResult()
    for task_id, observations in values.items():
        target = tasks[task_id]
        reference = target.reference
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
        target.reference = reference
    require_version(art, "1.1")  # the provenance digests are format 1.1 fields
    art.save()
    return result
