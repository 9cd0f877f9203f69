"""A Makefile target read as the shell lines it runs, without running make.

Why no library: the agent needs the lines a target's recipe would run, not a build; the
few Python readers of Makefiles evaluate them (or run make). The part of make's grammar read::

    makefile   = (assignment | rule | recipe-line | comment | blank)*
    assignment = ["export" | "override"] NAME ("=" | ":=" | "::=" | "?=" | "+=") TEXT
    rule       = TARGET+ (":" | "::") PREREQUISITE* ["|" ORDER-ONLY*] [";" RECIPE-LINE]
    recipe-line= TAB ("@" | "-" | "+")* TEXT            (a line of the last rule's recipe)

A backslash at a line's end joins the next line. ``$(NAME)`` and ``${NAME}`` expand to the
variable (a ``NAME=value`` given on the command line first, then the file's; an unknown one
to nothing, as make does), ``$$`` to ``$``, ``$@`` to the target and ``$<`` to its first
prerequisite; a function (``$(shell ...)``, ``$(wildcard ...)``) and a ``!=`` assignment are
left as written, so the line needs a shell. The target's prerequisites that are rules of the
file run first, each once, depth first, as make would when none is up to date; the default
target is the file's first that does not start with ``.``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.agent._loops import joined_lines

__all__ = ["MAX_MAKEFILE", "MAX_TEXT", "recipe"]

#: Largest Makefile read (bytes).
MAX_MAKEFILE = 256 * 1024
#: Deepest expansion of a variable in another, and of a prerequisite's prerequisites.
_DEPTH = 16
#: Longest text a line's variables expand to (characters).
MAX_TEXT = 64 * 1024
_NAMES = ("GNUmakefile", "makefile", "Makefile")
_ASSIGN = re.compile(
    r"^(?:(?:export|override)\s+)*(?P<name>[A-Za-z_][\w.-]*)\s*(?P<op>::?=|\?=|\+=|!=|=)\s*(?P<value>.*)$"
)
_RULE = re.compile(r"^(?P<targets>[^\s:=#][^:=#]*?)\s*::?(?![=])\s*(?P<rest>.*)$")
_VARIABLE = re.compile(r"\$(?:\((?P<paren>[A-Za-z_][\w.-]*)\)|\{(?P<brace>[A-Za-z_][\w.-]*)\})")


@dataclass
class _Rule:
    prerequisites: list[str]
    lines: list[str] = field(default_factory=list)


@dataclass
class _Makefile:
    variables: dict[str, str] = field(default_factory=dict)
    rules: dict[str, _Rule] = field(default_factory=dict)
    default: str | None = None


def _read(text: str) -> _Makefile:
    made = _Makefile()
    current: _Rule | None = None
    for line in joined_lines(text.splitlines(), MAX_MAKEFILE):
        if line.startswith("\t"):
            if current is not None:
                current.lines.append(line[1:].lstrip("@-+ \t"))
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        assigned = _ASSIGN.match(stripped.strip())
        if assigned:
            name, op, value = assigned.group("name", "op", "value")
            if op == "!=":
                made.variables[name] = f"$(shell {value})"  # only a shell knows it
            elif op == "?=":
                made.variables.setdefault(name, value)
            elif op == "+=":
                made.variables[name] = f"{made.variables.get(name, '')} {value}".strip()
            else:
                made.variables[name] = value
            current = None
            continue
        rule = _RULE.match(stripped)
        if rule is None:
            current = None
            continue
        rest, _, inline = rule.group("rest").partition(";")
        current = _Rule(rest.split("|", 1)[0].split())
        if inline.strip():
            current.lines.append(inline.strip().lstrip("@-+ \t"))
        for target in rule.group("targets").split():
            made.rules.setdefault(target, current)
            if made.default is None and not target.startswith("."):
                made.default = target
    return made


class _Expander:
    """Variables expanded once each (``A = $(B)$(B)``, ``B = $(C)$(C)``, ... would double at
    every level), a value past :data:`MAX_TEXT` characters or :data:`_DEPTH` levels left as
    written (the line then needs a shell)."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.done: dict[str, str] = {}
        self.busy: set[str] = set()

    def text(self, text: str) -> str:
        expanded = _VARIABLE.sub(self._one, text)
        return expanded if len(expanded) <= MAX_TEXT else text

    def _one(self, match: re.Match[str]) -> str:
        name = match.group("paren") or match.group("brace")
        if name in self.done:
            return self.done[name]
        if name in self.busy or len(self.busy) >= _DEPTH:
            return match.group(0)  # a variable made of itself, or too deep: as written
        self.busy.add(name)
        value = self.text(self.values.get(name, ""))
        self.busy.discard(name)
        self.done[name] = value
        return value


def _inside(root: Path, rel: str) -> bool:
    """``rel`` names a file below ``root`` (no absolute path, no ``..``, no link out)."""
    if rel.startswith(("/", "..")):
        return False
    try:
        (root / rel).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def recipe(
    root: Path, folder: str, makefile: str | None, target: str | None, given: dict[str, str]
) -> tuple[str, list[str]] | str:
    """The Makefile read (from the repository root at ``root``) and the shell lines ``make
    [-f makefile] [target] NAME=value...`` runs in ``folder``, prerequisites first; a string
    says why there are none."""
    names = (makefile,) if makefile else _NAMES
    found = [posixpath.normpath(posixpath.join(folder, name)) for name in names]
    found = [rel for rel in found if _inside(root, rel) and (root / rel).is_file()]
    if not found:
        return f"no Makefile in {folder}/" if not makefile else f"no {makefile} in {folder}/"
    path = root / found[0]
    if path.stat().st_size > MAX_MAKEFILE:
        return f"{found[0]} is too large to read"
    made = _read(path.read_bytes().decode("utf-8", "replace"))
    chosen = target or made.default
    if chosen is None or chosen not in made.rules:
        return f"{found[0]} has no target {chosen!r}" if chosen else f"{found[0]} has no target"
    expander = _Expander({**made.variables, **given})
    lines: list[str] = []
    done: set[str] = set()

    def visit(name: str, depth: int) -> None:
        if name in done or depth > _DEPTH:
            return
        done.add(name)
        rule = made.rules[name]
        for prerequisite in rule.prerequisites:
            if prerequisite in made.rules:
                visit(prerequisite, depth + 1)
        first = rule.prerequisites[0] if rule.prerequisites else ""
        for line in rule.lines:
            text = expander.text(line).replace("$@", name).replace("$<", first)
            lines.append(text.replace("$$", "$"))

    visit(chosen, 0)
    return found[0], lines
