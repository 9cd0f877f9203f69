"""The ``launchers`` part: commands, outputs, landmarks and measurements (spec §6.7)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import Identifier, RelPath, SpecModel, since

__all__ = [
    "CsvExtractor",
    "Extractor",
    "JsonExtractor",
    "Landmark",
    "Launcher",
    "Measurement",
    "Output",
    "RegexExtractor",
    "Sample",
    "Transform",
    "YamlExtractor",
]


class _Source(SpecModel):
    output: Identifier | None = Field(
        default=None, description="Read a declared output of the launcher (by id)."
    )
    file: str | None = Field(
        default=None,
        min_length=1,
        description="Read a file, relative to the launcher's working directory; templated.",
    )


class RegexExtractor(_Source):
    """A regular expression applied line by line to the log (default) or a file."""

    kind: Literal["regex"]
    pattern: str = Field(
        min_length=1, description="Pattern in the pattern dialect (RE2 subset of Python re)."
    )
    group: str | int = Field(
        default=1, description="Named group or group number that holds the number."
    )
    occurrence: Literal["first", "last", "all"] = "last"


class JsonExtractor(_Source):
    """A JSON Pointer (RFC 6901) into a JSON file."""

    kind: Literal["json"]
    pointer: str = Field(pattern=r"^(/[\s\S]*)?$", description="e.g. '/test/accuracy'.")


class CsvExtractor(_Source):
    """A cell of a CSV file with a header row."""

    kind: Literal["csv"]
    column: str = Field(min_length=1, description="Column name in the header row.")
    row: int = Field(default=-1, description="Row index among data rows; negative from the end.")
    where: dict[str, str] | None = Field(
        default=None, description="Select the row whose columns equal these values instead."
    )


class YamlExtractor(_Source):
    """A key path into a YAML (or JSON) file."""

    kind: Literal["yaml"]
    key: str = Field(min_length=1, description="Dotted key path, e.g. 'eval.top1'.")


Extractor = Annotated[
    RegexExtractor | JsonExtractor | CsvExtractor | YamlExtractor,
    Field(discriminator="kind"),
]


class Transform(SpecModel):
    """``value * scale + offset``, then optionally rounded."""

    scale: float = 1.0
    offset: float = 0.0
    round: int | None = Field(default=None, ge=0, le=12)


class Measurement(SpecModel):
    """How one task's value is read from a run."""

    task: Identifier
    extract: Extractor
    transform: Transform | None = None
    aggregate: Literal["single", "mean", "median", "min", "max", "std"] = Field(
        default="mean", description="How values over seeds combine into the task's statistic."
    )


class Output(SpecModel):
    """A file the launcher is expected to produce."""

    id: Identifier
    path: str = Field(
        min_length=1, description="Relative to the working directory; may use templates."
    )
    required: bool = True


class Landmark(SpecModel):
    """A log pattern that marks progress."""

    id: Identifier
    pattern: str = Field(
        min_length=1, description="Pattern in the pattern dialect, searched in each log line."
    )
    description: str | None = None


class Sample(SpecModel):
    """A shipped log or output with the values extraction must give, for offline replay."""

    log: RelPath | None = Field(default=None, description="A sample log inside the artifact.")
    outputs: dict[str, RelPath] = Field(
        default_factory=dict, description="Output id -> sample file inside the artifact."
    )
    seed: int | None = None
    expected: dict[str, float] = Field(
        default_factory=dict, description="Task id -> value extraction must produce."
    )


class Launcher(SpecModel):
    """One experiment command."""

    id: Identifier
    description: str | None = None
    argv: list[str] = Field(
        min_length=1,
        description="Command and arguments; '{seed}', '{param}' templates are substituted.",
    )
    shell: bool = Field(
        default=False, description="Run argv[0] through /bin/sh -c (then argv has one element)."
    )
    workdir: RelPath = Field(default=".", description="Working directory inside the artifact.")
    env: dict[str, str] = Field(default_factory=dict)
    seeds: list[int] = Field(default_factory=list)
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0, description="Seconds per run.")
    scope: Literal["smoke", "scored"]
    needs: list[Identifier] = Field(
        default_factory=list, description="Launchers that must finish successfully first."
    )
    data: list[Identifier] = Field(
        default_factory=list, description="Data items (by id) the launcher reads."
    )
    outputs: list[Output] = Field(default_factory=list)
    landmarks: list[Landmark] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    samples: list[Sample] = Field(default_factory=list)
    deterministic: bool = Field(
        default=False,
        description=(
            "Runs with one seed give the same values: a re-execution must match them exactly "
            "(otherwise within the task's interval half-width)."
        ),
        json_schema_extra=since("1.1"),
    )
