"""Evidence verification: what must hold before a run's number counts.

The auditor believes files, never the producer's word: for every run directory of an
attempt it reads ``record.json`` and checks that it belongs to the artifact and its
launcher, that the log and outputs match their digests, that every value re-extracted from
them equals the recorded one, and that the run folder holds nothing planted; each failure is
a finding of family A. Only files are read, so the auditor may run on another machine than
the runs. See spec §10.1 and §11.2.

The artifact-level facts are in :mod:`._artifact`, the safe reading of a run's files in
:mod:`._evidence`, the launcher's command and the re-extraction in :mod:`._reextract`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.findings import Severity, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import RECORD_NAME, EvidenceRecord, FileDigest, Launcher, OutputRecord
from reprobridge_sdk.run.evidence import owner_alive, scan_run_folder, scan_summary
from reprobridge_sdk.validation.replay import same_value

from ._artifact import ArtifactFacts, artifact_facts, check_artifact
from ._evidence import (
    _OVER_LIMIT,
    RunEvidence,
    RunRecord,
    _evidence_file,
    _KeptFiles,
    _read_record,
    _relabelled,
    _snapshot_problem,
)
from ._reextract import _argv_matches, _measure, _Plan, _plan, _Plans
from .duplicates import check_duplicates

__all__ = [
    "ArtifactFacts",
    "RunEvidence",
    "RunRecord",
    "artifact_facts",
    "check_artifact",
    "check_duplicates",
    "check_run",
    "discover_runs",
    "verify_attempt",
]


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
    parsed document or scan. The run directory is opened once for its record, log and
    outputs; when it cannot be, each read tries by path and reports what it meets.
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


def _check_run(  # noqa: PLR0917 - private step of check_run
    facts: ArtifactFacts,
    path: Path,
    rel: str,
    cache: ExtractionCache | None,
    root: safefs.OpenRoot | None,
    plans: _Plans,
) -> RunEvidence:
    record, owner, digest, problem = _read_record(path, rel, root)
    # The run keeps its record condensed: the typed one is read by the checks below only.
    condensed = RunRecord.of(record) if record is not None else None
    run = RunEvidence(path=path, rel=rel, record=condensed, record_sha256=digest)
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
        _not_succeeded(add, record, owner)
        return run
    plan = _plan(launcher, plans)
    _check_claims(add, record, launcher, plan)
    _check_environment(run, add, facts, record)
    _check_digests(add, facts, record)

    kept = _KeptFiles(plan.wanted)
    try:
        return _check_files(run, add, facts, plan, record, root, cache, kept)
    finally:
        kept.close()


def _not_succeeded(add: Callable[..., None], record: EvidenceRecord, owner: object) -> None:
    """A021-A023: a run that did not succeed gives no value."""
    if record.status == "running" and owner_alive(owner):
        add("A023", "the run is still in progress", "/status")
    elif record.status in {"running", "interrupted"}:
        add("A022", f"the run was interrupted (status {record.status})", "/status")
    else:
        reason = record.failure.reason if record.failure else "unknown"
        add("A021", f"the run failed: {reason}", "/failure")


def _check_claims(
    add: Callable[..., None], record: EvidenceRecord, launcher: Launcher, plan: _Plan
) -> None:
    """The record's seed, run id, scope and command are its launcher's (A037, A039, A014,
    A015)."""
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
    if not _argv_matches(launcher, record, plan):
        add("A015", f"the recorded command is not launcher {launcher.id}'s command", "/argv")


def _check_environment(
    run: RunEvidence, add: Callable[..., None], facts: ArtifactFacts, record: EvidenceRecord
) -> None:
    """The run's environment: drift from the lock (A036) and the snapshot it names (A065,
    A066), each a note on every value of the run when it is a warning."""
    if record.drift:
        add(
            "A036",
            f"the run's environment differed from the lock ({len(record.drift)} difference(s): "
            f"{'; '.join(record.drift[:3])}{'; ...' if len(record.drift) > 3 else ''})",
            "/drift",
            hint="run with the environment built from the lock ('reprobridge run --env cached')",
        )
        run.run_notes.append(run.findings[-1])
    if record.environment_sha256 is None:
        return
    unusable = _snapshot_problem(run.path.parent, record.environment_sha256)
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


def _check_digests(add: Callable[..., None], facts: ArtifactFacts, record: EvidenceRecord) -> None:
    """The record ties the run to the artifact's code and lock (A013, A009, A011)."""
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
    log_path, log_ok = _check_log(add, record, run.path, root, kept)
    outputs = _check_outputs(add, record, run.path, root, kept)
    recorded = {m.task: m for m in record.measurements}
    first: dict[str, int] = {}
    for i, m in enumerate(record.measurements):
        first.setdefault(m.task, i)
    for measurement in plan.launcher.measurements:
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
        if value != claimed.value and not same_value(value, claimed.value):  # replay's comparison
            add(
                "A007",
                f"task {measurement.task}: the record says {claimed.value!r}, "
                f"the evidence gives {value!r}",
                f"{pointer}/value",
            )
            run.values[measurement.task] = None
    return run


#: A log's and an output's codes: missing, digest differs; and how its digest is named.
_FILE_CODES = {"log": ("A003", "A004", "recorded digest"), "output": ("A005", "A006", "digest")}


def _check_file(  # noqa: PLR0917 - private step of _check_log and _check_outputs
    add: Callable[..., None],
    kind: str,
    key: str | None,
    declared: FileDigest,
    pointers: tuple[str, str],
    path: Path,
    root: safefs.OpenRoot | None,
    kept: _KeptFiles,
) -> tuple[str | None, bool]:
    """A log's (``key`` None) or output's path and whether it matches its digest (A003-A006,
    A040), kept open in ``kept``; ``pointers``: where its path and its digest are."""
    missing, differs, digest_name = _FILE_CODES[kind]
    found, digest, refused, handle, held = _evidence_file(path, declared.path, root)
    ok = False
    if refused is not None and refused.reason in _OVER_LIMIT:
        add(refused.findings[0].code, f"the {kind} was not hashed: {refused.message}", pointers[0])
    elif refused is not None:
        add("A040", f"the {kind} {declared.path} is a link or not a regular file", pointers[0])
    elif found is None:
        add(missing, f"the {kind} {declared.path} is not in the run directory", pointers[0])
    elif digest != declared.sha256:
        add(differs, f"the {kind} {declared.path} differs from its {digest_name}", pointers[1])
    else:
        ok = True
    kept.keep(key, found, handle, held, ok=ok)
    return found, ok


def _check_log(
    add: Callable[..., None],
    record: EvidenceRecord,
    path: Path,
    root: safefs.OpenRoot | None,
    kept: _KeptFiles,
) -> tuple[str | None, bool]:
    """The log's path and whether it matches its recorded digest (A003, A004, A040)."""
    if record.log is None:
        add("A003", "the record names no log", "/log")
        return None, False
    return _check_file(add, "log", None, record.log, ("/log/path", "/log"), path, root, kept)


def _check_outputs(
    add: Callable[..., None],
    record: EvidenceRecord,
    path: Path,
    root: safefs.OpenRoot | None,
    kept: _KeptFiles,
) -> dict[str, tuple[OutputRecord, str | None, bool]]:
    """Each output's record, path and whether it matches its digest (A005, A006, A040)."""
    outputs: dict[str, tuple[OutputRecord, str | None, bool]] = {}
    for index, output in enumerate(record.outputs):
        at = (f"/outputs/{index}",) * 2
        out_path, ok = _check_file(add, "output", output.id, output, at, path, root, kept)
        outputs[output.id] = (output, out_path, ok)
    return outputs
