"""The compile caches a build's runs share: one folder per build, never the user's home.

Each run of a build starts with an empty ``HOME`` (the sandbox's scratch directory), so a
tool that caches what it compiles under ``HOME`` compiles again in every run: Theano builds
its C modules on import and each graph on first use, minutes per run on a small machine.
:func:`cache_env` points those caches at ``<build state>/caches`` instead (a folder of the
build's own state, ``OUT/.rra-build/caches``, never part of the artifact): the first run of
the build pays, the others reuse. The table :data:`CACHES` names each tool's variable:

* ``THEANO_FLAGS``, ``PYTENSOR_FLAGS``, ``AESARA_FLAGS``: ``base_compiledir=<folder>``
  before the launcher's own flags; a launcher that sets ``base_compiledir`` or
  ``compiledir`` itself keeps its own;
* ``NUMBA_CACHE_DIR`` (Numba's ``cache=True`` functions), ``TORCH_EXTENSIONS_DIR``
  (PyTorch's C++ extensions built on load), ``MPLCONFIGDIR`` (matplotlib's font cache):
  set unless the launcher sets it.

A Theano-style compile directory keeps a ``lock_dir`` while a process compiles; a run the
build killed (a smoke run at its budget) leaves it behind, owned by a process id that the
next sandbox reuses, so the next run waits out Theano's lock timeout (two minutes per module).
:func:`cache_env` is called before each of the build's runs that share the caches, which go
one at a time, so it removes those locks: none can be held.

Only caches a tool keeps by default move: none is switched on, so a run computes what it
computed before, and every tool keys its entries by the code and the interpreter that made
them. The folder belongs to one build (its output directory's state): runs of one build
share it, no other artifact's run sees it, and the Reviewer's clean-room check does not use
it.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CACHES", "CACHE_DIR", "cache_env"]

#: The folder of the build state that holds the caches.
CACHE_DIR = "caches"
#: ``(variable, subfolder, form)``: ``flags`` is a Theano-style comma-separated flag list
#: (``base_compiledir=``), ``path`` the folder itself.
CACHES: tuple[tuple[str, str, str], ...] = (
    ("THEANO_FLAGS", "theano", "flags"),
    ("PYTENSOR_FLAGS", "pytensor", "flags"),
    ("AESARA_FLAGS", "aesara", "flags"),
    ("NUMBA_CACHE_DIR", "numba", "path"),
    ("TORCH_EXTENSIONS_DIR", "torch_extensions", "path"),
    ("MPLCONFIGDIR", "matplotlib", "path"),
)
_OWN_DIR = ("base_compiledir", "compiledir")


def _sets_dir(flags: str) -> bool:
    """True when a flag list sets the compile directory itself."""
    return any(
        part.split("=", 1)[0].strip() in _OWN_DIR for part in flags.split(",") if "=" in part
    )


def cache_env(caches: Path, given: Mapping[str, str]) -> dict[str, str]:
    """The variables that put the caches of :data:`CACHES` under ``caches`` (made here),
    for a launcher whose own environment is ``given``: its values are kept, a flag list
    extended. ``caches`` is absolute in the result; a path with a comma (a flag list could
    not hold it) moves no flag-list cache."""
    caches = caches.absolute()
    env: dict[str, str] = {}
    for variable, folder, form in CACHES:
        place = caches / folder
        own = given.get(variable)
        if form == "path":
            if own is not None:
                continue  # the launcher's own folder
            env[variable] = str(place)
        elif (own is not None and _sets_dir(own)) or "," in str(place):
            continue  # the launcher's own folder, or one the flag list cannot hold
        else:
            env[variable] = f"base_compiledir={place}" + (f",{own}" if own else "")
            _unlock(place)
        place.mkdir(parents=True, exist_ok=True)
    return env


def _unlock(place: Path) -> None:
    """Remove the compile locks a killed run left in ``place``'s compile directories; a
    link (a run may have written one) is never followed."""
    if not place.is_dir() or place.is_symlink():
        return
    for compiledir in place.iterdir():
        lock = compiledir / "lock_dir"
        if compiledir.is_symlink() or not compiledir.is_dir() or lock.is_symlink():
            continue
        if lock.is_dir():
            shutil.rmtree(lock, ignore_errors=True)
