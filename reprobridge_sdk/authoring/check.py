"""The clean-room check (``reprobridge check``): would this artifact rerun anywhere?

The artifact is packed and unpacked into a temporary directory, validated, its smoke (and,
with ``scored``, scored) launchers run and audited, each step an ``--isolated`` process in a
clean shell (:mod:`~reprobridge_sdk.authoring.clean_shell`).
Rules: ``spec/authoring.md#clean-room-check``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.audit.clean_room import check_record, write_check_record
from reprobridge_sdk.audit.verify import discover_runs
from reprobridge_sdk.authoring.clean_shell import NETWORK_ENV, clean_environment
from reprobridge_sdk.authoring.determinism import suggest_after_check
from reprobridge_sdk.authoring.pack import pack, unpack
from reprobridge_sdk.authoring.submissions import named_in_archive, root_manifest_findings
from reprobridge_sdk.contents import files_digest
from reprobridge_sdk.errors import ArtifactError, ReproBridgeError, UsageError
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io import reading
from reprobridge_sdk.model import Launcher, Manifest
from reprobridge_sdk.model.evidence import RECORD_NAME

if TYPE_CHECKING:
    from reprobridge_sdk.signing.keys import SigningKey

__all__ = [
    "CheckReport",
    "CheckStep",
    "check",
]

_STEP_TIMEOUT = 6 * 3600.0

#: The folder that holds the running ``reprobridge_sdk``: each step imports the SDK from it,
#: so that the check runs the SDK that was called (one reached through ``PYTHONPATH``, or a
#: checkout, included), never another one the interpreter may have installed.
_SDK_PARENT = str(Path(__file__).resolve().parents[2])
_STEP = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from reprobridge_sdk.cli import main; main(prog_name='reprobridge')"
)


@dataclass
class CheckStep:
    """One step: whether it passed, how long it took, what it saw."""

    name: str
    ok: bool
    seconds: float
    detail: str = ""
    findings: list[Finding] = field(default_factory=list)
    #: An audit step's verdict of each task: ``compatible`` when some attempt is, else the
    #: first attempt's (not in the report: its counts are in ``detail``).
    verdicts: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "detail": self.detail,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass
class CheckReport:
    """The steps of one clean-room check."""

    source: str
    copy: str
    scored: bool
    steps: list[CheckStep] = field(default_factory=list)
    archive_digest: str | None = None
    #: The names (never the values) of the caller's variables the clean shell got: the
    #: network configuration (:data:`NETWORK_ENV`), and the others ``pass_env`` named.
    network_env: list[str] = field(default_factory=list)
    pass_env: list[str] = field(default_factory=list)
    #: The check record written (``record``), or ``None``.
    record: str | None = None
    #: C027 (information): launchers whose runs here repeat the recorded runs of their seed
    #: byte for byte, and that could declare ``deterministic: true``.
    suggestions: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(step.ok for step in self.steps)

    @property
    def seconds(self) -> float:
        return sum(step.seconds for step in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "copy": self.copy,
            "scored": self.scored,
            "archive_sha256": self.archive_digest,
            "env_passed": {"network": list(self.network_env), "pass_env": list(self.pass_env)},
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "steps": [step.to_dict() for step in self.steps],
            "record": self.record,
            "suggestions": [f.to_dict() for f in self.suggestions],
        }


def _command(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _STEP, _SDK_PARENT, "--isolated", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=_STEP_TIMEOUT,
        check=False,
    )


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _json_findings(text: str) -> list[Finding]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    found: list[Finding] = []
    for artifact in data.get("artifacts", []) if isinstance(data, dict) else []:
        for item in artifact.get("findings", []):
            found.append(
                Finding(
                    file=item.get("file") or "",
                    line=item.get("line") or 0,
                    col=item.get("col") or 0,
                    code=item.get("code", ""),
                    severity=Severity(item.get("severity", "error")),
                    message=item.get("message", ""),
                    path=item.get("path", ""),
                    hint=item.get("hint"),
                    spec=item.get("spec"),
                )
            )
    return found


def _run_names(copy: Path) -> frozenset[str]:
    """The entries of the copy's ``runs/`` now: what a step finds there later and is not
    among them is a run that step made."""
    try:
        return frozenset(entry.name for entry in (copy / "runs").iterdir())
    except OSError:
        return frozenset()


def _new_records(
    copy: Path, before: frozenset[str]
) -> Iterator[tuple[str, dict[str, Any] | None, Finding | None]]:
    """Each run folder made since ``before`` (see :func:`_run_names`) with its record, or
    the A001 finding when it cannot be read, as the auditor reads it: through the safe file
    layer, no link, at most :data:`~reprobridge_sdk.io.safefs.MAX_EVIDENCE_BYTES`, a JSON
    object. A folder without a record (the snapshots' ``.env``) is not a run."""
    runs = copy / "runs"
    for name in sorted(_run_names(copy) - before):
        run_dir = runs / name
        if run_dir.is_symlink() or not run_dir.is_dir():
            continue
        record_path = run_dir / RECORD_NAME
        if not os.path.lexists(record_path):
            continue
        try:
            record = reading.read_json(record_path, root=run_dir, allow_links=False)
            if not isinstance(record, dict):
                raise ValueError(f"a JSON {type(record).__name__}, not an object")
        except ValueError as exc:  # unreadable, or not an object
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        else:
            yield name, record, None
            continue
        message = f"cannot read the record: {problem}"
        yield name, None, finding("A001", message, file=f"runs/{name}/{RECORD_NAME}")


def _run_problem(record: dict[str, Any], run_id: str, launchers: dict[str, Launcher]) -> str:
    """Why a run the check made does not pass, or ``""``."""
    if record.get("status") != "succeeded":
        failure = record.get("failure")
        detail = failure.get("detail", "") if isinstance(failure, dict) else failure or ""
        return f"{run_id}: {record.get('status')} ({detail})"
    launcher = launchers.get(str(record.get("launcher", "")))
    wanted = {landmark.id for landmark in launcher.landmarks} if launcher else set()
    hits = record.get("landmarks")
    reached = (
        {str(hit.get("id")) for hit in hits if isinstance(hit, dict)}
        if isinstance(hits, list)
        else set()
    )
    missing = sorted(wanted - reached)
    return f"{run_id}: landmark(s) not reached: {', '.join(missing)}" if missing else ""


def _runs_of(
    copy: Path, scope: str, manifest: Manifest, before: frozenset[str]
) -> tuple[bool, str, list[Finding]]:
    """Every run of ``scope`` the step made (not among ``before``) succeeded and reached every
    landmark of its launcher; a record it cannot read fails the step with its A001 finding."""
    launchers = {launcher.id: launcher for launcher in manifest.launchers}
    problems: list[str] = []
    found: list[Finding] = []
    count = 0
    for name, record, unreadable in _new_records(copy, before):
        if unreadable is not None:
            problems.append(f"{name}: {unreadable.message}")
            found.append(unreadable)
            continue
        assert record is not None
        if record.get("scope") != scope:
            continue
        count += 1
        problem = _run_problem(record, str(record.get("run_id", name)), launchers)
        if problem:
            problems.append(problem)
    if problems:
        return False, "; ".join(problems), found
    return True, f"{count} {scope} run(s) succeeded, every landmark reached", found


def check(
    path_or_archive: str | os.PathLike[str],
    *,
    scored: bool = False,
    keep: bool = False,
    work_dir: str | os.PathLike[str] | None = None,
    pass_env: Sequence[str] = (),
    installer_cache: bool = True,
    sandbox: bool = True,
    record: bool = False,
    sign: SigningKey | None = None,
) -> CheckReport:
    """Run the clean-room check of an artifact directory or a packed archive.

    Raises :class:`~reprobridge_sdk.errors.UsageError` (N011) before anything when
    ``sandbox`` is asked for and cannot work here, or when ``record`` is asked for an
    archive (the record is written into the artifact directory checked). ``sign`` signs the
    record (``runs/check.dsse.json``).
    """
    if record and not Path(path_or_archive).is_dir():
        msg = (
            f"{path_or_archive}: a check record is written into the artifact directory it "
            "checks; check the directory, then pack it with its runs"
        )
        raise UsageError(msg)
    if sandbox:
        from reprobridge_sdk.run.runner import require_sandbox  # noqa: PLC0415 - on use

        require_sandbox()
    source = Path(path_or_archive)
    base = Path(tempfile.mkdtemp(prefix="rra-check-", dir=work_dir))
    copy = base / "artifact"
    report = CheckReport(source=str(source), copy=str(copy), scored=scored)
    home = base / "home"
    (home / "tmp").mkdir(parents=True)
    env = clean_environment(home, pass_env, installer_cache=installer_cache)
    report.network_env = [name for name in NETWORK_ENV if name in os.environ]
    named = dict.fromkeys(name for name in pass_env if name not in NETWORK_ENV)
    report.pass_env = [name for name in named if name in os.environ]
    try:
        if not _copy_step(report, source, base, copy):
            return report
        from reprobridge_sdk.api import load  # noqa: PLC0415 - a lower layer, on use

        manifest = load(copy).manifest
        recorded = _run_names(copy)  # an archive's own runs
        checked = files_digest(copy, manifest)  # the files as submitted, before anything ran
        confine = ["--sandbox"] if sandbox else []
        steps: list[tuple[str, list[str], str]] = [
            ("validate", ["validate", str(copy), "--format", "json"], "validate"),
            (
                "smoke",
                ["run", str(copy), "--scope", "smoke", "--format", "json", *confine],
                "smoke",
            ),
            ("audit", ["audit", str(copy), "--format", "json"], "audit"),
        ]
        measuring = _measuring(manifest)
        chosen = measuring or []
        if scored:
            steps += [
                (
                    "scored",
                    ["run", str(copy), *chosen, "--scope", "scored", "--format", "json", *confine],
                    "scored",
                ),
                ("audit-scored", ["audit", str(copy), "--format", "json"], "audit-scored"),
            ]
        for name, args, kind in steps:
            has_smoke = any(launcher.scope == "smoke" for launcher in manifest.launchers)
            if kind == "smoke" and not has_smoke:
                report.steps.append(CheckStep(name, True, 0.0, "no smoke launcher"))
                continue
            if kind == "scored" and measuring == []:
                detail = "no scored launcher measures a task the artifact measures"
                report.steps.append(CheckStep(name, True, 0.0, detail))
                continue
            before = _run_names(copy)  # an archive's own runs are never the check's
            started = time.monotonic()
            done = _command(args, env, base)
            seconds = time.monotonic() - started
            step = _judge(kind, done, (copy, before), manifest, name, seconds)
            if not step.ok and kind in ("smoke", "scored"):
                passed = report.network_env
                step.findings += _network_findings(copy, kind, manifest, passed, before)
            report.steps.append(step)
            if not step.ok:
                break
        report.suggestions = _same_seed(source, copy, recorded)
        if record:
            report.record = _write_record(source, manifest.artifact.id, checked, report, sign)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return report


def _same_seed(source: Path, copy: Path, recorded: frozenset[str]) -> list[Finding]:
    """C027 where the runs the check made repeat the recorded runs of their launcher and seed
    (those of the directory checked, or those the archive carries)."""
    runs = copy / "runs"
    made = [
        path for name in sorted(_run_names(copy) - recorded) for path in discover_runs(runs / name)
    ]
    if not made:
        return []
    if source.is_dir():
        kept = discover_runs(source / "runs")
    else:
        kept = [path for name in sorted(recorded) for path in discover_runs(runs / name)]
    return suggest_after_check(copy, kept, made)


def _measuring(manifest: Manifest) -> list[str] | None:
    """The scored launchers that measure a task the artifact measures: None when that is
    every one (the run takes all), else those alone. A launcher whose measurements are
    all of tasks marked not measured (``reference.not_measured``), or that has none, cannot
    change a verdict and is not run again; one that a run needs still runs (``needs``)."""
    unmeasured = {task.id for task in manifest.tasks if task.reference.not_measured is not None}
    scored = [launcher for launcher in manifest.launchers if launcher.scope == "scored"]
    chosen = [
        launcher.id
        for launcher in scored
        if any(measurement.task not in unmeasured for measurement in launcher.measurements)
    ]
    return None if len(chosen) == len(scored) else chosen


def _write_record(
    source: Path, artifact: str, digest: str, report: CheckReport, sign: SigningKey | None
) -> str:
    """Write ``runs/check.json`` into the artifact checked, signed with ``sign``; its path."""
    data = check_record(
        artifact,
        digest,
        [(step.name, step.ok) for step in report.steps],
        scored=report.scored,
        archive_sha256=report.archive_digest,
    )
    return str(write_check_record(source, data, sign))


def _copy_step(report: CheckReport, source: Path, base: Path, copy: Path) -> bool:
    started = time.monotonic()
    try:
        if source.is_dir():
            archive = base / "submission.tar"
            packed = pack(source, archive)
            result = unpack(archive, copy, validate_after=False)
            archive.unlink()
            detail = f"packed {packed.files} file(s) from {source}"
        else:
            result = unpack(source, copy, validate_after=False)
            detail = f"unpacked {result.files} member(s) from {source.name}"
            problems = root_manifest_findings(copy, str(source))
            if problems:
                raise ArtifactError(problems[0].message, problems)
    except ReproBridgeError as exc:
        found, detail = list(exc.findings), exc.message
        if not source.is_dir():  # name the archive as the user gave it, members inside it
            found = named_in_archive(found, str(source))
            detail = detail if str(source) in detail else f"{source}: {detail}"
        report.steps.append(CheckStep("copy", False, time.monotonic() - started, detail, found))
        return False
    report.archive_digest = result.digest
    detail += f"; archive sha256:{result.digest}"
    report.steps.append(CheckStep("copy", True, time.monotonic() - started, detail))
    return True


def _judge(  # noqa: PLR0917 - a private helper, called once
    kind: str,
    done: subprocess.CompletedProcess[str],
    runs: tuple[Path, frozenset[str]],
    manifest: Manifest,
    name: str,
    seconds: float,
) -> CheckStep:
    if kind == "validate":
        found = _json_findings(done.stdout)
        errors = [f for f in found if f.severity is Severity.ERROR]
        ok = done.returncode in (0, 1) and not errors and bool(done.stdout)
        detail = f"{len(errors)} error(s), {len(found) - len(errors)} other finding(s)"
        if not done.stdout:
            detail = _tail(done.stderr)
        return CheckStep(name, ok, seconds, detail, found)
    if kind in ("smoke", "scored"):
        if done.returncode == 2:
            return CheckStep(name, False, seconds, _tail(done.stderr))
        ok, detail, found = _runs_of(runs[0], kind, manifest, runs[1])
        return CheckStep(name, ok and done.returncode == 0, seconds, detail, found)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return CheckStep(name, False, seconds, _tail(done.stderr) or "the audit printed no JSON")
    counts = data.get("counts", {})
    invalid = counts.get("invalid-evidence", 0)
    detail = ", ".join(f"{verdict} {n}" for verdict, n in counts.items() if n)
    if kind == "audit":
        return CheckStep(name, invalid == 0, seconds, detail or "no verdict")
    tasks = data.get("tasks", [])
    verdicts = {str(task.get("id")): _best(task.get("attempts", [])) for task in tasks}
    # a task the artifact says it does not measure (reference.not_measured) is judged
    # inconclusive by design: it is not a failure of the rerun
    unmeasured = {t.id for t in manifest.tasks if t.reference.not_measured is not None}
    compatible = all(
        verdict == "compatible" for task, verdict in verdicts.items() if task not in unmeasured
    )
    ok = invalid == 0 and compatible and bool(tasks)
    return CheckStep(name, ok, seconds, detail, verdicts=verdicts)


def _best(attempts: list[dict[str, Any]]) -> str:
    """``compatible`` when some attempt is, else the first attempt's verdict (or ``none``)."""
    found = [str(attempt.get("verdict")) for attempt in attempts]
    return "compatible" if "compatible" in found else found[0] if found else "none"


#: A run's environment-error names the installer's transport failure by its code
#: (:func:`~reprobridge_sdk.env.venv.install_failure`): ``(E021: a TLS certificate ...: ...``.
#: The cause is the installers' own short sentence: plain words, nothing a terminal acts on.
_TRANSPORT_FAILURE = re.compile(r"\((E02[0-3]): ([A-Za-z][A-Za-z ,-]{0,100})")
_OTHER_VARIABLES = "any other variable the machine needs passes with --pass-env NAME"
_NETWORK_HINTS = {
    "E021": "the clean room trusts the CA bundles named by SSL_CERT_FILE, SSL_CERT_DIR, "
    "PIP_CERT, REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, which pass into it by default: set one to "
    "the CA bundle of your proxy or index before the check (UV_SYSTEM_CERTS=1 for the "
    f"system's store); {_OTHER_VARIABLES}",
    "E022": "the proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY, either case) "
    f"pass into the clean room by default: check their values; {_OTHER_VARIABLES}",
}
_INDEX_HINT = (
    "the clean room installs from REPROBRIDGE_INDEX_URL (https://pypi.org/simple unless set) "
    f"through the proxy variables, which pass into it by default; {_OTHER_VARIABLES}"
)


def _network_findings(
    copy: Path, scope: str, manifest: Manifest, passed: Sequence[str], before: frozenset[str]
) -> list[Finding]:
    """One finding per transport failure (E020-E023) of the environment build in the runs of
    ``scope`` the step made (not among ``before``), with what the clean room was given and
    how to give it more."""
    codes: dict[str, str] = {}
    for _name, record, _unreadable in _new_records(copy, before):
        # the step already failed; a record it cannot read has its finding from _runs_of
        failure = record.get("failure") if record is not None else None
        if record is None or not isinstance(failure, dict) or record.get("scope") != scope:
            continue
        if failure.get("reason") != "environment-error":
            continue
        found = _TRANSPORT_FAILURE.search(str(failure.get("detail", "")))
        if found:
            codes.setdefault(found.group(1), found.group(2).strip())
    lock = manifest.environment.lock
    names = ", ".join(passed) or "none"
    return [
        finding(
            code,
            f"building the environment in the clean room failed: {cause} "
            f"(network configuration passed: {names})",
            file=lock.path if lock is not None else "",
            path="/environment/lock",
            hint=_NETWORK_HINTS.get(code, _INDEX_HINT),
            context="run",
        )
        for code, cause in codes.items()
    ]
