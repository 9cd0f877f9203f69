"""Templates in argv, env values, output paths and ``extract.file`` (spec §6.8).

One implementation for the validator (:func:`template_names`, R014), the runner
(:func:`render_template`) and the auditor (:func:`template_matches`, A015).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ._errors import TemplateError

__all__ = [
    "TEMPLATE_BUILTINS",
    "TemplateError",
    "check_templates",
    "parse_template",
    "render_shell_template",
    "render_template",
    "shell_template_matches",
    "template_matches",
    "template_names",
]

#: The names every template may use besides a launcher's ``params`` (``seed`` only where the
#: launcher declares seeds).
TEMPLATE_BUILTINS = frozenset({"seed", "run_dir"})

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[{}]")


@dataclass(frozen=True)
class Name:
    """A ``{name}`` part of a template."""

    name: str


Part = str | Name


@lru_cache(maxsize=1024)
def parse_template(text: str) -> tuple[Part, ...]:
    """The literal and ``{name}`` parts of ``text``; :class:`TemplateError` on a stray brace."""
    parts: list[Part] = []
    literal: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        literal.append(text[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        name = match.group(1)
        if name is None:
            msg = f"unescaped {token!r} in template {text!r} (write {token * 2!r})"
            raise TemplateError(msg)
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append(Name(name))
    literal.append(text[pos:])
    tail = "".join(literal)
    if tail:
        parts.append(tail)
    return tuple(part for part in parts if part != "")


def template_names(text: str) -> tuple[list[str], bool]:
    """The ``{name}`` templates of ``text`` and whether it has an unescaped brace."""
    names: list[str] = []
    stray = False
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        if match.group(1) is None:
            stray = True
        else:
            names.append(match.group(1))
    return names, stray


def check_templates(
    places: Iterable[tuple[str, object]], known: frozenset[str], add: Callable[..., None]
) -> None:
    """R014 through ``add`` for each template text among ``places`` (pointer, value) that
    names something outside ``known`` or holds an unescaped brace; non-strings are the
    structural layer's."""
    for where, text in places:
        if not isinstance(text, str):
            continue
        names, stray = template_names(text)
        for name in names:
            if name not in known:
                add(
                    "R014",
                    f"template {{{name}}} names no parameter",
                    where,
                    hint=f"define it in params, or use one of {sorted(known)}",
                )
        if stray:
            add(
                "R014",
                f"unescaped brace in {text!r}",
                where,
                hint="write '{{' or '}}' for a literal brace",
            )


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# Where a ``{name}`` stands in a shell command line, as far as quoting goes: outside quotes,
# inside "...", inside '...', or where no quoting of ours holds (`...`, ${...}, $((...)), a
# here-document's body). A hand-written scan of the POSIX shell's quoting, only as deep as
# placing a value needs: quotes, backslashes, comments, and the frames $( ) ` ` ${ } $(( )).
_BARE, _DOUBLE, _SINGLE, _UNQUOTABLE = "bare", "double", "single", "unquotable"
_WORD_BREAK = frozenset(" \t\n;&|()<>")


def _shell_places(parts: tuple[Part, ...]) -> list[str]:
    """The place of each :class:`Name` of ``parts`` in the shell command line, in order. A
    value inserted by :func:`_placed` leaves the scan's state as it was, so only the literal
    text moves it."""
    scan = _ShellScan()
    places: list[str] = []
    for part in parts:
        if isinstance(part, Name):
            places.append(scan.place())
        else:
            scan.literal(part)
    return places


class _ShellScan:
    """The quoting state of a shell command line, read left to right.

    frame = ``[kind, quote]``: kind ``top``, ``$(``, a backtick, ``${`` or ``$((``; quote
    ``None``, ``"`` or ``'``.
    """

    def __init__(self) -> None:
        self.frames: list[list[str | None]] = [["top", None]]
        self.heredoc = False
        self.previous = "\n"  # what came before: a ``#`` starts a comment only at a word's start

    def place(self) -> str:
        """Where a value inserted now stands."""
        self.previous = "x"
        if self.heredoc or {frame[0] for frame in self.frames} & {"`", "${", "$(("}:
            return _UNQUOTABLE
        return {None: _BARE, '"': _DOUBLE, "'": _SINGLE}[self.frames[-1][1]]

    def literal(self, text: str) -> None:
        i = 0
        while i < len(text):
            step = self._step(text, i)
            self.previous = text[i + step - 1] if i + step - 1 < len(text) else text[i]
            i += step

    def _step(self, text: str, i: int) -> int:
        """How many characters at ``i`` make one token: quotes and comments first."""
        char, frame = text[i], self.frames[-1]
        quote = frame[1]
        if quote == "'":
            frame[1] = None if char == "'" else quote
            return 1
        if char == "\\":
            return 2
        if quote is None and char == "#" and self.previous in _WORD_BREAK:
            end = text.find("\n", i)
            return (end if end >= 0 else len(text)) - i
        return self._frame_step(text, i, frame)

    def _frame_step(self, text: str, i: int, frame: list[str | None]) -> int:
        """Frames that open anywhere (``$((``, ``$(``, ``${``, a backtick), double quotes."""
        char, quote = text[i], frame[1]
        if text.startswith("$((", i):
            self.frames.append(["$((", None])
            return 3
        if text.startswith(("$(", "${"), i):
            self.frames.append([text[i : i + 2], None])
            return 2
        if char == "`":
            if frame[0] == "`" and quote is None:
                self.frames.pop()
            else:
                self.frames.append(["`", None])
            return 1
        if char == '"' and quote in (None, '"'):
            frame[1] = None if quote == '"' else '"'
            return 1
        return 1 if quote is not None else self._bare_step(text, i, frame)

    def _bare_step(self, text: str, i: int, frame: list[str | None]) -> int:
        """Outside quotes: a single quote opens, a frame closes, ``<<`` starts a here-document."""
        if text[i] == "'":
            frame[1] = "'"
            return 1
        if len(self.frames) > 1 and _closes(frame[0], text, i):
            self.frames.pop()
            return 2 if frame[0] == "$((" else 1
        if text.startswith("<<", i):
            self.heredoc = True
            return 2
        return 1


def _closes(kind: str | None, text: str, i: int) -> bool:
    if kind == "$((":
        return text.startswith("))", i)
    return (kind == "$(" and text[i] == ")") or (kind == "${" and text[i] == "}")


def _placed(value: str, place: str, name: str) -> str:
    """``value`` as one literal word where it stands (``place``): a value of shell-safe
    characters as itself anywhere; else quoted with :func:`shlex.quote`, after closing the
    quotes it stands in (and reopening them): ``"..."'v'"..."`` is one word."""
    quoted = shlex.quote(value)
    if quoted == value:
        return value
    if place == _BARE:
        return quoted
    if place == _DOUBLE:
        return f'"{quoted}"'
    if place == _SINGLE:
        return f"'{quoted}'"
    msg = (
        f"{{{name}}} stands inside `...`, ${{...}}, $((...)) or a here-document, where its "
        f"value {value!r} cannot be quoted for the shell (write $(...) or a plain word)"
    )
    raise TemplateError(msg)


def render_shell_template(text: str, context: Mapping[str, object]) -> str:
    """:func:`render_template` for a shell launcher's command line (``/bin/sh -c``): each
    value is one literal word of the shell wherever it stands (outside quotes, inside double
    or single quotes, inside ``$(...)``), so a runs directory named ``"$(touch X)"`` runs
    nothing; :class:`TemplateError` where no quoting holds (see :func:`_placed`)."""
    parts = parse_template(text)
    places = iter(_shell_places(parts))
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif part.name in context:
            out.append(_placed(_value(context[part.name]), next(places), part.name))
        else:
            msg = f"template {text!r} names {{{part.name}}}, which is not defined"
            raise TemplateError(msg)
    return "".join(out)


def shell_template_matches(text: str, rendered: str, known: Mapping[str, object]) -> bool:
    """:func:`template_matches` for a shell launcher's command line rendered by
    :func:`render_shell_template` (a known value that cannot be placed matches nothing)."""
    try:
        parts = parse_template(text)
        places = iter(_shell_places(parts))
        pattern = []
        for part in parts:
            if isinstance(part, str):
                pattern.append(re.escape(part))
                continue
            place = next(places)
            if part.name in known:
                pattern.append(re.escape(_placed(_value(known[part.name]), place, part.name)))
            else:
                pattern.append("(?s:.*)")
    except TemplateError:
        return False
    return re.fullmatch("".join(pattern), rendered) is not None


def render_template(text: str, context: Mapping[str, object]) -> str:
    """Substitute ``{name}`` from ``context``; ``{{``/``}}`` are literal braces."""
    out: list[str] = []
    for part in parse_template(text):
        if isinstance(part, str):
            out.append(part)
        elif part.name in context:
            out.append(_value(context[part.name]))
        else:
            msg = f"template {text!r} names {{{part.name}}}, which is not defined"
            raise TemplateError(msg)
    return "".join(out)


def template_matches(text: str, rendered: str, known: Mapping[str, object]) -> bool:
    """Whether ``rendered`` can be ``text`` rendered with ``known`` values (others: any text)."""
    try:
        parts = parse_template(text)
    except TemplateError:
        return False
    pattern = []
    for part in parts:
        if isinstance(part, str):
            pattern.append(re.escape(part))
        elif part.name in known:
            pattern.append(re.escape(_value(known[part.name])))
        else:
            pattern.append("(?s:.*)")
    return re.fullmatch("".join(pattern), rendered) is not None
