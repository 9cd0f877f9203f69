"""The environment every run of one invocation shares, prepared once per process.

:func:`prepare_environment` builds (or finds in the cache) the environment from the lock, takes
the snapshot and, in ``current`` mode, the drift; :func:`artifact_digests` reads the code tree
and lock digests a record names. The runner calls both once per invocation; a distributed
executor's worker calls them once per worker process and artifact (see
:mod:`reprobridge_sdk.run.executors`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model import Manifest
from reprobridge_sdk.model.evidence import EnvironmentSnapshot

from ._execute import EnvMode
from .evidence import minimal_snapshot

__all__ = ["artifact_digests", "prepare_environment"]


def prepare_environment(
    root: Path, manifest: Manifest, env_mode: EnvMode
) -> tuple[dict[str, str], str | None, EnvironmentSnapshot, list[str]]:
    """The base environment of every run, the snapshot and the drift, once per invocation."""
    env = dict(os.environ)
    error: str | None = None
    python: Path | None = None
    if env_mode == "cached":
        try:
            from reprobridge_sdk.env import ensure_environment  # noqa: PLC0415 - heavy

            python = Path(ensure_environment(root, environment=manifest.environment))
        except Exception as exc:  # any failure to build is the run's environment-error
            # the installer's own message, with its code (E013, E020-E023), goes in the
            # record's failure detail and in the run's log
            details = "; ".join(f"{f.code}: {f.message}" for f in getattr(exc, "findings", ()))
            error = f"cannot build the environment from the lock: {exc}" + (
                f" ({details})" if details else ""
            )
        if python is not None:
            bin_dir = python.parent
            env["VIRTUAL_ENV"] = str(bin_dir.parent)
            env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
            env.pop("PYTHONHOME", None)
    else:
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        from reprobridge_sdk.env import capture_snapshot  # noqa: PLC0415 - heavy

        snapshot = capture_snapshot(python)
    except Exception:  # a snapshot must never stop a run: fall back to the basics
        snapshot = minimal_snapshot()
    drift = _drift(root, manifest, snapshot) if env_mode == "current" else []
    return env, error, snapshot, drift


def _drift(root: Path, manifest: Manifest, snapshot: EnvironmentSnapshot) -> list[str]:
    """How the current interpreter differs from the lock, as far as reproduction goes.

    Read off the snapshot (one in-process scan of the installed distributions, taken once
    per invocation): lock entries missing or at another version, and another Python
    ``major.minor``. Distributions the lock does not name are not drift.
    """
    if not snapshot.distributions:
        return []  # the snapshot fell back to the basics: nothing reliable to compare
    try:
        from reprobridge_sdk.env.check import lock_drift  # noqa: PLC0415 - heavy

        findings = lock_drift(
            root,
            manifest.environment,
            python_full=snapshot.python,
            installed={d.name: d.version for d in snapshot.distributions},
        )
    except Exception:  # the check failed: nothing reliable to record
        return []
    return [f"{f.code}: {f.message}" for f in findings]


def _materialize(root: Path, manifest: Manifest) -> str | None:
    """The tree digest of a patch series' working checkout, built (and fetched) if needed.

    Raises :class:`~reprobridge_sdk.checkout.CodebaseError` (C codes) when the upstream
    cannot be fetched, a patch does not apply, or the checkout has unrecorded changes.
    """
    from reprobridge_sdk.checkout.materialize import (  # noqa: PLC0415 - only for a series
        SeriesPatch,
        bundle_of,
        materialize_series,
    )

    codebase = manifest.codebase
    checkout = materialize_series(
        root,
        repository=codebase.upstream.repository,
        commit=codebase.upstream.commit,
        patches=[SeriesPatch(p.path, p.sha256) for p in codebase.refined.patches],
        tree_digest_=codebase.tree_digest,
        bundle=bundle_of(codebase.upstream),
    )
    return checkout.tree_digest


def artifact_digests(root: Path, manifest: Manifest) -> tuple[str | None, str | None]:
    code = None
    refined = manifest.codebase.refined
    if refined.kind == "patches":
        code = _materialize(root, manifest)
    elif refined.kind == "directory" and refined.path is not None:
        directory = root / refined.path
        if directory.is_dir():
            code = tree_digest(directory)
    lock = None
    if manifest.environment.lock is not None:
        lock_path = root / manifest.environment.lock.path
        if lock_path.is_file():
            lock = file_sha256(lock_path)
    return code, lock
