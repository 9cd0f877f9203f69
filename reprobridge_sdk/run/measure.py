"""Measurements of one run: extract, transform, and record each task's value.

Shared by the runner (right after a run) and by replay (``reprobridge extract``), so both
give the same values for the same log and outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from reprobridge_sdk.extract.extraction import ExtractionError, extract_value
from reprobridge_sdk.model import Launcher, RegexExtractor
from reprobridge_sdk.model.evidence import MeasuredValue

__all__ = ["NO_PLUGIN", "measure", "template_context", "unread_here"]

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
    """One :class:`MeasuredValue` per measurement of ``launcher`` (``value`` None on failure).

    With ``roots``, every file read must be a regular file inside one of them. For an ``all``
    extractor, ``value`` is the mean, ``count`` how many values there were (see
    :mod:`reprobridge_sdk.extract._allvalues`)."""
    results: list[MeasuredValue] = []
    for measurement in launcher.measurements:
        try:
            got = extract_value(
                measurement.extract,
                log=log,
                files_base=files_base,
                outputs=outputs,
                context=context,
                root=roots,
                transform=measurement.transform,
            )
        except ExtractionError as exc:
            results.append(
                MeasuredValue(
                    task=measurement.task,
                    value=None,
                    source=exc.source or "log",
                    error=f"{exc.reason}: {exc.message}",
                )
            )
            continue
        extractor = measurement.extract
        many = isinstance(extractor, RegexExtractor) and extractor.occurrence == "all"
        results.append(
            MeasuredValue(
                task=measurement.task,
                value=got.mean if many else got.value,
                raw="\n".join(got.raw) if many else got.raw[0],
                values=list(got.values) if many else None,
                count=got.count if many else None,
                source=got.source,
            )
        )
    return results
