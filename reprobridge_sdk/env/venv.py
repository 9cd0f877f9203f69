"""Materialize an artifact's environment: a virtual environment built from its lock, cached.

Environments live in ``<cache>/envs/<lock digest>-py<X.Y>`` and are built in place under a
per-key file lock; the completion marker, written last, is what makes one usable, and a
failed build is removed. The installers run isolated from the machine's configuration
(:mod:`reprobridge_sdk.env._installers`). Spec: ``spec/runner.md#environment-check``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reprobridge_sdk.config import load_settings
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env._artifact import (
    EnvArtifact,
    LoadedEnvironment,
    consumer_environment,
    load_environment,
    load_raw,
)
from reprobridge_sdk.env._installers import (
    Installer,
    available,
    classify_failure,
    create_venv,
    install_lock,
    tool_version,
)
from reprobridge_sdk.env._resolvers import variant_index
from reprobridge_sdk.env.interpreters import discover, minor_of, version_of
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.io.filelock import file_lock
from reprobridge_sdk.timestamps import utc_now

if TYPE_CHECKING:
    from reprobridge_sdk.model.environment import Environment

__all__ = [
    "COMPLETE_MARKER",
    "EnvironmentBuildError",
    "cache_root",
    "checked_lock",
    "ensure_environment",
    "environment_key",
    "environment_path",
    "find_python",
    "venv_python",
]

#: File written into an environment once it is completely built.
COMPLETE_MARKER = ".reprobridge-complete.json"


class EnvironmentBuildError(ReproBridgeError):
    """An environment cannot be built or used; ``findings`` (E codes) say why."""


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The SDK's cache directory (environments under ``envs/``, digests under ``digests/``).

    ``cache_dir`` (a flag), else the ``cache-dir`` setting (``$REPROBRIDGE_CACHE_DIR``, then the
    configuration file; see :mod:`reprobridge_sdk.config`), else ``$XDG_CACHE_HOME/reprobridge``,
    else ``~/.cache/reprobridge``.
    """
    if cache_dir is not None:
        return Path(cache_dir)
    configured = load_settings().cache_dir
    if configured is not None:
        return configured
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "reprobridge"


def venv_python(env_dir: Path) -> Path:
    """The interpreter of the virtual environment at ``env_dir``."""
    if os.name == "nt":  # pragma: no cover - not exercised on the CI platforms
        return env_dir / "Scripts" / "python.exe"
    return env_dir / "bin" / "python"


def find_python(version: str, python: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """An interpreter for ``version`` (``X.Y``): ``python`` if given, the running one if it
    matches, else one found on this machine (``pythonX.Y`` on PATH, pyenv's or uv-managed:
    :func:`reprobridge_sdk.env.interpreters.discover`). Returns ``(path, full_version)``."""
    if python is not None:
        full = version_of(python)
        if full is None:
            msg = f"{python} does not run as a Python interpreter"
            hint = f"pass --python PATH to an interpreter of Python {version}"
            raise EnvironmentBuildError(msg, [finding("E004", msg, hint=hint)])
        return Path(python), full
    running = platform.python_version()
    if minor_of(running) == minor_of(version):
        return Path(sys.executable), running
    found = discover(minor_of(version))
    if found is not None:
        return found.path, found.version
    msg = f"no Python {version} found: install it or pass --python"
    item = finding(
        "E004",
        f"the artifact needs Python {version}; the running interpreter is {running}",
        path="/environment/python",
        hint=f"install it (for example 'pyenv install {minor_of(version)}') or pass --python PATH "
        "to an interpreter of that version",
    )
    raise EnvironmentBuildError(msg, [item])


def environment_key(lock_sha256: str, python_version: str) -> str:
    """The cache key of an environment: lock digest and interpreter ``X.Y``."""
    return f"{lock_sha256[:32]}-py{minor_of(python_version)}"


def checked_lock(art: EnvArtifact | LoadedEnvironment) -> tuple[Path, str]:
    lock = art.environment.lock
    if lock is None:
        item = finding("E012", "the manifest declares no environment.lock", path="/environment")
        msg = "no lock to build the environment from; run 'reprobridge lock'"
        raise EnvironmentBuildError(msg, [item])
    path = art.inside(lock.path, what="environment.lock.path")
    if not path.is_file():
        item = finding(
            "E012", f"the lock {lock.path} does not exist", path="/environment/lock/path"
        )
        msg = f"the lock {lock.path} does not exist; run 'reprobridge lock'"
        raise EnvironmentBuildError(msg, [item])
    digest = file_sha256(path)
    if lock.sha256 is not None and digest != lock.sha256:
        item = finding(
            "E014",
            f"{lock.path} has SHA-256 {digest}, the manifest records {lock.sha256}",
            path="/environment/lock/sha256",
            hint="run 'reprobridge lock' to record the lock's digest, or restore the lock",
        )
        msg = f"the lock {lock.path} does not match the digest in the manifest"
        raise EnvironmentBuildError(msg, [item])
    resolved = lock.resolved_for
    if resolved is not None and resolved.accelerator == "cpu":
        from reprobridge_sdk.locks.accelerator import variant_findings  # noqa: PLC0415
        from reprobridge_sdk.locks.lockfile import read_lock  # noqa: PLC0415

        # A CPU lock that pins a CUDA build would install what it says it does not (L012).
        wrong = variant_findings(
            read_lock(path, lock.format),
            resolved.accelerator,
            file=lock.path,
            platform=resolved.platform,
        )
        if wrong:
            msg = f"the lock {lock.path} targets the CPU build but pins CUDA builds"
            raise EnvironmentBuildError(msg, wrong)
    return path, digest


def environment_path(
    artifact_dir: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    python: str | os.PathLike[str] | None = None,
) -> Path:
    """Where the artifact's environment lives in the cache (built or not)."""
    art = load_environment(artifact_dir)
    _, digest = checked_lock(art)
    _, version = find_python(art.environment.python, python)
    return cache_root(cache_dir) / "envs" / environment_key(digest, version)


def is_complete(env_dir: Path) -> bool:
    """True for an environment that was completely built."""
    return (env_dir / COMPLETE_MARKER).is_file() and venv_python(env_dir).exists()


def ensure_environment(
    artifact_dir: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    python: str | os.PathLike[str] | None = None,
    progress: bool = False,
    environment: Environment | None = None,
    installer: Installer | None = None,
) -> Path:
    """The interpreter of the artifact's cached environment, built from its lock if needed.

    ``environment``: the manifest's part when the caller has loaded it; ``installer``: ``uv``
    (the default where present) or ``pip``. Raises :class:`EnvironmentBuildError` (E findings).

    A cache hit for a part the model already validated is served without the model: the
    marker lists the digests of the parts validated for it (:func:`_validated`)."""
    if environment is None:
        known = _known_hit(artifact_dir, cache_dir, python)
        if known is not None:
            return known
    art: EnvArtifact | LoadedEnvironment = (
        load_environment(artifact_dir)
        if environment is None
        else LoadedEnvironment(Path(artifact_dir), environment)
    )
    lock_path, digest = checked_lock(art)
    base_python, version = find_python(art.environment.python, python)
    envs = cache_root(cache_dir) / "envs"
    key = environment_key(digest, version)
    final = envs / key
    if not is_complete(final):
        with file_lock(envs / f".{key}.lock"):
            if not is_complete(final):  # else another process built it while we waited
                for stale in envs.glob(f".{key}.build-*"):  # left by killed builds of older SDKs
                    shutil.rmtree(stale, ignore_errors=True)
                if final.exists():  # incomplete: never used, rebuilt
                    shutil.rmtree(final)
                # Built in its final place (no path in a script or pyvenv.cfg ever needs
                # rewriting); the completion marker, written last, is what makes it usable.
                try:
                    _build(art, lock_path, digest, base_python, final, version, progress, installer)
                except BaseException:
                    shutil.rmtree(final, ignore_errors=True)
                    raise
    if isinstance(art, EnvArtifact):
        _remember(final, _validated(consumer_environment(art.document.data, art.raw)[0]))
    return venv_python(final)


#: How many validated parts a marker remembers (the most recent).
_REMEMBERED = 16
_MODEL = Path(__file__).resolve().parents[1] / "model"


def _validator_digest() -> bytes:
    """What decides whether a part validates: the environment model's source, its base, and
    pydantic's version file (read, not imported)."""
    spec = importlib.util.find_spec("pydantic")
    pydantic = Path(spec.origin).with_name("version.py") if spec and spec.origin else None
    sources = [_MODEL / "_base.py", _MODEL / "environment.py", pydantic]
    digest = hashlib.sha256()
    for source in sources:
        try:
            digest.update(source.read_bytes() if source is not None else b"-")
        except OSError:
            digest.update(b"-")
    return digest.digest()


def _validated(part: object) -> str | None:
    """The digest of the ``environment`` part (as the model reads it) and of its validator,
    or None when the part is no JSON data."""
    try:
        text = json.dumps(part, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(_validator_digest() + text.encode("utf-8")).hexdigest()


def _remember(env_dir: Path, validated: str | None) -> None:
    """Add ``validated`` to the marker's validated parts (the newest last, at most
    :data:`_REMEMBERED`); a marker that cannot be read or written is left as it is."""
    marker = env_dir / COMPLETE_MARKER
    try:
        data = json.loads(marker.read_text("utf-8"))
    except (OSError, ValueError):
        return
    if validated is None or not isinstance(data, dict):
        return
    known = data.get("validated")
    if not isinstance(known, list | type(None)):
        return
    if known and validated in known:
        return
    data["validated"] = [*(known or [])[-(_REMEMBERED - 1) :], validated]
    try:
        atomic_write_json(marker, data)
    except OSError:
        return


def _known_hit(
    artifact_dir: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str] | None,
    python: str | os.PathLike[str] | None,
) -> Path | None:
    """The environment's interpreter when it is built and its marker lists this very part as
    validated (the same lock file, the same part, the same validator), else None: the caller
    then reads and checks the part with the model, whatever went wrong here."""
    try:
        art = load_raw(artifact_dir)
        part = consumer_environment(art.document.data, art.raw)[0]
        lock = part.get("lock") if isinstance(part, dict) else None
        wanted = part.get("python") if isinstance(part, dict) else None
        if not (isinstance(lock, dict) and isinstance(lock.get("path"), str)):
            return None
        if not isinstance(wanted, str):
            return None
        path = art.inside(lock["path"], what="environment.lock.path")
        if not path.is_file():
            return None
        _, version = find_python(wanted, python)
        final = cache_root(cache_dir) / "envs" / environment_key(file_sha256(path), version)
        if not is_complete(final):
            return None
        data = json.loads((final / COMPLETE_MARKER).read_text("utf-8"))
    except (ReproBridgeError, OSError, ValueError):
        return None
    known = data.get("validated") if isinstance(data, dict) else None
    validated = _validated(part)
    if isinstance(known, list) and validated is not None and validated in known:
        return venv_python(final)
    return None


def install_failure(stderr: str, lock_path: str) -> Finding:
    """The finding of a failed install: E013 or E020-E023, with the installer's own words."""
    code, reason = classify_failure(stderr)
    return finding(
        code, f"{reason}: {stderr.strip()[-1500:]}", file=lock_path, path="/environment/lock"
    )


def _build(  # noqa: PLR0917 - private helper of ensure_environment
    art: EnvArtifact | LoadedEnvironment,
    lock_path: Path,
    digest: str,
    base_python: Path,
    target: Path,
    version: str,
    progress: bool,
    installer: Installer | None,
) -> None:
    started = time.monotonic()
    assert art.environment.lock is not None
    lock = art.environment.lock
    tool = available(installer)
    if tool == "pip" and lock.format == "pylock":
        item = finding(
            "E013",
            "pip cannot install a pylock.toml lock; uv can",
            file=lock.path,
            path="/environment/lock",
            hint="install uv (a dependency of reprobridge): pip install uv",
        )
        msg = f"cannot build from {lock.path} without uv"
        raise EnvironmentBuildError(msg, [item])
    if tool == "pip" and lock.build_dependencies:
        names = ", ".join(sorted(lock.build_dependencies))
        item = finding(
            "E013",
            f"the lock builds {names} from source with build requirements they do not "
            "declare (environment.lock.build_dependencies); pip cannot supply them, uv can",
            path="/environment/lock/build_dependencies",
            hint="install uv (a dependency of reprobridge): pip install uv",
        )
        msg = f"cannot build from {lock.path} without uv"
        raise EnvironmentBuildError(msg, [item])
    made = create_venv(tool, base_python, target, prompt=target.name)
    if made.returncode != 0:
        item = finding("E013", f"creating the environment failed: {made.stderr.strip()[-1000:]}")
        msg = "cannot create a virtual environment"
        raise EnvironmentBuildError(msg, [item])
    accelerator = lock.resolved_for.accelerator if lock.resolved_for else None
    run = install_lock(
        tool,
        venv_python(target),
        lock_path,
        progress=progress,
        extra_index=variant_index(accelerator),
        build_dependencies=lock.build_dependencies,
    )
    if run.returncode != 0:
        item = install_failure(run.stderr, lock.path)
        reason = classify_failure(run.stderr)[1]
        msg = f"building the environment from {lock.path} failed: {reason}"
        raise EnvironmentBuildError(msg, [item])
    marker = {
        "lock": lock.path,
        "lock_sha256": digest,
        "python": version,
        "installer": tool_version(tool, venv_python(target)),
        "built_at": utc_now(),
        "seconds": round(time.monotonic() - started, 3),
    }
    atomic_write_json(target / COMPLETE_MARKER, marker)
