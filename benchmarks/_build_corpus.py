"""The build corpus: its index, one capped build per entry, the results file and the tables.

``benchmarks/build-corpus/corpus.toml`` names public research repositories by URL and commit,
each with a claims file and the status a correct build gives per claim (see the README there).
:func:`run_corpus` builds every entry with ``reprobridge build`` in a subprocess, under a cap
per build and a cap in total, and writes the results file atomically after each build, so an
interrupted run resumes where it stopped (entries already in the file are not built again).

A build is a success when its artifact passes ``validate --strict`` and every claim's status in
the build report equals the expected one. A failed build gets one failure class, derived from
the first error finding of its report (:data:`CLASS_BY_CODE`), refined for a failed run by the
error type of its last smoke attempt.

Overhead (the build's own time, apart from the repository's): the runtime of the runs a build
makes is the sum of its smoke attempts (``reproducer.json``) and the wall time covered by the
Distiller's evidence records (the probe and the reference runs, two at a time). The clean-room
check's runs leave no record (the check removes its folder; the Reviewer's record keeps the
step names), so the Reviewer's whole phase counts as overhead and the ratio is an upper bound.
Per phase, the overhead is the phase's wall time minus the runs made in it; the ratio is build
wall time over runtime, and the corpus figure is its median over the builds that made a run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reprobridge_sdk.agent.claims import ClaimsError, load_claims
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.model.build import PHASES
from reprobridge_sdk.model.evidence import RECORD_NAME

__all__ = [
    "CLASS_BY_CODE",
    "CorpusError",
    "Entry",
    "census",
    "checkout_dir",
    "classify",
    "clone",
    "load_corpus",
    "overhead",
    "run_corpus",
    "runs_by_phase",
    "table",
]

RESULTS_VERSION = 1
#: The branch a local checkout may carry: one commit on the entry's commit removing files the
#: local copy lacks (a mirror without its largest files). Built instead, and marked.
LOCAL_BRANCH = "corpus-local"
_STATUSES = ("compatible", "incompatible", "not extracted", "not run")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")

#: The failure class of a build, by the code of the first error finding of its report.
CLASS_BY_CODE: dict[str, str] = {
    "B001": "claims file",
    "B002": "hint not understood",
    "B003": "source unavailable",
    "B004": "no launcher",
    "B005": "environment does not resolve",
    "B006": "import fails in environment",
    "B007": "run fails",
    "B009": "number not found",
    "B010": "extractor does not replay",
    "B011": "artifact invalid",
    "B012": "clean-room check fails",
    "B016": "build time cap",
    "B021": "run too long",
    "B049": "no launcher",
}
# Classes the benchmark itself gives: the build was killed at the per-build cap, the agent
# ended without a report, the artifact fails validate --strict, the statuses differ.
KILLED = "killed at build cap"
NO_REPORT = "agent error (no report)"
STRICT = "validate --strict fails"
VERDICT = "verdict differs"
SKIPPED = "total cap reached"


class CorpusError(UsageError):
    """The corpus index or one of its claims files is not usable."""


@dataclass(frozen=True)
class Entry:
    """One repository of the corpus."""

    id: str
    url: str
    commit: str
    claims: Path
    expected: dict[str, str]
    year: int
    framework: str
    python: str
    layout: tuple[str, ...] = ()
    why: str = ""


def _entry(raw: dict[str, Any], root: Path, index: int) -> Entry:
    where = f"entry {index + 1}"
    try:
        entry = Entry(
            id=str(raw["id"]),
            url=str(raw["url"]),
            commit=str(raw["commit"]),
            claims=root / str(raw["claims"]),
            expected={str(k): str(v) for k, v in dict(raw["expected"]).items()},
            year=int(raw["year"]),
            framework=str(raw["framework"]),
            python=str(raw["python"]),
            layout=tuple(str(item) for item in raw.get("layout", [])),
            why=str(raw.get("why", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorpusError(f"{where}: missing or malformed key {exc}") from None
    if not _SLUG.match(entry.id):
        raise CorpusError(f"{where}: id {entry.id!r} is not a slug")
    if not _COMMIT.match(entry.commit):
        raise CorpusError(f"{entry.id}: commit {entry.commit!r} is not a full 40-hex commit")
    if not entry.url.startswith(("https://", "file://")) or entry.url.count("/") < 4:
        raise CorpusError(f"{entry.id}: url {entry.url!r} is not https://HOST/OWNER/NAME")
    bad = sorted(v for v in entry.expected.values() if v not in _STATUSES)
    if bad:
        raise CorpusError(f"{entry.id}: expected status {bad[0]!r} is not one of {_STATUSES}")
    try:
        claims = load_claims(entry.claims)
    except ClaimsError as exc:
        raise CorpusError(f"{entry.id}: {exc.message}", exc.findings) from None
    ids = {claim.id for claim in claims.claims}
    if ids != set(entry.expected):
        raise CorpusError(
            f"{entry.id}: expected verdicts for {sorted(entry.expected)} but the claims file "
            f"has {sorted(ids)}"
        )
    return entry


def load_corpus(corpus: Path) -> list[Entry]:
    """The entries of ``corpus/corpus.toml``; raises :class:`CorpusError` on any defect."""
    index = corpus / "corpus.toml"
    try:
        data = tomllib.loads(index.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CorpusError(f"cannot read {index}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{index} is not TOML: {exc}") from None
    raw = data.get("entry")
    if not isinstance(raw, list) or not raw:
        raise CorpusError(f"{index} has no [[entry]]")
    entries = [_entry(item, corpus.resolve(), n) for n, item in enumerate(raw)]
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise CorpusError(f"entry id {entry.id!r} appears twice")
        seen.add(entry.id)
    return entries


def checkout_dir(entry: Entry, sources: Path) -> Path:
    """``SOURCES/<owner>__<name>`` for the entry's URL."""
    owner, name = entry.url.rstrip("/").removesuffix(".git").split("/")[-2:]
    return sources / f"{owner}__{name}"


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=600
    )


def clone(entries: list[Entry], sources: Path) -> list[str]:
    """Clone every entry missing from ``sources`` and check out its commit; returns problems."""
    problems: list[str] = []
    sources.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        target = checkout_dir(entry, sources)
        if not target.exists():
            done = _git("clone", "--quiet", "--", entry.url, str(target))
            if done.returncode != 0:
                problems.append(f"{entry.id}: git clone failed: {done.stderr.strip()[-200:]}")
                continue
        done = _git("checkout", "--quiet", "--detach", entry.commit, cwd=target)
        if done.returncode != 0:
            problems.append(f"{entry.id}: git checkout failed: {done.stderr.strip()[-200:]}")
    return problems


def _source_commit(entry: Entry, source: Path) -> tuple[str, bool]:
    """The commit to build: the entry's, or the local branch's when it sits on it."""
    local = _git("rev-parse", "--verify", "--quiet", f"refs/heads/{LOCAL_BRANCH}", cwd=source)
    if local.returncode == 0:
        head = local.stdout.strip()
        parent = _git("rev-parse", f"{head}^", cwd=source)
        if parent.returncode == 0 and parent.stdout.strip() == entry.commit:
            return head, True
    return entry.commit, False


# --------------------------------------------------------------------------- one build


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _union(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of the intervals (runs in parallel count once)."""
    covered, end = 0.0, float("-inf")
    for low, high in sorted(intervals):
        if high > end:
            covered += high - max(low, end)
            end = high
    return covered


def runs_by_phase(out: Path) -> dict[str, float]:
    """Wall seconds of the runs the build made, per phase (smoke runs, probe and references).

    The Distiller runs references two at a time, so its runs count as the time covered by at
    least one of them (from each record's start and end), not as the sum of their durations.
    """
    state = out / ".rra-build"
    seconds: dict[str, float] = {}
    reproducer = _read_json(state / "reproducer.json") or {}
    smoke = sum(float(a.get("seconds") or 0.0) for a in reproducer.get("attempts", []))
    if smoke:
        seconds["reproducer"] = smoke
    intervals: list[tuple[float, float]] = []
    if out.is_dir():
        for record in out.rglob(RECORD_NAME):
            data = _read_json(record) or {}
            duration = data.get("duration")
            if not isinstance(duration, int | float) or "run_id" not in data:
                continue
            try:
                start = datetime.fromisoformat(str(data["started_at"])).timestamp()
            except (KeyError, ValueError):
                continue
            intervals.append((start, start + float(duration)))
    if intervals:
        seconds["distiller"] = _union(intervals)
    return seconds


def _error_type(text: str | None) -> str | None:
    match = re.match(r"\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b", text or "")
    return match.group(1).rsplit(".", 1)[-1] if match else None


def classify(report: dict[str, Any] | None, reproducer: dict[str, Any] | None) -> str:
    """The failure class of a build that stopped, from its report and its Reproducer record."""
    if report is None:
        return NO_REPORT
    errors = [f for f in report.get("findings", []) if f.get("severity") == "error"]
    if not errors:
        return f"stopped at {report.get('stopped_at') or 'unknown'}"
    code = str(errors[0].get("code"))
    name = CLASS_BY_CODE.get(code, f"finding {code}")
    if code == "B007":
        attempts = (reproducer or {}).get("attempts", [])
        kind = _error_type(attempts[-1].get("error")) if attempts else None
        if kind is None:
            kind = _error_type(str(errors[0].get("message", "")).split(": ", 1)[-1])
        if kind:
            name = f"{name}: {kind}"
    return name


def _phase_reached(out: Path, report: dict[str, Any] | None) -> str:
    if report is not None:
        return "done" if report.get("passed") else str(report.get("stopped_at") or "?")
    state = out / ".rra-build"
    for phase in PHASES:
        record = _read_json(state / f"{phase}.json")
        if record is None or not record.get("gate", {}).get("passed"):
            return phase
    return "done"


def _phase_seconds(out: Path, report: dict[str, Any] | None) -> dict[str, float]:
    if report is not None and report.get("phase_seconds"):
        return {k: float(v) for k, v in report["phase_seconds"].items()}
    seconds: dict[str, float] = {}
    for phase in PHASES:
        record = _read_json(out / ".rra-build" / f"{phase}.json")
        if record is not None:
            seconds[phase] = float(record.get("seconds", 0.0))
    return seconds


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


@dataclass
class Caps:
    """The caps of a corpus run, in seconds."""

    build: float = 480.0
    total: float = 3600.0
    smoke: float = 120.0


def build_entry(
    entry: Entry, sources: Path, work: Path, cap: float, smoke: float
) -> dict[str, Any]:
    """Build one entry under ``cap`` seconds; its result as stored in the results file."""
    source = checkout_dir(entry, sources)
    work.mkdir(parents=True, exist_ok=True)
    out = work / f"{entry.id}-rra"
    if out.exists():
        shutil.rmtree(out)
    result: dict[str, Any] = {"id": entry.id, "commit": entry.commit, "local_commit": None}
    if not source.is_dir():
        result.update(
            success=False,
            reached="intake",
            failure="source unavailable",
            detail=f"no checkout at {source.name} (run --clone)",
            wall=0.0,
            claims={},
            phases={},
            runs={},
        )
        return result
    commit, local = _source_commit(entry, source)
    if local:
        result["local_commit"] = commit
    argv = [
        sys.executable, "-m", "reprobridge_sdk", "build", str(source),
        "--claims", str(entry.claims), "--commit", commit, "-o", str(out),
        "--max-minutes", f"{0.9 * cap / 60:.2f}", "--smoke-budget", f"{smoke:.0f}",
    ]  # fmt: skip
    log = work / f"{entry.id}.log"
    started = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            exit_code: int | None = proc.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            exit_code = None
    wall = time.monotonic() - started
    report = _read_json(out / ".rra-build" / "report.json")
    reproducer = _read_json(out / ".rra-build" / "reproducer.json")
    claims = {c["claim"]: c["status"] for c in (report or {}).get("claims", [])}
    strict: bool | None = None
    if (out / "rra.yaml").is_file():
        check = subprocess.run(
            [sys.executable, "-m", "reprobridge_sdk", "validate", "--strict", str(out)],
            capture_output=True, check=False,
        )  # fmt: skip
        strict = check.returncode == 0
    verdicts_match = all(claims.get(k) == v for k, v in entry.expected.items())
    success = bool(strict) and verdicts_match
    if success:
        failure = None
    elif exit_code is None:
        failure = KILLED
    elif report is not None and report.get("passed"):
        failure = VERDICT if strict else STRICT
    else:
        failure = classify(report, reproducer)
    errors = [f for f in (report or {}).get("findings", []) if f.get("severity") == "error"]
    detail = f"{errors[0]['code']} {' '.join(str(errors[0]['message']).split())}" if errors else ""
    reached = _phase_reached(out, report)
    result.update(
        success=success, reached=f"{reached} (killed)" if exit_code is None else reached,
        failure=failure, detail=detail[:400],
        exit_code=exit_code, wall=round(wall, 2), strict=strict, claims=claims,
        phases=_phase_seconds(out, report), runs=runs_by_phase(out),
    )  # fmt: skip
    return result


# --------------------------------------------------------------------------- the run


@dataclass
class Results:
    """The results file: written atomically after every build."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, path: Path, caps: Caps, fresh: bool) -> Results:
        data = None if fresh else _read_json(path)
        if data is None or data.get("results_version") != RESULTS_VERSION:
            data = {
                "results_version": RESULTS_VERSION,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "caps": {"build": caps.build, "total": caps.total, "smoke": caps.smoke},
                "results": {},
            }
        return cls(path, data)

    @property
    def results(self) -> dict[str, dict[str, Any]]:
        return self.data["results"]  # type: ignore[no-any-return]

    def spent(self) -> float:
        return sum(float(r.get("wall", 0.0)) for r in self.results.values())

    def put(self, result: dict[str, Any]) -> None:
        self.results[result["id"]] = result
        atomic_write_json(self.path, self.data)


def run_corpus(
    entries: list[Entry],
    sources: Path,
    work: Path,
    caps: Caps,
    *,
    fresh: bool = False,
    log: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> Results:
    """Build every entry not yet in ``work/results.json``, within the caps."""
    work.mkdir(parents=True, exist_ok=True)
    results = Results.open(work / "results.json", caps, fresh)
    for entry in entries:
        done = results.results.get(entry.id)
        if done is not None and done.get("failure") != SKIPPED:
            continue
        remaining = caps.total - results.spent()
        if remaining < 30:
            results.put(
                {"id": entry.id, "commit": entry.commit, "success": False, "reached": "-",
                 "failure": SKIPPED, "wall": 0.0, "claims": {}, "phases": {}, "runs": {}}
            )  # fmt: skip
            continue
        log(f"[{time.strftime('%H:%M:%S')}] {entry.id}: building")
        result = build_entry(entry, sources, work, min(caps.build, remaining), caps.smoke)
        results.put(result)
        log(
            f"[{time.strftime('%H:%M:%S')}] {entry.id}: {result['reached']} "
            f"{result['failure'] or 'success'} ({result['wall']:.0f} s)"
        )
    return results


# --------------------------------------------------------------------------- tables


def _mark(got: str | None, want: str) -> str:
    return f"{got or '-'}{'' if got == want else f' (expected {want})'}"


def table(entries: list[Entry], results: dict[str, dict[str, Any]]) -> str:
    """The per-build table (Markdown): phase reached, class, verdicts, time per phase."""
    short = [p[:5] for p in PHASES]
    lines = [
        "| entry | reached | failure class | claims: status | wall s | runs s | "
        + " | ".join(short) + " |",
        "|" + " --- |" * (6 + len(PHASES)),
    ]  # fmt: skip
    for entry in entries:
        r = results.get(entry.id)
        if r is None:
            continue
        claims = "; ".join(
            f"{cid}: {_mark(r.get('claims', {}).get(cid), want)}"
            for cid, want in entry.expected.items()
        )
        runs = sum(r.get("runs", {}).values())
        phases = " | ".join(
            f"{r['phases'][p]:.0f}" if p in r.get("phases", {}) else "" for p in PHASES
        )
        name = entry.id + (" *" if r.get("local_commit") else "")
        failure = r.get("failure") or "success"
        lines.append(
            f"| {name} | {r.get('reached', '')} | {failure} | {claims} | "
            f"{float(r.get('wall', 0)):.0f} | {runs:.0f} | {phases} |"
        )
    done = [r for r in results.values() if r.get("failure") != SKIPPED]
    wins = sum(1 for r in done if r.get("success"))
    lines.append("")
    lines.append(
        f"Success: {wins} of {len(entries)} entries ({100 * wins / len(entries):.0f}%); "
        f"{len(done)} built."
    )
    return "\n".join(lines)


def census(results: dict[str, dict[str, Any]]) -> list[tuple[str, int, str, str]]:
    """Failure classes, most frequent first: (class, count, an example entry, its detail)."""
    counts = Counter(r["failure"] for r in results.values() if r.get("failure"))
    rows = []
    for name, count in counts.most_common():
        example = next(r for r in results.values() if r.get("failure") == name)
        rows.append((name, count, example["id"], str(example.get("detail", ""))))
    return rows


def overhead(results: dict[str, dict[str, Any]]) -> tuple[float | None, int, dict[str, float]]:
    """Median of build wall / runs' runtime over builds with runs; overhead seconds per phase.

    The per-phase overhead is summed over every build: the phase's wall time minus the runs
    made in it (smoke runs in the Reproducer, probe and references in the Distiller; the
    clean-room check's runs leave no record and count as the Reviewer's overhead). The rest
    of the wall time is ``other`` (cloning the source, process start-up), or ``killed`` for a
    build stopped at its cap (the phase it was in wrote no record).
    """
    ratios: list[float] = []
    per_phase: dict[str, float] = dict.fromkeys((*PHASES, "other", "killed"), 0.0)
    for r in results.values():
        runs = r.get("runs", {})
        phases = r.get("phases", {})
        total_runs = sum(runs.values())
        wall = float(r.get("wall", 0.0))
        if total_runs > 0:
            ratios.append(wall / total_runs)
        for phase in PHASES:
            per_phase[phase] += max(0.0, phases.get(phase, 0.0) - runs.get(phase, 0.0))
        rest = "killed" if r.get("failure") == KILLED else "other"
        per_phase[rest] += max(0.0, wall - sum(phases.values()))
    median = statistics.median(ratios) if ratios else None
    return median, len(ratios), per_phase
