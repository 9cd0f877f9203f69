"""Replay extraction without running anything: on a run directory, a log, or the samples.

Authors test their extractors this way; the auditor re-extracts recorded runs the same way
(the runner and replay share :func:`reprobridge_sdk.run.measure.measure`). The samples are
replayed, and compared with their expected values, by the validator's own replay
(:func:`reprobridge_sdk.validation.replay.replay_samples`): the author's check and X003 agree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from reprobridge_sdk.model import RECORD_NAME, Launcher, Manifest, MeasuredValue

from .evidence import LOG_NAME, RecordError, load_record
from .measure import measure, template_context
from .select import load_artifact, select_launchers

__all__ = ["SampleCheck", "check_samples", "replay_log", "replay_run"]


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


def _launcher(manifest: Manifest, launcher_id: str) -> Launcher:
    return select_launchers(manifest, [launcher_id], None)[0]  # N001 when there is none


def _in_run_folder(directory: Path, relative: str, what: str, record_path: Path) -> Path:
    """``relative`` (a record's ``log.path`` or output path) joined to the run folder; an
    absolute path or one that climbs out with ``..`` is a bad record (N006), never read."""
    parts = relative.replace("\\", "/").split("/")
    if not relative or relative.startswith("/") or ".." in parts:
        msg = f"{record_path}: the {what} path {relative!r} is not relative to the run folder"
        hint = "a record names its log and outputs relative to its run folder"
        raise RecordError.n006(msg, record_path, hint)
    return directory.joinpath(*parts)


def replay_run(
    run_dir: str | os.PathLike[str], artifact_dir: str | os.PathLike[str] | None = None
) -> list[MeasuredValue]:
    """Re-extract every measurement of a recorded run from its log and copied outputs.

    The artifact defaults to ``<run_dir>/../..``; preexisting outputs are not offered. A log or
    output path that is not relative to the run folder is N006; files are read through the safe
    file layer."""
    directory = Path(os.path.abspath(run_dir))  # noqa: PTH100 - a link is not resolved away
    record = load_record(directory)
    root, manifest = load_artifact(artifact_dir or directory.parent.parent)
    launcher = _launcher(manifest, record.launcher)
    where = directory / RECORD_NAME
    outputs = {
        o.id: _in_run_folder(directory, o.path, f"output {o.id!r}", where)
        for o in record.outputs
        if not o.preexisting
    }
    log = _in_run_folder(
        directory, record.log.path if record.log is not None else LOG_NAME, "log", where
    )
    return measure(
        launcher,
        log=log,
        files_base=root / record.workdir,
        outputs=outputs,
        context=template_context(record.params, record.seed, directory),
        roots=(directory, Path(root)),
    )


def _lexically_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def replay_log(
    artifact_dir: str | os.PathLike[str],
    launcher_id: str,
    log: str | os.PathLike[str] | None,
    *,
    outputs: Mapping[str, str | os.PathLike[str]] | None = None,
    seed: int | None = None,
    run_dir: str | os.PathLike[str] | None = None,
) -> list[MeasuredValue]:
    """Extract a launcher's measurements from a sample log and output files.

    As the replay of samples does (``spec/manifest.md#extraction``): ``file:`` paths and
    ``{run_dir}`` are the log's directory, ``{seed}`` the launcher's first seed, or 0. A file
    named inside the artifact must stay inside it; one outside is read inside its own directory."""
    root, manifest = load_artifact(artifact_dir)
    launcher = _launcher(manifest, launcher_id)
    if seed is None:
        seed = launcher.seeds[0] if launcher.seeds else 0
    base_dir = Path(os.path.abspath(root))  # noqa: PTH100
    log_path = None if log is None else Path(os.path.abspath(log))  # noqa: PTH100 - unresolved
    given = {key: Path(os.path.abspath(value)) for key, value in (outputs or {}).items()}  # noqa: PTH100
    roots = [base_dir]
    for path in [*([] if log_path is None else [log_path]), *given.values()]:
        if not _lexically_inside(path, base_dir) and path.parent not in roots:
            roots.append(path.parent)
    base = log_path.parent if log_path is not None else root
    return measure(
        launcher,
        log=log_path,
        files_base=base,
        outputs=dict(given),
        context=template_context(launcher.params, seed, base if run_dir is None else Path(run_dir)),
        roots=roots,
    )


def check_samples(
    artifact_dir: str | os.PathLike[str], launchers: Sequence[str] | None = None
) -> list[SampleCheck]:
    """Replay every shipped sample and compare with its expected values (as validation's
    replay does: :func:`reprobridge_sdk.validation.replay.replay_samples`)."""
    from reprobridge_sdk.validation.replay import replay_samples  # noqa: PLC0415 - on use

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
