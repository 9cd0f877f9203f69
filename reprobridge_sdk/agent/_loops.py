"""Shell ``for`` loops of a README block or a shell script, unrolled into their commands.

Grammar (the loops people write around an experiment; anything else is left as written)::

    loop   = "for" NAME "in" values (";" "do" | LF "do") body "done"
           | "for" NAME "in" values ";" "do" line (";" line)* ";"? "done"   (one line)
    values = WORD+ | "{" INT ".." INT "}" | ("$(" | "`") "seq" INT [INT [INT]] (")" | "`")

A loop over seeds (``$NAME`` is the value of an option whose name holds ``seed``, and may
name its output files too) is its first value's commands: the build chooses the seeds and
their count itself. Any other loop is unrolled, one copy of its body a value with ``$NAME``
and ``${NAME}`` replaced, so that each configuration it runs is a command of its own. A loop
of more than :data:`MAX_VALUES` values, values that are not plain words, or a body that never
ends is left as written.
"""

from __future__ import annotations

import re

__all__ = ["MAX_LINES", "MAX_VALUES", "joined_lines", "unrolled"]

#: Most values a loop is unrolled over.
MAX_VALUES = 1000
#: Most lines the loops of one block or script unroll into, nested loops included.
MAX_LINES = 5000

_HEAD = re.compile(r"^for\s+(?P<name>[A-Za-z_]\w*)\s+in\s+(?P<values>.+?)\s*(?P<do>;\s*do)?\s*$")
_ONE_LINE = re.compile(
    r"^for\s+(?P<name>[A-Za-z_]\w*)\s+in\s+(?P<values>.+?)\s*;\s*do\s+(?P<body>.+?)\s*;?\s*done$"
)
_WORD = re.compile(r"^[\w.+-]+$")
_BRACES = re.compile(r"^\{(-?\d{1,9})\.\.(-?\d{1,9})\}$")
_SEQ = re.compile(r"^(?:\$\(|`)\s*seq((?:\s+-?\d{1,9}){1,3})\s*(?:\)|`)$")


def joined_lines(lines: list[str], limit: int) -> list[str]:
    """``lines`` with each line that ends in a backslash joined to the next (a shell's and
    make's continuation); a joined line stops growing past ``limit`` characters."""
    out: list[str] = []
    pending = ""
    for raw in lines:
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            if len(pending) > limit:
                out.append(pending)
                pending = ""
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def _values(text: str) -> list[str] | None:
    """The values a loop's ``in`` list names, or None when they are not plain."""
    text = text.strip()
    braces = _BRACES.match(text)
    if braces:
        first, last = int(braces.group(1)), int(braces.group(2))
        step = 1 if last >= first else -1
        return [str(v) for v in range(first, last + step, step)[: MAX_VALUES + 1]]
    seq = _SEQ.match(text)
    if seq:
        numbers = [int(n) for n in seq.group(1).split()]
        first, step, last = (
            (1, 1, numbers[0])
            if len(numbers) == 1
            else (numbers[0], 1, numbers[1])
            if len(numbers) == 2
            else (numbers[0], numbers[1], numbers[2])
        )
        if step == 0:
            return None
        stop = last + (1 if step > 0 else -1)
        return [str(v) for v in range(first, stop, step)[: MAX_VALUES + 1]]
    words = text.split()
    return words if all(_WORD.match(w) for w in words) else None


def _uses(name: str) -> re.Pattern[str]:
    return re.compile(rf"\$(?:\{{{name}\}}|{name}(?![\w]))")


def _over_seeds(name: str, body: list[str]) -> bool:
    """``$name`` is the value of an option naming a seed somewhere in ``body``."""
    uses = _uses(name).pattern
    seed_use = re.compile(rf"--?[\w-]*seed[\w-]*(?:=|\s+)[\"']?{uses}[\"']?", re.IGNORECASE)
    return any(seed_use.search(line) for line in body)


def _expand(name: str, values: list[str], body: list[str], budget: list[int]) -> list[str] | None:
    """The loop's lines, one copy of ``body`` a value (the first only for a loop over seeds);
    None past :data:`MAX_VALUES` or the lines left in ``budget``."""
    if not values or len(values) > MAX_VALUES:
        return None
    chosen = values[:1] if _over_seeds(name, body) else values
    if len(chosen) * len(body) > budget[0]:
        return None
    budget[0] -= len(chosen) * len(body)
    uses = _uses(name)
    return [uses.sub(value, line) for value in chosen for line in body]


def unrolled(lines: list[str]) -> list[str]:
    """``lines`` with each ``for`` loop it can read replaced by its commands (nested loops
    too, :data:`MAX_LINES` lines at most); every other line as it was."""
    return _unrolled(lines, [MAX_LINES])


def _unrolled(lines: list[str], budget: list[int]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        one = _ONE_LINE.match(line)
        head = None if one else _HEAD.match(line)
        expanded, after = None, index + 1
        if one:
            values = _values(one.group("values"))
            body = [part.strip() for part in one.group("body").split(";") if part.strip()]
            if values is not None:
                expanded = _expand(one.group("name"), values, body, budget)
        elif head:
            end = _body_end(lines, index + 1, opened=head.group("do") is not None)
            values = _values(head.group("values"))
            if end is not None and values is not None:
                start, stop = end
                body = [b.strip() for b in lines[start:stop]]
                expanded = _expand(head.group("name"), values, body, budget)
                after = stop + 1 if expanded is not None else after
        if expanded is None:
            out.append(lines[index])
        else:
            out += _unrolled(expanded, budget)
        index = after
    return out


def _body_end(lines: list[str], index: int, *, opened: bool) -> tuple[int, int] | None:
    """Where a loop's body starts and where its ``done`` is (the body's end): the ``do``
    line is needed unless the head had it; nested loops keep their own ``done``."""
    if not opened:
        if index >= len(lines) or lines[index].strip() != "do":
            return None
        index += 1
    start, depth = index, 0
    while index < len(lines):
        word = lines[index].strip()
        if _HEAD.match(word) and not _ONE_LINE.match(word):
            depth += 1
        elif word in {"done", "done;"}:
            if depth == 0:
                return start, index
            depth -= 1
        index += 1
    return None
