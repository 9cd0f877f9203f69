"""A run's declared outputs: their form, whether the run produced them, and their copy into
the run directory through the safe file layer (the rules: ``spec/runner.md#runner``, Outputs)."""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from reprobridge_sdk.extract.extraction import ExtractionError, render_template
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.atomic import atomic_write_bytes
from reprobridge_sdk.model import Launcher
from reprobridge_sdk.model.evidence import Failure, FileDigest, OutputRecord

from ._failure import failure_reason
from .evidence import OUTPUTS_DIR, refused_code

__all__ = ["collect_outputs", "copy_output", "declared_paths", "output_form", "signature"]

#: An output's signature before the run (``None``: it did not exist).
Before = dict[str, tuple[int, int, int] | None]


def signature(path: Path) -> tuple[int, int, int] | None:
    """What tells an output rewritten by the run from one left as it was: its inode, size and
    time, of the name itself (``lstat``: a link planted there is not followed)."""
    try:
        stat = path.lstat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def copy_output(source: Path, run_dir: Path, output_id: str, bases: tuple[Path, ...]) -> FileDigest:
    """Copy a produced output into the run directory through the safe file layer.

    The output must be a regular file (not a link) inside one of ``bases``; at most
    :data:`~reprobridge_sdk.io.safefs.MAX_HASH_BYTES` are copied into an ``O_EXCL`` temporary,
    hashed as they pass, then renamed."""
    target_dir = run_dir / OUTPUTS_DIR / output_id
    target = target_dir / source.name
    digest = hashlib.sha256()
    cap = safefs.MAX_HASH_BYTES
    size = 0
    with _open_contained(source, bases, cap) as handle:

        def chunks() -> Iterator[bytes]:
            nonlocal size
            end = time.monotonic() + safefs.HASH_SECONDS
            while chunk := handle.read(1 << 20):
                size += len(chunk)
                if size > cap:
                    msg = f"{source} grew beyond {cap} bytes while it was copied"
                    raise safefs.UnsafeFileError("too-large", source, msg, limit=cap)
                if time.monotonic() > end:
                    msg = f"{source} took longer than {safefs.HASH_SECONDS} s to copy"
                    limit = round(safefs.HASH_SECONDS)
                    raise safefs.UnsafeFileError("too-slow", source, msg, limit=limit)
                digest.update(chunk)
                yield chunk

        atomic_write_bytes(target, chunks(), root=run_dir, mode=0o644)
    relative = target.relative_to(run_dir).as_posix()
    return FileDigest(path=relative, sha256=digest.hexdigest(), size=size)


def _open_contained(path: Path, bases: tuple[Path, ...], cap: int) -> io.FileIO:
    """``path`` opened inside the first of ``bases`` it stays in (resolved by the safe file
    layer from that base's descriptor, so nothing swapped meanwhile leads it out; the file
    itself not a link), else ``UnsafeFileError`` (``escapes``). Any other refusal is the
    file's own."""
    for base in bases:
        try:
            return safefs.open_regular(path, root=base, max_bytes=cap, allow_links=False)
        except safefs.UnsafeFileError as exc:
            if exc.reason != "escapes":
                raise
    msg = f"{path} leads outside the artifact and the run directory"
    raise safefs.UnsafeFileError("escapes", path, msg)


def output_form(template: str, workdir: str = ".") -> str | None:
    """F001/F002 for an output path template, as the validator reports them.

    A template that starts with ``{run_dir}`` is inside the run directory by construction
    (what follows must not climb out with ``..``); otherwise it is relative to the working
    directory and must be neither absolute (F001) nor climb out of the artifact (F002).
    """
    from reprobridge_sdk.validation.files import check_path_form  # noqa: PLC0415 - light

    if template.startswith("{run_dir}"):
        rest = template[len("{run_dir}") :].lstrip("/")
        return None if not rest else check_path_form(rest)
    return check_path_form(template, workdir)


def declared_paths(
    launcher: Launcher, workdir: Path, context: Mapping[str, object]
) -> tuple[dict[str, Path], Before, Failure | None]:
    """Where each declared output will be, its signature before the run, and the failure of
    an output path that is refused or cannot be rendered (the run does not start then)."""
    failure: Failure | None = None
    paths: dict[str, Path] = {}
    before: Before = {}
    for output in launcher.outputs:
        form = output_form(output.path, launcher.workdir or ".")
        if form is not None:
            detail = (
                f"output {output.id!r} path {output.path!r} "
                + ("is absolute" if form == "F001" else "leads outside the artifact")
                + f" ({form}); it is never read or copied"
            )
            failure = failure_reason(failure, "missing-output", detail, None)
            continue
        try:
            path = workdir / render_template(output.path, context)
        except ExtractionError as exc:
            failure = failure_reason(failure, "template-error", exc.message, None)
            continue
        paths[output.id] = path
        before[output.id] = signature(path)
    return paths, before, failure


def collect_outputs(
    launcher: Launcher,
    paths: dict[str, Path],
    before: Before,
    *,
    run_dir: Path,
    roots: tuple[Path, ...],
    failure: Failure | None,
    last: str | None,
) -> tuple[list[OutputRecord], dict[str, Path], Failure | None]:
    """Copy each output the run produced into the run directory: the records, the copies of
    the outputs the run wrote (not found unchanged from before), and the run's failure."""
    produced: dict[str, Path] = {}
    records: list[OutputRecord] = []
    for output in launcher.outputs:
        path = paths[output.id]
        after = signature(path)
        if after is None:
            if output.required:
                detail = f"output {output.id!r} was not produced"
                failure = failure_reason(failure, "missing-output", detail, last)
            continue
        preexisting = before[output.id] is not None and before[output.id] == after
        try:
            digest = copy_output(path, run_dir, output.id, roots)
        except safefs.UnsafeFileError as exc:
            detail = f"{refused_code(exc)}: output {output.id!r} refused: {exc.message}"
            failure = failure_reason(failure, "missing-output", detail, last)
            continue
        records.append(OutputRecord(id=output.id, preexisting=preexisting, **digest.model_dump()))
        if not preexisting:
            produced[output.id] = run_dir / digest.path
        elif output.required:
            detail = f"output {output.id!r} existed before the run and was not rewritten"
            failure = failure_reason(failure, "missing-output", detail, last)
    return records, produced, failure
