"""Materialize an artifact's environment: a virtual environment built from its lock, cached.

Environments live in ``<cache>/envs/<key>``, where ``<cache>`` is the ``cache-dir`` setting,
else ``$XDG_CACHE_HOME/reprobridge``, else ``~/.cache/reprobridge``, and ``<key>`` combines the
lock's SHA-256 and the interpreter's ``X.Y`` version: the same lock is built once and reused.

A build happens in a temporary directory beside its final place, under a per-key file lock
(concurrent builders wait for each other). Only a complete build gets the completion marker
and is renamed into place, so a half-built environment is never used; a failed build is
removed, leaving the cache as it was.

pip runs isolated from the machine's configuration (``PIP_CONFIG_FILE`` set to the null
device, ``PIP_*`` variables dropped, the public index named explicitly): a global
``pip.conf`` may add constraints or local indexes, and an environment built under it would
not be the one a fresh machine builds from the same lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from reprobridge_sdk.config import load_settings
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env._artifact import EnvArtifact, LoadedEnvironment, load_environment
from reprobridge_sdk.env._resolvers import index_url, isolated_environ
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.locks.lockfile import read_lock

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
    "file_lock",
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


def _version_of(python: str | os.PathLike[str]) -> str:
    proc = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if proc.returncode != 0:
        msg = f"cannot run {python}"
        raise EnvironmentBuildError(msg)
    return proc.stdout.strip()


def _short(version: str) -> str:
    return ".".join(version.split(".")[:2])


def find_python(version: str, python: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """An interpreter for ``version`` (``X.Y``): ``python`` if given, the running one if it
    matches, else ``pythonX.Y`` on PATH. Returns ``(path, full_version)``."""
    if python is not None:
        path = Path(python)
        if not path.exists() and shutil.which(str(python)) is None:
            msg = f"no interpreter at {python}"
            raise EnvironmentBuildError(msg)
        return path, _version_of(path)
    running = platform.python_version()
    if _short(running) == _short(version):
        return Path(sys.executable), running
    found = shutil.which(f"python{_short(version)}")
    if found is not None:
        return Path(found), _version_of(found)
    msg = f"no Python {version} found: install it or pass --python"
    item = finding(
        "E004",
        f"the artifact needs Python {version}; the running interpreter is {running}",
        path="/environment/python",
        hint="pass --python PATH to an interpreter of that version",
    )
    raise EnvironmentBuildError(msg, [item])


def environment_key(lock_sha256: str, python_version: str) -> str:
    """The cache key of an environment: lock digest and interpreter ``X.Y``."""
    return f"{lock_sha256[:32]}-py{_short(python_version)}"


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


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if needed) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        try:
            import fcntl  # noqa: PLC0415 - POSIX only
        except ImportError:  # pragma: no cover - Windows: builds are not serialised
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _requirements_for_pip(lock_path: Path, fmt: str, workdir: Path) -> Path:
    """The lock as a hashed requirements file (pylock.toml entries are converted)."""
    if fmt == "requirements":
        return lock_path
    lock = read_lock(lock_path, "pylock")
    lines = []
    for entry in lock.entries:
        hashes = " ".join(f"--hash={h}" for h in entry.hashes)
        lines.append(f"{entry.requirement} {hashes}".strip())
    target = workdir / "requirements-from-pylock.txt"
    target.write_text("\n".join(lines) + "\n", "utf-8")
    return target


def _relocate(build: Path, final: Path) -> None:
    """Replace the build path by the final path in the scripts and configuration of a venv.

    ``venv`` and pip write the environment's absolute path into ``pyvenv.cfg``, the activate
    scripts and the shebang lines of console scripts.
    """
    old_bytes, new_bytes = str(build).encode(), str(final).encode()
    candidates = [build / "pyvenv.cfg"]
    for scripts in ("bin", "Scripts"):
        folder = build / scripts
        if folder.is_dir():
            candidates.extend(p for p in folder.iterdir() if p.is_file() and not p.is_symlink())
    for path in candidates:
        if not path.is_file() or path.stat().st_size > 1 << 20:
            continue
        data = path.read_bytes()
        if old_bytes in data:
            mode = path.stat().st_mode
            path.write_bytes(data.replace(old_bytes, new_bytes))
            path.chmod(mode)


def _pip_failure(stderr: str) -> str:
    if "DO NOT MATCH THE HASHES" in stderr or "do not match the hashes" in stderr.lower():
        return "a downloaded file does not match its hash in the lock"
    if re.search(r"(Could not find a version|No matching distribution)", stderr):
        return "a pinned distribution is not available for this platform or index"
    if re.search(r"(NewConnectionError|Max retries exceeded|Temporary failure)", stderr):
        return "the package index is unreachable"
    return "pip failed"


def ensure_environment(
    artifact_dir: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    python: str | os.PathLike[str] | None = None,
    progress: bool = False,
    environment: Environment | None = None,
) -> Path:
    """The interpreter of the artifact's cached environment, built from its lock if needed.

    ``environment`` is the manifest's ``environment`` part when the caller has loaded the
    manifest already (then ``artifact_dir`` is the artifact's directory and the manifest is
    not read again). Raises :class:`EnvironmentBuildError` (E findings) when there is no
    lock, the lock does not match the manifest's digest, no suitable Python is found, or the
    build fails.
    """
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
    if is_complete(final):
        return venv_python(final)
    with file_lock(envs / f".{key}.lock"):
        if is_complete(final):  # another process built it while we waited
            return venv_python(final)
        for stale in envs.glob(f".{key}.build-*"):  # left by a killed build
            shutil.rmtree(stale, ignore_errors=True)
        if final.exists():  # incomplete: never used, rebuilt
            shutil.rmtree(final)
        build = Path(tempfile.mkdtemp(prefix=f".{key}.build-", dir=envs))
        try:
            _build(art, lock_path, digest, base_python, build, version, progress)
            _relocate(build, final)  # paths say "final" before the rename makes it true
            build.chmod(0o755)
            build.rename(final)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
    return venv_python(final)


def _build(  # noqa: PLR0917 - private helper of ensure_environment
    art: EnvArtifact | LoadedEnvironment,
    lock_path: Path,
    digest: str,
    base_python: Path,
    build: Path,
    version: str,
    progress: bool,
) -> None:
    started = time.monotonic()
    venv_dir = build
    prompt = build.name.split(".build-")[0].lstrip(".")  # the cache key
    proc = subprocess.run(
        [str(base_python), "-m", "venv", "--prompt", prompt, str(venv_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        item = finding("E013", f"python -m venv failed: {proc.stderr.strip()[-1000:]}")
        msg = "cannot create a virtual environment"
        raise EnvironmentBuildError(msg, [item])
    assert art.environment.lock is not None
    with tempfile.TemporaryDirectory() as work:
        requirements = _requirements_for_pip(lock_path, art.environment.lock.format, Path(work))
        argv = [
            str(venv_python(venv_dir)),
            "-m",
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--no-input",
            "--index-url",
            index_url(),
            "-r",
            str(requirements),
        ]
        if not progress:
            argv.append("--quiet")
        proc = subprocess.run(
            argv,
            stdout=sys.stderr if progress else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            env=isolated_environ(),
        )
    if proc.returncode != 0:
        reason = _pip_failure(proc.stderr)
        item = finding(
            "E013",
            f"{reason}: {proc.stderr.strip()[-1500:]}",
            file=art.environment.lock.path,
            path="/environment/lock",
        )
        msg = f"building the environment from {art.environment.lock.path} failed: {reason}"
        raise EnvironmentBuildError(msg, [item])
    marker = {
        "lock": art.environment.lock.path,
        "lock_sha256": digest,
        "python": version,
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - started, 3),
    }
    (build / COMPLETE_MARKER).write_text(json.dumps(marker, indent=2) + "\n", "utf-8")
