"""A recorded run as replay reads it: six fields of its record and three of its launcher.

Why: typing the whole record and manifest loads pydantic and the models, more than half of
``extract --run``'s and ``extract --log``'s CPU, so the fields replay needs are read as plain
data. A value of exactly the JSON type the runner writes (in a manifest of a known version)
is used as it is; anything else (unreadable, missing, a type pydantic would coerce or refuse,
an unknown launcher) goes to the typed reading, so every error message and coercion has one
implementation, the models'. What the plain path does not read it does not check.
``tests/run/test_recorded.py`` holds the plain reading equal to the typed one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import reading, safefs
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.versions import FORMAT_VERSIONS, MANIFEST_NAME, RECORD_NAME

__all__ = [
    "LOG_NAME",
    "PlainLauncher",
    "RecordError",
    "RecordedRun",
    "plain_launcher",
    "plain_recorded",
    "record_path",
]

#: The log of a run, inside its run directory.
LOG_NAME = "log.txt"


class RecordError(ReproBridgeError):
    """A run directory holds no readable evidence record."""

    @classmethod
    def n006(cls, msg: str, record_path: Path, hint: str) -> RecordError:
        """The error with its one finding, N006 at ``record_path``."""
        return cls(msg, [finding("N006", msg, file=str(record_path), hint=hint)])


@dataclass(frozen=True)
class RecordedRun:
    """What replay reads of a record: ``log`` and ``outputs`` (id to path; outputs that
    existed before the run are left out) relative to the run folder."""

    launcher: str
    seed: int | None
    params: Mapping[str, object]
    workdir: str
    log: str
    outputs: Mapping[str, str]


def record_path(path: str | os.PathLike[str]) -> Path:
    """The record of a run directory, or ``path`` itself when it names a file."""
    target = Path(path)
    return target if target.is_file() else target / RECORD_NAME


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain_param(key: object, value: object) -> bool:
    return isinstance(key, str) and isinstance(value, (str, int, float))  # bool is an int


def plain_recorded(path: str | os.PathLike[str]) -> RecordedRun | None:
    """The replayed fields of the record at ``path``, read as plain JSON; None when the file
    cannot be read or a field is not of the type the runner writes (the typed record decides)."""
    try:  # as load_record reads it: a regular file (no link, no FIFO), bounded
        data = reading.read_json(record_path(path), allow_links=False)
    except reading.Unreadable:
        return None
    if not isinstance(data, dict):
        return None
    launcher, seed, workdir = data.get("launcher"), data.get("seed"), data.get("workdir")
    params, log, outputs = data.get("params", {}), data.get("log"), data.get("outputs", [])
    if not (isinstance(launcher, str) and isinstance(workdir, str)):
        return None
    if not (seed is None or _integer(seed)) or not isinstance(params, dict):
        return None
    if not all(_plain_param(k, v) for k, v in params.items()):
        return None
    if log is not None and not (isinstance(log, dict) and isinstance(log.get("path"), str)):
        return None
    if not isinstance(outputs, list) or not all(_plain_output(o) for o in outputs):
        return None
    return RecordedRun(
        launcher=launcher,
        seed=seed,
        params=params,
        workdir=workdir,
        log=LOG_NAME if log is None else log["path"],
        outputs={o["id"]: o["path"] for o in outputs if not o.get("preexisting", False)},
    )


def _plain_output(output: object) -> bool:
    return (
        isinstance(output, dict)
        and isinstance(output.get("id"), str)
        and isinstance(output.get("path"), str)
        and isinstance(output.get("preexisting", False), bool)
    )


@dataclass(frozen=True)
class PlainLauncher:
    """What replay reads of a launcher: its measurements (as :func:`~reprobridge_sdk.run.
    measure.measured_values` reads them), seeds and params."""

    measurements: list[dict[str, Any]]
    seeds: list[int]
    params: Mapping[str, object]


def plain_launcher(root: Path, launcher_id: str) -> PlainLauncher | None:
    """The launcher ``launcher_id`` of the manifest at ``root``, read as plain data; None when
    the manifest is not read without a finding, declares a version this SDK does not know,
    has no such launcher, or its measurements, seeds or params are not of the plain shape
    (the typed manifest decides)."""
    manifest = root / MANIFEST_NAME
    try:
        document = load_document(manifest, name=str(manifest), root=root)
    except (OSError, safefs.UnsafeFileError):
        return None
    data = document.data
    if document.findings or document.unrepresentable or not isinstance(data, dict):
        return None
    launchers = data.get("launchers")
    if data.get("rra_version") not in FORMAT_VERSIONS or not isinstance(launchers, list):
        return None
    for launcher in launchers:
        if isinstance(launcher, dict) and launcher.get("id") == launcher_id:
            measurements = launcher.get("measurements")
            seeds, params = launcher.get("seeds", []), launcher.get("params", {})
            if not (isinstance(seeds, list) and all(_integer(s) for s in seeds)):
                return None
            if not (
                isinstance(params, dict) and all(_plain_param(k, v) for k, v in params.items())
            ):
                return None
            if isinstance(measurements, list) and all(_plain_measurement(m) for m in measurements):
                return PlainLauncher(measurements, seeds, params)
            return None
    return None


def _plain_measurement(measurement: object) -> bool:
    return (
        isinstance(measurement, dict)
        and isinstance(measurement.get("task"), str)
        and isinstance(measurement.get("extract"), dict)
        and isinstance(measurement.get("transform", {}), (dict, type(None)))
    )
