"""Which optional requirements to leave out when the requirements do not resolve together.

A requirement added only for an optional import (under ``try``/``except ImportError``, a
prerequisite step's closure) may have no release an index serves. Leaving out every optional
requirement then also loses those that resolve (a plotting library next to a package no
index has). The search leaves them out one at a time: first the optional requirements the
resolver's error names, else a bisection over all of them (at most ``log2(n)`` probes, then
one resolution without the one found), and again while the rest still does not resolve.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.utils import canonicalize_name

__all__ = ["Attempt", "leave_out", "named_in"]

#: ``attempt(kept, left_out, probe)``: resolve the required requirements with the optional
#: ones ``kept``; None when it resolves, else the resolver's error. ``probe``: a step of the
#: bisection, not a candidate environment.
Attempt = Callable[[list[str], list[str], bool], "str | None"]

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _name(requirement: str) -> str:
    match = _TOKEN.match(requirement.strip())
    return canonicalize_name(match.group(0).strip("._-")) if match else requirement


def named_in(error: str, optional: list[str]) -> list[str]:
    """The requirements of ``optional`` whose distribution the resolver's ``error`` names as a
    whole word (any spelling: ``Foo_Bar`` names ``foo-bar``), in the order of ``optional``."""
    tokens = {canonicalize_name(token.strip("._-")) for token in _TOKEN.findall(error)}
    return [requirement for requirement in optional if _name(requirement) in tokens]


def _bisect(suspects: list[str], attempt: Attempt) -> str:
    """One requirement of ``suspects`` that does not resolve with the required ones and
    those of ``suspects`` before it that do: ``ceil(log2(len(suspects)))`` probes."""
    good: list[str] = []
    while len(suspects) > 1:
        half = suspects[: len(suspects) // 2]
        if attempt([*good, *half], [], True) is None:
            good += half
            suspects = suspects[len(half) :]
        else:
            suspects = half
    return suspects[0]


def leave_out(optional: list[str], error: str, attempt: Attempt) -> list[str] | None:
    """The optional requirements left out so that the rest resolves (its last ``attempt``
    is the resolution kept), or None when even the required ones alone do not resolve.
    ``error``: the resolver's error with every requirement."""
    remaining = list(optional)
    dropped: list[str] = []
    required_checked = False
    while remaining:
        suspects = named_in(error, remaining) or remaining
        culprit = _bisect(suspects, attempt)
        remaining.remove(culprit)
        dropped.append(culprit)
        failed = attempt(list(remaining), list(dropped), False)
        if failed is None:
            return dropped
        error = failed
        if remaining and not required_checked:
            # once: are the required ones alone resolvable? If not, nothing optional is to
            # blame and the search stops
            required_checked = True
            if attempt([], list(optional), True) is not None:
                return None
    return None
