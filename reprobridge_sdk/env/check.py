"""``reprobridge env check``: compare an environment with the lock and declared system needs.

E findings (``spec/runner.md#environment-check``). :func:`lock_drift` is the narrower
question a run records as ``drift``: lock entries missing or at another version, and another
Python ``major.minor``.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from reprobridge_sdk.env._artifact import EnvArtifact, load_environment
from reprobridge_sdk.env.interpreters import minor_of, version_of
from reprobridge_sdk.env.snapshot import gpu_info, installed_distributions
from reprobridge_sdk.env.venv import (
    EnvironmentBuildError,
    cache_root,
    checked_lock,
    environment_key,
    find_python,
    is_complete,
    venv_python,
)
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.locks.lockfile import LockEntry, LockError, read_lock
from reprobridge_sdk.model.environment import Accelerator, Environment, SystemPackage
from reprobridge_sdk.versions import MANIFEST_NAME

__all__ = [
    "check_accelerator",
    "check_distributions",
    "check_environment",
    "check_system_packages",
    "lock_drift",
]

#: Installed by ``venv`` itself; never reported as extra.
_SEEDED = frozenset({"pip", "setuptools", "wheel", "distribute"})


def _at(
    art: EnvArtifact | None, code: str, message: str, pointer: str, hint: str | None = None
) -> Finding:
    """A finding located at a JSON Pointer of the manifest (with its line and column)."""
    if art is None:
        return finding(code, message, path=pointer, hint=hint)
    line, col = art.document.locate(pointer)
    return finding(code, message, path=pointer, file=MANIFEST_NAME, line=line, col=col, hint=hint)


def _same_release(found: str, wanted: str) -> bool:
    """``3.11.7`` satisfies ``3.11`` and ``3.11.7``, not ``3.12`` or ``3.11.6``."""
    parts = wanted.split(".")
    return found.split(".")[: len(parts)] == parts


def _applies(entry: LockEntry, python_full: str) -> bool:
    if not entry.markers:
        return True
    try:
        marker = Marker(entry.markers)
    except InvalidMarker:
        return True
    short = minor_of(python_full)
    return marker.evaluate({"python_version": short, "python_full_version": python_full})


def _versions_equal(found: str, pinned: str) -> bool:
    try:
        return Version(found) == Version(pinned)
    except InvalidVersion:
        return found == pinned


def check_distributions(
    entries: list[LockEntry],
    installed: dict[str, str],
    *,
    python_full: str,
    lock_file: str,
    extras: bool = True,
) -> list[Finding]:
    """E001 (missing), E002 (other version) and, with ``extras``, E003 (extra) findings."""
    findings: list[Finding] = []
    wanted: set[str] = set()
    for entry in entries:
        if not _applies(entry, python_full):
            continue
        wanted.add(entry.name)
        found = installed.get(entry.name)
        at_entry = partial(
            finding,
            path=f"/distributions/{entry.name}",
            file=lock_file,
            line=entry.line,
            col=1 if entry.line else 0,
        )
        if found is None:
            message = f"{entry.name}=={entry.version} is pinned in the lock but not installed"
            findings.append(
                at_entry(
                    "E001", message, hint="rebuild the environment with 'reprobridge env create'"
                )
            )
        elif entry.version is not None and not _versions_equal(found, entry.version):
            message = f"{entry.name} is installed at {found}, the lock pins {entry.version}"
            hint = f"pip install --require-hashes --no-deps {entry.name}=={entry.version}"
            findings.append(at_entry("E002", message, hint=hint))
    if not extras:
        return findings
    for name in sorted(set(installed) - wanted - _SEEDED):
        findings.append(
            finding(
                "E003",
                f"{name} {installed[name]} is installed but not in the lock",
                path=f"/distributions/{name}",
            )
        )
    return findings


def lock_drift(
    root: str | os.PathLike[str],
    environment: Environment,
    *,
    python_full: str,
    installed: Mapping[str, str],
) -> list[Finding]:
    """How an interpreter differs from the lock in ways that matter to reproduction.

    ``installed`` maps distribution names to versions (a run's snapshot: no interpreter is
    started). E004 for another ``major.minor``, E001/E002 for lock entries that apply, the
    lock's L findings when it cannot be read; extra distributions are not drift."""
    findings: list[Finding] = []
    if minor_of(python_full) != minor_of(environment.python):
        findings.append(
            finding(
                "E004",
                f"the run used Python {python_full}; the artifact declares {environment.python}",
                path="/environment/python",
            )
        )
    lock = environment.lock
    if lock is None:
        return findings
    try:
        entries = list(read_lock(Path(root) / lock.path, lock.format).entries)
    except LockError as exc:
        return [*findings, *exc.findings]
    names: dict[str, str] = {canonicalize_name(n): v for n, v in installed.items()}
    findings.extend(
        check_distributions(
            entries, names, python_full=python_full, lock_file=lock.path, extras=False
        )
    )
    return findings


def check_system_packages(
    packages: list[SystemPackage], art: EnvArtifact | None = None
) -> list[Finding]:
    """E005 (command not on PATH) and E006 (package not installed, by dpkg) findings."""
    findings: list[Finding] = []
    dpkg = shutil.which("dpkg-query")
    for index, package in enumerate(packages):
        pointer = f"/environment/system_packages/{index}"
        if package.command:
            if shutil.which(package.command) is None:
                findings.append(
                    _at(
                        art,
                        "E005",
                        f"command {package.command!r} (from {package.name}) is not on PATH",
                        pointer + "/command",
                        hint=f"install the system package {package.name}",
                    )
                )
            continue
        if dpkg is None:
            continue  # no way to ask the system; the command check is the portable one
        proc = subprocess.run(
            [dpkg, "-W", "-f=${Status}", package.name],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0 or "install ok installed" not in proc.stdout:
            findings.append(
                _at(
                    art,
                    "E006",
                    f"system package {package.name!r} is not installed",
                    pointer + "/name",
                    hint=f"apt-get install {package.name}",
                )
            )
    return findings


def _nvcc_cuda() -> str | None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"release (\d+(?:\.\d+)*)", proc.stdout)
    return match.group(1) if match else None


def _older(found: str, wanted: str) -> bool:
    try:
        return Version(found) < Version(wanted)
    except InvalidVersion:
        return found != wanted


def check_accelerator(accelerator: Accelerator, art: EnvArtifact | None = None) -> list[Finding]:
    """E007-E010: GPUs, their memory and the CUDA version."""
    if accelerator.kind == "none":
        return []
    pointer = "/environment/accelerator"
    needed = max(accelerator.gpus, 1)
    if accelerator.kind == "cuda":
        gpus = gpu_info()
        if not gpus:
            why = (
                "nvidia-smi is not installed"
                if shutil.which("nvidia-smi") is None
                else "nvidia-smi lists no GPU"
            )
            return [
                _at(
                    art,
                    "E007",
                    f"the artifact needs {needed} CUDA GPU(s) and none is visible ({why})",
                    pointer,
                    hint="run on a machine with NVIDIA GPUs, or only the launchers that need none",
                )
            ]
        findings: list[Finding] = []
        if len(gpus) < needed:
            findings.append(
                _at(
                    art,
                    "E008",
                    f"the artifact needs {needed} GPU(s); {len(gpus)} visible",
                    pointer + "/gpus",
                )
            )
        if accelerator.gpu_memory_gb is not None:
            wanted_mb = accelerator.gpu_memory_gb * 1024
            for gpu in gpus:
                if gpu.memory_mb is not None and gpu.memory_mb < wanted_mb:
                    findings.append(
                        _at(
                            art,
                            "E010",
                            f"{gpu.name} has {gpu.memory_mb} MB; the artifact needs "
                            f"{accelerator.gpu_memory_gb} GB per GPU",
                            pointer + "/gpu_memory_gb",
                        )
                    )
        if accelerator.cuda is not None:
            toolkit = _nvcc_cuda()
            seen = toolkit or gpus[0].cuda
            if seen is None or _older(seen, accelerator.cuda):
                source = "nvcc" if toolkit else "the driver"
                found = "the version cannot be read" if seen is None else f"{source} reports {seen}"
                message = f"the artifact needs CUDA {accelerator.cuda}; {found}"
                findings.append(_at(art, "E009", message, pointer + "/cuda"))
        return findings
    available = {
        "rocm": shutil.which("rocm-smi") is not None,
        "mps": platform.system() == "Darwin" and platform.machine() == "arm64",
        "tpu": bool(os.environ.get("TPU_NAME")) or Path("/dev/accel0").exists(),
    }[accelerator.kind]
    if available:
        return []
    return [
        _at(
            art,
            "E007",
            f"the artifact needs a {accelerator.kind} accelerator and none is visible",
            pointer + "/kind",
        )
    ]


def check_environment(
    artifact_dir: str | os.PathLike[str],
    *,
    python: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[Finding]:
    """Every ``E`` finding of an environment against the artifact's declared needs.

    ``python`` names the interpreter to check (``sys.executable`` for the current one);
    without it, the environment cached by :func:`ensure_environment` is checked (E011 if it
    was not built).
    """
    art = load_environment(artifact_dir)
    env = art.environment
    findings: list[Finding] = []
    interpreter: Path | None = Path(python) if python is not None else None
    entries: list[LockEntry] | None = None
    lock_file = ""
    try:
        lock_path, digest = checked_lock(art)
        assert env.lock is not None
        lock_file = env.lock.path
        entries = list(read_lock(lock_path, env.lock.format).entries)
    except EnvironmentBuildError as exc:
        findings.extend(_located(art, exc.findings))
        digest = None
    except LockError as exc:
        findings.extend(exc.findings)
        digest = None
    if interpreter is None and digest is not None:
        try:
            _, version = find_python(env.python)
        except EnvironmentBuildError as exc:
            findings.extend(_located(art, exc.findings))
        else:
            env_dir = cache_root(cache_dir) / "envs" / environment_key(digest, version)
            if is_complete(env_dir):
                interpreter = venv_python(env_dir)
            else:
                findings.append(
                    _at(
                        art,
                        "E011",
                        f"no environment built from {lock_file} for Python {version}",
                        "/environment/lock",
                        hint="run 'reprobridge env create' (or check --current)",
                    )
                )
    if interpreter is not None:
        try:
            installed: dict[str, str] = {
                canonicalize_name(d.name): d.version for d in installed_distributions(interpreter)
            }
        except ReproBridgeError as exc:
            msg = f"cannot inspect the interpreter {interpreter}: {exc.message}"
            raise EnvironmentBuildError(msg) from exc
        full = version_of(interpreter) or "unknown"  # it ran just now
        if not _same_release(full, env.python):
            findings.append(
                _at(
                    art,
                    "E004",
                    f"{interpreter} is Python {full}; the artifact declares {env.python}",
                    "/environment/python",
                )
            )
        if entries is not None:
            findings.extend(
                check_distributions(entries, installed, python_full=full, lock_file=lock_file)
            )
    findings.extend(check_system_packages(env.system_packages, art))
    findings.extend(check_accelerator(env.accelerator, art))
    return sorted(findings)


def _located(art: EnvArtifact, items: tuple[Finding, ...]) -> list[Finding]:
    """Give manifest findings that carry only a JSON Pointer their line and column."""
    result = []
    for item in items:
        if item.path and not item.file:
            line, col = art.document.locate(item.path)
            result.append(replace(item, file=MANIFEST_NAME, line=line, col=col))
        else:
            result.append(item)
    return result
