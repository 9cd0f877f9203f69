"""Templates in argv, env values, output paths and ``extract.file`` (spec: manifest, Templates).

One implementation, used three ways: the validator lists a template's names
(:func:`template_names`, R014), the runner renders it (:func:`render_template`) and the
auditor recognises a rendered text (:func:`template_matches`, A015). Rules:

* ``{name}`` (a letter or ``_``, then letters, digits or ``_``) is replaced by the context's
  value: booleans as ``true``/``false``, anything else by ``str()``;
* ``{{`` and ``}}`` are a literal ``{`` and ``}``; the text is read left to right, so
  ``{{{seed}}}`` is ``{`` + the seed + ``}``;
* any other brace (a lone ``{`` or ``}``, ``{1}``, ``{a-b}``) is an error
  (:class:`TemplateError`), as is a name the context lacks.

Matching: a rendered text matches a template when it is the template with every name replaced
by its known value, or by any text (possibly empty) when the value is unknown to the auditor
(``{run_dir}`` of another machine). A template with an error matches nothing: the runner can
never have rendered it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from ._errors import TemplateError

__all__ = [
    "TemplateError",
    "parse_template",
    "render_template",
    "shell_quoted",
    "template_matches",
    "template_names",
]

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


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def shell_quoted(context: Mapping[str, object]) -> dict[str, str]:
    """The values of ``context`` as a shell launcher's command line gets them: each quoted
    as one word for ``/bin/sh`` (the runner renders, and the auditor matches, with these)."""
    return {name: shlex.quote(_value(value)) for name, value in context.items()}


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
