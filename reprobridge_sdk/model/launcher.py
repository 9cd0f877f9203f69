"""The ``launchers`` part: commands, outputs, landmarks and measurements (spec §6.7)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag

from ._base import (
    Identifier,
    Integer,
    OptionalInteger,
    RelPath,
    Sha256,
    SpecModel,
    _schema_extra,
    since,
)

__all__ = [
    "PLUGIN_KIND_PATTERN",
    "CsvExtractor",
    "Extractor",
    "JsonExtractor",
    "Landmark",
    "Launcher",
    "Measurement",
    "Output",
    "PluginExtractor",
    "RegexExtractor",
    "Resources",
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
        min_length=1,
        description="Pattern in the pattern grammar (RE2 syntax minus a list; spec: patterns).",
    )
    group: str | Integer = Field(
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
    row: Integer = Field(
        default=-1, description="Row index among data rows; negative from the end."
    )
    where: dict[str, str] | None = Field(
        default=None, description="Select the row whose columns equal these values instead."
    )


class YamlExtractor(_Source):
    """A key path into a YAML (or JSON) file."""

    kind: Literal["yaml"]
    key: str = Field(min_length=1, description="Dotted key path, e.g. 'eval.top1'.")


#: The kind of an extractor that a plugin provides (format 1.1, spec "plugins").
PLUGIN_KIND_PATTERN = r"^x-[a-z0-9-]+$"


def _plugin_schema(schema: dict[str, Any], model: type[Any]) -> None:
    _schema_extra(schema, model)
    schema.update(since("1.1"))


class PluginExtractor(_Source):
    """An extractor kind added by an installed plugin (entry point group
    ``reprobridge.extractors``); its own parameters are in ``parameters``.

    Without the plugin, validation warns (X005), the runner records the value as not
    extracted and the audit says inconclusive (A061). The whole object is a 1.1 addition.
    """

    model_config = ConfigDict(json_schema_extra=_plugin_schema)

    kind: str = Field(
        pattern=PLUGIN_KIND_PATTERN,
        description="'x-' and the name of the plugin's entry point, e.g. 'x-tensorboard'.",
    )
    parameters: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "The plugin's parameters, passed to it as written; their values are the plugin's "
            "to check, as those of extension keys are."
        ),
    )

    def _needs_version(self) -> tuple[int, int]:
        return (1, 1)


def _extractor_tag(value: Any) -> str | None:
    """The union branch of an extractor: its built-in ``kind``, or ``x`` for a plugin kind."""
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    if isinstance(kind, str) and kind.startswith("x-"):
        return "x"
    return kind if isinstance(kind, str) else None


Extractor = Annotated[
    Annotated[RegexExtractor, Tag("regex")]
    | Annotated[JsonExtractor, Tag("json")]
    | Annotated[CsvExtractor, Tag("csv")]
    | Annotated[YamlExtractor, Tag("yaml")]
    | Annotated[PluginExtractor, Tag("x")],
    Discriminator(_extractor_tag),
]


class Transform(SpecModel):
    """``value * scale + offset``, then optionally rounded."""

    scale: float = 1.0
    offset: float = 0.0
    round: OptionalInteger = Field(default=None, ge=0, le=12)


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
    seed: OptionalInteger = None
    expected: dict[str, float] = Field(
        default_factory=dict, description="Task id -> value extraction must produce."
    )
    log_sha256: Sha256 | None = Field(
        default=None,
        description="SHA-256 of the sample log.",
        json_schema_extra=since("1.1"),
    )
    outputs_sha256: dict[str, Sha256] = Field(
        default_factory=dict,
        description="Output id (a key of 'outputs') -> SHA-256 of its sample file.",
        json_schema_extra=since("1.1"),
    )


#: A memory size: a number with a binary or decimal unit, e.g. ``512MiB``, ``16GiB``, ``2GB``.
MEMORY_PATTERN = r"^[0-9]{1,12}(\.[0-9]{1,6})?(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$"

_MEMORY_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}


def memory_bytes(text: str) -> int:
    """The number of bytes of a memory size written as :data:`MEMORY_PATTERN` allows."""
    number = text.rstrip("BKMGTi")
    unit = text[len(number) :]
    return int(float(number) * _MEMORY_UNITS[unit])


class Resources(SpecModel):
    """What one run of a launcher needs from the machine that runs it (format 1.1).

    Executors place a run only where these are available, and refuse before submitting a run
    that no machine of the cluster can hold.
    """

    cpus: Integer = Field(default=1, ge=1, le=4096, description="CPU cores one run uses.")
    memory: str | None = Field(
        default=None,
        pattern=MEMORY_PATTERN,
        description="Memory one run needs, with a unit: e.g. '512MiB', '16GiB'.",
        examples=["4GiB"],
    )
    gpus: Integer = Field(default=0, ge=0, le=1024, description="GPUs one run uses.")
    walltime: float | None = Field(
        default=None,
        gt=0,
        description="Seconds a scheduler should reserve for one run (a batch job's time limit).",
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
    seeds: list[Integer] = Field(default_factory=list)
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
    resources: Resources | None = Field(
        default=None,
        description="CPU cores, memory, GPUs and wall time one run needs (for executors).",
        json_schema_extra=since("1.1"),
    )
    deterministic: bool = Field(
        default=False,
        description=(
            "Runs with one seed give the same values: a re-execution must match them exactly "
            "(otherwise within the task's same-seed tolerance, at most its interval half-width)."
        ),
        json_schema_extra=since("1.1"),
    )
