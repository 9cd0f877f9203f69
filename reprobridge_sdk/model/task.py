"""The ``tasks`` part: one per paper measurement (spec §6.6, manifest.md#tasks)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Identifier, Integer, OptionalInteger, Sha256, SpecModel, since

__all__ = [
    "Location",
    "Observation",
    "Provenance",
    "ProvenanceRun",
    "Published",
    "Reference",
    "Statistic",
    "Task",
]


class Location(SpecModel):
    """Where the measurement is in the paper."""

    table: str | None = None
    figure: str | None = None
    section: str | None = None
    row: str | None = None
    column: str | None = None
    page: OptionalInteger = Field(default=None, ge=1)


class Statistic(SpecModel):
    """How the paper reports the value, e.g. the mean over 3 seeds."""

    aggregate: Literal["single", "mean", "median", "min", "max", "std"] = "single"
    seeds: Integer = Field(default=1, ge=1, description="Number of seeds the statistic is over.")


class Published(SpecModel):
    """The value printed in the paper: a single value or a range (counts as its midpoint)."""

    value: float | None = None
    range: list[float] | None = Field(default=None, min_length=2, max_length=2)
    unit: str | None = Field(default=None, description="e.g. '%', 'BLEU', 'ms'.")


class ProvenanceRun(SpecModel):
    """One run of a repetition (an observation of a statistic over several seeds)."""

    run: str = Field(min_length=1, description="The run's id (its record's run_id).")
    seed: OptionalInteger = Field(default=None, description="The seed the run was given.")
    record_sha256: Sha256 = Field(description="SHA-256 of the run's evidence record.")


class Provenance(SpecModel):
    """Who produced a reference observation and how.

    An observation of a one-seed statistic comes from one run (``run``, ``record_sha256``).
    An observation of a statistic over several seeds comes from one *repetition*: one run per
    declared seed, aggregated as the auditor aggregates an attempt; ``runs`` lists them.
    """

    source: str = Field(min_length=1, description="Person, team or system that ran it.")
    date: str | None = Field(default=None, pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}")
    hardware: str | None = None
    run: str | None = Field(default=None, description="Run id or evidence path, if any.")
    note: str | None = None
    record_sha256: Sha256 | None = Field(
        default=None,
        description="SHA-256 of the run's evidence record (record.json), if from a run.",
        json_schema_extra=since("1.1"),
    )
    code_tree_digest: str | None = Field(
        default=None,
        pattern=r"^sha256-tree1:[0-9a-f]{64}$",
        description="Tree digest of the refined code the run used.",
        json_schema_extra=since("1.1"),
    )
    lock_digest: Sha256 | None = Field(
        default=None,
        description="SHA-256 of the lock the run's environment was built from.",
        json_schema_extra=since("1.1"),
    )
    runs: list[ProvenanceRun] | None = Field(
        default=None,
        min_length=1,
        description=(
            "The runs of one repetition (one per seed) when the observation is a statistic "
            "over several seeds; 'run' and 'record_sha256' are then absent."
        ),
        json_schema_extra=since("1.1"),
    )


class Observation(SpecModel):
    """One independent reference run's value."""

    value: float
    provenance: Provenance


class Reference(SpecModel):
    """Reference observations that define the compatibility interval."""

    observations: list[Observation] = Field(default_factory=list)
    not_measured: str | None = Field(
        default=None,
        min_length=1,
        max_length=2000,
        description=(
            "Why the artifact has no reference observations for the task (for example, the "
            "build's time did not hold its reference runs, or the code prints no such "
            "number). The task then needs no observations and no scored measurement, and an "
            "audit judges it inconclusive."
        ),
        json_schema_extra=since("1.1"),
    )


class Task(SpecModel):
    """One measurement of the paper to reproduce."""

    id: Identifier
    title: str | None = None
    location: Location = Field(default_factory=Location)
    dataset: str = Field(min_length=1)
    metric: str = Field(min_length=1)
    statistic: Statistic = Field(default_factory=Statistic)
    published: Published
    direction: Literal["higher", "lower"] = Field(description="Which way is better.")
    kind: Literal["full", "evaluation"] = Field(
        description="'full': the whole procedure, training included; 'evaluation': evaluation only."
    )
    hardware: str | None = Field(default=None, description="Hardware the paper used.")
    reference: Reference = Field(default_factory=Reference)
    same_seed_tolerance: float | None = Field(
        default=None,
        ge=0,
        description=(
            "How far two runs with the same seed may differ (the metric's units): a "
            "re-execution is held to it; below the interval's half-width."
        ),
        json_schema_extra=since("1.1"),
    )
