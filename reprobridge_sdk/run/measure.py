"""Measurements of one run: extract, transform, and record each task's value.

Shared by the runner (right after a run) and by replay (``reprobridge extract``), so both
give the same values for the same log and outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.extract.extraction import ExtractionError, extract_value, plain

if TYPE_CHECKING:
    from reprobridge_sdk.model import Launcher
    from reprobridge_sdk.model.evidence import MeasuredValue

__all__ = [
    "MEASURED_FIELDS",
    "NO_PLUGIN",
    "as_models",
    "measure",
    "measured_json",
    "measured_values",
    "measurements_of",
    "template_context",
    "unread_here",
]

#: The ``error`` prefix of a measurement whose extractor kind no installed plugin provides.
NO_PLUGIN = "no-plugin: "


def unread_here(measured: MeasuredValue) -> bool:
    """Whether ``measured`` failed only because no installed plugin provides its extractor
    kind (X005): the run still succeeded, the value is not extracted."""
    return measured.value is None and (measured.error or "").startswith(NO_PLUGIN)


def template_context(
    params: Mapping[str, object], seed: int | None, run_dir: Path | None
) -> dict[str, object]:
    """The names templates may use: the launcher's params, ``seed`` and ``run_dir``."""
    context: dict[str, object] = dict(params)
    if seed is not None:
        context["seed"] = seed
    if run_dir is not None:
        context["run_dir"] = str(run_dir)
    return context


def measure(
    launcher: Launcher,
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
    roots: Sequence[Path] | None = None,
) -> list[MeasuredValue]:
    """One :class:`MeasuredValue` per measurement of ``launcher`` (``value`` None on failure):
    :func:`measured_values` of its measurements, typed."""
    found = measured_values(
        measurements_of(launcher),
        log=log,
        files_base=files_base,
        outputs=outputs,
        context=context,
        roots=roots,
    )
    return as_models(found)


def as_models(found: Iterable[Mapping[str, Any]]) -> list[MeasuredValue]:
    """Plain measured values (:func:`measured_values`) typed, the models loaded on use."""
    from reprobridge_sdk.model.evidence import MeasuredValue  # noqa: PLC0415 - see measured_values

    return [MeasuredValue.model_validate(value) for value in found]


def measurements_of(launcher: Launcher) -> list[dict[str, Any]]:
    """A typed launcher's measurements as :func:`measured_values` reads them."""
    return [
        {"task": m.task, "extract": m.extract, "transform": m.transform}
        for m in launcher.measurements
    ]


#: The fields of a measured value in a record, in their order (``MeasuredValue``'s).
MEASURED_FIELDS = ("task", "value", "raw", "values", "count", "source", "error")


def measured_json(value: Mapping[str, Any]) -> dict[str, Any]:
    """A value of :func:`measured_values` as a record's JSON holds it: every field, None
    where it was not given."""
    return {name: value.get(name) for name in MEASURED_FIELDS}


def measured_values(
    measurements: Iterable[Mapping[str, Any]],
    *,
    log: Path | None,
    files_base: Path,
    outputs: Mapping[str, Path],
    context: Mapping[str, object],
    roots: Sequence[Path] | None = None,
) -> list[dict[str, Any]]:
    """One measured value per measurement (``task``, ``extract``, ``transform``: plain or
    typed), as a record's ``measurements`` holds it (the fields a ``MeasuredValue`` is given;
    ``value`` None on failure). Plain data in and out: replay loads no model.

    With ``roots``, every file read must be a regular file inside one of them. For an ``all``
    extractor, ``value`` is the mean, ``count`` how many values there were (see
    :mod:`reprobridge_sdk.extract._allvalues`)."""
    results: list[dict[str, Any]] = []
    for measurement in measurements:
        task, extractor = measurement["task"], plain(measurement["extract"])
        try:
            got = extract_value(
                extractor,
                log=log,
                files_base=files_base,
                outputs=outputs,
                context=context,
                root=roots,
                transform=measurement.get("transform"),
            )
        except ExtractionError as exc:
            error = f"{exc.reason}: {exc.message}"
            results.append(
                {"task": task, "value": None, "source": exc.source or "log", "error": error}
            )
            continue
        if got.many:
            results.append(
                {
                    "task": task,
                    "value": got.mean,
                    "raw": "\n".join(got.raw),
                    "values": list(got.values),
                    "count": got.count,
                    "source": got.source,
                }
            )
        else:
            results.append(
                {"task": task, "value": got.value, "raw": got.raw[0], "source": got.source}
            )
    return results
