"""A batch file of submissions: ``reprobridge audit --table --submissions FILE``.

TOML of schema ``batch-1.0``; reading it never raises a traceback (A090-A093, spec/audit.md
§11.2 "Submissions file").
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.errors import ReproBridgeError, UsageError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import reading
from reprobridge_sdk.io.pointer import from_loc, pointer_of

from .submissions import Opened, _unpack_into, is_archive, relabel

if TYPE_CHECKING:
    from reprobridge_sdk.audit.table import RowPolicy
    from reprobridge_sdk.model.audit import AuditFinding, AuditTable, TableRow
    from reprobridge_sdk.model.batch import BatchFile, Submission, TrustPolicy
    from reprobridge_sdk.signing.keys import TrustedKeys

__all__ = ["Batch", "audit_batch", "digest_finding", "load_batch", "open_batch"]

#: The largest submissions file read (a few lines for each of thousands of submissions).
MAX_BATCH_BYTES = 16 * 1024 * 1024
_HEADER = re.compile(r"^\s*\[\[\s*submission\s*\]\]")
_DEFAULTS = re.compile(r"^\s*\[\s*defaults\s*[.\]]")
_ANY_HEADER = re.compile(r"^\s*\[")
_UNKNOWN = re.compile(r"unknown key '([^']+)'")


@dataclass
class Batch:
    """A batch file read and checked: where it is, its model and its text's lines."""

    file: str
    folder: Path
    model: BatchFile
    lines: list[str]

    def line_of(self, loc: Sequence[Any], key: str | None = None) -> int:
        """The line (1-based; 0: unknown) of the key at ``loc`` (a pydantic location)."""
        return _line_of(self.lines, loc, key)


def _section(lines: list[str], loc: Sequence[Any]) -> tuple[int, int]:
    """Where the table ``loc`` names begins, and the line to search from (0-based)."""
    if len(loc) >= 2 and loc[0] == "submission" and isinstance(loc[1], int):
        headers = [i for i, text in enumerate(lines) if _HEADER.match(text)]
        if loc[1] < len(headers):
            return headers[loc[1]], headers[loc[1]] + 1
    if loc and loc[0] == "defaults":
        for i, text in enumerate(lines):
            if _DEFAULTS.match(text):
                return i, i
    return -1, 0


def _line_of(lines: list[str], loc: Sequence[Any], key: str | None) -> int:
    start, search = _section(lines, loc)
    names = [str(p) for p in loc if isinstance(p, str) and p not in {"submission", "defaults"}]
    wanted = key or (names[-1] if names else None)
    if wanted is not None:
        key_re = re.escape(wanted)
        pattern = re.compile(rf"(?:^|[\s{{,.])\"?{key_re}\"?\s*=|^\s*\[[^\]]*\b{key_re}\b")
        for i in range(search, len(lines)):
            if i > search and _HEADER.match(lines[i]):
                break
            if pattern.search(lines[i]):
                return i + 1
    return start + 1 if start >= 0 else 0


def _fail(file: str, problems: list[Finding]) -> UsageError:
    head = problems[0]
    where = f"{file}:{head.line}" if head.line else file
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return UsageError(f"{where}: {head.message}{more}", problems)


def _parse(file: str) -> tuple[dict[str, Any], list[str]]:
    try:
        text = reading.decode(reading.read_bytes(file, max_bytes=MAX_BATCH_BYTES))
        return reading.parse_toml(text), text.splitlines()
    except reading.Unreadable as exc:
        if exc.problem in {"syntax", "too-deep"}:
            found = finding(
                "A090",
                f"not TOML: {exc.message}",
                file=file,
                line=exc.line,
                col=exc.col,
                hint="the submissions file is TOML: [defaults] and one [[submission]] per artifact",
            )
        else:
            problem = "not UTF-8" if exc.problem == "encoding" else exc.message
            msg = f"cannot read the submissions file {file}: {problem}"
            found = finding("A090", msg, file=file)
        raise _fail(file, [found]) from None


def _model(file: str, data: dict[str, Any], lines: list[str]) -> BatchFile:
    from pydantic import ValidationError  # noqa: PLC0415 - with the model

    from reprobridge_sdk.model.batch import BatchFile  # noqa: PLC0415

    try:
        return BatchFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            loc = error["loc"]
            unknown = _UNKNOWN.search(error["msg"])
            key = unknown.group(1) if unknown else None
            pointer = from_loc(data, loc)
            message = error["msg"].removeprefix("Value error, ")
            problems.append(
                finding(
                    "A091",
                    f"{pointer}: {message}",
                    file=file,
                    line=_line_of(lines, loc, key),
                    path=pointer,
                    hint="see the batch-1.0 schema (reprobridge schema batch) for the keys "
                    "a submissions file takes",
                )
            )
        raise _fail(file, problems) from None


def load_batch(path: str | os.PathLike[str]) -> Batch:
    """Read and check the batch file ``path`` (module docstring); ``UsageError`` otherwise."""
    file = os.fspath(path)
    data, lines = _parse(file)
    model = _model(file, data, lines)
    batch = Batch(file, Path(file).absolute().parent, model, lines)
    seen: dict[str, int] = {}
    problems = []
    for index, entry in enumerate(model.submission):
        if entry.id in seen:
            problems.append(
                finding(
                    "A091",
                    f"submission id {entry.id!r} is given twice "
                    f"(first as submission {seen[entry.id] + 1})",
                    file=file,
                    line=batch.line_of(("submission", index, "id")),
                    path=f"/submission/{index}/id",
                    hint="give each submission its own id: it names the submission's row",
                )
            )
        seen.setdefault(entry.id, index)
    if problems:
        raise _fail(file, problems)
    return batch


def _inside(batch: Batch, rel: str, loc: Sequence[Any]) -> tuple[Path | None, Finding | None]:
    """The path ``rel`` in the batch folder, or why it is refused (A092, located)."""
    pointer = pointer_of(loc)

    def refused(why: str, hint: str) -> tuple[None, Finding]:
        line = batch.line_of(loc)
        return None, finding(
            "A092", f"{pointer}: {rel!r} {why}", file=batch.file, line=line, path=pointer, hint=hint
        )

    parts = rel.replace("\\", "/").split("/")
    if Path(rel).is_absolute() or re.match(r"^[A-Za-z]:", rel) or rel.startswith(("/", "\\")):
        return refused("is an absolute path", "write the path relative to the file's folder")
    if ".." in parts:
        return refused("leaves the file's folder", "keep every submission below the file's folder")
    target = batch.folder.joinpath(*parts)
    base = os.path.realpath(batch.folder)
    real = os.path.realpath(target)
    if os.path.commonpath([base, real]) != base:
        return refused("leads out of the file's folder (a link)", "copy the submission in")
    if not target.exists():
        return refused("does not exist", "check the path, relative to the file's folder")
    return target, None


def _policy_text(policy: TrustPolicy | None, cli_keys: TrustedKeys | None) -> str:
    if policy is None:
        return f"signed by {cli_keys.source} (any key)" if cli_keys is not None else "ledger only"
    if policy.unsigned:
        return "unsigned allowed"
    who = ", ".join(policy.signers) if policy.signers else "any key"
    return f"signed by {policy.keys} ({who})"


def _keys_for(
    batch: Batch, policy: TrustPolicy | None, loc: tuple[Any, ...], cli_keys: TrustedKeys | None
) -> TrustedKeys | None:
    """The keys a policy requires (None: no signature required); UsageError (A091, A092,
    K005) when the policy cannot be applied."""
    from reprobridge_sdk.signing.keys import load_trusted_keys  # noqa: PLC0415

    if policy is None:
        return cli_keys
    if policy.unsigned:
        return None
    pointer = pointer_of(loc)
    if policy.keys is None:
        msg = f"{pointer}: a policy that requires signatures names its KEYS file"
        line = batch.line_of(loc)
        hint = "set keys = 'KEYS' (relative to the file's folder), or unsigned = true"
        raise _fail(batch.file, [finding("A091", msg, file=batch.file, line=line, hint=hint)])
    where, problem = _inside(batch, policy.keys, (*loc, "keys"))
    if problem is not None or where is None:
        raise _fail(batch.file, [problem] if problem else [])
    keys = load_trusted_keys(where)
    if not policy.signers:
        return keys
    chosen = {k: v for k, v in keys.keys.items() if v.name in policy.signers or k in policy.signers}
    known = {v.name for v in chosen.values()} | set(chosen)
    missing = [s for s in policy.signers if s not in known]
    if missing:
        msg = f"{pointer}/signers: {', '.join(missing)} not in {policy.keys}"
        line = batch.line_of((*loc, "signers"))
        hint = "name signers as the KEYS file does (its first column) or by key id"
        raise _fail(batch.file, [finding("A091", msg, file=batch.file, line=line, hint=hint)])
    return dataclasses.replace(keys, keys=chosen)


def _policies(batch: Batch, cli_keys: TrustedKeys | None) -> list[RowPolicy]:
    from reprobridge_sdk.audit.table import RowPolicy  # noqa: PLC0415
    from reprobridge_sdk.model.batch import Budget  # noqa: PLC0415 - with the model
    from reprobridge_sdk.model.launcher import memory_bytes  # noqa: PLC0415

    out = []
    default = batch.model.defaults.trust
    for index, entry in enumerate(batch.model.submission):
        own = entry.trust is not None
        loc: tuple[Any, ...] = ("submission", index, "trust") if own else ("defaults", "trust")
        keys = _keys_for(batch, entry.trust or default, loc, cli_keys)
        budget = entry.budget or batch.model.defaults.budget or Budget()
        out.append(
            RowPolicy(
                expect_head=entry.expect_head,
                trust=keys,
                budget_time=budget.time,
                budget_memory=memory_bytes(budget.memory) if budget.memory else None,
                budget_cpus=budget.cpus,
            )
        )
    return out


def digest_finding(batch: Batch, index: int, entry: Submission, item: Opened) -> Finding | None:
    """A093 when the archive of submission ``index`` is not the one the file records."""
    want = entry.archive_sha256
    if want is None or item.root is None or item.digest == want:
        return None
    got = f"its SHA-256 is {item.digest}" if item.digest else "it is not a packed archive"
    return finding(
        "A093",
        f"submission {entry.id}: {item.given} is not the archive recorded ({want}): {got}",
        file=batch.file,
        line=batch.line_of(("submission", index, "archive_sha256")),
        path=f"/submission/{index}/archive_sha256",
        hint="audit the archive the authors submitted, or record its digest again "
        "(reprobridge pack prints it)",
    )


def _info(batch: Batch, entry: Submission, cli_keys: TrustedKeys | None) -> dict[str, Any]:
    defaults = batch.model.defaults
    budget = entry.budget or defaults.budget
    return {
        "id": entry.id,
        "trust": _policy_text(entry.trust or defaults.trust, cli_keys),
        "expect_head": entry.expect_head,
        "reviewers": entry.reviewers if entry.reviewers is not None else defaults.reviewers,
        "budget": budget.model_dump(exclude_none=True) if budget is not None else None,
        "notes": entry.notes,
        "decision": entry.decision,
    }


def _tampered(row: TableRow, why: AuditFinding) -> None:
    """A row whose archive is not the one recorded: failed, tampered, no badge (A093)."""
    from reprobridge_sdk.audit.present import reason_counts  # noqa: PLC0415

    row.findings = [why, *row.findings]
    row.why = why
    row.evidence = "tampered"
    row.status = "failed" if row.status == "passed" else row.status
    badges = row.badges
    if badges is None:
        return
    for name, value in badges.model_dump().items():
        if value is True:
            setattr(badges, name, False)
            badges.reasons[name] = [why, *badges.reasons.get(name, [])]
    row.withheld = {k: reason_counts(v) for k, v in badges.reasons.items() if v}


def open_batch(batch: Batch, scratch: Path) -> list[tuple[Opened, str]]:
    """Each submission opened (an archive unpacked below ``scratch``) and the path to audit
    (a path that does not exist for a refused submission: its row is an error row)."""
    out = []
    for index, entry in enumerate(batch.model.submission):
        given = (Path(batch.file).parent / entry.path).as_posix()
        target, problem = _inside(batch, entry.path, ("submission", index, "path"))
        refused = os.fspath(scratch / f"{index:04d}-refused")
        if problem is not None or target is None:
            out.append((Opened(given, None, findings=[problem] if problem else []), refused))
        elif is_archive(target):
            item = _unpack_into(os.fspath(target), scratch / f"{index:04d}")
            item.given = given
            out.append((item, item.target if item.root is not None else refused))
        else:
            out.append((Opened(given, target), os.fspath(target)))
    return out


def audit_batch(
    path: str | os.PathLike[str],
    attempts: Sequence[str] | None = None,
    *,
    trust: TrustedKeys | None = None,
    **options: Any,
) -> AuditTable:
    """``reprobridge audit --table --submissions FILE``: one row per submission, named by
    its id, audited with its own ledger head and trust policy (``trust``: the keys of a
    submission whose file states no policy); ``options`` as for ``audit_table``."""
    from reprobridge_sdk.audit import audit_table  # noqa: PLC0415 - the command's own import
    from reprobridge_sdk.audit.verdict import as_audit_finding  # noqa: PLC0415
    from reprobridge_sdk.model.audit import SubmissionInfo  # noqa: PLC0415

    batch = load_batch(path)
    entries = batch.model.submission
    if not entries:
        msg = f"{batch.file} lists no [[submission]]"
        raise _fail(batch.file, [finding("A091", msg, file=batch.file, line=1)])
    policies = _policies(batch, trust)
    with tempfile.TemporaryDirectory(prefix="rb-batch-") as scratch:
        opened = open_batch(batch, Path(scratch))
        items = [item for item, _ in opened]
        try:
            table = audit_table(
                [target for _, target in opened],
                attempts,
                archives=[item.digest for item in items],
                names=[entry.id for entry in entries],
                policies=policies,
                **options,
            )
        except ReproBridgeError as exc:
            exc.findings = relabel(exc.findings, items)
            raise
        table = relabel(table, items)
    for index, (row, item, entry) in enumerate(zip(table.rows, items, entries, strict=True)):
        row.label = entry.id
        row.path = item.given
        row.submission = SubmissionInfo.model_validate(_info(batch, entry, trust))
        if item.root is None:  # refused: its own findings, not a missing directory's
            row.findings = [as_audit_finding(f) for f in item.findings]
            row.why = row.findings[0] if row.findings else row.why
            continue
        mismatch = digest_finding(batch, index, entry, item)
        if mismatch is not None:
            _tampered(row, as_audit_finding(mismatch))
            table.passed = False
    table.errors = [f for row in table.rows if row.status == "error" for f in row.findings]
    return table
