"""A run's declared outputs: their form, whether the run produced them, and their copy into
the run directory through the safe file layer (the rules are in
:mod:`reprobridge_sdk.run.runner`)."""

from __future__ import annotations

import io
from pathlib import Path

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model.evidence import FileDigest

from .evidence import OUTPUTS_DIR

__all__ = ["copy_output", "output_form", "signature"]


def signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def copy_output(source: Path, run_dir: Path, output_id: str, bases: tuple[Path, ...]) -> FileDigest:
    """Copy a produced output into the run directory through the safe file layer.

    The output must resolve inside one of ``bases`` (the artifact root, the run directory)
    and be a regular file; the copy is written to an ``O_EXCL`` temporary and renamed.
    """
    target_dir = run_dir / OUTPUTS_DIR / output_id
    target = target_dir / source.name
    with _open_contained(source, bases) as handle:
        safefs.atomic_write_bytes(
            target, iter(lambda: handle.read(1 << 20), b""), root=run_dir, mode=0o644
        )
    relative = target.relative_to(run_dir).as_posix()
    return FileDigest(
        path=relative, sha256=file_sha256(target, root=run_dir), size=target.stat().st_size
    )


def _open_contained(path: Path, bases: tuple[Path, ...]) -> io.FileIO:
    """``path`` opened inside the first of ``bases`` it stays in (resolved by the safe file
    layer from that base's descriptor, so nothing swapped meanwhile leads it out), else
    ``UnsafeFileError`` (``escapes``). Any other refusal is the file's own."""
    for base in bases:
        try:
            return safefs.open_regular(path, root=base)
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
