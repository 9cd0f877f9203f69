"""The manifest as the auditor holds it: the typed parts, and each task condensed to what is
judged (:class:`TaskFacts`, a projection of the typed task, defaults included).

At 10k tasks the typed tasks alone took about 90 MiB, so :meth:`ManifestFacts.validate` types
them one at a time, with the same models as :func:`reprobridge_sdk.api.load`,
condensing each before the next: a manifest is accepted or refused exactly as the typed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, create_model

from reprobridge_sdk.model import Artifact, Codebase, Environment, Guide, Launcher, Manifest
from reprobridge_sdk.model.task import Task

from .interval import published_midpoint

__all__ = ["ManifestFacts", "TaskFacts"]


@dataclass(frozen=True, slots=True)
class TaskFacts:
    """What the auditor reads of one task (see the module docstring)."""

    id: str
    title: str | None
    metric: str
    direction: str
    kind: str
    #: The number of seeds of the task's statistic (``statistic.seeds``).
    seeds: int
    #: The published value, a range counted as its midpoint; ``None`` without either.
    published: float | None
    #: The reference observations' values, in document order.
    observations: tuple[float, ...]
    #: The run ids the observations' provenance cites (``run``, each of ``runs``).
    cited: tuple[str, ...]
    #: The declared same-seed tolerance of a re-execution (format 1.1); ``None``: none.
    same_seed_tolerance: float | None = None
    #: The published unit (``published.unit``), e.g. ``%``; ``None`` when not stated.
    unit: str | None = None
    #: Per observation, the one run its provenance names (``run``); ``None`` for none or a
    #: repetition (``runs``). Empty when built without observations.
    runs: tuple[str | None, ...] = ()
    #: Per observation, the runs of the repetition its provenance lists (``runs``); empty
    #: for one run or none. Empty when built without observations.
    repetitions: tuple[tuple[str, ...], ...] = ()
    #: Why the artifact does not measure the task (``reference.not_measured``, format 1.1).
    not_measured: str | None = None

    @classmethod
    def of(cls, task: Task) -> TaskFacts:
        """The facts of a typed task."""
        cited: list[str] = []
        for observation in task.reference.observations:
            provenance = observation.provenance
            if provenance.run:
                cited.append(provenance.run)
            cited.extend(item.run for item in provenance.runs or ())
        return cls(
            id=task.id,
            title=task.title,
            metric=task.metric,
            direction=task.direction,
            kind=task.kind,
            seeds=task.statistic.seeds,
            published=published_midpoint(task.published.value, task.published.range),
            observations=tuple(o.value for o in task.reference.observations),
            cited=tuple(cited),
            same_seed_tolerance=task.same_seed_tolerance,
            unit=task.published.unit,
            runs=tuple(
                o.provenance.run if not o.provenance.runs else None
                for o in task.reference.observations
            ),
            repetitions=tuple(
                tuple(item.run for item in o.provenance.runs or ())
                for o in task.reference.observations
            ),
            not_measured=task.reference.not_measured,
        )


@dataclass(frozen=True, slots=True)
class ManifestFacts:
    """A manifest with every part typed except the tasks, which are :class:`TaskFacts`."""

    rra_version: str
    artifact: Artifact
    codebase: Codebase
    environment: Environment
    tasks: tuple[TaskFacts, ...]
    launchers: tuple[Launcher, ...]
    guide: Guide

    @classmethod
    def of(cls, manifest: Manifest) -> ManifestFacts:
        """The facts of a typed manifest."""
        return cls._of(manifest, tuple(TaskFacts.of(task) for task in manifest.tasks))

    @classmethod
    def validate(cls, data: Mapping[str, Any]) -> ManifestFacts:
        """Type plain manifest ``data`` (a consumer's view, see
        :func:`reprobridge_sdk.api.consumer_view`) as ``Manifest.model_validate(data,
        strict=True)`` does, each task condensed as soon as it is typed.

        Raises pydantic's ``ValidationError`` exactly when the typed manifest would.
        """
        condensed: Any = _condensing_manifest().model_validate(data, strict=True)
        return cls._of(condensed, tuple(condensed.tasks))

    @classmethod
    def _of(cls, manifest: Any, tasks: tuple[TaskFacts, ...]) -> ManifestFacts:
        return cls(
            rra_version=manifest.rra_version,
            artifact=manifest.artifact,
            codebase=manifest.codebase,
            environment=manifest.environment,
            tasks=tasks,
            launchers=tuple(manifest.launchers),
            guide=manifest.guide,
        )

    def launcher(self, launcher_id: str) -> Launcher:
        """The first launcher with this id; ``KeyError`` if there is none."""
        for launcher in self.launchers:
            if launcher.id == launcher_id:
                return launcher
        raise KeyError(launcher_id)


@cache
def _condensing_manifest() -> type[BaseModel]:
    """:class:`Manifest` whose ``tasks`` items are condensed to :class:`TaskFacts` right after
    each is validated as a :class:`Task`: the same rules (a subclass: the same configuration,
    validators and fields, the tasks' constraints copied), one typed task alive at a time."""
    tasks = Manifest.model_fields["tasks"]
    return create_model(
        "CondensedManifest",
        __base__=Manifest,
        tasks=(
            list[Annotated[Task, AfterValidator(TaskFacts.of)]],
            tasks,
        ),
    )
