"""The evidence record a run writes beside its log and outputs (spec §10.1, runner.md#evidence).

Records are not part of the manifest. They are JSON, have their own schema
(``schemas/evidence-1.0.schema.json``) and are written atomically.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from reprobridge_sdk.versions import RECORD_NAME

from ._base import Identifier, Sha256, SpecModel, since

__all__ = [
    "EVIDENCE_VERSION",
    "RECORD_NAME",
    "Distribution",
    "EnvironmentSnapshot",
    "EvidenceRecord",
    "Failure",
    "FileDigest",
    "GpuInfo",
    "LandmarkHit",
    "LostAttempt",
    "MeasuredValue",
    "OutputRecord",
    "PlantedEntry",
    "RunFolderScan",
    "RunnerProcess",
]


def _no_boolean(value: object) -> object:
    """JSON booleans are not numbers (the schema's ``integer`` and ``number`` reject them);
    pydantic would read ``false`` as 0."""
    if isinstance(value, bool):
        msg = "a boolean is not a number"
        raise ValueError(msg)
    return value


#: An integer or a number of a record: never a boolean, as in its schema.
Integer = Annotated[int, BeforeValidator(_no_boolean)]
Number = Annotated[float, BeforeValidator(_no_boolean)]
# (constraints inside the type, so that an optional field's schema keeps "minimum")
_Seconds = Annotated[float, Field(ge=0), BeforeValidator(_no_boolean)]
_Count = Annotated[int, Field(ge=1), BeforeValidator(_no_boolean)]
_Ticks = Annotated[int, Field(ge=0), BeforeValidator(_no_boolean)]

#: Version of the evidence record format.
EVIDENCE_VERSION = "1.0"

FailureReason = Literal[
    "exit-status",
    "timeout",
    "missing-output",
    "extraction-failed",
    "interrupted",
    "command-not-found",
    "template-error",
    "environment-error",
    "dependency-failed",
    "internal-error",
]


class FileDigest(SpecModel):
    """A file the run produced or read, relative to the run directory or the artifact."""

    path: str = Field(min_length=1)
    sha256: Sha256
    size: Integer = Field(ge=0)


class OutputRecord(FileDigest):
    """A declared output of the launcher."""

    id: Identifier
    preexisting: bool = Field(
        default=False,
        description="The file existed before the run started: not produced by the run.",
    )


class LandmarkHit(SpecModel):
    """A landmark reached during the run."""

    id: Identifier
    line: Integer = Field(ge=1, description="Line number in the log.")
    elapsed: Number = Field(ge=0, description="Seconds since the run started.")


class MeasuredValue(SpecModel):
    """A value extracted from the run for one task."""

    task: Identifier
    value: Number | None = Field(description="After the transform; null if extraction failed.")
    raw: str | None = Field(
        default=None,
        description=(
            "The text the value was read from; for occurrence 'all', the text of at most the "
            "first 10 matches, one per line."
        ),
    )
    values: list[Number] | None = Field(
        default=None,
        description=(
            "For occurrence 'all': the values read, in order, at most the first 1000 "
            "('value' is the mean of all of them; 'count' says how many there were)."
        ),
    )
    count: _Count | None = Field(
        default=None,
        description="For occurrence 'all': how many values were read ('values' keeps the first).",
        json_schema_extra=since("1.1"),
    )
    source: str = Field(description="'log', 'output:<id>' or a file path.")
    error: str | None = Field(default=None, description="Why extraction failed, if it did.")


class Failure(SpecModel):
    """Why a run did not succeed."""

    reason: FailureReason
    detail: str = ""
    last_landmark: Identifier | None = None


class Distribution(SpecModel):
    """An installed Python distribution."""

    name: str
    version: str


class GpuInfo(SpecModel):
    """One accelerator as seen by the driver."""

    name: str
    memory_mb: int | None = None
    driver: str | None = None
    cuda: str | None = None


class EnvironmentSnapshot(SpecModel):
    """What a run ran on."""

    captured_at: str = Field(description="RFC 3339 UTC timestamp.")
    python: str
    implementation: str
    executable: str
    platform: str
    machine: str
    cpu: str | None = None
    cpu_count: int | None = None
    memory_bytes: int | None = None
    gpus: list[GpuInfo] = Field(default_factory=list)
    distributions: list[Distribution] = Field(default_factory=list)
    variables: dict[str, str] = Field(
        default_factory=dict, description="Selected environment variables, secrets redacted."
    )


class LostAttempt(SpecModel):
    """An earlier attempt of the same run that was lost with its worker (format 1.1)."""

    host: str | None = Field(default=None, description="Where the lost attempt ran.")
    started_at: str = Field(description="When the lost attempt started.")
    reason: Literal["worker-lost"] = Field(
        default="worker-lost", description="Why the attempt was lost: its worker went away."
    )


class RunnerProcess(SpecModel):
    """The runner process that writes a 'running' record (format 1.1; a 1.0 record named it
    with the extension key 'x-runner', with the same keys)."""

    model_config = ConfigDict(strict=True)  # a pid written as a string is not a pid

    pid: Integer = Field(ge=1, description="The runner's process id.")
    boot_id: str | None = Field(
        default=None, description="The kernel's boot id when the run started (Linux)."
    )
    start_ticks: _Ticks | None = Field(
        default=None,
        description=(
            "The process start time in clock ticks since boot (Linux /proc/<pid>/stat field "
            "22), so that a reused pid is not taken for the runner."
        ),
    )
    host: str | None = Field(default=None, description="The host name of the runner.")


class PlantedEntry(SpecModel):
    """A symbolic link or special file the runner found in the run folder (format 1.1)."""

    path: str = Field(
        min_length=1,
        description=(
            "Relative to the run folder, '/'-separated; bytes of the name that are not UTF-8 "
            "written as \\xNN."
        ),
    )
    kind: Literal["link", "fifo", "socket", "block-device", "char-device"] = Field(
        description="A symbolic link, a FIFO, a socket, or a block or character device."
    )


class RunFolderScan(SpecModel):
    """What the runner's scan of the run folder found after the run (format 1.1): present
    only when it found a link or special file, or did not cover the whole folder."""

    planted: list[PlantedEntry] = Field(
        default_factory=list,
        description="Every link and special file found, sorted by path; never followed or read.",
    )
    stopped: Literal["entries", "depth", "deadline", "unreadable"] | None = Field(
        default=None,
        description=(
            "Why the scan left part of the folder out: its cap on entries, on depth, its "
            "deadline, or a directory it could not list; absent when it covered the folder."
        ),
    )
    stopped_at: str | None = Field(
        default=None,
        description="The path, relative to the run folder, where the scan left a part out.",
    )


class EvidenceRecord(SpecModel):
    """The record of one run of one launcher with one seed."""

    record_version: str = Field(default=EVIDENCE_VERSION, pattern=r"^[0-9]+\.[0-9]+$")
    run_id: str = Field(min_length=1)
    artifact: Identifier
    launcher: Identifier
    argv: list[str]
    shell: bool = False
    workdir: str
    seed: Integer | None = None
    scope: Literal["smoke", "scored"]
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    status: Literal["running", "succeeded", "failed", "interrupted"]
    started_at: str
    ended_at: str | None = None
    duration: _Seconds | None = Field(default=None, description="Seconds.")
    exit_code: Integer | None = None
    failure: Failure | None = None
    env_mode: Literal["cached", "current"] = "current"
    code_tree_digest: str | None = None
    lock_digest: Sha256 | None = None
    environment: EnvironmentSnapshot | None = None
    environment_sha256: Sha256 | None = Field(
        default=None,
        description=(
            "The SHA-256 of the environment snapshot kept once per invocation in the runs "
            "directory as '.env/<sha256>.json', in place of an embedded 'environment'."
        ),
        json_schema_extra=since("1.1"),
    )
    drift: list[str] = Field(
        default_factory=list, description="Differences between the environment and the lock."
    )
    log: FileDigest | None = None
    outputs: list[OutputRecord] = Field(default_factory=list)
    landmarks: list[LandmarkHit] = Field(default_factory=list)
    measurements: list[MeasuredValue] = Field(default_factory=list)
    executor: str | None = Field(
        default=None,
        description="The executor that ran this run: 'local', 'dask' or 'slurm'.",
        json_schema_extra=since("1.1"),
    )
    runner: RunnerProcess | None = Field(
        default=None,
        description=(
            "The runner process of a 'running' record; absent from a final record. A reader "
            "treats a 'running' record whose runner process is gone, or that names none, as "
            "interrupted."
        ),
        json_schema_extra=since("1.1"),
    )
    lost_attempts: list[LostAttempt] = Field(
        default_factory=list,
        description="Attempts of this run lost with their worker; this record is the retry's.",
        json_schema_extra=since("1.1"),
    )
    run_folder: RunFolderScan | None = Field(
        default=None,
        description=(
            "The links and special files the runner found in the run folder after the run "
            "(N024), and whether its scan covered the whole folder; absent when it found "
            "none and covered it."
        ),
        json_schema_extra=since("1.1"),
    )
