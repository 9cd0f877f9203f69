"""Distiller: find the printed number that is each claim, and make it extractable.

**The number finder** (:func:`find_number`) reads a log line by line. Every number on a line
(integers, decimals, exponents; digits inside words such as ``f1`` or ``epoch3`` are not
numbers) is a candidate, scored by:

* the label: with ``hints.label``, 1 when the label is the text right before the number
  (only spaces and punctuation between), 0.5 when it is elsewhere before it on the line, 0
  otherwise; without a label, the share of the words of ``measured`` found before the
  number on the line;
* closeness: ``1 / (1 + 10 * relative error)`` of the value against the published value (the
  midpoint of a range), also trying the value times 100 and divided by 100 for fractions
  reported as percentages and back; the best scale is kept as the extractor's transform.

Score = 2 x label + closeness; ties go to the later line (the final report of a training
loop comes last). A candidate needs a label score above 0, or a relative error under 5%
when the claim has no label. None left: B009.

**The extractor** is a regular expression made from the chosen line: the text before the
number, escaped, with digit runs generalised to ``\\d+``, anchored at the line start, then
the number group; ``occurrence: last``. It must give the chosen value back on the log it
came from, or the candidate is rejected (a later line matching the same pattern would make
the extractor read another number).

**Landmarks** are the log lines without digits that every run printed, in order, at most
three, plus the extractor's own prefix.

**JSON outputs**: :func:`find_in_json` does the same search in a JSON document and gives a
JSON Pointer (keys scored against the label's words).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reprobridge_sdk.model.claims import Claim

__all__ = [
    "NUMBER",
    "Candidate",
    "JsonCandidate",
    "extractor_pattern",
    "find_in_json",
    "find_number",
    "stable_lines",
]

#: A number as the extractor captures it.
NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(rf"(?<![\w.]){NUMBER}(?!\w|\.\d)")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "of", "a", "an", "on", "in", "for", "and", "with", "to", "by", "at"}
_SCALES = (1.0, 100.0, 0.01)


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

    @property
    def score(self) -> float:
        return 2 * self.label_score + self.closeness

    @property
    def scaled(self) -> float:
        return self.value * self.scale

    @property
    def prefix(self) -> str:
        return self.line[: self.start]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _closeness(value: float, target: float) -> tuple[float, float]:
    best = (0.0, 1.0)
    for scale in _SCALES:
        scaled = value * scale
        denominator = max(abs(target), 1e-12)
        error = abs(scaled - target) / denominator
        closeness = 1 / (1 + 10 * error)
        if closeness > best[0]:
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


def find_number(log: str, claim: Claim) -> list[Candidate]:
    """The candidates for ``claim`` in ``log``, best first (empty: none qualifies)."""
    target = claim.target
    found: list[Candidate] = []
    for number, line in enumerate(log.splitlines(), start=1):
        if len(line) > 10_000:
            continue
        for match in _NUMBER_RE.finditer(line):
            try:
                value = float(match.group(0))
            except ValueError:
                continue
            if not math.isfinite(value):
                continue
            closeness, scale = _closeness(value, target)
            label = _label_score(line[: match.start()], claim)
            relative = abs(value * scale - target) / max(abs(target), 1e-12)
            if label <= 0 and (claim.hints.label or relative >= 0.05):
                continue
            found.append(
                Candidate(number, line, match.start(), match.end(), value, scale, label, closeness)
            )
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


def stable_lines(logs: Sequence[str], *, limit: int = 3) -> list[str]:
    """Lines without digits that every log printed, in the first log's order."""
    if not logs:
        return []
    sets = [{line.strip() for line in log.splitlines()} for log in logs[1:]]
    out: list[str] = []
    for raw in logs[0].splitlines():
        line = raw.strip()
        if len(line) < 4 or any(ch.isdigit() for ch in line) or line in out:
            continue
        if "warning" in line.lower() or "error" in line.lower():
            continue
        if all(line in lines for lines in sets):
            out.append(line)
        if len(out) >= limit:
            break
    return out


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
            token = str(key).replace("~", "~0").replace("/", "~1")
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
