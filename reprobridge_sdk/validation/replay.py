"""Replay layer: extractors against the sample logs and outputs an artifact ships (X codes,
spec §9).

Each expected value of a sample is extracted with the runner's own extraction, transformed,
and compared by :func:`same_value`: nothing found is X001, not a number X002, another value
X003. Which failure is reported here is the failure's
:class:`~reprobridge_sdk.extract._errors.Reason` (missing files are F004, templates R014,
a missing plugin X005: other layers'). ``file:`` extractors read relative to the sample
log's directory (``{run_dir}``). A launcher's landmarks must each match a line of its sample
logs (R034, a warning).

This module owns sample replay and its tolerances: :func:`replay_samples` (used here and by
the author's check) and :func:`same_value` (replay, the auditor, the judge).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.document import Document
from reprobridge_sdk.io.pointer import escape_pointer
from reprobridge_sdk.validation._plain import mapping

from .files import kind_of, resolve_path, usable_path

if TYPE_CHECKING:
    from reprobridge_sdk.extract.extraction import ExtractionCache, ExtractionError

__all__ = ["SampleValue", "check_replay", "replay_samples", "same_value"]

#: The tolerances of replay (spec "extraction", replay): a re-extracted value equals an
#: expected or recorded one when ``|a - b| <= max(1e-9 * max(|a|, |b|), 1e-12)``.
_REL_TOL = 1e-9
_ABS_TOL = 1e-12
#: The largest expected value replay compares (beyond it, float arithmetic cannot).
_LARGEST = 1e300


def same_value(a: float, b: float) -> bool:
    """The one comparison of replay (X003, the author's check), the auditor (A007) and the
    judge; NaN equals only NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)


@dataclass(frozen=True)
class SampleValue:
    """One expected value of a launcher's sample and what extraction gives for it.

    ``measurement`` is None when the launcher has no measurement of the task; ``error`` is
    the extraction's failure, ``value`` the value otherwise (the mean for ``all``, as the
    runner records it)."""

    launcher: str
    lindex: int
    sample: int
    task: str
    expected: float
    measurement: int | None
    value: float | None = None
    error: ExtractionError | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None and same_value(self.value, self.expected)


def _file(root: Path, value: Any) -> Path | None:
    if not usable_path(value):
        return None
    path = resolve_path(root, root, value)
    return path if kind_of(path) == "file" else None


def _log_lines(log: Path, cache: dict[Path, list[str] | None]) -> list[str] | None:
    if log not in cache:
        try:
            text = safefs.read_text(log, max_bytes=safefs.MAX_TEXT_BYTES, errors="replace")
        except (OSError, safefs.UnsafeFileError):
            cache[log] = None
        else:
            cache[log] = [line.removesuffix("\r") for line in text.split("\n")]
    return cache[log]


def _check_landmarks(
    doc: Document, lindex: int, launcher: dict[str, Any], logs: list[Path]
) -> list[Finding]:
    """R034 for each landmark that no line of the launcher's sample logs matches."""
    from reprobridge_sdk.extract.pattern import (  # noqa: PLC0415 - lazy: only with samples
        PatternError,
        author_pattern,
    )

    landmarks = launcher.get("landmarks")
    if not logs or not isinstance(landmarks, list):
        return []
    cache: dict[Path, list[str] | None] = {}
    texts = [lines for log in logs if (lines := _log_lines(log, cache)) is not None]
    if not texts:
        return []
    out: list[Finding] = []
    for index, landmark in enumerate(landmarks):
        pattern = landmark.get("pattern") if isinstance(landmark, dict) else None
        if not isinstance(pattern, str) or not pattern:
            continue
        try:
            regex = author_pattern(pattern)
        except PatternError:
            continue  # X004, from the semantic layer
        if any(regex.search(line) for lines in texts for line in lines):
            continue
        name = landmark.get("id")
        out.append(
            doc.finding(
                "R034",
                f"landmark {name!r}: no line of the launcher's {len(texts)} sample log(s) "
                "matches its pattern",
                path=f"/launchers/{lindex}/landmarks/{index}/pattern",
                hint="choose a line every run prints, or ship a sample log that reaches it",
            )
        )
    return out


@dataclass(frozen=True)
class _Sample:
    """A sample's files and template context, resolved once for all its measurements."""

    index: int
    data: dict[str, Any]
    log: Path | None
    outputs: dict[str, Path]
    base: Path
    context: dict[str, object]


def _samples(root: Path, launcher: dict[str, Any]) -> list[_Sample]:
    params = {str(k): v for k, v in mapping(launcher.get("params")).items()}
    seeds = launcher.get("seeds") if isinstance(launcher.get("seeds"), list) else []
    out = []
    for index, sample in enumerate(launcher["samples"]):
        if not isinstance(sample, dict):
            continue
        log = _file(root, sample.get("log"))
        outputs = {
            str(key): path
            for key, value in mapping(sample.get("outputs")).items()
            if (path := _file(root, value)) is not None
        }
        base = log.parent if log is not None else root
        seed = sample.get("seed", seeds[0] if seeds else 0)
        context: dict[str, object] = {**params, "seed": seed, "run_dir": str(base)}
        out.append(_Sample(index, sample, log, outputs, base, context))
    return out


def _comparable(want: Any) -> bool:
    """An expected value float arithmetic can compare (anything else is the S layer's)."""
    return isinstance(want, (int, float)) and not isinstance(want, bool) and abs(want) <= _LARGEST


def _replay_one(
    reads: Path | safefs.OpenRoot,
    lindex: int,
    launcher: dict[str, Any],
    sample: _Sample,
    cache: ExtractionCache,
) -> Iterator[SampleValue]:
    from reprobridge_sdk.extract.extraction import (  # noqa: PLC0415 - lazy: only with samples
        ExtractionError,
        extract_value,
    )

    measurements = launcher.get("measurements")
    measurements = measurements if isinstance(measurements, list) else []
    ident = str(launcher.get("id", ""))
    for task, want in mapping(sample.data.get("expected")).items():
        if not _comparable(want):
            continue
        found = [
            (mindex, m)
            for mindex, m in enumerate(measurements)
            if isinstance(m, dict) and m.get("task") == task
        ]
        if not found:
            yield SampleValue(ident, lindex, sample.index, task, float(want), None)
        for mindex, measurement in found:
            extractor = measurement.get("extract")
            if not isinstance(extractor, dict):
                continue
            try:
                got = extract_value(
                    extractor,
                    log=sample.log,
                    files_base=sample.base,
                    outputs=sample.outputs,
                    context=sample.context,
                    root=reads,
                    max_bytes=safefs.MAX_TEXT_BYTES,
                    transform=measurement.get("transform"),
                    cache=cache,
                )
            except ExtractionError as exc:
                yield SampleValue(ident, lindex, sample.index, task, float(want), mindex, error=exc)
            except (TypeError, ValueError, KeyError):
                continue  # a structurally broken extractor or transform: the S layer's
            else:
                value = got.mean  # as the runner records it ('all': the mean)
                yield SampleValue(ident, lindex, sample.index, task, float(want), mindex, value)


def _launchers(data: Any, chosen: Sequence[str] | None) -> Iterator[tuple[int, dict[str, Any]]]:
    launchers = data.get("launchers") if isinstance(data, dict) else None
    for lindex, launcher in enumerate(launchers if isinstance(launchers, list) else []):
        if not isinstance(launcher, dict) or not isinstance(launcher.get("samples"), list):
            continue
        if chosen is None or launcher.get("id") in chosen:
            yield lindex, launcher


def _resolved(
    data: Any, root: Path, chosen: Sequence[str] | None
) -> list[tuple[int, dict[str, Any], list[_Sample]]]:
    """Each launcher with samples (of those ``chosen``, by default all) and its samples'
    files resolved: once per validation, for the landmarks and the replay."""
    return [
        (index, launcher, _samples(root, launcher)) for index, launcher in _launchers(data, chosen)
    ]


def _replay(
    root: Path,
    resolved: list[tuple[int, dict[str, Any], list[_Sample]]],
    cache: ExtractionCache | None,
) -> list[SampleValue]:
    from reprobridge_sdk.extract.extraction import (  # noqa: PLC0415 - lazy: only with samples
        ExtractionCache,
    )

    use = cache if cache is not None else ExtractionCache()
    # The root opened once: each sample file is read from its descriptor; when it cannot be
    # opened, each read opens it and reports why.
    try:
        opened = safefs.OpenRoot(root) if resolved else None
    except (OSError, safefs.UnsafeFileError):
        opened = None
    reads: Path | safefs.OpenRoot = root if opened is None else opened
    try:
        return [
            value
            for lindex, launcher, samples in resolved
            for sample in samples
            for value in _replay_one(reads, lindex, launcher, sample, use)
        ]
    finally:
        if cache is None:
            use.close()
        if opened is not None:
            opened.close()


def replay_samples(
    data: Any,
    root: Path,
    *,
    launchers: Sequence[str] | None = None,
    cache: ExtractionCache | None = None,
) -> list[SampleValue]:
    """Replay the samples of a manifest's plain ``data`` (of the artifact at ``root``): one
    :class:`SampleValue` for each expected value a sample declares (of the ``launchers``
    named, by default all). ``cache``: as for :func:`check_replay`."""
    return _replay(root, _resolved(data, root, launchers), cache)


def _finding(doc: Document, item: SampleValue) -> Finding | None:
    """The X finding of one replayed value, or None when it is right or another layer's."""
    from reprobridge_sdk.extract._errors import replayed  # noqa: PLC0415 - lazy

    sptr = f"/launchers/{item.lindex}/samples/{item.sample}"
    mptr = f"/launchers/{item.lindex}/measurements/{item.measurement}/extract"
    message = f"task {item.task!r}"
    exc = item.error
    if item.measurement is None:
        return None  # a task the launcher does not measure: the semantic layer's
    if exc is not None:
        if exc.refusal is not None and exc.refusal.reason == "too-large":
            refused = safefs.refusal(exc.refusal)
            return doc.finding(refused.code, exc.message, path=sptr, hint=refused.hint)
        code = replayed(exc.why)
        if code is None:
            return None
        hint = exc.findings[0].hint if exc.findings else None
        where = f"{mptr}/kind" if code in ("X006", "X007") else mptr
        return doc.finding(code, f"{message}: {exc.message}", path=where, hint=hint)
    if item.ok:
        return None
    return doc.finding(
        "X003",
        f"{message}: the extractor gives {item.value!r} on the sample, "
        f"not the expected {item.expected!r}",
        path=f"{sptr}/expected/{escape_pointer(item.task)}",
        hint="fix the extractor or the expected value",
    )


def check_replay(
    doc: Document, root: Path, *, cache: ExtractionCache | None = None
) -> list[Finding]:
    """X findings for the samples of every launcher of the artifact at ``root``, and R034
    for each landmark those samples never reach.

    ``cache``: where each sample file's parse or scan is kept for all the measurements that
    read it (by default one made for this call and closed after it)."""
    out: list[Finding] = []
    resolved = _resolved(doc.data, root, None)
    for lindex, launcher, samples in resolved:
        logs = [s.log for s in samples if s.log is not None]
        out += _check_landmarks(doc, lindex, launcher, logs)
    for item in _replay(root, resolved, cache):
        found = _finding(doc, item)
        if found is not None:
            out.append(found)
    return out
