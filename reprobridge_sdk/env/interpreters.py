"""Interpreters of an era: which CPython versions a date calls for, and which this machine has.

A commit's era is the newest :data:`ERA_WIDTH` minor versions released at least
:data:`SETTLING` days before it (2018-03: 3.6 and 3.5). An interpreter is looked for as the
running one, ``pythonX.Y`` on PATH, pyenv's installs, then uv-managed ones; nothing is
downloaded. The resolver serves 3.6 and newer (:func:`servable`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Literal

__all__ = [
    "ERA_WIDTH",
    "RELEASES",
    "RESOLVER_MINIMUM",
    "SETTLING",
    "Interpreter",
    "InterpreterSource",
    "discover",
    "era_versions",
    "interpreter_homes",
    "minor_of",
    "servable",
    "uv_binary",
    "version_of",
]

#: Final release dates of the CPython minor versions (``X.Y.0``).
RELEASES: dict[str, date] = {
    "2.7": date(2010, 7, 3),
    "3.3": date(2012, 9, 29),
    "3.4": date(2014, 3, 16),
    "3.5": date(2015, 9, 13),
    "3.6": date(2016, 12, 23),
    "3.7": date(2018, 6, 27),
    "3.8": date(2019, 10, 14),
    "3.9": date(2020, 10, 5),
    "3.10": date(2021, 10, 4),
    "3.11": date(2022, 10, 24),
    "3.12": date(2023, 10, 2),
    "3.13": date(2024, 10, 7),
    "3.14": date(2025, 10, 7),
}

#: Days a minor version is out before it counts for an era (its wheels arrive meanwhile).
SETTLING = timedelta(days=180)

#: Minor versions an era holds.
ERA_WIDTH = 2

#: The oldest CPython the resolver and installer (uv) serve.
RESOLVER_MINIMUM = (3, 6)

InterpreterSource = Literal["running", "path", "pyenv", "uv"]

_FULL = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3])


def minor_of(version: str) -> str:
    """The ``X.Y`` of a version ``X.Y[.Z...]``."""
    return ".".join(version.split(".")[:2])


def era_versions(commit_date: str, *, width: int = ERA_WIDTH) -> list[str]:
    """The CPython minor versions (``X.Y``) of a commit's era, newest first."""
    day = datetime.fromisoformat(commit_date).date()
    settled = [minor for minor, released in RELEASES.items() if released + SETTLING <= day]
    if not settled:  # before 2.7 settled: the oldest there is
        settled = [min(RELEASES, key=_tuple)]
    return sorted(settled, key=_tuple, reverse=True)[:width]


def servable(minor: str) -> bool:
    """True when the resolver can lock and build environments for ``minor``."""
    return _tuple(minor)[:2] >= RESOLVER_MINIMUM


@dataclass(frozen=True)
class Interpreter:
    """An interpreter found on this machine."""

    path: Path
    #: Its full version, ``X.Y.Z``.
    version: str
    source: InterpreterSource

    @property
    def minor(self) -> str:
        return minor_of(self.version)


def version_of(path: str | os.PathLike[str]) -> str | None:
    """The ``X.Y.Z`` version of the interpreter at ``path`` (or a name on PATH), or None when
    it does not run as one."""
    try:
        proc = subprocess.run(
            [str(path), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    version = proc.stdout.strip()
    return version if proc.returncode == 0 and _FULL.match(version) else None


def _matches(
    path: str | os.PathLike[str], minor: str, source: InterpreterSource
) -> Interpreter | None:
    version = version_of(path)
    if version is None or version.rsplit(".", 1)[0] != minor:
        return None
    return Interpreter(Path(path), version, source)


def _pyenv_root() -> Path:
    configured = os.environ.get("PYENV_ROOT")
    if configured:
        return Path(configured)
    pyenv = shutil.which("pyenv")
    if pyenv is not None:
        try:
            proc = subprocess.run(
                [pyenv, "root"], capture_output=True, text=True, check=False, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            proc = None
        if proc is not None and proc.returncode == 0 and proc.stdout.strip():
            return Path(proc.stdout.strip())
    return Path.home() / ".pyenv"


def _pyenv(minor: str) -> Interpreter | None:
    versions = _pyenv_root() / "versions"
    try:
        installs = [p for p in versions.iterdir() if _FULL.match(p.name)]
    except OSError:
        return None
    for install in sorted(installs, key=lambda p: _tuple(p.name), reverse=True):
        if install.name.rsplit(".", 1)[0] != minor:
            continue
        found = _matches(install / "bin" / f"python{minor}", minor, "pyenv")
        if found is not None:
            return found
    return None


def _uv_managed(minor: str) -> Interpreter | None:
    found = _uv_python("find", "--managed-python", "--no-project", minor)
    return None if not found else _matches(found.splitlines()[-1], minor, "uv")


def uv_binary() -> str | None:
    """The uv executable shipped by the ``uv`` distribution, or ``None`` where it is absent:
    the one place the SDK finds uv."""
    try:
        from uv import find_uv_bin  # noqa: PLC0415 - only when used

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return None


def _uv_python(*args: str) -> str:
    """The stripped output of ``uv python ARGS`` (downloads off), or ``""`` when it fails."""
    uv = uv_binary()
    if uv is None:
        return ""
    try:
        proc = subprocess.run(
            [uv, "python", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env=_uv_environ(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _uv_environ() -> dict[str, str]:
    """The caller's environment with downloads of interpreters turned off; where uv keeps
    its interpreters (``UV_PYTHON_INSTALL_DIR``) is kept, what would widen or narrow the
    search is not."""
    drop = {"UV_PYTHON", "UV_PYTHON_PREFERENCE", "UV_MANAGED_PYTHON", "UV_NO_MANAGED_PYTHON"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def interpreter_homes() -> dict[str, str]:
    """Where this machine's interpreters live, as the variables that name them for pyenv
    (``PYENV_ROOT``) and uv (``UV_PYTHON_INSTALL_DIR``): a shell with a fresh ``HOME`` (the
    clean-room check) finds the same interpreters through them. Only existing folders."""
    homes: dict[str, str] = {}
    root = _pyenv_root()
    if (root / "versions").is_dir():
        homes["PYENV_ROOT"] = str(root)
    uv_dir = _uv_python("dir")
    if uv_dir and Path(uv_dir).is_dir():
        homes["UV_PYTHON_INSTALL_DIR"] = uv_dir
    return homes


def discover(minor: str) -> Interpreter | None:
    """An interpreter of ``minor`` (``X.Y``) on this machine, or None; never downloads."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if running == minor:
        full = ".".join(str(part) for part in sys.version_info[:3])
        return Interpreter(Path(sys.executable), full, "running")
    on_path = shutil.which(f"python{minor}")
    if on_path is not None:
        found = _matches(on_path, minor, "path")
        if found is not None:
            return found
    return _pyenv(minor) or _uv_managed(minor)
