"""Evidence verification: what must hold before a run's number counts (spec ``evidence``).

The auditor believes files, never the producer's word. For every run directory of an attempt
it reads ``record.json`` and checks, each failure a finding of family A:

* the record parses and belongs to the artifact (A001, A002);
* the log and every output match the digests in the record (A003-A006);
* each task value is re-extracted from the recorded log or output with the launcher's own
  extractor and transform and equals the recorded value (A007, A008);
* the code tree digest and lock digest in the record equal the artifact's (A009, A011);
  a missing digest is a warning (A013);
* the record's scope and command are its launcher's (A014, A015): a smoke run cannot be
  passed off as a scored one;
* a value read from an output that existed before the run, or that is byte-identical to a
  file of the refined code tree (a score file shipped in the codebase), never counts (A018,
  A019); an output byte-identical to one of the launcher's declared samples (earlier honest
  runs' outputs, which a deterministic experiment reproduces byte for byte) counts, with a
  warning on its task (A035);
* a record whose ``drift`` is not empty (its environment differed from the lock) counts,
  with a warning (A036);
* a record that names its environment snapshot by digest (``environment_sha256``, format
  1.1) has it in its runs directory (``.env/<sha256>.json``, the run directory's parent):
  a missing one is a warning and the value counts (A065); one that is not the file the
  digest names (another content, a link, too large, not a snapshot) is an error (A066). A
  record of format 1.0 embeds the snapshot and needs nothing more;
* a run that failed, was interrupted or is still running gives no value (A021-A023);
* the run folder holds no symbolic link or special file anywhere, by the auditor's own
  bounded scan that follows no link (:func:`~reprobridge_sdk.run.evidence.scan_run_folder`;
  the record's ``run_folder`` is not trusted, but what it names counts too), and the scan
  covered it: else A069, a warning (an error under ``--trust``, made so by the auditor).

Artifact-level checks (:func:`artifact_facts`): the refined code and the lock on disk equal
the manifest's digests (A010, A012).

Only files are read: the auditor shares no state with the runner and may run in another
process, on another machine, over directories it has never seen.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk._forward import DocumentView
from reprobridge_sdk.digest import file_sha256, iter_tree_entries, tree_digest
from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.extract.extraction import (
    REASONS,
    ExtractionCache,
    ExtractionError,
    OpenedFile,
    Prepared,
    extract_value,
    prepare,
    read_prepared,
)
from reprobridge_sdk.extract.template import shell_template_matches, template_matches
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import (
    RECORD_NAME,
    EvidenceRecord,
    Launcher,
    MeasuredValue,
    Measurement,
    OutputRecord,
)
from reprobridge_sdk.run.evidence import (
    ENV_DIR,
    SnapshotProblem,
    load_snapshot,
    owner_alive,
    record_owner,
    scan_run_folder,
    scan_summary,
)
from reprobridge_sdk.validation.replay import same_value

from .duplicates import check_duplicates
from .facts import ManifestFacts

if TYPE_CHECKING:
    from reprobridge_sdk.api import ArtifactDir
    from reprobridge_sdk.model import Codebase

__all__ = [
    "ArtifactFacts",
    "RunEvidence",
    "artifact_facts",
    "check_artifact",
    "check_duplicates",
    "check_run",
    "discover_runs",
    "verify_attempt",
]


@dataclass(frozen=True)
class ArtifactFacts:
    """What the auditor knows about the artifact before it looks at any run."""

    root: Path
    #: The manifest, its tasks condensed (:mod:`.facts`).
    manifest: ManifestFacts
    tree_digest: str | None
    lock_digest: str | None
    shipped: frozenset[str]
    findings: tuple[Finding, ...]
    #: Digests of the launchers' declared sample files (logs and outputs).
    samples: frozenset[str] = frozenset()
    #: The manifest as loaded (a :class:`reprobridge_sdk.io.document.Document`), for the validator.
    document: Any = field(default=None, compare=False, repr=False)
    #: How a newer-minor manifest was read (``validation.forward.ForwardView``), or None.
    forward: DocumentView | None = field(default=None, compare=False, repr=False)
    _plain: dict[tuple[str, str], dict[str, object]] = field(default_factory=dict, compare=False)
    _launchers: dict[str, Launcher] = field(default_factory=dict, compare=False, repr=False)

    def extractor(self, launcher_id: str, measurement: Measurement) -> dict[str, object]:
        """The measurement's extractor as a plain mapping that reads its ``log`` argument."""
        key = (launcher_id, measurement.task)
        plain = self._plain.get(key)
        if plain is None:
            plain = {**measurement.extract.model_dump(), "output": None, "file": None}
            self._plain[key] = plain
        return plain

    def launcher(self, launcher_id: str) -> Launcher | None:
        """The first launcher with this id (indexed once: a lookup per run, not a scan)."""
        index = self._launchers
        if not index and self.manifest.launchers:
            for launcher in self.manifest.launchers:
                index.setdefault(launcher.id, launcher)
        return index.get(launcher_id)


@dataclass
class RunEvidence:
    """One run directory after verification."""

    path: Path
    rel: str
    record: EvidenceRecord | None
    findings: list[Finding] = field(default_factory=list)
    values: dict[str, float | None] = field(default_factory=dict)
    #: Warnings that concern one task's value (A035), by task id; also in ``findings``.
    task_notes: dict[str, list[Finding]] = field(default_factory=dict)
    #: Warnings that concern every value of the run (A036, A065); also in ``findings``.
    run_notes: list[Finding] = field(default_factory=list)
    #: Tasks whose value could not be re-extracted because the extractor plugin is missing
    #: (A061) or failed (A062), by task id; also in ``findings``. Such a task is inconclusive.
    unread: dict[str, Finding] = field(default_factory=dict)
    #: SHA-256 of the record's bytes as the verification read them (``None``: not read here).
    record_sha256: str | None = None
    #: The earlier run of another seed whose log or output this run's repeats byte for byte,
    #: with nothing else shared (A079, :mod:`.duplicates`); re-execution may turn it to A038.
    twin: RunEvidence | None = field(default=None, repr=False)

    @property
    def valid(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def succeeded(self) -> bool:
        return self.record is not None and self.record.status == "succeeded"


def _artifact_path(root: Path, relative: str) -> Path:
    return root.joinpath(*relative.split("/"))


def _series_tree(
    root: Path, codebase: Codebase, stack: contextlib.ExitStack
) -> tuple[Path | None, list[Finding]]:
    """The refined code of a patch series as the validator reads it: the checkout in ``code/``
    when it holds the series, else the series applied from the artifact's bundle or the cache in
    a scratch directory
    (removed with ``stack``), else None with C005 (the upstream is not cached). Never fetched
    and never written in the artifact: the auditor needs no network (spec "patch-series")."""
    from reprobridge_sdk.checkout.materialize import (  # noqa: PLC0415 - only for a series
        SeriesPatch,
        bundle_of,
        series_tree,
    )

    tree, found = stack.enter_context(
        series_tree(
            root,
            repository=codebase.upstream.repository,
            commit=codebase.upstream.commit,
            patches=[SeriesPatch(p.path, p.sha256) for p in codebase.refined.patches],
            declared=None,
            bundle=bundle_of(codebase.upstream),
        )
    )
    return tree, found


def artifact_facts(artifact: ArtifactDir) -> ArtifactFacts:
    """Check the artifact's code and lock on disk; collect digests of the files of its code
    tree (``shipped``) and of its launchers' declared samples (``samples``).

    A patch series is read as :func:`_series_tree` says, without network; when its upstream
    is not cached the code tree is the declared ``tree_digest`` (the records' digests are
    compared with it, A009) and C005 is a warning.
    """
    return check_artifact(
        artifact.root, ManifestFacts.of(artifact.manifest), forward=artifact.forward
    )


def check_artifact(
    root: Path, manifest: ManifestFacts, *, forward: DocumentView | None = None
) -> ArtifactFacts:
    """:func:`artifact_facts` of the artifact at ``root`` whose manifest is ``manifest``
    (``forward``: how a newer-minor manifest was read)."""
    with contextlib.ExitStack() as stack:
        return _artifact_facts(root, manifest, forward, stack)


def _artifact_facts(
    root: Path,
    manifest: ManifestFacts,
    forward: DocumentView | None,
    stack: contextlib.ExitStack,
) -> ArtifactFacts:
    findings: list[Finding] = []
    shipped: set[str] = set()
    samples: set[str] = set()
    refined = manifest.codebase.refined
    expected_tree = manifest.codebase.tree_digest
    code_dir: Path | None = None
    if refined.kind == "directory" and refined.path is not None:
        code_dir = _artifact_path(root, refined.path)
        if not safefs.is_inside(code_dir, root):
            code_dir = None  # a link out of the artifact: the validator's F003
    elif refined.kind == "patches":
        code_dir, problems = _series_tree(root, manifest.codebase, stack)
        findings.extend(problems)
    actual: str | None = None
    if code_dir is not None and code_dir.is_dir():
        try:
            for kind, rel, value in iter_tree_entries(code_dir):
                if kind != "l" and (code_dir / rel).stat().st_size > 0:
                    shipped.add(value)
            actual = tree_digest(code_dir)
        except safefs.UnsafeFileError as exc:
            findings.append(
                finding(
                    "A010",
                    f"the refined code cannot be digested: {exc.message}",
                    path="/codebase/tree_digest",
                )
            )
    if code_dir is not None and actual is not None:
        if expected_tree is None:
            expected_tree = actual
        elif actual != expected_tree:
            findings.append(
                finding(
                    "A010",
                    f"the refined code in {refined.path or code_dir.name} has digest {actual}, "
                    f"the manifest says {expected_tree}",
                    path="/codebase/tree_digest",
                    hint="re-run the evidence on the artifact as published",
                )
            )
    for launcher in manifest.launchers:
        for sample in launcher.samples:
            for sample_rel in [sample.log, *sample.outputs.values()]:
                sample_path = _artifact_path(root, sample_rel) if sample_rel else None
                if (
                    sample_path is not None
                    and sample_path.is_file()
                    and sample_path.stat().st_size > 0
                ):
                    with contextlib.suppress(safefs.UnsafeFileError):
                        samples.add(file_sha256(sample_path, root=root))
    lock = manifest.environment.lock
    lock_digest: str | None = None
    if lock is not None:
        lock_path = _artifact_path(root, lock.path)
        on_disk = None
        if lock_path.is_file():
            with contextlib.suppress(safefs.UnsafeFileError):
                on_disk = file_sha256(lock_path, root=root)
        lock_digest = lock.sha256 or on_disk
        if lock.sha256 is not None and on_disk is not None and on_disk != lock.sha256:
            findings.append(
                finding(
                    "A012",
                    f"the lock {lock.path} has digest {on_disk}, the manifest says {lock.sha256}",
                    path="/environment/lock/sha256",
                )
            )
    return ArtifactFacts(
        root=root,
        manifest=manifest,
        tree_digest=expected_tree,
        lock_digest=lock_digest,
        shipped=frozenset(shipped),
        findings=tuple(findings),
        samples=frozenset(samples),
        forward=forward,
    )


def discover_runs(attempt: Path) -> list[Path]:
    """Run directories of an attempt: every directory below it holding a ``record.json``."""
    return [path for _, path in _discover(attempt)]


def _discover(attempt: Path, linked: list[str] | None = None) -> list[tuple[str, Path]]:
    """:func:`discover_runs` with each run's path relative to ``attempt`` (``""``: the
    attempt is itself a run directory), as ``/``-separated text. ``linked`` gets the
    relative path of every link below ``attempt`` that leads to a run directory (a directory
    holding a ``record.json``): never entered, never audited (A067)."""
    if (attempt / RECORD_NAME).is_file():
        return [("", attempt)]
    # One directory listing per directory (``Path.rglob`` made a path object and a stat per
    # entry): directories are entered only when they are not links, as ``rglob`` does; a
    # ``record.json`` counts when it is a file, a link to one included (its read refuses it).
    found: list[tuple[str, Path]] = []
    stack: list[tuple[str, str]] = [(os.fspath(attempt), "")]
    while stack:
        current, prefix = stack.pop()
        try:
            with os.scandir(current) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{prefix}{entry.name}/"))
            elif (
                linked is not None
                and entry.is_symlink()
                and os.path.isfile(os.path.join(entry.path, RECORD_NAME))  # noqa: PTH113, PTH118
            ):
                linked.append(f"{prefix}{entry.name}")
            elif prefix and entry.name == RECORD_NAME and entry.is_file():
                found.append((prefix[:-1], attempt / prefix[:-1]))
    found.sort(key=lambda item: item[0])
    return found


def verify_attempt(
    facts: ArtifactFacts, attempt: Path, cache: ExtractionCache | None = None
) -> list[RunEvidence]:
    """Every run of the attempt directory ``attempt``, verified as the auditor verifies one
    attempt: :func:`discover_runs`, :func:`check_run` (``rel`` relative to ``attempt``, empty
    when ``attempt`` is itself a run directory), then :func:`check_duplicates`."""
    runs: list[RunEvidence] = []
    plans: _Plans = {}
    escape = _leads_out(facts.root, attempt)
    if escape is not None:
        return [_planted(attempt, "", escape)]
    linked: list[str] = []
    found = _discover(attempt, linked)
    for rel in linked:
        message = f"the run folder {rel} is a symbolic link: it is not audited"
        runs.append(_planted(attempt / rel, rel, message))
    try:  # resolved once: each run directory is opened from it (safefs.OpenRoot.below)
        parent: safefs.OpenRoot | None = safefs.OpenRoot(attempt) if found else None
    except (OSError, safefs.UnsafeFileError):
        parent = None
    try:
        for rel, run_dir in found:
            runs.append(_check_one(facts, run_dir, rel, cache, plans, parent))
    finally:
        if parent is not None:
            parent.close()
    check_duplicates(runs)
    return runs


def _leads_out(root: Path, attempt: Path) -> str | None:
    """Why the attempt directory cannot be the artifact's evidence, or ``None``: an attempt
    spelled inside the artifact (its ``runs/``) must stay inside it, every link on its path
    followed; one that leads out is not the artifact's evidence (A067). An attempt given
    outside the artifact is the caller's choice, followed as given."""
    spelled, base = Path(os.path.abspath(attempt)), Path(os.path.abspath(root))  # noqa: PTH100
    lexically = spelled == base or base in spelled.parents
    if not lexically and not safefs.is_inside(spelled.parent, base):
        return None  # neither spelled inside the artifact nor held by a directory of it
    if safefs.is_inside(spelled, base):
        return None
    real = os.path.realpath(spelled)
    return f"the attempt directory {attempt} leads outside the artifact (to {real}): not audited"


def _planted(path: Path, rel: str, message: str) -> RunEvidence:
    """The run of a run folder (or attempt) that is a link: invalid, its record never read."""
    run = RunEvidence(path=path, rel=rel, record=None)
    run.findings.append(
        finding(
            "A067",
            message,
            file=rel or ".",
            hint="submit the run folders themselves, not links to them",
        )
    )
    return run


def _read_record(
    path: Path, rel: str, root: Path | safefs.OpenRoot | None = None
) -> tuple[EvidenceRecord | None, object, str | None, Finding | None]:
    """The record, the runner it names as its owner (``runner``, or 1.0's ``x-runner``) and
    the SHA-256 of the bytes it was parsed from (what the run ledger is compared with), or
    the A001 finding.

    The record is read through the safe file layer: a link, a FIFO, a file over
    :data:`~reprobridge_sdk.io.safefs.MAX_EVIDENCE_BYTES` or JSON nested deeper than
    :data:`~reprobridge_sdk.io.safefs.MAX_JSON_DEPTH` is refused, never followed or parsed.
    ``root``: the run directory, opened once for the run's files (:func:`check_run`).
    """
    record_path = _below(os.fspath(path), RECORD_NAME)
    try:
        raw = safefs.read_bytes(
            record_path,
            root=root or path,
            max_bytes=safefs.MAX_EVIDENCE_BYTES,
            allow_links=False,
        )
        data = safefs.loads_json(raw, path=record_path)
        owner = record_owner(data)
        digest = hashlib.sha256(raw).hexdigest()
        return EvidenceRecord.model_validate(data), owner, digest, None
    except safefs.UnsafeFileError as exc:
        problem = exc.message
    except OSError as exc:
        problem = exc.strerror or str(exc)
    except ValueError as exc:  # JSON or pydantic validation
        problem = str(exc).splitlines()[0]
    return (
        None,
        None,
        None,
        finding(
            "A001",
            f"cannot read the record: {problem}",
            file=f"{rel}/{RECORD_NAME}".lstrip("/"),
        ),
    )


def _open_joined(
    base: Path, found: str | None, root: safefs.OpenRoot | None
) -> tuple[io.FileIO | None, safefs.UnsafeFileError | None]:
    """A log or output of the run at ``base``, its path ``found`` already joined (``None``: it
    leaves the run directory), opened: a regular file, not a link, inside ``base``.

    Returns ``(handle, None)``, ``(None, None)`` when it is missing or leaves the run
    directory, or ``(None, refusal)`` when the file is there but is a link, lies behind a
    linked directory that leads out of ``base`` (even when it is missing there), is not a
    regular file or cannot be opened (A040). A file over
    :data:`~reprobridge_sdk.io.safefs.MAX_HASH_BYTES` is refused from its size, unread.

    One open through the safe file layer (:func:`~reprobridge_sdk.io.safefs.open_regular`
    with ``root=base`` and ``allow_links=False``): every component is resolved from the run
    directory's descriptor, so the file that was checked is the file that is hashed (there is
    no second lookup by name). ``root``, when given, is ``base`` opened once for all the files
    of the run (:func:`check_run`)."""
    if found is None:
        return None, None
    try:
        handle = safefs.open_regular(
            found, root=root or base, allow_links=False, max_bytes=safefs.MAX_HASH_BYTES
        )
    except FileNotFoundError:
        return None, None
    except safefs.UnsafeFileError as exc:
        return None, exc
    return handle, None


def _evidence_file(
    base: Path, relative: str, root: safefs.OpenRoot | None = None
) -> tuple[str | None, str | None, safefs.UnsafeFileError | None, io.FileIO | None, bytes | None]:
    """``(path, sha256, None, descriptor, held)`` of a log or output of the run at ``base``
    (see :func:`_open_joined`), or ``(None, None, refusal, None, None)``: the descriptor it
    hashed is still open (the caller closes it), and ``held`` the bytes hashed when the file
    is small (:func:`_hash_and_hold`): re-extraction reads
    that very file (:func:`_check_run`), not the name again. ``refusal``: why the safe file
    layer refused the file (a link or special file, or over the cap or deadline of
    hashing), ``None`` when it is simply missing or outside the run directory."""
    found = _safe_join(base, relative)
    handle, refused = _open_joined(base, found, root)
    if handle is None:
        return None, None, refused, None, None
    try:
        digest, held = _hash_and_hold(handle, found or relative)
    except safefs.UnsafeFileError as exc:
        handle.close()
        return None, None, exc, None, None
    except BaseException:
        handle.close()
        raise
    return found, digest, None, handle, held


#: Refusals of a log or output for its size or time (F010, F012), not for what it is (A040).
_OVER_LIMIT = frozenset({"too-large", "too-slow"})
#: A log or output up to this size is kept in memory once hashed, for its re-extraction.
_HOLD_BYTES = 1 << 20
_STEP = 1 << 16


def _hash_and_hold(handle: io.FileIO, name: str = "") -> tuple[str, bytes | None]:
    """The SHA-256 of the rest of ``handle`` (to its end, as :func:`handle_sha256`) and, when
    it holds at most :data:`_HOLD_BYTES`, those very bytes (``None`` for a larger file, which
    is hashed in steps and never held whole). At most
    :data:`~reprobridge_sdk.io.safefs.MAX_HASH_BYTES` are read (a file that grows past it is
    ``"too-large"``) for at most :data:`~reprobridge_sdk.io.safefs.HASH_SECONDS`
    (``"too-slow"``)."""
    digest = hashlib.sha256()
    size = os.fstat(handle.fileno()).st_size
    chunks: list[bytes] | None = []
    total = 0
    cap = safefs.MAX_HASH_BYTES
    end = time.monotonic() + safefs.HASH_SECONDS
    want = min(size, _HOLD_BYTES) + 1  # the size fstat gives (plus one byte, to see growth)
    while chunk := handle.read(want):
        digest.update(chunk)
        total += len(chunk)
        if total > cap:
            msg = f"{name} grew beyond {cap} bytes while it was hashed"
            raise safefs.UnsafeFileError("too-large", name, msg, limit=cap)
        if chunks is None and time.monotonic() > end:
            msg = f"{name} took longer than {safefs.HASH_SECONDS} s to hash"
            raise safefs.UnsafeFileError("too-slow", name, msg, limit=round(safefs.HASH_SECONDS))
        if chunks is not None:
            chunks.append(chunk)
            if total > _HOLD_BYTES:
                chunks = None
        want = _STEP
    return digest.hexdigest(), None if chunks is None else b"".join(chunks)


#: At most this many of a run's files are kept open for its re-extraction (a record may list
#: any number of outputs; beyond this, an extraction opens its file itself, as without).
_MAX_KEPT = 32


class _KeptFiles:
    """The run's log and outputs that its launcher's measurements read, kept open after their
    digests were checked, by output id (``None``: the log)."""

    __slots__ = ("files", "wanted")

    def __init__(self, wanted: set[str | None]) -> None:
        self.wanted = wanted
        self.files: dict[str | None, OpenedFile] = {}

    def keep(
        self,
        key: str | None,
        path: str | None,
        handle: io.FileIO | None,
        held: bytes | None,
        *,
        ok: bool,
    ) -> None:
        """Keep ``handle`` (with the bytes ``held`` from its hash) for ``key`` when its digest
        matched and a measurement reads it; close it otherwise. A later file of the same id
        replaces (and closes) the earlier."""
        earlier = self.files.pop(key, None)
        if earlier is not None:
            earlier.close()
        if handle is None:
            return
        if ok and path is not None and key in self.wanted and len(self.files) < _MAX_KEPT:
            self.files[key] = OpenedFile(path, handle, resolve=True, pinned=True, data=held)
        else:
            handle.close()

    def close(self) -> None:
        for opened in self.files.values():
            opened.close()
        self.files.clear()


#: The runner's run ids: ``<launcher>[-s<seed>]-<UTC stamp>-<8 hex>``.
_RUN_ID = re.compile(
    r"^(?P<launcher>.+?)(?:-s(?P<seed>-?[0-9]+))?-(?P<stamp>[0-9]{8}T[0-9]{12}Z)-[0-9a-f]{8}$"
)


def _relabelled(record: EvidenceRecord) -> str | None:
    """Why the record's launcher or seed differs from the ones its run id was made for.

    The runner names a run when it starts (:func:`~reprobridge_sdk.run.evidence.new_run_dir`);
    a record edited afterwards to pass a smoke run off as scored, or a seed-0 run as seed 4,
    keeps the old name. Run ids of another shape (other runners) are not judged.
    """
    match = _RUN_ID.fullmatch(record.run_id)
    if match is None:
        return None
    named_seed = int(match["seed"]) if match["seed"] is not None else None
    if match["launcher"] != record.launcher:
        return (
            f"the run {record.run_id} was started for launcher {match['launcher']}, "
            f"the record says {record.launcher}"
        )
    if named_seed != record.seed:
        return (
            f"the run {record.run_id} was started for seed {named_seed}, "
            f"the record says {record.seed}"
        )
    return None


def _snapshot_problem(runs_dir: Path, digest: str) -> tuple[str, str] | None:
    """Why the snapshot ``digest`` of ``runs_dir`` cannot be used (kind, message), or ``None``.

    One snapshot serves every run of an invocation: it is read and hashed once per audit
    process and file state (cached by the file's inode, size and times).
    """
    try:
        info = (runs_dir / ENV_DIR / f"{digest}.json").lstat()
        stamp: tuple[int, ...] | None = (
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
        )
    except OSError:
        stamp = None
    return _snapshot_verdict(runs_dir, digest, stamp)


@functools.lru_cache(maxsize=256)
def _snapshot_verdict(
    runs_dir: Path, digest: str, stamp: tuple[int, ...] | None
) -> tuple[str, str] | None:
    try:
        load_snapshot(runs_dir, digest)
    except SnapshotProblem as exc:
        return exc.kind, exc.message
    return None


def _safe_join(base: Path, relative: str) -> str | None:
    """``str(base / relative)`` if it stays inside ``base``; ``None`` for escaping paths.

    A string, not a path object (a run's files are named by strings in the loop): joined
    directly when ``relative`` has no empty or ``.`` component, else through the path, so
    the name is always the one ``base.joinpath(*relative.split("/"))`` prints.
    """
    parts = relative.split("/")
    if not relative or relative.startswith(("/", "\\")) or ".." in parts:
        return None
    if "" in parts or "." in parts:
        return os.fspath(base.joinpath(*parts))
    return _below(os.fspath(base), relative)


def _below(directory: str, relative: str) -> str:
    """``str(Path(directory) / relative)`` for a directory spelled as its path prints and a
    ``relative`` without empty, ``.`` or ``..`` components."""
    if directory == ".":
        return relative
    return f"{directory}{relative}" if directory.endswith("/") else f"{directory}/{relative}"


def _argv_matches(launcher: Launcher, record: EvidenceRecord, plan: _Plan | None = None) -> bool:
    """The record's argv is the launcher's argv with templates filled in.

    The program (``argv[0]``) may have been resolved to a path (an interpreter in a virtual
    environment); its file name must then start with the declared one's. Template values
    come from the seed and the params; unknown templates match anything. ``plan``: the
    launcher's (its redacted argv and program name made once).
    """
    want = plan.argv if plan is not None else _redacted_argv(tuple(launcher.argv))
    got = record.argv
    if len(want) != len(got) or not got:
        return False
    values: dict[str, object] = {**launcher.params, **record.params}
    if record.seed is not None:
        values["seed"] = record.seed
    if launcher.shell:
        # The command line is rendered with every value quoted for the shell where it stands
        # (the runner's render_argv): match it with the same quoting.
        first = want[0] == got[0] or shell_template_matches(want[0], got[0], values)
        return first and all(
            _arg_matches(w, g, values) for w, g in zip(want[1:], got[1:], strict=True)
        )
    program = _file_name(got[0])
    declared = plan.program if plan is not None else _file_name(launcher.argv[0])
    if got[0] != launcher.argv[0] and not (
        program.startswith(declared)
        or (declared.startswith("python") and program.startswith("python"))
    ):
        return False
    return all(_arg_matches(w, g, values) for w, g in zip(want[1:], got[1:], strict=True))


def _file_name(path: str) -> str:
    """``PurePosixPath(path).name`` without the path object: the last component that is not
    empty or ``.`` (``""`` when there is none)."""
    if "/" not in path:
        return "" if path == "." else path
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return parts[-1] if parts else ""


def _arg_matches(want: str, got: str, values: Mapping[str, object]) -> bool:
    """:func:`~reprobridge_sdk.extract.template.template_matches`, answered without building a
    pattern for an argument without braces: such a template is one literal, rendered as
    itself, so it matches exactly the equal string (a regex compiled per run's argument
    missed ``re``'s cache on every run of a large attempt)."""
    if "{" not in want and "}" not in want:
        return want == got
    return template_matches(want, got, values)


@functools.lru_cache(maxsize=1024)
def _redacted_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """A launcher's argv with credentials redacted (:func:`redact_text`), as the runner records
    it: computed once per distinct argv (a launcher's runs share it), not once per run. The
    result depends on the strings alone, so a cached one is the one recomputing would give."""
    return tuple(redact_text(w) for w in argv)


def _same(a: float, b: float) -> bool:
    return same_value(a, b)  # the one comparison replay uses too


def _iter_outputs(record: EvidenceRecord) -> Iterator[tuple[int, OutputRecord]]:
    yield from enumerate(record.outputs)


@dataclass
class _Notes:
    run: RunEvidence
    where: str

    def add(
        self,
        code: str,
        message: str,
        pointer: str = "",
        *,
        hint: str | None = None,
        severity: Severity | None = None,
    ) -> None:
        self.run.findings.append(
            finding(code, message, path=pointer, file=self.where, hint=hint, severity=severity)
        )


def check_run(
    facts: ArtifactFacts, path: Path, rel: str, cache: ExtractionCache | None = None
) -> RunEvidence:
    """Verify one run directory (see the module docstring for the checks).

    ``cache`` (one per audit) lets the tasks that read the same log or output share its
    parsed document or scan instead of reading the file once per task.

    The run directory is resolved and opened once (:class:`~reprobridge_sdk.io.safefs.
    OpenRoot`) for its record, log and outputs; when it cannot be opened, each read tries
    again by path and reports what it meets, as before.
    """
    return _check_one(facts, path, rel, cache, {})


def _check_one(  # noqa: PLR0917 - private step of check_run and verify_attempt
    facts: ArtifactFacts,
    path: Path,
    rel: str,
    cache: ExtractionCache | None,
    plans: _Plans,
    parent: safefs.OpenRoot | None = None,
) -> RunEvidence:
    """:func:`check_run` with the launchers' plans of the attempt (made by the first run of
    each launcher that gets as far as its files); ``parent``: the attempt directory, opened
    once, the run directory ``rel`` below it (then opened from its descriptor, never through
    a link, instead of resolving the run's whole path again)."""
    try:
        if parent is not None and rel:
            root: safefs.OpenRoot | None = parent.below(rel, path)
        else:
            root = safefs.OpenRoot(path)
    except (OSError, safefs.UnsafeFileError):
        root = None
    try:
        return _check_run(facts, path, rel, cache, root, plans)
    finally:
        if root is not None:
            root.close()


class _Plan:
    """What verifying a run needs of its launcher, made once per launcher and attempt: each
    measurement with its extractor prepared (:func:`~reprobridge_sdk.extract.extraction.
    prepare`; ``None`` for a plugin kind), the outputs the measurements read, the launcher's
    argv as the runner records it and its program's file name."""

    __slots__ = ("argv", "launcher", "measures", "program", "wanted")

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        # a task measured twice is read with its first measurement's extractor (and each
        # measurement's own transform), as ArtifactFacts.extractor gives it by task
        first: dict[str, Any] = {}
        self.measures: list[tuple[Measurement, Prepared | None]] = [
            (m, prepare(first.setdefault(m.task, m.extract), m.transform))
            for m in launcher.measurements
        ]
        self.wanted = {m.extract.output for m in launcher.measurements if m.extract.file is None}
        self.argv = _redacted_argv(tuple(launcher.argv))
        self.program = _file_name(launcher.argv[0]) if launcher.argv else ""


#: The plans of an attempt's launchers, by launcher id.
_Plans = dict[str, _Plan]


def _plan(launcher: Launcher, plans: _Plans) -> _Plan:
    plan = plans.get(launcher.id)
    if plan is None or plan.launcher is not launcher:
        plan = plans[launcher.id] = _Plan(launcher)
    return plan


def _check_run(  # noqa: PLR0917 - private step of check_run
    facts: ArtifactFacts,
    path: Path,
    rel: str,
    cache: ExtractionCache | None,
    root: safefs.OpenRoot | None,
    plans: _Plans,
) -> RunEvidence:
    record, owner, digest, problem = _read_record(path, rel, root)
    run = RunEvidence(path=path, rel=rel, record=record, record_sha256=digest)
    if record is None:
        assert problem is not None
        run.findings.append(problem)
        return run
    where = f"{rel}/{RECORD_NAME}".lstrip("/")

    add = _Notes(run, where).add
    _check_folder(run, add, record, root)

    manifest = facts.manifest
    launcher = facts.launcher(record.launcher)
    if record.artifact != manifest.artifact.id or launcher is None:
        add(
            "A002",
            f"the record is for {record.artifact}/{record.launcher}, "
            f"not a launcher of {manifest.artifact.id}",
            "/launcher" if record.artifact == manifest.artifact.id else "/artifact",
        )
        return run

    if record.status != "succeeded":
        if record.status == "running" and owner_alive(owner):
            add("A023", "the run is still in progress", "/status")
        elif record.status in {"running", "interrupted"}:
            add("A022", f"the run was interrupted (status {record.status})", "/status")
        else:
            reason = record.failure.reason if record.failure else "unknown"
            add("A021", f"the run failed: {reason}", "/failure")
        return run

    if record.seed is not None and launcher.seeds and record.seed not in launcher.seeds:
        add(
            "A037",
            f"seed {record.seed} is not one of launcher {launcher.id}'s seeds "
            f"({', '.join(map(str, launcher.seeds))})",
            "/seed",
            hint="the audit counts the declared seeds: run them (without --seeds)",
        )
    relabelled = _relabelled(record)
    if relabelled is not None:
        add("A039", relabelled, "/run_id")
    if record.scope != launcher.scope:
        add(
            "A014",
            f"the record says scope {record.scope}, launcher {launcher.id} is {launcher.scope}",
            "/scope",
        )
    plan = _plan(launcher, plans)
    if not _argv_matches(launcher, record, plan):
        add("A015", f"the recorded command is not launcher {launcher.id}'s command", "/argv")
    if record.drift:
        add(
            "A036",
            f"the run's environment differed from the lock ({len(record.drift)} difference(s): "
            f"{'; '.join(record.drift[:3])}{'; ...' if len(record.drift) > 3 else ''})",
            "/drift",
            hint="run with the environment built from the lock ('reprobridge run --env cached')",
        )
        run.run_notes.append(run.findings[-1])
    if record.environment_sha256 is not None:
        unusable = _snapshot_problem(path.parent, record.environment_sha256)
        if unusable is not None:
            missing = unusable[0] == "missing"
            add(
                "A065" if missing else "A066",
                unusable[1],
                "/environment_sha256",
                hint="keep the runs directory's .env/ beside its run directories"
                if missing
                else "submit the runs directory as the runner wrote it",
            )
            if missing:  # a warning on every value of the run, like drift
                run.run_notes.append(run.findings[-1])

    if record.code_tree_digest is None or (
        record.lock_digest is None and facts.lock_digest is not None
    ):
        add("A013", "the record does not tie the run to the artifact's code and lock")
    if (
        record.code_tree_digest is not None
        and facts.tree_digest is not None
        and record.code_tree_digest != facts.tree_digest
    ):
        add(
            "A009",
            f"the run used code {record.code_tree_digest}, the artifact's is {facts.tree_digest}",
            "/code_tree_digest",
        )
    if (
        record.lock_digest is not None
        and facts.lock_digest is not None
        and record.lock_digest != facts.lock_digest
    ):
        add(
            "A011",
            f"the run used lock {record.lock_digest}, the artifact's is {facts.lock_digest}",
            "/lock_digest",
        )

    kept = _KeptFiles(plan.wanted)
    try:
        return _check_files(run, add, facts, plan, record, root, cache, kept)
    finally:
        kept.close()


def _check_folder(
    run: RunEvidence,
    add: Callable[..., None],
    record: EvidenceRecord,
    root: safefs.OpenRoot | None,
) -> None:
    """A069 for the links and special files in the run folder: the auditor's own scan (the
    record's ``run_folder`` is the producer's word), and the entries the record names that
    the scan no longer finds. A warning on every value of the run (``--trust`` makes it an
    error). Nothing found is followed, read or hashed."""
    scan = scan_run_folder(root if root is not None else run.path)
    if scan is not None:
        add("A069", f"the run folder: {scan_summary(scan)}", hint=_FOLDER_HINT)
        run.run_notes.append(run.findings[-1])
    claimed = record.run_folder.planted if record.run_folder is not None else []
    here = {entry.path for entry in scan.planted} if scan is not None else set()
    gone = [entry for entry in claimed if entry.path not in here]
    if gone and record.run_folder is not None:
        summary = scan_summary(record.run_folder.model_copy(update={"stopped": None}), gone)
        add(
            "A069",
            f"the record says the runner found {summary}; they are no longer there",
            "/run_folder",
            hint=_FOLDER_HINT,
        )
        run.run_notes.append(run.findings[-1])


_FOLDER_HINT = "a run folder holds regular files and directories only; submit it as run"


def _check_files(  # noqa: PLR0917 - private step of _check_run
    run: RunEvidence,
    add: Callable[..., None],
    facts: ArtifactFacts,
    plan: _Plan,
    record: EvidenceRecord,
    root: safefs.OpenRoot | None,
    cache: ExtractionCache | None,
    kept: _KeptFiles,
) -> RunEvidence:
    """The log's and outputs' digests, then every measurement re-extracted from those very
    files (``kept`` holds them open)."""
    path = run.path
    log_ok = False
    log_path: str | None = None
    if record.log is None:
        add("A003", "the record names no log", "/log")
    else:
        log_path, digest, refused, handle, held = _evidence_file(path, record.log.path, root)
        if refused is not None and refused.reason in _OVER_LIMIT:
            add(refused.findings[0].code, f"the log was not hashed: {refused.message}", "/log/path")
        elif refused is not None:
            add("A040", f"the log {record.log.path} is a link or not a regular file", "/log/path")
        elif log_path is None:
            add("A003", f"the log {record.log.path} is not in the run directory", "/log/path")
        elif digest != record.log.sha256:
            add("A004", f"the log {record.log.path} differs from its recorded digest", "/log")
        else:
            log_ok = True
        kept.keep(None, log_path, handle, held, ok=log_ok)

    outputs: dict[str, tuple[OutputRecord, str | None, bool]] = {}
    for index, output in _iter_outputs(record):
        out_path, digest, refused, handle, held = _evidence_file(path, output.path, root)
        ok = False
        if refused is not None and refused.reason in _OVER_LIMIT:
            add(
                refused.findings[0].code,
                f"the output was not hashed: {refused.message}",
                f"/outputs/{index}",
            )
        elif refused is not None:
            add(
                "A040",
                f"the output {output.path} is a link or not a regular file",
                f"/outputs/{index}",
            )
        elif out_path is None:
            add(
                "A005", f"the output {output.path} is not in the run directory", f"/outputs/{index}"
            )
            out_path = None
        elif digest != output.sha256:
            add("A006", f"the output {output.path} differs from its digest", f"/outputs/{index}")
        else:
            ok = True
        outputs[output.id] = (output, out_path, ok)
        kept.keep(output.id, out_path, handle, held, ok=ok)

    recorded = {m.task: m for m in record.measurements}
    first: dict[str, int] = {}
    for i, m in enumerate(record.measurements):
        first.setdefault(m.task, i)
    for measurement, prepared in plan.measures:
        at = first.get(measurement.task)
        pointer = "/measurements" if at is None else f"/measurements/{at}"
        value = _measure(
            run,
            add=add,
            measurement=measurement,
            record=record,
            outputs=outputs,
            facts=facts,
            log_path=log_path,
            log_ok=log_ok,
            pointer=pointer,
            claimed=None if at is None else record.measurements[at],
            cache=cache,
            kept=kept.files,
            prepared=prepared,
        )
        run.values[measurement.task] = value
        claimed = recorded.get(measurement.task)
        if value is not None and claimed is None:
            # The runner records every measurement of a succeeded run: one that is missing
            # was removed from the record, and the record no longer says what it measured.
            add(
                "A007",
                f"task {measurement.task}: the record gives no value, the evidence gives {value!r}",
                "/measurements",
            )
            run.values[measurement.task] = None
            continue
        if value is None or claimed is None or claimed.value is None:
            continue
        if value != claimed.value and not _same(value, claimed.value):  # equal: the same
            add(
                "A007",
                f"task {measurement.task}: the record says {claimed.value!r}, "
                f"the evidence gives {value!r}",
                f"{pointer}/value",
            )
            run.values[measurement.task] = None
    return run


def _template_context(run: RunEvidence, record: EvidenceRecord) -> dict[str, object]:
    """The values the run's extractors' templates are rendered with (made once per run)."""
    context: dict[str, object] = {**record.params, "run_dir": str(run.path)}
    if record.seed is not None:
        context["seed"] = record.seed
    return context


def _measure(
    run: RunEvidence,
    *,
    add: Callable[..., None],
    measurement: Measurement,
    record: EvidenceRecord,
    outputs: dict[str, tuple[OutputRecord, str | None, bool]],
    facts: ArtifactFacts,
    log_path: str | None,
    log_ok: bool,
    pointer: str,
    claimed: MeasuredValue | None,
    cache: ExtractionCache | None,
    kept: Mapping[str | None, OpenedFile] | None = None,
    context: dict[str, object] | None = None,
    prepared: Prepared | None = None,
) -> float | None:
    """Re-extract one task's value from the run's files; ``None`` when it does not count.

    ``prepared``: the measurement's extractor made ready by its launcher's plan; with the
    file kept open (``kept``) it is read through that file
    (:func:`~reprobridge_sdk.extract.extraction.read_prepared`, the value and errors of
    :func:`~reprobridge_sdk.extract.extraction.extract_value` without its per-call work).
    """
    extractor = measurement.extract
    task = measurement.task
    source: str | None
    trusted: bool
    if extractor.output is not None:
        entry = outputs.get(extractor.output)
        if entry is None:
            add("A008", f"task {task}: output {extractor.output} is not recorded", pointer)
            return None
        output, source, trusted = entry
        if output.preexisting:
            add("A018", f"task {task}: output {output.id} existed before the run", pointer)
            return None
        if source is not None and output.sha256 in facts.shipped:
            add(
                "A019",
                f"task {task}: output {output.id} is a file shipped in the artifact's code",
                pointer,
            )
            return None
        if source is not None and output.sha256 in facts.samples:
            add(
                "A035",
                f"task {task}: output {output.id} is byte-identical to a declared sample",
                pointer,
                hint="expected of a deterministic experiment; the value counts",
            )
            run.task_notes.setdefault(task, []).append(run.findings[-1])
    elif extractor.file is not None:
        add(
            "A008",
            f"task {task}: the value is read from a file the record does not cover",
            pointer,
            hint="declare the file as an output so the run records its digest",
            severity=Severity.WARNING,
        )
        return None
    else:
        source, trusted = log_path, log_ok
    if source is None or not trusted:
        return None  # the digest finding already says why

    opened = None if kept is None else kept.get(extractor.output)
    try:
        if prepared is not None and opened is not None:
            return read_prepared(prepared, opened, source="log", cache=cache)
        if context is None:
            context = _template_context(run, record)
        extracted = extract_value(
            facts.extractor(record.launcher, measurement),
            log=Path(source),
            files_base=run.path,
            outputs={},
            context=context,
            cache=cache,
            root=run.path,
            transform=measurement.transform,
            opened=opened,
        )
        # As the runner does: each value transformed; several ('all') count as their mean.
        return extracted.mean
    except ExtractionError as exc:
        reason = REASONS.get(exc.reason)
        if reason is not None and reason.audit is not None:
            # Not the evidence's fault: this auditor cannot read the value (A061, A062).
            code = reason.audit
            hint = exc.findings[0].hint if exc.findings else None
            add(code, f"task {task}: cannot re-extract the value: {exc}", pointer, hint=hint)
            run.unread[task] = run.findings[-1]
            return None
        severity = Severity.WARNING if claimed is None or claimed.value is None else None
        add(
            "A008",
            f"task {task}: cannot re-extract the value: {exc}",
            pointer,
            severity=severity,
        )
        return None
