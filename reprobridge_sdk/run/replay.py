"""Replay extraction without running anything: on a run directory, a log, or the samples.

Authors test their extractors this way; the auditor re-extracts recorded runs the same way
(the runner and replay share :func:`reprobridge_sdk.run.measure.measure`). The samples are
replayed, and compared with their expected values, by the validator's own replay
(:func:`reprobridge_sdk.validation.replay.replay_samples`): the author's check and X003 agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.loading import manifest_root
from reprobridge_sdk.versions import RECORD_NAME

from .measure import as_models, measured_values, measurements_of, template_context
from .recorded import (
    LOG_NAME,
    PlainLauncher,
    RecordedRun,
    RecordError,
    plain_launcher,
    plain_recorded,
)

if TYPE_CHECKING:
    from reprobridge_sdk.model import MeasuredValue

__all__ = [
    "SampleCheck",
    "check_samples",
    "replay_log",
    "replay_run",
    "replayed_log",
    "replayed_run",
]


@dataclass(frozen=True)
class SampleCheck:
    """One expected value of a launcher's sample against what extraction gives."""

    launcher: str
    sample: int
    task: str
    expected: float
    value: float | None
    error: str | None

    @property
    def ok(self) -> bool:
        from reprobridge_sdk.validation.replay import same_value  # noqa: PLC0415 - on use

        return self.value is not None and same_value(self.value, self.expected)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _in_run_folder(directory: Path, relative: str, what: str, record_path: Path) -> Path:
    """``relative`` (a record's ``log.path`` or output path) joined to the run folder; an
    absolute path or one that climbs out with ``..`` is a bad record (N006), never read."""
    parts = relative.replace("\\", "/").split("/")
    if not relative or relative.startswith("/") or ".." in parts:
        msg = f"{record_path}: the {what} path {relative!r} is not relative to the run folder"
        hint = "a record names its log and outputs relative to its run folder"
        raise RecordError.n006(msg, record_path, hint)
    return directory.joinpath(*parts)


def _typed_recorded(directory: Path) -> RecordedRun:
    """The replayed fields of the typed record (N006 when the models refuse it)."""
    from .evidence import load_record  # noqa: PLC0415 - the typed path only

    record = load_record(directory)
    return RecordedRun(
        launcher=record.launcher,
        seed=record.seed,
        params=record.params,
        workdir=record.workdir,
        log=LOG_NAME if record.log is None else record.log.path,
        outputs={o.id: o.path for o in record.outputs if not o.preexisting},
    )


def _typed_launcher(root: Path, launcher_id: str) -> PlainLauncher:
    """What replay reads of the launcher in the typed manifest (N007 when the models refuse
    it, N001 when there is no such launcher)."""
    from .select import load_artifact, select_launchers  # noqa: PLC0415 - the typed path only

    # N001 when there is no such launcher
    launcher = select_launchers(load_artifact(root)[1], [launcher_id], None)[0]
    return PlainLauncher(measurements_of(launcher), launcher.seeds, launcher.params)


def _replayed(
    root: Path,
    launcher_id: str,
    replay: Callable[[PlainLauncher], list[dict[str, Any]]],
    typed: bool,
) -> list[dict[str, Any]]:
    """``replay`` of the launcher read as plain data (:mod:`.recorded`), or typed by the models
    when it is not of the plain shape, when ``typed`` asks so, or when an extractor of the
    plain launcher is not of a shape the models would give."""
    plain = None if typed else plain_launcher(root, launcher_id)
    if plain is None:
        return replay(_typed_launcher(root, launcher_id))
    try:
        return replay(plain)
    except (TypeError, ValueError, KeyError):  # an extractor the models would not type
        return replay(_typed_launcher(root, launcher_id))


def replayed_run(
    run_dir: str | os.PathLike[str],
    artifact_dir: str | os.PathLike[str] | None = None,
    *,
    typed: bool = False,
) -> list[dict[str, Any]]:
    """Re-extract every measurement of a recorded run from its log and copied outputs, as
    plain values (the fields of a record's ``measurements``).

    The artifact defaults to ``<run_dir>/../..``; preexisting outputs are not offered. A log or
    output path that is not relative to the run folder is N006; files are read through the safe
    file layer. The record and the launcher are read as plain data, the models loaded only when
    they are not of the plain shape (:mod:`.recorded`); ``typed`` reads both with the models
    (a record or manifest they refuse is refused, N006 or N007, whatever part is broken)."""
    directory = Path(os.path.abspath(run_dir))  # noqa: PTH100 - a link is not resolved away
    recorded = (None if typed else plain_recorded(directory)) or _typed_recorded(directory)
    root = manifest_root(artifact_dir or directory.parent.parent)
    where = directory / RECORD_NAME
    outputs = {
        key: _in_run_folder(directory, path, f"output {key!r}", where)
        for key, path in recorded.outputs.items()
    }
    replay = partial(
        measured_values,
        log=_in_run_folder(directory, recorded.log, "log", where),
        files_base=root / recorded.workdir,
        outputs=outputs,
        context=template_context(recorded.params, recorded.seed, directory),
        roots=(directory, root),
    )
    return _replayed(root, recorded.launcher, lambda launcher: replay(launcher.measurements), typed)


def replay_run(
    run_dir: str | os.PathLike[str], artifact_dir: str | os.PathLike[str] | None = None
) -> list[MeasuredValue]:
    """Re-extract every measurement of a recorded run from its log and copied outputs, typed.

    :func:`replayed_run` with the record and the manifest read by the models (a record or
    manifest they refuse is N006 or N007, whatever part of it is broken)."""
    return as_models(replayed_run(run_dir, artifact_dir, typed=True))


def _lexically_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def replayed_log(
    artifact_dir: str | os.PathLike[str],
    launcher_id: str,
    log: str | os.PathLike[str] | None,
    *,
    outputs: Mapping[str, str | os.PathLike[str]] | None = None,
    seed: int | None = None,
    run_dir: str | os.PathLike[str] | None = None,
    typed: bool = False,
) -> list[dict[str, Any]]:
    """Extract a launcher's measurements from a sample log and output files, as plain values
    (the fields of a record's ``measurements``).

    As the replay of samples does (``spec/manifest.md#extraction``): ``file:`` paths and
    ``{run_dir}`` are the log's directory, ``{seed}`` the launcher's first seed, or 0. A file
    named inside the artifact must stay inside it; one outside is read inside its own
    directory. The launcher is read as plain data, the models loaded only when it is not of
    the plain shape (:mod:`.recorded`); ``typed`` reads it with the models (a manifest they
    refuse is N007, whatever part is broken)."""
    root = manifest_root(artifact_dir)
    base_dir = Path(os.path.abspath(root))  # noqa: PTH100
    log_path = None if log is None else Path(os.path.abspath(log))  # noqa: PTH100 - unresolved
    given = {key: Path(os.path.abspath(value)) for key, value in (outputs or {}).items()}  # noqa: PTH100
    roots = [base_dir]
    for path in [*([] if log_path is None else [log_path]), *given.values()]:
        if not _lexically_inside(path, base_dir) and path.parent not in roots:
            roots.append(path.parent)
    base = log_path.parent if log_path is not None else root

    def replay(launcher: PlainLauncher) -> list[dict[str, Any]]:
        first = seed if seed is not None else launcher.seeds[0] if launcher.seeds else 0
        here = base if run_dir is None else Path(run_dir)
        return measured_values(
            launcher.measurements,
            log=log_path,
            files_base=base,
            outputs=dict(given),
            context=template_context(launcher.params, first, here),
            roots=roots,
        )

    return _replayed(root, launcher_id, replay, typed)


def replay_log(
    artifact_dir: str | os.PathLike[str],
    launcher_id: str,
    log: str | os.PathLike[str] | None,
    *,
    outputs: Mapping[str, str | os.PathLike[str]] | None = None,
    seed: int | None = None,
    run_dir: str | os.PathLike[str] | None = None,
) -> list[MeasuredValue]:
    """Extract a launcher's measurements from a sample log and output files, typed.

    :func:`replayed_log` with the manifest read by the models (a manifest they refuse is
    N007, whatever part of it is broken)."""
    found = replayed_log(
        artifact_dir, launcher_id, log, outputs=outputs, seed=seed, run_dir=run_dir, typed=True
    )
    return as_models(found)


def check_samples(
    artifact_dir: str | os.PathLike[str], launchers: Sequence[str] | None = None
) -> list[SampleCheck]:
    """Replay every shipped sample and compare with its expected values (as validation's
    replay does: :func:`reprobridge_sdk.validation.replay.replay_samples`)."""
    from reprobridge_sdk.validation.replay import replay_samples  # noqa: PLC0415 - on use

    from .select import load_artifact, select_launchers  # noqa: PLC0415 - typed

    root, manifest = load_artifact(artifact_dir)
    if launchers:
        select_launchers(manifest, launchers, None)  # N001 for an unknown one
    data = manifest.model_dump(by_alias=True)
    checks: list[SampleCheck] = []
    for item in replay_samples(data, Path(root), launchers=launchers or None):
        error = None
        if item.measurement is None:
            error = "no measurement for this task"
        elif item.error is not None:
            error = f"{item.error.reason}: {item.error.message}"
        checks.append(
            SampleCheck(
                launcher=item.launcher,
                sample=item.sample,
                task=item.task,
                expected=item.expected,
                value=item.value,
                error=error,
            )
        )
    return checks
