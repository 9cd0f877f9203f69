"""Trust checks of an attempt beyond each run's own files: the run ledger (A050-A057, spec
runner.md#ledger) and the signatures (K001-K007, spec signing.md#signatures).

A signature proves who signed and ledgered a run, not that its numbers came from running the
experiment: only re-execution (:mod:`.rerun`) checks that.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import reading, safefs
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.attestation import RUN_PREDICATE, STATEMENT_TYPE
from reprobridge_sdk.run.ledger import LedgerCheck, LedgerState, RunOnDisk, check_ledger
from reprobridge_sdk.signing.dsse import verify_envelope
from reprobridge_sdk.signing.keys import TrustedKeys
from reprobridge_sdk.signing.statement import ENVELOPE_NAME

from .verify import RunEvidence

__all__ = ["MAX_ENVELOPE_BYTES", "check_attempt_ledger", "check_signatures"]

#: An envelope larger than this is not read (K007): a record's statement is a few KiB.
MAX_ENVELOPE_BYTES = 16 * 1024 * 1024


def check_attempt_ledger(
    attempt_dir: Path,
    runs: Sequence[RunEvidence],
    expect_head: str | None,
    *,
    required: bool = False,
) -> LedgerCheck | None:
    """The ledger check of an attempt directory; ``None`` for a single run directory.
    ``required`` (under ``--trust``): a missing ledger is A068, an error."""
    if (attempt_dir / RECORD_NAME).is_file():
        return None
    on_disk = [
        RunOnDisk(
            rel=run.rel,
            run_id=run.record.run_id,
            status=run.record.status,
            # the bytes the verification parsed (one read: the ledger is compared with the
            # record that was judged); hashed by name only for a run verified elsewhere
            record_sha256=run.record_sha256 or file_sha256(run.path / RECORD_NAME),
        )
        for run in runs
        if run.record is not None
    ]
    check = check_ledger(attempt_dir, on_disk, expect_head=expect_head, required=required)
    by_rel = {run.rel: run for run in runs}
    for rel, items in check.per_run.items():
        by_rel[rel].findings.extend(items)
    return check


def _safe(base: Path, relative: str) -> Path | None:
    if not relative or relative.startswith(("/", "\\")) or ".." in relative.split("/"):
        return None
    return base.joinpath(*relative.split("/"))


def _subject_problem(run_dir: Path, name: str, want: str) -> str | None:
    """Why the signed subject ``name`` is not the file that was signed, or ``None``.

    A subject is a relative path in the run folder (absolute or ``..``: not in it), opened
    from the run folder without following links, a regular file hashed under the evidence
    caps: a link (even to a byte-identical copy) or a FIFO is refused, never followed."""
    target = _safe(run_dir, name)
    if target is None:
        return f"the signed file {name} is not in the run directory"
    try:
        digest = file_sha256(
            target,
            root=run_dir,
            allow_links=False,
            max_bytes=safefs.MAX_HASH_BYTES,
            deadline=safefs.HASH_SECONDS,
        )
    except FileNotFoundError:
        return f"the signed file {name} is not in the run directory"
    except safefs.UnsafeFileError as exc:
        return f"the signed file {name} is refused: {exc.message}"
    return None if digest == want else f"{name} is not the file that was signed"


def check_signatures(
    run: RunEvidence, trusted: TrustedKeys, ledger: LedgerState | None
) -> str | None:
    """Verify one run's envelope; add findings to ``run``; return the signer's name."""
    record = run.record
    if record is None:
        return None
    where = f"{run.rel}/{ENVELOPE_NAME}".lstrip("/")
    path = run.path / ENVELOPE_NAME
    if not path.is_file():
        run.findings.append(
            finding(
                "K001",
                f"run {record.run_id} is not signed",
                file=where,
                hint="sign runs with 'reprobridge run --sign' and a key the KEYS file trusts",
            )
        )
        return None
    try:  # an envelope in the run directory: a regular file, no link, bounded
        data = reading.read_json(
            path, root=path.parent, allow_links=False, max_bytes=MAX_ENVELOPE_BYTES
        )
    except reading.Unreadable:
        data = None
    verified, problems = verify_envelope(data, trusted, where=where)
    if verified is None:
        run.findings.extend(problems)
        return None
    run.findings.extend(_statement_problems(run, verified.statement, ledger, where))
    return verified.signer


def _statement_problems(
    run: RunEvidence, statement: dict[str, object], ledger: LedgerState | None, where: str
) -> list[Finding]:
    record = run.record
    assert record is not None
    out: list[Finding] = []

    def bad(message: str) -> None:
        out.append(finding("K004", message, file=where))

    predicate = statement.get("predicate")
    if (
        statement.get("_type") != STATEMENT_TYPE
        or statement.get("predicateType") != RUN_PREDICATE
        or not isinstance(predicate, dict)
    ):
        bad("the signed statement is not an RRA run statement")
        return out
    if predicate.get("run_id") != record.run_id or predicate.get("artifact") != record.artifact:
        bad(f"the signed statement is about run {predicate.get('run_id')!r}, not this one")
    subjects = statement.get("subject")
    names: set[str] = set()
    for subject in subjects if isinstance(subjects, list) else []:
        name = subject.get("name") if isinstance(subject, dict) else None
        digest = subject.get("digest", {}) if isinstance(subject, dict) else {}
        want = digest.get("sha256") if isinstance(digest, dict) else None
        if not isinstance(name, str) or not isinstance(want, str):
            bad("a subject of the signed statement has no name or sha256")
            continue
        names.add(name)
        problem = _subject_problem(run.path, name, want)
        if problem is not None:
            bad(problem)
    if RECORD_NAME not in names:
        bad("the signed statement does not cover record.json")
    link = predicate.get("ledger")
    if isinstance(link, dict) and ledger is not None and ledger.exists:
        held = {(e.seq, e.hash, e.run_id) for e in ledger.entries}
        if (link.get("seq"), link.get("entry"), record.run_id) not in held:
            bad(
                f"the signed ledger entry {link.get('seq')} of run {record.run_id} is not in "
                "the ledger: the ledger was rewritten after the run was signed"
            )
    return out
