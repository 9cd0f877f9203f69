"""Distiller: find the printed number that is each claim, and make it extractable.

**The number finder** (:func:`find_number`) reads a log line by line. Every number on a line
(integers, decimals, exponents; digits inside words such as ``f1`` or ``epoch3`` are not
numbers) is a candidate, scored by:

* the label: with ``hints.label``, 1 when the label is the text right before the number
  (only spaces and punctuation between), 0.5 when it is elsewhere before it on the line, 0
  otherwise; without a label, the share of the words of ``measured`` found before the
  number on the line. A number alone on its line has no text before it: the print statement
  that wrote it, when the script's last statements say which (``print rmse``; see
  :mod:`~reprobridge_sdk.agent._printed`), names it with its expression's names, scored the
  same way (only the best-named print counts, and none when two are named equally well);
* closeness: ``1 / (1 + 10 * relative error)`` of the value against the published value (the
  midpoint of a range), also trying the value times 100 and divided by 100 for fractions
  reported as percentages and back; the best scale is kept as the extractor's transform
  when it brings the value within half the published value (a unit explains the gap),
  else the value is read as printed: a claim far from every scale is judged incompatible
  on its own number, not made to look nearer by a unit it was never in.

Digits of a clock time or a date (a log line's timestamp) are no candidates, and an integer
(an iteration count) is read as printed, with no scale, unless a ``%`` follows it.

Score = 2 x label + closeness; ties go to the later line (the final report of a training
loop comes last). A candidate needs a label score above 0, or a relative error under 5%
when the claim has no label and no number on the log has a label score above 0. None left: B009.

**The extractor** is a regular expression made from the chosen line: the text before the
number, escaped, with digit runs generalised to ``\\d+``, anchored at the line start, then
the number group; ``occurrence: last``. It must give the chosen value back on the log it
came from, or the candidate is rejected (a later line matching the same pattern would make
the extractor read another number). A number alone on its line is read by the first or the
last line of numbers alone, or of numbers of its kind (integers, fractions), or of its kind
and sign, whichever singles it out on the log (``occurrence: first`` or ``last``); none does:
the candidate is rejected. When the lines of a rejected candidate's form begin with a counter
that starts again (``step 1000`` ... ``step 6000``, then ``step 1000``: several models trained
one after another in one run) and the candidate is not in the last training, that form is left
out: its extractor would read the last model's number, not the claimed one (B060 says so).

**Landmarks** are the log lines without digits that every run printed, in order, at most
three, plus the extractor's own prefix. They are chosen again once the reference runs are
taken: a line (or result prefix) is kept only when the sample log and every reference run's
log reach it, searched line by line as the runner does (a line printed for some seeds or
some runs only is never a landmark; ``validate`` reports a landmark no sample reaches, R034).

**Discrepancies** say what the build saw, never more: the published value, the reference
values and their interval, the command that gave them, and what was varied between the runs
(the claim's seeds, or nothing: the same seed, or the same unseeded command, again).

**JSON outputs**: :func:`find_in_json` does the same search in a JSON document and gives a
JSON Pointer (keys scored against the label's words).

**Reference observations** (at least five): runs of the launcher's one seed, or of the
unseeded command, each one observation; for a claim over several seeds (the Planner's
``ClaimPlan.statistic``), five *repetitions*, each a run of every declared seed in its own
attempt directory under ``.rra-build/repetitions/<launcher>/rep-N``, which ``references add``
turns into one observation each (the value the auditor gives that attempt). The measurement
aggregates the seeds as the claim's statistic does. The probe run of a launcher with one seed
or none is measured with the extractors made from its own log (the runner's ``measure_with``)
and is the first observation when the auditor's check of it gives each claim its recorded
value: only the rest are run.
"""

from __future__ import annotations

import bisect
import math
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from reprobridge_sdk.agent._printed import BarePrint, Output, launcher_outputs, printed_lines
from reprobridge_sdk.agent._references import (
    MIN_REFERENCE_RUNS,
    PACKAGING_SECONDS,
    REFERENCE_JOBS,
    REFERENCE_RUNS,
    references_to_take,
    take_references,
)
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.api import ArtifactDir
from reprobridge_sdk.audit.interval import compatibility_interval
from reprobridge_sdk.audit.verify import artifact_facts, check_run
from reprobridge_sdk.authoring.references import add_references
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.extract.extraction import ExtractionError, extract_value
from reprobridge_sdk.extract.pattern import PatternError, author_pattern
from reprobridge_sdk.io.pointer import escape_pointer
from reprobridge_sdk.model.build import (
    BuildFinding,
    ClaimResult,
    DistillerRecord,
    LauncherPlan,
    PlanRecord,
)
from reprobridge_sdk.model.claims import Claim, Claims
from reprobridge_sdk.model.guide import Discrepancy
from reprobridge_sdk.model.launcher import Landmark, Launcher, Measurement, Sample
from reprobridge_sdk.model.task import Reference
from reprobridge_sdk.run.evidence import LOG_NAME
from reprobridge_sdk.run.replay import check_samples
from reprobridge_sdk.run.runner import run
from reprobridge_sdk.validation.semantic import outside_references

__all__ = [
    "NUMBER",
    "REFERENCE_RUNS",
    "Candidate",
    "JsonCandidate",
    "distill",
    "extractor_pattern",
    "find_in_json",
    "find_number",
    "reached_by_all",
    "stable_lines",
]

#: A number as the extractor captures it.
NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(rf"(?<![\w.]){NUMBER}(?!\w|\.\d)")
#: Clock times and dates (``[08:13:52]``, ``2024-05-01 12:00:03``): a log's timestamps,
#: never a result, however near their digits come to the published value.
_TIMESTAMP_RE = re.compile(
    r"(?<!\d)(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
    r"|\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?)(?!\d)"
)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "of", "a", "an", "on", "in", "for", "and", "with", "to", "by", "at"}
_SCALES = (1.0, 100.0, 0.01)
#: What measures a claim that the Reproducer un-planned (B061): the code's own change.
_CODE_DECIDES = (
    "the code decides it: an iteration count or an exit condition, recorded with "
    "'reprobridge code record --kind execution-fix', lets a build measure it"
)
#: What measures a claim whose runs did not fit the time limit (B059).
_MORE_TIME = (
    "a build with a larger time limit ('reprobridge build --resume --max-minutes N') can measure it"
)
#: What measures a claim whose number no printed line gives (B060): a label to look for, or
#: (when the line form is another model's) the claimed number printed under its own label.
_A_LABEL = "a hint of the text printed next to the number (hints.label) lets a build measure it"
_OWN_LABEL = (
    "the script printing the claimed number under a label of its own, recorded with "
    "'reprobridge code record --kind execution-fix', lets a build measure it"
)


@dataclass(frozen=True)
class Candidate:
    """A number on a log line and how well it matches a claim."""

    line_number: int
    line: str
    start: int
    end: int
    value: float
    scale: float
    label_score: float
    closeness: float
    #: Which line the extractor reads among those its pattern matches.
    occurrence: Literal["first", "last"] = "last"

    @property
    def score(self) -> float:
        return 2 * self.label_score + self.closeness

    @property
    def bare(self) -> bool:
        """Whether the number is alone on its line."""
        return not self.line[: self.start].strip() and not self.line[self.end :].strip()

    @property
    def scaled(self) -> float:
        return self.value * self.scale

    @property
    def prefix(self) -> str:
        return self.line[: self.start]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


_UNIT_EXPLAINS = 1 / (1 + 10 * 0.5)  # the closeness of a relative error of one half


def _closeness(
    value: float, target: float, scales: Sequence[float] = _SCALES
) -> tuple[float, float]:
    denominator = max(abs(target), 1e-12)

    def score(scale: float) -> float:
        return 1 / (1 + 10 * abs(value * scale - target) / denominator)

    best = (score(1.0), 1.0)
    for scale in scales:
        closeness = score(scale)
        if closeness > best[0] and closeness > _UNIT_EXPLAINS:
            best = (closeness, scale)
    return best


def _label_score(prefix: str, claim: Claim) -> float:
    label = claim.hints.label
    if label:
        lowered = prefix.lower().rstrip()
        wanted = label.lower().strip()
        if re.search(re.escape(wanted) + r"[\s:=(\[,|-]*$", lowered):
            return 1.0
        return 0.5 if wanted in lowered else 0.0
    words = _words(claim.measured)
    if not words:
        return 0.0
    return len(words & _words(prefix)) / len(words)


_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')


def traceback_lines(lines: Sequence[str]) -> set[int]:
    """The 0-based indexes of the lines of Python tracebacks in ``lines``: the header, its
    frames and their source lines, the chained-exception notes and the exception line that
    ends it, and any frame line elsewhere. A number there is a line number or an error's,
    never a result, and such a line is no landmark."""
    marked: set[int] = set()
    inside = False
    for index, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            inside = True
        if inside or _FRAME.match(line):
            marked.add(index)
            if inside and line and not line[0].isspace() and not line.startswith("Traceback"):
                inside = False  # the exception line ends the block
    return marked


def _print_labels(printed: Mapping[int, BarePrint], claim: Claim) -> dict[int, float]:
    """The label scores the print statements give the bare-number lines they wrote: the share
    of the claim's words (its label's, or ``measured``'s) in the printed expression's names.
    Only the best-named print counts (most of the claim's words, then fewest others); when
    two prints are named equally well, none does."""
    wanted = _words(claim.hints.label or claim.measured)
    quality: dict[int, tuple[float, float]] = {}
    for number, site in printed.items():
        names = set(site.words) - _STOP
        shared = len(names & wanted)
        if shared:
            quality[number] = (shared / len(wanted), shared / len(names))
    if not quality:
        return {}
    best = max(quality.values())
    lines = [number for number, q in quality.items() if q == best]
    if len({(printed[n].file, printed[n].line) for n in lines}) > 1:
        return {}
    return dict.fromkeys(lines, best[0])


def find_number(
    log: str, claim: Claim, printed: Mapping[int, BarePrint] | None = None
) -> list[Candidate]:
    """The candidates for ``claim`` in ``log``, best first (empty: none qualifies).

    ``printed``: the bare-number lines (1-based) by the print statement that wrote each
    (:func:`~reprobridge_sdk.agent._printed.printed_lines`), whose names label them."""
    target = claim.target
    found: list[Candidate] = []
    lines = log.splitlines()
    skipped = traceback_lines(lines)
    named = _print_labels(printed or {}, claim)
    for number, line in enumerate(lines, start=1):
        if len(line) > 10_000 or number - 1 in skipped:
            continue
        stamps = [m.span() for m in _TIMESTAMP_RE.finditer(line)]
        for match in _NUMBER_RE.finditer(line):
            try:
                value = float(match.group(0))
            except ValueError:
                continue
            if not math.isfinite(value) or any(a <= match.start() < b for a, b in stamps):
                continue
            # an integer (an iteration count: "Validation RMSE 50 : 1.52") is no percentage
            # of a fraction unless a percent sign says so
            whole = match.group(0).lstrip("+-").isdigit()
            percent = line[match.end() :].lstrip().startswith("%")
            closeness, scale = _closeness(value, target, () if whole and not percent else _SCALES)
            label = named.get(number) or _label_score(line[: match.start()], claim)
            relative = abs(value * scale - target) / max(abs(target), 1e-12)
            if label <= 0 and (claim.hints.label or relative >= 0.05):
                continue
            found.append(
                Candidate(number, line, match.start(), match.end(), value, scale, label, closeness)
            )
    if any(c.label_score > 0 for c in found):
        # a number the claim's words name beats one that is only near the published value
        found = [c for c in found if c.label_score > 0]
    found.sort(key=lambda c: (c.score, c.line_number), reverse=True)
    return found


def extractor_pattern(candidate: Candidate) -> str:
    """The regular expression that reads ``candidate``'s number from its line."""
    prefix = candidate.prefix
    parts: list[str] = []
    for piece in re.split(r"(\d+)", prefix):
        if not piece:
            continue
        parts.append(r"\d+" if piece.isdigit() else re.escape(piece))
    escaped = "".join(parts).replace(r"\ ", " ")
    return rf"^{escaped}(?P<value>{NUMBER})"


#: The shapes of a bare number, most general first: any, then of its kind, then of its sign.
_INTEGER = r"\d+"
_FRACTION = r"(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+"


def _bare_extractor(
    candidate: Candidate, lines: Sequence[str]
) -> tuple[str, Literal["first", "last"]] | None:
    """A pattern and occurrence that read ``candidate``, a number alone on its line, and no
    other line of ``lines``: the first or last line of numbers alone, or of numbers of its
    kind (integers, fractions), or of its kind and sign; None when none singles it out."""
    text = candidate.line[candidate.start : candidate.end]
    kind = _INTEGER if text.lstrip("+-").isdigit() else _FRACTION
    sign = "-" if text.startswith("-") else r"\+?"
    for shape in (NUMBER, rf"[-+]?(?:{kind})", rf"{sign}(?:{kind})"):
        pattern = rf"^\s*(?P<value>{shape})\s*$"
        regex = re.compile(pattern)
        matching = [n for n, line in enumerate(lines, start=1) if regex.search(line)]
        ends: tuple[tuple[Literal["first", "last"], list[int]], ...] = (
            ("last", matching[-1:]),
            ("first", matching[:1]),
        )
        for occurrence, number in ends:
            if number == [candidate.line_number]:
                return pattern, occurrence
    return None


def stable_lines(logs: Sequence[str], *, limit: int = 3) -> list[str]:
    """Lines without digits that every log printed, in the first log's order."""
    if not logs:
        return []
    sets = [{line.strip() for line in log.splitlines()} for log in logs[1:]]
    out: list[str] = []
    first = logs[0].splitlines()
    skipped = traceback_lines(first)
    for index, raw in enumerate(first):
        line = raw.strip()
        if index in skipped:
            continue
        if len(line) < 4 or any(ch.isdigit() for ch in line) or line in out:
            continue
        if "warning" in line.lower() or "error" in line.lower():
            continue
        if all(line in lines for lines in sets):
            out.append(line)
        if len(out) >= limit:
            break
    return out


def reached_by_all(landmarks: Sequence[Landmark], logs: Sequence[str]) -> list[Landmark]:
    """The landmarks that some line of every log matches (as the runner searches a log)."""
    kept = []
    for landmark in landmarks:
        try:
            regex = author_pattern(landmark.pattern)
        except PatternError:
            continue
        if all(any(regex.search(line) for line in log.splitlines()) for log in logs):
            kept.append(landmark)
    return kept


def _landmarks(logs: Sequence[str], prefixes: Sequence[str]) -> list[Landmark]:
    """Landmarks every one of ``logs`` reaches: stable lines, then the result prefixes."""
    chosen = [
        Landmark(id=f"line-{index + 1}", pattern="^" + re.escape(line))
        for index, line in enumerate(stable_lines(logs))
    ]
    chosen += [
        Landmark(id=f"result-{index + 1}", pattern=prefix, description="the reported value")
        for index, prefix in enumerate(dict.fromkeys(prefixes))
    ]
    return reached_by_all(chosen, logs)


def _varied(item: LauncherPlan, seed: int | None, runs: int) -> str:
    """What differed between a launcher's reference runs, as the build ran them (the plan
    records the constant a script seeds itself with, ``fixed_seed``)."""
    if item.seed_flag and len(item.seeds) > 1:
        why = (
            f"which the build chose because the script seeded itself with the constant "
            f"{item.fixed_seed}, now read from the launcher's seed"
            if item.fixed_seed is not None
            else "as the claim declares"
        )
        return (
            f"varied: the seeds {item.seeds}, {why}, in {runs} repetitions; nothing else was "
            "varied (no option, hyperparameter or data setting)"
        )
    if seed is not None:
        return (
            f"nothing was varied: {runs} runs of the same command with seed {seed}; no other "
            "seed, option, hyperparameter or data setting was tried"
        )
    if item.fixed_seed is not None and not item.seed_flag:
        return (
            f"nothing was varied: {runs} runs of the same command, which takes no seed and "
            f"seeds its generators with the constant {item.fixed_seed} itself, so every run "
            "repeats one initialisation; no option, hyperparameter or data setting was tried"
        )
    return (
        f"nothing was varied: {runs} runs of the same command, which takes no seed; no "
        "option, hyperparameter or data setting was tried"
    )


@dataclass(frozen=True)
class JsonCandidate:
    """A number in a JSON document and how well it matches a claim."""

    pointer: str
    value: float
    scale: float
    label_score: float
    closeness: float

    @property
    def score(self) -> float:
        return 2 * self.label_score + self.closeness


def _walk(document: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(document, dict):
        for key, value in document.items():
            token = escape_pointer(str(key))
            yield from _walk(value, f"{pointer}/{token}")
    elif isinstance(document, list):
        for index, value in enumerate(document[:1000]):
            yield from _walk(value, f"{pointer}/{index}")
    else:
        yield pointer, document


def find_in_json(document: Any, claim: Claim) -> list[JsonCandidate]:
    """The numbers of a JSON document that may be ``claim``, best first."""
    label_words = _words(claim.hints.label or claim.measured)
    found: list[JsonCandidate] = []
    for pointer, value in _walk(document):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if not math.isfinite(float(value)):
            continue
        closeness, scale = _closeness(float(value), claim.target)
        keys = _words(pointer.replace("_", " ").replace("/", " "))
        label = len(label_words & keys) / len(label_words) if label_words else 0.0
        relative = abs(float(value) * scale - claim.target) / max(abs(claim.target), 1e-12)
        if label <= 0 and relative >= 0.05:
            continue
        found.append(JsonCandidate(pointer, float(value), scale, label, closeness))
    found.sort(key=lambda c: c.score, reverse=True)
    return found


# ------------------------------------------------------------------------------ the phase


def _run_logs(summary: Any) -> list[tuple[Path, str]]:
    out = []
    for result in summary.results:
        log = result.run_dir / LOG_NAME
        text = log.read_text("utf-8", "replace") if log.is_file() else ""
        out.append((result.run_dir, text))
    return out


def _on_line(text: str, line_number: int, claim: Claim) -> list[Candidate]:
    """The numbers of one line as candidates (the advisor's pick), closest first."""
    lines = text.splitlines()
    if not 1 <= line_number <= len(lines):
        return []
    line = lines[line_number - 1]
    found = []
    for match in _NUMBER_RE.finditer(line):
        value = float(match.group(0))
        if not math.isfinite(value):
            continue
        closeness, scale = _closeness(value, claim.target)
        found.append(
            Candidate(line_number, line, match.start(), match.end(), value, scale, 0.0, closeness)
        )
    return sorted(found, key=lambda c: c.closeness, reverse=True)


#: A counter at the start of the text before a line's number (``step 4000, dt 0.18s, ...``).
_COUNTER = re.compile(r"\D*?(\d+)")


def training_starts(pattern: str, lines: Sequence[str]) -> list[int] | None:
    """The line numbers at which each training starts among the lines ``pattern`` matches,
    when those lines begin with a counter that starts again (``step 1000`` ... ``step 6000``,
    then ``step 1000``: one model trained after another in one run); None when the counter
    never starts again or a line has none."""
    regex = re.compile(pattern)
    starts: list[int] = []
    before: int | None = None
    for number, line in enumerate(lines, start=1):
        match = regex.search(line)
        if match is None:
            continue
        counter = _COUNTER.match(line[: match.start("value")])
        if counter is None:
            return None
        value = int(counter.group(1))
        if before is None or value <= before:
            starts.append(number)
        before = value
    return starts if len(starts) > 1 else None


def _choose(
    log_path: Path,
    text: str,
    claim: Claim,
    ask_line: Callable[[Claim, str], int | None] | None = None,
    printed: Mapping[int, BarePrint] | None = None,
    *,
    why: list[str] | None = None,
) -> tuple[Candidate, str] | None:
    """The best candidate whose extractor reads it back, and that extractor's pattern; None
    when none does. A candidate whose line's form other trainings of the run print after it
    (:func:`training_starts`) leaves that form out: its extractor would read another model's number.
    ``why`` receives the reason then."""
    candidates = find_number(text, claim, printed)[:20]
    if not candidates and ask_line is not None:
        line = ask_line(claim, text)
        advised = _on_line(text, line, claim) if line is not None else []
        # an advised number must still be within 10% of the published value
        candidates = [c for c in advised if c.closeness >= 0.5]
    lines = text.splitlines()
    other_trainings: dict[str, tuple[int, int]] = {}  # forms printed by several trainings
    starts_of: dict[str, list[int] | None] = {}  # each form's trainings, found once
    for found in candidates:
        candidate, pattern = found, extractor_pattern(found)
        if pattern in other_trainings:
            continue
        if found.bare:  # "^" and a number would read any line that begins with one
            extractor = _bare_extractor(found, lines)
            if extractor is None:
                continue
            pattern, occurrence = extractor
            candidate = replace(found, occurrence=occurrence)
        spec = {
            "kind": "regex",
            "pattern": pattern,
            "group": "value",
            "occurrence": candidate.occurrence,
        }
        try:
            got = extract_value(
                spec, log=log_path, files_base=log_path.parent, outputs={}, context={}
            )
        except ExtractionError:
            continue
        if got.values and math.isclose(got.values[-1], candidate.value, rel_tol=1e-12):
            return candidate, pattern
        if found.bare:
            continue
        if pattern not in starts_of:
            starts_of[pattern] = training_starts(pattern, lines)
        starts = starts_of[pattern]
        which = 0 if starts is None else bisect.bisect_right(starts, found.line_number)
        if starts is not None and which < len(starts):  # not the last training
            other_trainings[pattern] = (which, len(starts))
    if other_trainings and why is not None:
        which, many = next(iter(other_trainings.values()))
        why.append(
            f"the run prints the claim's line in {many} trainings one after another (a "
            f"counter that starts again), the nearest number in training {which}; a line "
            "pattern reads only the last training's"
        )
    return None


def _unreferenced(
    claim: Claim,
    launcher_id: str,
    choice: tuple[Candidate, str],
    status: Literal["not-extracted", "not-run"],
    reason: str,
) -> ClaimResult:
    """A claim whose number was found on the probe run but that has no references."""
    candidate, pattern = choice
    return ClaimResult(
        claim=claim.id,
        status=status,
        launcher=launcher_id,
        line=candidate.line[:300],
        pattern=pattern,
        scale=candidate.scale,
        value=candidate.value * candidate.scale,
        published=claim.target,
        reason=reason,
    )


def _mark_unmeasured(
    art: ArtifactDir,
    by_id: dict[str, Claim],
    unmeasured: set[str],
    results: list[ClaimResult],
    remedies: Mapping[str, str] | None = None,
) -> list[Discrepancy]:
    """Mark the tasks of ``unmeasured`` claims (no reference runs fitted, no number found, or
    un-planned by the Reproducer) as not measured, with the reason (``reference.not_measured``,
    spec "tasks"), and return a discrepancy per claim that says what was not measured, why,
    and what would measure it (``remedies`` by claim, else more time): the
    artifact stays valid and tells its reader what it does not reproduce."""
    reasons = {r.claim: r.reason or "no reference runs" for r in results}
    manifest = art.manifest
    marked = []
    for task in manifest.tasks:
        if task.id in unmeasured:
            task.reference = Reference(not_measured=reasons.get(task.id, "no reference runs"))
            marked.append(task.id)
    for launcher in manifest.launchers:
        for sample in launcher.samples:
            if sample.expected:
                # a sample value of an unmeasured task would be checked against nothing
                sample.expected = {k: v for k, v in sample.expected.items() if k not in marked}
    art.save()
    return [
        Discrepancy(
            id=f"{claim_id}-not-measured"[:64],
            paper=f"{by_id[claim_id].measured}: {by_id[claim_id].target:g}"
            + (f" {by_id[claim_id].unit}" if by_id[claim_id].unit else ""),
            code=f"not measured by this build: {reasons.get(claim_id, 'no reference runs')}",
            followed="code",
            rationale="the artifact records the claim and why it has no reference "
            "observations; " + (remedies or {}).get(claim_id, _MORE_TIME),
            tasks=[claim_id],
        )
        for claim_id in marked
    ]


def _measurement(
    claim_id: str, candidate: Candidate, pattern: str, statistic: str | None
) -> Measurement:
    """The measurement of a claim whose number is ``candidate``, read by ``pattern``."""
    measurement: dict[str, Any] = {
        "task": claim_id,
        "extract": {
            "kind": "regex",
            "pattern": pattern,
            "group": "value",
            "occurrence": candidate.occurrence,
        },
        "aggregate": statistic or "mean",
    }
    if candidate.scale != 1.0:
        measurement["transform"] = {"scale": candidate.scale}
    return Measurement.model_validate(measurement)


def _observed(art: ArtifactDir, probe_dir: Path, found: Mapping[str, object]) -> bool:
    """Whether the probe run is a reference observation of every claim in ``found``: it
    succeeded, and the auditor's check of it (its log, outputs and digests) finds no error
    and gives each claim the value its record holds (the record was measured with the
    extractors made from its own log)."""
    if not found or any(art.manifest.task(claim_id).statistic.seeds > 1 for claim_id in found):
        return False  # one run of a claim over several seeds is no observation
    evidence = check_run(artifact_facts(art), probe_dir, probe_dir.name)
    return (
        evidence.valid
        and evidence.succeeded
        and all(evidence.values.get(claim_id) is not None for claim_id in found)
    )


def judged_discrepancy(
    claim: Claim,
    launcher_id: str,
    command: str,
    values: Sequence[float],
    *,
    varied: str,
    seeds: Sequence[int] = (),
) -> Discrepancy | None:
    """The guide's record of a claim whose reference ``values`` do not stand behind it.

    Two cases, both true to what was run: the compatibility interval does not contain the
    published value (``-not-reproduced``), or it does, but only because the runs vary that
    much: the published value lies more than 10% outside their range, which validation
    flags (R011) unless the guide names the task in a discrepancy (``-outside-references``).
    ``None`` when the values stand behind the claim.
    """
    interval = compatibility_interval(values)
    paper = f"{claim.measured}: {claim.target:g}" + (f" {claim.unit}" if claim.unit else "")
    rationale = f"the artifact keeps what the code gives; {varied}"
    if not interval.contains(claim.target):
        what = f"repetitions of seeds {list(seeds)}" if len(seeds) > 1 else "reference runs"
        shown = ", ".join(f"{v:.6g}" for v in values[:10])
        return Discrepancy(
            id=f"{claim.id}-not-reproduced"[:64],
            paper=paper,
            code=(
                f"{len(values)} {what} of {launcher_id} ({command}) give {shown} "
                f"(mean {interval.mean:.6g}); the compatibility interval "
                f"[{interval.low:.6g}, {interval.high:.6g}] does not contain the published value"
            ),
            followed="code",
            rationale=rationale,
            tasks=[claim.id],
        )
    far = outside_references(claim.target, values)
    if far is None:
        return None
    return Discrepancy(
        id=f"{claim.id}-outside-references"[:64],
        paper=paper,
        code=(
            f"{len(values)} reference runs of {launcher_id} ({command}) give {far[0]:.6g} to "
            f"{far[1]:.6g}, more than 10% away from the published value; the compatibility "
            f"interval [{interval.low:.6g}, {interval.high:.6g}] contains it only because "
            "the runs vary that much"
        ),
        followed="code",
        rationale=rationale,
        tasks=[claim.id],
    )


def distill(
    art: ArtifactDir,
    claims: Claims,
    plan: PlanRecord,
    launchers: Sequence[LauncherPlan],
    state_dir: Path,
    *,
    inputs_digest: str,
    runs: int = REFERENCE_RUNS,
    ask_line: Callable[[Claim, str], int | None] | None = None,
    sandbox: bool = False,
    deadline: float | None = None,
    review: float | None = None,
) -> tuple[DistillerRecord, list[Discrepancy]]:
    """Run the scored launchers, write extractors, samples and references; judge each claim.

    ``deadline`` (a :func:`time.monotonic` value: the build's time limit) bounds every run
    (stopped :data:`PACKAGING_SECONDS` before it) and sizes the reference runs: as many as
    fit, from the probe run's time, down to :data:`MIN_REFERENCE_RUNS` (B058, a warning);
    when the probe does not end or not even those runs end in time, the claims are not run
    (B059, a warning) and the build goes on to an artifact that says so
    (:mod:`reprobridge_sdk.agent._references`).

    ``review``: the seconds the Reviewer's clean-room check needs besides its scored runs
    (a fresh environment, the smoke runs, its own steps). With the scored runs (each
    launcher's seeds once, one after another, by the probes' times; only the launchers that
    measure a claim, since the check runs no other) it is the Reviewer's
    share, kept from the reference runs when the minimum fits beside it, and recorded as
    ``review_seconds``. None: no share is kept, none recorded.

    ``ask_line`` is the advisor's :meth:`~reprobridge_sdk.agent.advisor.Advisor.choose_line`
    when enabled: asked only when no candidate qualifies, and its line passes the same
    replay check as a heuristic candidate (and its number must be within 10% of the
    published value, scales included).
    """
    begin = time.monotonic()
    by_id = {c.id: c for c in claims.claims}
    planned = {item.id: item for item in launchers}
    results: list[ClaimResult] = []
    findings: list[BuildFinding] = []
    discrepancies: list[Discrepancy] = []
    reference_runs: list[str] = []
    unmeasured: set[str] = set()  # claims without references: no time for them, no number
    remedies: dict[str, str] = {}  # what measures each unmeasured claim, by its cause
    checked = 0.0  # the seconds of the clean-room check's scored runs, by the probes' times
    root = art.root
    per_launcher: dict[str, list[str]] = {}
    statistic_of = {c.claim: c.statistic for c in plan.claims}
    for claim_plan in plan.claims:
        if claim_plan.status == "planned" and claim_plan.scored:
            per_launcher.setdefault(claim_plan.scored, []).append(claim_plan.claim)
        else:
            claim = by_id[claim_plan.claim]
            results.append(
                ClaimResult(
                    claim=claim.id,
                    status="not-run",
                    published=claim.target,
                    reason=claim_plan.reason,
                )
            )
            # its task, when the artifact has one (the Reproducer un-planned it: B061), is
            # marked not measured with that reason
            unmeasured.add(claim.id)
            remedies[claim.id] = _CODE_DECIDES
    for launcher_id, claim_ids in per_launcher.items():
        item = planned[launcher_id]
        seed = item.seeds[0] if item.seed_flag and item.seeds else None
        left = None if deadline is None else deadline - time.monotonic() - PACKAGING_SECONDS
        kept = ""
        if left is not None and review is not None and left > review + checked:
            # a probe that eats the Reviewer's share leaves no time for references either:
            # stop it there, so that the build goes on to a reviewed artifact
            left -= review + checked
            kept = f", less the {review + checked:.0f} s of the Reviewer's check"
        # the clean-room check runs the launcher once more over its declared seeds
        check_runs = len(item.seeds) if item.seed_flag and item.seeds else 1
        several = bool(item.seed_flag and len(item.seeds) > 1)
        picked: dict[str, tuple[Candidate, str] | None] = {}
        why_not: dict[str, list[str]] = {}  # why a claim's number was not extracted
        # the prints the script ends with: the names of the numbers it prints alone
        outputs = (
            []
            if item.shell
            else launcher_outputs(
                root / "code",
                item.script,
                workdir=item.workdir,
                module=bool({"-m", "-c"} & set(item.argv[:3])),
            )
        )

        def measured(
            launcher: Launcher,
            log: Path,
            *,
            claim_ids: list[str] = claim_ids,
            picked: dict[str, tuple[Candidate, str] | None] = picked,
            outputs: list[Output] = outputs,
            why_not: dict[str, list[str]] = why_not,
        ) -> Launcher:
            # the probe's record holds what the extractor made from its own log reads, as a
            # reference run's does (a run of a repetition's seeds is no observation alone)
            text = log.read_text("utf-8", "replace")
            printed = printed_lines(outputs, text)
            for claim_id in claim_ids:
                why_not[claim_id] = []
                picked[claim_id] = _choose(
                    log, text, by_id[claim_id], ask_line, printed, why=why_not[claim_id]
                )
            made = [
                _measurement(claim_id, *choice, statistic_of.get(claim_id))
                for claim_id, choice in picked.items()
                if choice is not None
            ]
            return launcher.model_copy(update={"measurements": made})

        probe = run(
            root,
            [launcher_id],
            seeds=[seed] if seed is not None else None,
            runs_dir=state_dir / "probe",
            sandbox=sandbox,
            timeout=None if left is None else max(left, 1.0),
            measure_with=None if several else measured,
        )
        failure = probe.results[0].record.failure if probe.results else None
        # counted once the launcher measures a claim: the check runs no other
        check = check_runs * (probe.results[0].record.duration or 0.0) if probe.results else 0.0
        if left is not None and failure is not None and failure.reason == "timeout":
            findings.append(
                build_finding(
                    "B059",
                    f"the scored run of {launcher_id!r} did not end within the "
                    f"{max(left, 1.0):.0f} s left of the build's time limit{kept}",
                    hint="build again with --resume and a larger --max-minutes",
                )
            )
            results.extend(
                ClaimResult(
                    claim=claim_id,
                    status="not-run",
                    launcher=launcher_id,
                    published=by_id[claim_id].target,
                    reason=f"the scored run did not end within the {max(left, 1.0):.0f} s left "
                    f"of the build's time limit{kept} (B059)",
                )
                for claim_id in claim_ids
            )
            unmeasured.update(claim_ids)
            remedies.update(dict.fromkeys(claim_ids, _MORE_TIME))
            continue
        logs = _run_logs(probe)
        if not logs or probe.results[0].status != "succeeded":
            for claim_id in claim_ids:
                results.append(
                    ClaimResult(
                        claim=claim_id,
                        status="not-run",
                        launcher=launcher_id,
                        published=by_id[claim_id].target,
                        reason="the scored run failed",
                    )
                )
                findings.append(
                    build_finding(
                        "B009", f"claim {claim_id!r}: the scored run of {launcher_id!r} failed"
                    )
                )
            continue
        probe_dir, probe_log = logs[0]
        art = art.reload()
        launcher = art.manifest.launcher(launcher_id)
        measurements = []
        expected: dict[str, float] = {}
        prefixes: list[str] = []
        found: dict[str, tuple[Candidate, str]] = {}
        for claim_id in claim_ids:
            claim = by_id[claim_id]
            choice = (
                picked[claim_id]
                if claim_id in picked
                else _choose(
                    probe_dir / LOG_NAME,
                    probe_log,
                    claim,
                    ask_line,
                    printed_lines(outputs, probe_log),
                    why=why_not.setdefault(claim_id, []),
                )
            )
            if choice is None:
                reasons = why_not.get(claim_id)
                reason = (
                    reasons[0]
                    if reasons
                    else "no printed number matches the claim's label and value"
                )
                results.append(
                    ClaimResult(
                        claim=claim_id,
                        status="not-extracted",
                        launcher=launcher_id,
                        published=claim.target,
                        reason=reason,
                    )
                )
                message = (
                    f"claim {claim_id!r}: {reason} (the log of {launcher_id!r}); its task is "
                    "recorded as not measured"
                    if reasons
                    else f"claim {claim_id!r}: no number in the log of {launcher_id!r} matches "
                    "it; its task is recorded as not measured"
                )
                hint = (
                    "make the script print the claimed model's number under a label of its own"
                    if reasons
                    else "give hints.label: the text printed next to the number"
                )
                findings.append(build_finding("B060", message, hint=hint))
                unmeasured.add(claim_id)
                remedies[claim_id] = _OWN_LABEL if reasons else _A_LABEL
                continue
            candidate, pattern = choice
            found[claim_id] = choice
            measurements.append(
                _measurement(claim_id, candidate, pattern, statistic_of.get(claim_id))
            )
            expected[claim_id] = candidate.value * candidate.scale
            if not candidate.bare:  # a bare number's prefix matches every line
                prefixes.append(pattern.split("(?P<value>", 1)[0])
        if not measurements:
            continue
        sample_dir = f"samples/{launcher_id}"
        (root / sample_dir).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(probe_dir / LOG_NAME, root / sample_dir / LOG_NAME)
        # provisional (the probe's lines): chosen again from every reference run below
        landmarks = _landmarks([probe_log], prefixes)
        launcher.measurements = measurements
        launcher.landmarks = landmarks
        launcher.samples = [Sample(log=f"{sample_dir}/{LOG_NAME}", seed=seed, expected=expected)]
        for other in art.manifest.launchers:
            if (
                other.scope == "smoke"
                and planned.get(other.id)
                and planned[other.id].script == item.script
            ):
                other.landmarks = [lm for lm in landmarks if lm.id.startswith("result-")]
        art.save()
        checks = check_samples(root, [launcher_id])
        bad = [c for c in checks if not c.ok]
        if bad:
            findings.extend(
                build_finding(
                    "B010",
                    f"{c.launcher}: sample {c.sample} gives {c.value} for {c.task}, "
                    f"not {c.expected}",
                )
                for c in bad
            )
            results.extend(
                _unreferenced(
                    by_id[claim_id],
                    launcher_id,
                    choice,
                    "not-extracted",
                    "the extractor does not replay on its sample (B010)",
                )
                for claim_id, choice in found.items()
            )
            continue
        # As many reference runs as the build's time limit holds, judged from the probe,
        # keeping the Reviewer's share when the minimum fits beside it.
        seeds = len(item.seeds) if several else 1
        took = probe.results[0].record.duration or 0.0
        remaining = None if deadline is None else deadline - time.monotonic() - PACKAGING_SECONDS
        share = (review or 0.0) + checked + check
        # the probe is the first observation when its record holds every claim's value
        have = 1 if _observed(art.reload(), probe_dir, found) else 0
        floor = min(runs, MIN_REFERENCE_RUNS)
        fitting, keep = references_to_take(
            took,
            seeds,
            remaining,
            runs,
            None if review is None else share,
            side_by_side=REFERENCE_JOBS if seed is not None else 1,
            have=have,
            setup=review or 0.0,
        )
        taken = (
            take_references(
                root,
                launcher_id,
                item.seeds if several else None if seed is None else [seed],
                fitting,
                took=took,
                deadline=deadline,
                reserve=share,
                keep_reserve=keep,
                repetitions=state_dir / "repetitions" / launcher_id,
                sandbox=sandbox,
                have=have,
                setup=review or 0.0,
            )
            if fitting + have >= floor
            else None
        )
        if taken is not None and have:
            taken.arguments.insert(0, str(probe_dir))
            taken.directories.insert(0, probe_dir)
        if taken is None or taken.observations < floor:
            left = max(remaining or 0.0, 0.0)
            more = f"{floor - have} more" if have else str(floor)
            why = (
                f"not even {more} fit the build's time limit (one run took "
                f"{took:.0f} s; {left:.0f} s remain)"
                if taken is None
                else f"only {taken.observations} of {fitting + have} ended within the build's "
                f"time limit (one run took {took:.0f} s)"
            )
            findings.append(
                build_finding(
                    "B059",
                    f"reference runs of {launcher_id!r}: {why}",
                    hint="build again with --resume and a larger --max-minutes",
                )
            )
            results.extend(
                _unreferenced(
                    by_id[claim_id],
                    launcher_id,
                    choice,
                    "not-run",
                    f"no reference runs: {more} runs of {took:.0f} s do not fit "
                    f"the {left:.0f} s left of the build's time limit (B059)"
                    if taken is None
                    else f"no reference runs: only {taken.observations} ended within the "
                    "build's time limit (B059)",
                )
                for claim_id, choice in found.items()
            )
            unmeasured.update(found)
            remedies.update(dict.fromkeys(found, _MORE_TIME))
            continue
        if taken.observations < runs:
            kept = f"; {share:.0f} s kept for the Reviewer's clean-room check" if keep else ""
            findings.append(
                build_finding(
                    "B058",
                    f"reference runs of {launcher_id!r}: {taken.observations}, not {runs}, to "
                    f"fit the build's time limit (one run took {took:.0f} s{kept})",
                    hint="build again with --resume and a larger --max-minutes for all of them",
                )
            )
        arguments, directories = taken.arguments, taken.directories
        reference_runs += [d.name for d in directories]
        try:
            add_references(art.reload(), arguments, replace=True)
        except ArtifactError as exc:
            detail = (
                "; ".join(dict.fromkeys(f"{f.code} {f.message}" for f in exc.findings))[:400]
                or exc.message
            )
            codes = ", ".join(dict.fromkeys(f.code for f in exc.findings)) or "refused"
            findings.append(build_finding("B009", f"reference runs of {launcher_id!r}: {detail}"))
            # the number was found, but no reference observation stands behind it: the claim
            # is not run (no judgement), with the refusal's codes as its reason
            results.extend(
                _unreferenced(
                    by_id[claim_id],
                    launcher_id,
                    choice,
                    "not-run",
                    f"references add refused the reference runs ({codes})",
                )
                for claim_id, choice in found.items()
            )
            continue
        checked += check
        art = art.reload()
        reference_logs = [
            (d / LOG_NAME).read_text("utf-8", "replace") if (d / LOG_NAME).is_file() else ""
            for d in directories
        ]
        chosen = _landmarks([probe_log, *reference_logs], prefixes)
        if chosen != landmarks:
            art.manifest.launcher(launcher_id).landmarks = chosen
            for other in art.manifest.launchers:
                if (
                    other.scope == "smoke"
                    and planned.get(other.id)
                    and (planned[other.id].script == item.script)
                ):
                    other.landmarks = [lm for lm in chosen if lm.id.startswith("result-")]
            art.save()
            art = art.reload()
        varied = _varied(item, seed, len(arguments))
        for claim_id, (candidate, pattern) in found.items():
            claim = by_id[claim_id]
            values = [o.value for o in art.manifest.task(claim_id).reference.observations]
            interval = compatibility_interval(values)
            reproduced = interval.contains(claim.target)
            results.append(
                ClaimResult(
                    claim=claim_id,
                    status="found",
                    launcher=launcher_id,
                    line=candidate.line[:300],
                    pattern=pattern,
                    scale=candidate.scale,
                    value=candidate.value * candidate.scale,
                    references=values,
                    interval=[interval.low, interval.high] if interval.defined else None,
                    published=claim.target,
                    reproduced=reproduced,
                )
            )
            discrepancy = judged_discrepancy(
                claim,
                launcher_id,
                " ".join(launcher.argv),
                values,
                varied=varied,
                seeds=item.seeds if item.seed_flag else [],
            )
            if discrepancy is not None:
                discrepancies.append(discrepancy)
    if unmeasured:
        discrepancies += _mark_unmeasured(art.reload(), by_id, unmeasured, results, remedies)
    order = {c.id: index for index, c in enumerate(claims.claims)}
    results.sort(key=lambda r: order.get(r.claim, 0))
    record = DistillerRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        claims=results,
        reference_runs=reference_runs,
        review_seconds=None if review is None else round(review + checked, 3),
    )
    return record, discrepancies
