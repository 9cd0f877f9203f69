"""Locks: pip hashed requirements and PEP 751 ``pylock.toml`` (spec §6.4, ``locks``).

Why no library: pip's requirements-file parser is private and has no line:col (PEP 508: packaging).

The requirements-file grammar read here (pip's, as far as a lock uses it), in EBNF:

.. code-block:: ebnf

    file         = { logical } ;
    logical      = { physical "\" newline } physical ;  (* joined; a "#" line ends it *)
    physical     = { char - newline } [ comment ] ;
    comment      = ( line start | whitespace ) "#" { char - newline } ;  (* dropped *)
    line         = option-line | requirement-line ;  (* blank lines are skipped *)
    option-line  = option [ value ] ;  (* the first word starts with "-" *)
    option       = "--" name [ "=" value ] | "-" letter [ value ] ;
    requirement-line = requirement { " " per-req } ;  (* split at the first " -" word *)
    requirement  = pep508 | url ;  (* packaging.requirements.Requirement *)
    per-req      = "--hash" ( "=" | ws ) algorithm ":" hex
                 | ( "--config-settings" | "--global-option" | "--install-option" )
                   ( "=" | ws ) value ;
    algorithm    = "sha256" | "sha384" | "sha512" | "sha224" | "sha1" | "md5" ;

Which options a lock may use, and what makes it portable (L001-L009):
``spec/manifest.md#locks``. :func:`read_lock` returns a frozen :class:`Lock` or raises
:class:`LockError`; :func:`check_lock` returns every L finding with ``file:line:col``.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io import reading, safefs

from ._types import PYLOCK_VERSION, Lock, LockEntry, LockError, LockFormat, is_local_location

__all__ = [
    "PYLOCK_VERSION",
    "Lock",
    "LockEntry",
    "LockError",
    "LockFormat",
    "check_lock",
    "detect_format",
    "is_local_location",
    "read_lock",
]

#: Largest lock file read (64 MiB; real locks are kilobytes). Larger, or sparse, is L003.
MAX_LOCK_BYTES = safefs.MAX_TEXT_BYTES

_HASH_RE = re.compile(r"^(sha256|sha384|sha512|md5|sha1|sha224):([0-9a-fA-F]+)$")
_HASH_LENGTHS = {"md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128}
_COMMENT_RE = re.compile(r"(^|\s+)#.*$")
_SHA256_TOKEN_RE = re.compile(r"--hash=sha256:[0-9a-fA-F]{64}")
_SHA256_TOKEN_START = len("--hash=sha256:")
_SHA256_TOKEN_LENGTH = _SHA256_TOKEN_START + 64
#: Options that take a location and must not point at the local machine.
_LOCATION_OPTIONS = {
    "-i": "--index-url",
    "--index-url": "--index-url",
    "--extra-index-url": "--extra-index-url",
    "-f": "--find-links",
    "--find-links": "--find-links",
}
_INCLUDE_OPTIONS = {"-r", "--requirement", "-c", "--constraint"}
_EDITABLE_OPTIONS = {"-e", "--editable"}
#: Global options a lock may carry without harm (with or without a value).
_HARMLESS_OPTIONS = {
    "--no-index": False,
    "--prefer-binary": False,
    "--require-hashes": False,
    "--pre": False,
    "--no-binary": True,
    "--only-binary": True,
    "--trusted-host": True,
    "--use-feature": True,
}
#: Per-requirement options besides --hash.
_PER_REQ_OPTIONS = {"--config-settings", "--global-option", "--install-option"}
_VALUED_OPTIONS = frozenset({"--hash"} | _PER_REQ_OPTIONS)


@dataclass
class _Parsed:
    lock: Lock
    findings: list[Finding] = field(default_factory=list)


def detect_format(path: str | os.PathLike[str]) -> LockFormat:
    """``pylock`` for ``pylock.toml`` / ``pylock.*.toml`` (any ``.toml``), else ``requirements``."""
    return "pylock" if Path(path).name.endswith(".toml") else "requirements"


def read_lock(path: str | os.PathLike[str], fmt: LockFormat | None = None) -> Lock:
    """Parse the lock at ``path``; :class:`LockError` if it cannot be read or parsed.

    Only unreadable files and parse errors (L003, L005) raise: an unpinned or unhashed
    entry is returned as is, for :func:`check_lock` to report.
    """
    parsed = _parse(Path(path), fmt or detect_format(path), str(path))
    fatal = [f for f in parsed.findings if f.code in {"L003", "L005"}]
    if fatal:
        msg = f"cannot parse lock {path}: {fatal[0].message}"
        raise LockError(msg, fatal)
    return parsed.lock


def check_lock(
    path: str | os.PathLike[str],
    fmt: LockFormat | None = None,
    *,
    display_name: str | None = None,
    python: str | None = None,
) -> list[Finding]:
    """Every ``L`` finding of the lock at ``path``; ``display_name`` is used as the file.

    With ``python`` (the manifest's ``environment.python``), a ``pylock.toml`` whose
    ``requires-python`` excludes that version gives L007.
    """
    name = display_name if display_name is not None else str(path)
    parsed = _parse(Path(path), fmt or detect_format(path), name)
    findings = parsed.findings
    requires = parsed.lock.requires_python
    if python is not None and requires:
        try:
            allowed = SpecifierSet(requires).contains(python, prereleases=True)
        except InvalidSpecifier:
            findings.append(finding("L003", f"invalid requires-python {requires!r}", file=name))
        else:
            if not allowed:
                findings.append(
                    finding(
                        "L007",
                        f"the lock requires Python {requires}; the environment declares {python}",
                        file=name,
                        path="/requires-python",
                        hint="re-lock with 'reprobridge lock --python " + python + "'",
                    )
                )
    return sorted(findings)


def _parse(path: Path, fmt: LockFormat, name: str) -> _Parsed:
    try:
        text = reading.decode(reading.read_bytes(path, max_bytes=MAX_LOCK_BYTES))
    except reading.Unreadable as exc:
        if exc.problem == "encoding":
            item = finding("L003", "the lock is not valid UTF-8", file=name, line=exc.line, col=1)
            return _Parsed(Lock(fmt), [item])
        msg = f"cannot read lock {path}: {exc.message}"
        hint: str | None = f"a lock is a regular file of at most {MAX_LOCK_BYTES} bytes"
        if exc.problem not in {"unsafe", "too-large"}:
            hint = None  # missing, or not readable
        raise LockError(msg, [finding("L003", msg, file=name, hint=hint)]) from None
    if fmt == "pylock":
        from ._pylock import parse_pylock  # noqa: PLC0415 - only pylock.toml files pay for TOML

        return _Parsed(*parse_pylock(text, name))
    return _parse_requirements(text, name)


# --------------------------------------------------------------------------- requirements


@dataclass
class _Logical:
    """A logical line as pip builds it, with the position of every character kept.

    pip's order: join continued lines (a trailing backslash; a comment line ends the
    continuation), drop comments from the joined line, split on spaces
    (``spec/manifest.md#requirements-grammar``). ``starts[i]``, ``lines[i]`` and ``cols[i]`` place
    segment ``i``, so a position is one bisection away."""

    text: str
    starts: list[int]
    lines: list[int]
    cols: list[int] = field(default_factory=list)

    def at(self, offset: int) -> tuple[int, int]:
        if not self.text:
            return 0, 0
        offset = min(max(offset, 0), len(self.text) - 1)
        index = bisect_right(self.starts, offset) - 1
        base = self.cols[index] if self.cols else 1
        return self.lines[index], max(offset - self.starts[index] + base, 1)


_COMMENT_LINE_RE = re.compile(r"\s*#")


def _logical_lines(text: str) -> list[_Logical]:
    result: list[_Logical] = []
    parts: list[str] = []
    starts: list[int] = []
    lines: list[int] = []
    cols: list[int] = []
    size = 0

    def flush() -> None:
        joined = "".join(parts)
        if "#" in joined:
            joined = _COMMENT_RE.sub("", joined, count=1)
        if joined.strip():
            result.append(_Logical(joined, starts, lines, cols))

    for number, physical in enumerate(text.splitlines(), start=1):
        comment = _COMMENT_LINE_RE.match(physical) is not None
        if physical.endswith("\\") and not comment:
            segment = physical.strip("\\")
            col = len(physical) - len(physical.lstrip("\\")) + 1
        elif comment:
            segment, col = " " + physical, 0  # the space pip adds is not in the file
        else:
            segment, col = physical, 1
        parts.append(segment)
        starts.append(size)
        lines.append(number)
        cols.append(col)
        size += len(segment)
        if comment or not physical.endswith("\\"):
            flush()
            parts, starts, lines, cols, size = [], [], [], [], 0
    if parts:
        flush()
    return result


def _fields(logical: _Logical) -> tuple[int, int, int]:
    """``(begin, split, end)``: the stripped line is ``text[begin:end]``; the requirement is
    ``text[begin:split]`` and the options ``text[split:end]`` (pip splits on spaces only)."""
    text = logical.text
    begin = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    offset = begin
    for word in text[begin:end].split(" "):
        if word.startswith("-"):
            return begin, offset, end
        offset += len(word) + 1
    return begin, end, end


def _tokens(logical: _Logical, begin: int = 0, end: int | None = None) -> list[tuple[str, int]]:
    """Whitespace-separated tokens of ``text[begin:end]`` with their offsets in the line."""
    pattern = re.compile(r"\S+")
    stop = len(logical.text) if end is None else end
    return [(m.group(), m.start()) for m in pattern.finditer(logical.text, begin, stop)]


def _split_option(token: str) -> tuple[str, str | None]:
    if token.startswith("--") and "=" in token:
        key, value = token.split("=", 1)
        return key, value
    return token, None


def _parse_requirements(text: str, name: str) -> _Parsed:
    findings: list[Finding] = []
    entries: list[LockEntry] = []
    seen: dict[tuple[str, str | None], int] = {}

    def add(code: str, message: str, pos: tuple[int, int], hint: str | None = None) -> None:
        findings.append(finding(code, message, file=name, line=pos[0], col=pos[1], hint=hint))

    for logical in _logical_lines(text):
        begin, split, end = _fields(logical)
        if split == begin:  # the line starts with an option
            _option_line(_tokens(logical, begin, end), logical, add, entries)
            continue
        # A requirement, possibly followed by per-requirement options.
        first_offset = begin
        spec = logical.text[begin:split].strip()
        hashes: list[str] = []
        tokens = _tokens(logical, split, end)
        index = 0
        while index < len(tokens):
            token, offset = tokens[index]
            if len(token) == _SHA256_TOKEN_LENGTH and _SHA256_TOKEN_RE.fullmatch(token):
                hashes.append("sha256:" + token[_SHA256_TOKEN_START:].lower())  # the usual form
                index += 1
                continue
            key, value = _split_option(token)
            if value is None and index + 1 < len(tokens) and key in _VALUED_OPTIONS:
                index += 1
                value = tokens[index][0]
            if key == "--hash":
                match = _HASH_RE.match(value or "")
                if not match or len(match.group(2)) != _HASH_LENGTHS[match.group(1)]:
                    add("L003", f"malformed hash {value!r}", logical.at(offset))
                else:
                    hashes.append(f"{match.group(1)}:{match.group(2).lower()}")
            elif key not in _PER_REQ_OPTIONS:
                add("L003", f"unknown option {key!r} after a requirement", logical.at(offset))
            index += 1
        pos = logical.at(first_offset)
        entry = _requirement_entry(spec, hashes, pos, add)
        if entry is None:
            continue
        pin = (entry.name, entry.markers)
        if pin in seen:
            add(
                "L008",
                f"{entry.name} is pinned twice (first on line {seen[pin]})",
                pos,
                hint="keep one pin per distribution and marker",
            )
        else:
            seen[pin] = pos[0]
        entries.append(entry)
    return _Parsed(Lock("requirements", tuple(entries)), findings)


def _option_line(
    tokens: list[tuple[str, int]],
    logical: _Logical,
    add: Any,
    entries: list[LockEntry],
) -> None:
    token, offset = tokens[0]
    key, value = _split_option(token)
    if (
        value is None
        and len(token) > 2
        and not token.startswith("--")
        and token[:2]
        in {
            "-i",
            "-f",
            "-r",
            "-c",
            "-e",
        }
    ):
        key, value = token[:2], token[2:]
    if value is None and len(tokens) > 1:
        value = tokens[1][0]
    pos = logical.at(offset)
    if key in _LOCATION_OPTIONS:
        if not value:
            add("L003", f"{key} needs a value", pos)
        elif is_local_location(value):
            add(
                "L004",
                f"{_LOCATION_OPTIONS[key]} points at a machine-local location {value!r}",
                pos,
                hint="remove the line; resolve against a public index (e.g. PyPI)",
            )
        return
    if key in _INCLUDE_OPTIONS:
        add(
            "L009",
            f"{key} {value or ''} includes another file; a lock must be self-contained".strip(),
            pos,
            hint="inline the included pins into the lock",
        )
        return
    if key in _EDITABLE_OPTIONS:
        if value and is_local_location(value):
            add("L004", f"editable install of a local path {value!r}", pos)
        else:
            add("L001", f"editable requirement {value!r} is not pinned to a version", pos)
        return
    if key in _HARMLESS_OPTIONS:
        return
    add("L003", f"unknown option {key!r}", pos)


def _requirement_entry(
    spec: str, hashes: list[str], pos: tuple[int, int], add: Any
) -> LockEntry | None:
    if "://" in spec.split(";", 1)[0] and "@" not in spec.split("://", 1)[0]:
        # A bare URL (no "name @"): only a local one has a clear meaning here.
        if is_local_location(spec.split(";", 1)[0].strip()):
            add("L004", f"requirement is a machine-local file {spec!r}", pos)
        else:
            add("L003", f"a bare URL has no distribution name: {spec!r}", pos)
        return None
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        looks_like_path = spec.startswith((".", "/", "~")) or "\\" in spec or "/" in spec
        if looks_like_path:
            add("L004", f"requirement is a local path {spec!r}", pos)
        else:
            add("L003", f"cannot parse requirement {spec!r}: {exc}", pos)
        return None
    name = canonicalize_name(req.name)
    markers = str(req.marker) if req.marker else None
    if req.url:
        if is_local_location(req.url):
            add("L004", f"{name} points at a machine-local file {req.url!r}", pos)
        if not hashes:
            add("L002", f"{name} has no --hash", pos, hint="lock with --generate-hashes")
        return LockEntry(name, None, tuple(hashes), markers, req.url, pos[0])
    pins = [s for s in req.specifier if s.operator in {"==", "==="} and "*" not in s.version]
    version = pins[0].version if len(pins) == 1 and len(req.specifier) == 1 else None
    if version is None:
        add(
            "L001",
            f"{name} is not pinned with '==' ({str(req.specifier) or 'no version'})",
            pos,
            hint="regenerate the lock with 'reprobridge lock'",
        )
    if not hashes:
        add("L002", f"{name} has no --hash", pos, hint="lock with --generate-hashes")
    return LockEntry(name, version, tuple(hashes), markers, None, pos[0])
