"""A run's evidence record on disk: the first write and the space reserved for the last one,
the final write (whole even on a full disk), and the sealing (ledger, then signature)."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.attestation import LedgerLink
from reprobridge_sdk.model.evidence import EvidenceRecord, Failure

from .evidence import write_record
from .ledger import append_run

if TYPE_CHECKING:
    from ._execute import Shared

__all__ = ["RESERVE", "RESERVE_BYTES", "final_write", "first_write", "seal_run"]


#: Bytes set aside in each run directory while the run goes on (``.reserve``), freed just
#: before the final record is written: a launcher that fills the disk still gets a final,
#: failed record instead of a ``running`` one that reads as interrupted.
RESERVE_BYTES = 128 * 1024
RESERVE = ".reserve"


def first_write(run_dir: Path, record: EvidenceRecord, *, durable: bool = False) -> None:
    """The first record of a run and the reserve; if either fails the run directory is removed and
    the run not started. The interim record is not fsynced (the final one replaces it)."""
    try:
        write_record(run_dir, record, durable=durable)
        _reserve(run_dir)
    except OSError as exc:
        for leftover in (run_dir / RESERVE, run_dir / RECORD_NAME):
            leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            run_dir.rmdir()
        full = " (the disk is full)" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        msg = f"cannot write the record in {run_dir}: {exc.strerror}{full}; the run was not started"
        raise ArtifactError(msg) from None


def _reserve(run_dir: Path) -> None:
    """Set :data:`RESERVE_BYTES` aside; ENOSPC is fatal, other refusals (a file-size limit,
    a file system without ``fallocate``) leave the run without a reserve."""
    reserve = run_dir / RESERVE
    fd = safefs.create_exclusive(reserve, root=run_dir)
    try:
        os.posix_fallocate(fd, 0, RESERVE_BYTES)
    except OSError as exc:
        os.close(fd)
        reserve.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise
        return
    os.close(fd)


def final_write(run_dir: Path, record: EvidenceRecord) -> bool:
    """Write the final record in the space the reserve held; False if it could not be.

    When the full record cannot be written (a full disk), a failed record saying so is
    written instead; the record on disk is always whole (written atomically).
    """
    (run_dir / RESERVE).unlink(missing_ok=True)
    try:
        write_record(run_dir, record)
    except OSError as exc:
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        record.status = "failed"
        record.failure = Failure(
            reason="internal-error",
            detail=f"cannot write the record: {exc.strerror}"
            + (" (the disk is full)" if full else ""),
        )
        # The failed record without the run's details is about the size of the first one.
        small = record.model_copy(
            update={"measurements": [], "outputs": [], "landmarks": [], "log": None}
        )
        with contextlib.suppress(OSError):
            write_record(run_dir, small)
        return False
    return True


def seal_run(shared: Shared, run_dir: Path, record: EvidenceRecord) -> None:
    """After the final record: append the run to the ledger, then sign it if asked.

    Always on the client, never a remote worker, so the ledger stays one chain. A ledger or
    envelope that cannot be written leaves the run unledgered or unsigned (A055, K001), never
    undone."""
    try:
        entry = append_run(
            shared.runs_dir,
            run_id=record.run_id,
            launcher=record.launcher,
            seed=record.seed,
            scope=record.scope,
            status=record.status,
            # the record the runner just wrote, read without following a link
            record_sha256=file_sha256(
                run_dir / RECORD_NAME,
                root=run_dir,
                allow_links=False,
                max_bytes=safefs.MAX_EVIDENCE_BYTES,
            ),
        )
    except (OSError, safefs.UnsafeFileError):
        return
    if shared.signer is None:
        return
    from reprobridge_sdk.signing.dsse import sign_payload  # noqa: PLC0415 - only when signing
    from reprobridge_sdk.signing.statement import (  # noqa: PLC0415
        ENVELOPE_NAME,
        run_statement,
        statement_bytes,
    )

    statement = run_statement(run_dir, record, LedgerLink(seq=entry.seq, entry=entry.hash))
    envelope = sign_payload(statement_bytes(statement), shared.signer)
    with contextlib.suppress(OSError):
        atomic_write_json(run_dir / ENVELOPE_NAME, envelope.to_json())
