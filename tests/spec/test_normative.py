"""Normative text never names a ``reprobridge`` command (spec/README.md, "normative").

Neither as ``reprobridge run ...`` nor as a command line without the program's name
(``audit --table``, ``validate DIR``).

The convention: informative text is a note (a block quote whose first line starts with
``> **Note (informative).**``), an example (a fenced or indented code block), or a section
whose heading ends in "(informative)" down to the next heading of its level or higher; the
building part is informative as a whole. Everything else of a part is normative, and names
behaviour, never the reference implementation's commands and options.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reprobridge_sdk.cli import COMMANDS

SPEC = Path(__file__).resolve().parents[2] / "spec"
PARTS = sorted(p for p in SPEC.glob("*.md") if p.name not in {"building.md", "bench.md"})
NOTE = "> **Note (informative).**"
#: A command of the reference implementation: ``reprobridge`` and a subcommand or an option
#: (a quoted string value such as ``"reprobridge init"``, a provenance the scaffold writes, is
#: data, not a command).
COMMAND = re.compile(r"(?<![\"'])\breprobridge[ ]+(?:[a-z][a-z-]*\b|-)")
#: A command line of the reference implementation without its name: a code span that starts
#: with one of its commands and goes on with an option or a metavariable (``audit --table``,
#: ``validate DIR``).
_NAMES = "|".join(sorted(map(re.escape, COMMANDS)))
COMMAND_LINE = re.compile(rf"`(?:{_NAMES}) (?:-|[A-Z][A-Z_]*\b)[^`]*`")
_HEADING = re.compile(r"^(#+) ")


def normative_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of the normative text of a part, by the convention above."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    grammar: str | None = None
    informative_level: int | None = None
    in_note = False
    previous_blank = True
    in_indented = False
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            previous_blank = False
            continue
        if grammar is not None:  # a grammar is normative (spec/README.md): its lines count
            if stripped.startswith(grammar):
                grammar = None
            else:
                out.append((number, line))
            continue
        if stripped.startswith(("```abnf", "~~~abnf")):
            grammar = stripped[:3]
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if informative_level is not None and level <= informative_level:
                informative_level = None
            if informative_level is None and line.rstrip().endswith("(informative)"):
                informative_level = level
        blank = not line.strip()
        if in_indented and (blank or line.startswith("    ")):
            previous_blank = blank
            continue
        in_indented = previous_blank and line.startswith("    ") and not stripped.startswith("-")
        previous_blank = blank
        if in_indented:
            continue
        # a note runs from its first line to the end of its block quote
        in_note = stripped.startswith(">") and (in_note or stripped.startswith(NOTE))
        if in_note or informative_level is not None:
            continue
        out.append((number, line))
    return out


def test_the_convention_is_read_as_stated() -> None:
    text = "\n".join(
        [
            "Intro `reprobridge run` here.",  # 1: normative
            "",
            "> **Note (informative).** `reprobridge run` runs.",
            "> `reprobridge audit` too.",
            "",
            "> A quote that is not a note names `reprobridge pack`.",  # 6: normative
            "",
            "```sh",
            "reprobridge validate",
            "```",
            "",
            "    reprobridge check",
            "",
            "## Tools (informative)",
            "`reprobridge lock` here.",
            "### Deeper",
            "`reprobridge env` here.",
            "## Back",
            "`reprobridge digest` again.",  # 19: normative
            "- a list item `reprobridge-sdk` is a distribution, not a command",
            'a value `"reprobridge init"` is data',
            "a batch (`validate DIR`) and `audit --table` and `code/` and `run` alone",  # 22
            "```abnf",
            "rule = `reprobridge pack` ; 24: a grammar is normative",
            "```",
        ]
    )
    named = [n for n, line in normative_lines(text) if COMMAND.search(line)]
    assert named == [1, 6, 19, 24]
    lines = [n for n, line in normative_lines(text) if COMMAND_LINE.search(line)]
    assert lines == [22]


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.name)
def test_normative_text_names_no_reprobridge_command(part: Path) -> None:
    found = [
        f"{part.name}:{number}: {line.strip()}"
        for number, line in normative_lines(part.read_text("utf-8"))
        if COMMAND.search(line) or COMMAND_LINE.search(line)
    ]
    assert found == []
