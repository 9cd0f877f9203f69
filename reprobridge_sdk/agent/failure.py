"""The failure report of a stopped build: the phase, the class, what was tried, how to go on.

Rules:

* The class is derived from the codes of the errors of the gate that stopped the build (the
  first error decides), from a small fixed vocabulary (:data:`~reprobridge_sdk.model.build.
  FailureClass`): B002/B004/B049 ``hint-not-understood``, B003 ``source-unavailable``, B005
  ``environment-unresolvable``, B006 ``import-fails``, B007/B008/B021 ``run-fails`` (or
  ``own-package-missing`` when the smoke run's error is a ``ModuleNotFoundError`` of a
  module that is in the repository), B009/B010 ``extraction-fails``, B011
  ``validation-fails``, B012 ``review-fails``, B016 ``over-budget``, B040
  ``recorded-change-fails``.
* ``tried`` lists what the phase's record says it did: the Builder's resolver steps, the
  Reproducer's smoke runs, kept fixes and rejected fixes.
* ``unblock`` is the one way forward, as steps: ``edit <path>`` (a file the author changes),
  then ``reprobridge ...`` command lines that exist (a test runs each one's ``--help``).
  A failure in the code is fixed in ``code/`` of the artifact and recorded with ``reprobridge
  code record``; every failure ends with ``reprobridge build ... --resume``, which keeps the
  recorded changes and continues from the phase that failed.
* A smoke run that missed a file (``FileNotFoundError``) while a README at the root of the
  code unpacks an archive the code does not hold (``unzip dataset.zip``, ``tar xzf
  data.tar.gz``: a plain relative name inside the repository) is missing that archive, not a
  fix of the script: the first step is ``add <path>`` (the archive, to add to ``code/`` and
  unpack there as the README says), naming the README's step and the file the run missed.
  The archive is one whose name (``dataset`` of ``dataset.zip``) is a folder or file name of
  the missed path: an archive of another name says nothing of the file the run missed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from reprobridge_sdk.model.build import (
    BuilderRecord,
    BuildFinding,
    FailureClass,
    FailureReport,
    PhaseName,
    PhaseRecord,
    ReproducerRecord,
)

__all__ = ["CLASSES", "failure_report"]

#: The class of each code that can stop a build.
CLASSES: Mapping[str, FailureClass] = {
    "B002": "hint-not-understood",
    "B003": "source-unavailable",
    "B004": "hint-not-understood",
    "B005": "environment-unresolvable",
    "B006": "import-fails",
    "B007": "run-fails",
    "B008": "run-fails",
    "B009": "extraction-fails",
    "B010": "extraction-fails",
    "B011": "validation-fails",
    "B012": "review-fails",
    "B016": "over-budget",
    "B021": "run-fails",
    "B024": "recorded-change-fails",
    "B040": "recorded-change-fails",
    "B049": "hint-not-understood",
}

#: The class of a phase's stop whose findings name no known code.
_BY_PHASE: Mapping[PhaseName, FailureClass] = {
    "intake": "hint-not-understood",
    "planner": "hint-not-understood",
    "builder": "environment-unresolvable",
    "reproducer": "run-fails",
    "distiller": "extraction-fails",
    "packager": "validation-fails",
    "reviewer": "review-fails",
}

_SIGNATURE = re.compile(r"^(?P<type>[\w.]+): (?P<message>.*) @ (?P<file>.+?):(?P<line>\d+|None)$")
_MISSING = re.compile(r"No module named '(?P<module>[\w.]+)'")
_NO_FILE = re.compile(r"No such file or directory: '(?P<path>[^']+)'")
#: A README line that unpacks an archive: ``unzip [-q] a.zip``, ``tar -xzf a.tar.gz``.
_UNPACK = re.compile(
    r"^[ \t$>]*(?P<line>(?:unzip(?:[ \t]+-\w+)*|tar[ \t]+-?[a-zA-Z]*x[a-zA-Z]*|gunzip|7z[ \t]+x)"
    r"[ \t]+(?P<archive>[\w.][\w./-]*\.(?:zip|tar\.gz|tgz|tar\.bz2|tar\.xz|tar|gz|7z)))[ \t]*$",
    re.M,
)
_ARCHIVE_SUFFIX = re.compile(r"\.(?:zip|tar\.gz|tgz|tar\.bz2|tar\.xz|tar|gz|7z)$")
#: Characters of a README read for its unpack steps, at most.
_README_CHARS = 200_000


def _q(text: str | Path) -> str:
    """``text`` as one shell word: bare when safe, in double quotes when nothing in it is
    special there (error messages quote names with '), else in single quotes."""
    word = str(text)
    quoted = shlex.quote(word)
    if quoted != word and not any(c in word for c in '"$`\\!'):
        return f'"{word}"'
    return quoted


def _resume_command(
    source: str, claims: Path, out: Path, extra: Sequence[str], *, max_minutes: float | None
) -> str:
    argv = ["reprobridge", "build", source, "--claims", str(claims), "-o", str(out)]
    argv += list(extra)
    if max_minutes is not None:
        argv += ["--max-minutes", f"{max_minutes:g}"]
    return " ".join(_q(a) for a in [*argv, "--resume"])


def _last_error(record: PhaseRecord | None) -> tuple[str, str, str | None, int | None] | None:
    """The last failed smoke run's error: (type, message, file under code/, line)."""
    if not isinstance(record, ReproducerRecord):
        return None
    for attempt in reversed(record.attempts):
        if attempt.error is None:
            continue
        match = _SIGNATURE.match(attempt.error)
        if match is None:
            return None
        where = match["file"]
        path = None if where == "None" else where
        if path is not None and not path.startswith("code/"):
            path = f"code/{path.lstrip('/')}"
        line = int(match["line"]) if match["line"].isdigit() else None
        return match["type"], match["message"], path, line
    return None


def _own_package(error: tuple[str, str, str | None, int | None] | None, code: Path) -> bool:
    if error is None or error[0] != "ModuleNotFoundError":
        return False
    missing = _MISSING.search(error[1])
    if missing is None:
        return False
    top = missing["module"].split(".", 1)[0]
    return (
        any(
            (base / top).is_dir() or (base / f"{top}.py").is_file()
            for base in (code, *(p for p in code.iterdir() if p.is_dir() and p.name != ".git"))
        )
        if code.is_dir()
        else False
    )


def _missing_archive(
    error: tuple[str, str, str | None, int | None] | None, code: Path
) -> tuple[str, str, str, str] | None:
    """(README, its unpack line, the archive, the missed path) when the smoke run missed a
    file and a README of ``code`` unpacks an archive ``code`` does not hold (see the rules)."""
    if error is None or error[0] != "FileNotFoundError" or not code.is_dir():
        return None
    missed = _NO_FILE.search(error[1])
    if missed is None:
        return None
    parts = set(Path(missed["path"]).parts)
    found = []
    for readme in sorted(code.glob("README*")):
        try:
            text = readme.read_text("utf-8", "replace")[:_README_CHARS]
        except OSError:
            continue
        for match in _UNPACK.finditer(text):
            archive = match["archive"]
            if ".." in Path(archive).parts or (code / archive).exists():
                continue
            found.append((readme.name, match["line"], archive, missed["path"]))
    related = [f for f in found if _ARCHIVE_SUFFIX.sub("", Path(f[2]).name) in parts]
    return related[0] if related else None


def _tried(record: PhaseRecord | None) -> list[str]:
    lines: list[str] = []
    if isinstance(record, BuilderRecord):
        for step in record.steps:
            outcome = "resolved" if step.ok else "failed"
            lines.append(f"resolve ({step.name}): {outcome}: {step.why}")
    if isinstance(record, ReproducerRecord):
        for attempt in record.attempts:
            status = (
                "killed at the timeout"
                if attempt.exit_status is None
                else (f"exit {attempt.exit_status}")
            )
            error = f": {attempt.error}" if attempt.error else ""
            lines.append(f"smoke run {attempt.launcher!r}: {status}{error}")
        lines.extend(f"fix kept ({f.rule}): {f.summary}" for f in record.fixes)
        lines.extend(f"fix undone ({f.rule}): {f.summary}" for f in record.rejected)
    return lines


def failure_report(
    phase: PhaseName,
    findings: Sequence[BuildFinding],
    record: PhaseRecord | None,
    *,
    source: str,
    claims: Path,
    out: Path,
    options: Sequence[str] = (),
    max_minutes: float | None = None,
) -> FailureReport:
    """The failure report of a build stopped at ``phase`` by ``findings``.

    ``record`` is the stopped phase's record when it wrote one; ``options`` are the build
    options a resume repeats (the smoke budget), ``max_minutes`` the build's time limit.
    """
    errors = [f for f in findings if f.severity == "error"] or list(findings)
    codes = [f.code for f in errors]
    kind = next((CLASSES[c] for c in codes if c in CLASSES), _BY_PHASE[phase])
    error = _last_error(record)
    if kind == "run-fails" and _own_package(error, out / "code"):
        kind = "own-package-missing"
    limit = max_minutes
    if kind == "over-budget" and max_minutes is not None:
        limit = max_minutes * 2
    resume = _resume_command(source, claims, out, options, max_minutes=limit)
    steps: list[str]
    archive = _missing_archive(error, out / "code") if kind == "run-fails" else None
    if kind in {"run-fails", "own-package-missing"} and (out / "code").is_dir():
        target = error[2] if error is not None and error[2] else "code/"
        why = (
            f"The smoke run failed with {error[0]}: {error[1]}"
            if error is not None
            else "The smoke run failed"
        )
        first = f"edit {_q(out / target)}"
        if archive is not None:
            readme, line, name, missed = archive
            first = (
                f"add {_q(out / 'code' / name)} and unpack it there as {readme} says "
                f"({line}): the smoke run reads {missed}, and the repository does not hold {name}"
            )
            why = f"{readme} unpacks {name} ({line}), which the repository does not hold: {why}"
        record_cmd = " ".join(
            _q(a)
            for a in (
                "reprobridge",
                "code",
                "record",
                "--artifact",
                str(out),
                "--kind",
                "execution-fix",
                "--why",
                why,
            )
        )
        steps = [first, record_cmd, resume]
    elif kind == "recorded-change-fails":
        steps = [
            f"reprobridge code status --artifact {_q(out)}",
            f"edit {_q(out / 'code')}",
            resume,
        ]
    elif kind in {"environment-unresolvable", "import-fails"}:
        steps = [f"edit {_q(Path(source) / 'requirements.txt')}", resume]
    elif kind in {"hint-not-understood", "extraction-fails"}:
        steps = [f"edit {_q(claims)}", resume]
    elif kind in {"validation-fails", "review-fails"}:
        steps = [f"reprobridge validate --strict {_q(out)}", f"edit {_q(out / 'rra.yaml')}", resume]
    else:  # source-unavailable (resumed at the source's HEAD), over-budget (a longer limit)
        steps = [resume]
    return FailureReport(
        phase=phase, failure_class=kind, codes=codes, tried=_tried(record), unblock=steps
    )
