"""The PEP 751 ``pylock.toml`` reader behind :mod:`reprobridge_sdk.locks.lockfile`.

Imported only when a ``pylock.toml`` is read. Findings point at the line of a package's
``name``; nesting deeper than :data:`MAX_DEPTH` is L003; a lock without other errors is also
checked by :mod:`packaging.pylock`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from packaging.pylock import Pylock, PylockValidationError
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io import reading

from ._types import PYLOCK_VERSION, Lock, LockEntry, is_local_location

__all__ = ["MAX_DEPTH", "parse_pylock"]

#: The deepest nesting of tables and arrays a lock may have (the document is level 1).
MAX_DEPTH = reading.MAX_TOML_DEPTH

#: ``name = "..."`` anywhere on a line (also inside inline tables); not ``x-name =``.
_NAME_RE = re.compile(r"""(?<![\w-])name\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)')""")
_KEY_RE = re.compile(r"^[ \t]*([A-Za-z0-9_-]+)[ \t]*=", re.MULTILINE)
_HEADER_RE = re.compile(r"^[ \t]*\[\[[ \t]*packages[ \t]*\]\]", re.MULTILINE)


class _Positions:
    """Line numbers of keys, package headers and package names, found in one pass each.

    The reader asks for the line of the k-th ``name = "X"`` for each package; scanning the
    text once into per-name lists makes that a lookup, so a lock of n packages costs O(n),
    not O(n^2). Lines are 1-based; 0 means "not found" (a finding without a line).
    """

    def __init__(self, text: str) -> None:
        self._starts = [0]
        self._starts.extend(m.end() for m in re.finditer("\n", text))
        self._keys: dict[str, int] = {}
        for match in _KEY_RE.finditer(text):
            self._keys.setdefault(match.group(1), self._line(match.start(1)))
        self._headers = [self._line(m.start()) for m in _HEADER_RE.finditer(text)]
        self._names: dict[str, list[int]] = {}
        for match in _NAME_RE.finditer(text):
            value = match.group(1) if match.group(1) is not None else match.group(2)
            self._names.setdefault(value, []).append(self._line(match.start()))

    def _line(self, offset: int) -> int:
        return bisect_right(self._starts, offset)

    def key_line(self, key: str) -> int:
        """The first line that assigns ``key`` at the start of a line."""
        return self._keys.get(key, 0)

    def package_header(self, index: int) -> int:
        """The line of the ``index``-th ``[[packages]]`` header."""
        return self._headers[index] if index < len(self._headers) else 0

    def name_line(self, name: str, occurrence: int) -> int:
        """The line of the ``occurrence``-th ``name = "<name>"``."""
        lines = self._names.get(name, [])
        return lines[occurrence] if occurrence < len(lines) else 0


def parse_pylock(text: str, name: str) -> tuple[Lock, list[Finding]]:
    """The lock in ``text`` (a ``pylock.toml``) and every finding of reading it."""
    data, findings = _load(text, name)
    if data is None:
        return Lock("pylock"), findings
    positions = _Positions(text)

    def add(code: str, message: str, line: int, path: str, hint: str | None = None) -> None:
        findings.append(
            finding(code, message, file=name, line=line, col=1 if line else 0, path=path, hint=hint)
        )

    if not _lock_version_readable(data.get("lock-version"), positions, add):
        return Lock("pylock"), findings
    packages = data.get("packages")
    if not isinstance(packages, list):
        add(
            "L003",
            "'packages' is missing or not an array",
            positions.key_line("packages"),
            "/packages",
        )
        return Lock("pylock"), findings
    entries, package_lines = _read_packages(packages, positions, add)
    if not any(f.severity is Severity.ERROR for f in findings):
        _packaging_validation(data, add, package_lines)
    lock = Lock(
        "pylock",
        tuple(entries),
        requires_python=_text(data.get("requires-python")),
        created_by=_text(data.get("created-by")),
    )
    return lock, findings


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _load(text: str, name: str) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The TOML table of ``text``, or ``None`` and the finding that says why not."""
    try:
        return reading.parse_toml(text, max_depth=MAX_DEPTH), []
    except reading.Unreadable as exc:
        if exc.problem == "too-deep":
            item = finding(
                "L003",
                f"the lock nests tables or arrays deeper than {MAX_DEPTH} levels",
                file=name,
                hint="a pylock.toml nests a few levels; this file is not a lock",
            )
        else:
            message = f"not valid TOML: {exc.message}"
            item = finding("L003", message, file=name, line=exc.line, col=exc.col)
        return None, [item]


def _lock_version_readable(raw_version: Any, positions: _Positions, add: Any) -> bool:
    """Whether the lock's ``lock-version`` is one this SDK reads (a newer minor is a warning)."""
    version_line = positions.key_line("lock-version")
    if not isinstance(raw_version, str):
        add("L003", "lock-version is missing or not a string", version_line, "/lock-version")
        return False
    try:
        lock_version = Version(raw_version)
    except InvalidVersion:
        add("L003", f"lock-version {raw_version!r} is not a version", version_line, "/lock-version")
        return False
    if lock_version.major != PYLOCK_VERSION.major:
        add(
            "L005",
            f"lock-version {raw_version} is not supported "
            f"(this SDK reads {PYLOCK_VERSION.major}.x)",
            version_line,
            "/lock-version",
        )
        return False
    if lock_version > PYLOCK_VERSION:
        add(
            "L006",
            f"lock-version {raw_version} is newer than {PYLOCK_VERSION}; newer fields are ignored",
            version_line,
            "/lock-version",
        )
    return True


def _read_packages(
    packages: list[Any], positions: _Positions, add: Any
) -> tuple[list[LockEntry], list[int]]:
    """The entries of ``[[packages]]`` and the line of each named package."""
    entries: list[LockEntry] = []
    seen: dict[tuple[str, str | None], int] = {}
    name_counts: dict[str, int] = {}
    package_lines: list[int] = []
    for index, package in enumerate(packages):
        pointer = f"/packages/{index}"
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            add("L003", "a package has no name", positions.package_header(index), pointer)
            continue
        raw_name = package["name"]
        occurrence = name_counts.get(raw_name, 0)
        name_counts[raw_name] = occurrence + 1
        line = positions.name_line(raw_name, occurrence)
        package_lines.append(line)
        entry = _pylock_entry(package, line, pointer, add)
        if entry is None:
            continue
        key = (entry.name, entry.markers)
        if key in seen:
            add("L008", f"{entry.name} is pinned twice (first on line {seen[key]})", line, pointer)
        else:
            seen[key] = line
        entries.append(entry)
    return entries, package_lines


def _pylock_entry(package: dict[str, Any], line: int, pointer: str, add: Any) -> LockEntry | None:
    name = canonicalize_name(package["name"])
    version = package.get("version")
    marker = _text(package.get("marker"))
    unpinned = _unpinned_entry(package, name, line, pointer, add)
    if unpinned is not None:
        return unpinned
    index = package.get("index")
    if isinstance(index, str) and is_local_location(index):
        add("L004", f"{name} names a machine-local index {index!r}", line, f"{pointer}/index")
    sources = _file_sources(package, pointer)
    hashes, url = _read_sources(sources, name, line, add)
    if not sources:
        add("L002", f"{name} has no sdist, wheel or archive with hashes", line, pointer)
    if not isinstance(version, str):
        if url is None:
            add("L001", f"{name} has no version", line, f"{pointer}/version")
        return LockEntry(name, None, tuple(hashes), marker, url, line)
    try:
        Version(version)
    except InvalidVersion:
        add("L003", f"{name} has an invalid version {version!r}", line, f"{pointer}/version")
        return None
    return LockEntry(name, version, tuple(hashes), marker, url, line)


def _file_sources(package: dict[str, Any], pointer: str) -> list[tuple[str, dict[str, Any]]]:
    """The package's sdist, archive and wheels, each with its pointer."""
    sources: list[tuple[str, dict[str, Any]]] = []
    for key in ("sdist", "archive"):
        if isinstance(package.get(key), dict):
            sources.append((f"{pointer}/{key}", package[key]))
    wheels = package.get("wheels")
    if isinstance(wheels, list):
        sources.extend(
            (f"{pointer}/wheels/{i}", w) for i, w in enumerate(wheels) if isinstance(w, dict)
        )
    return sources


def _unpinned_entry(
    package: dict[str, Any], name: str, line: int, pointer: str, add: Any
) -> LockEntry | None:
    """The entry of a package from a VCS or a local directory (never a pinned release)."""
    for key in ("vcs", "directory"):
        if isinstance(package.get(key), dict):
            source = package[key]
            location = source.get("url") or source.get("path") or ""
            if key == "directory" or is_local_location(str(location)):
                add(
                    "L004",
                    f"{name} comes from a local {key} {location!r}",
                    line,
                    f"{pointer}/{key}",
                )
            else:
                add(
                    "L001",
                    f"{name} comes from a VCS, not a pinned release",
                    line,
                    f"{pointer}/{key}",
                )
            marker = _text(package.get("marker"))
            return LockEntry(name, None, (), marker, str(location) or None, line)
    return None


def _read_sources(
    sources: list[tuple[str, dict[str, Any]]], name: str, line: int, add: Any
) -> tuple[list[str], str | None]:
    """The hashes of the package's files and the archive's URL, if any."""
    hashes: list[str] = []
    url: str | None = None
    for source_pointer, source in sources:
        location = source.get("url") or source.get("path")
        if isinstance(location, str):
            if source.get("path") is not None or is_local_location(location):
                add(
                    "L004",
                    f"{name} names a machine-local file {location!r}",
                    line,
                    source_pointer,
                )
            elif url is None and source_pointer.endswith("/archive"):
                url = location
        source_hashes = source.get("hashes")
        if isinstance(source_hashes, dict) and source_hashes:
            hashes.extend(f"{algo}:{value}" for algo, value in source_hashes.items())
        else:
            add("L002", f"{name} has a file without hashes", line, f"{source_pointer}/hashes")
    return hashes, url


def _packaging_validation(data: dict[str, Any], add: Any, package_lines: list[int]) -> None:
    """Structural validation by ``packaging.pylock``."""
    checked = dict(data)
    checked["lock-version"] = str(PYLOCK_VERSION)  # the version was checked above
    try:
        Pylock.from_dict(checked)
    except PylockValidationError as exc:
        context = exc.context or ""
        pointer = "/" + re.sub(r"\[(\d+)\]", r"/\1", context).replace(".", "/") if context else ""
        match = re.match(r"packages\[(\d+)\]", context)
        index = int(match.group(1)) if match else -1
        line = package_lines[index] if 0 <= index < len(package_lines) else 0
        add("L003", f"pylock.toml is not valid: {exc}", line, pointer)
