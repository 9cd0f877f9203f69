"""``reprobridge lock``: resolve the declared requirements into a hashed, portable lock.

The lock is resolved into a temporary file beside its destination, cleaned of machine-local
options, checked with :func:`reprobridge_sdk.locks.lockfile.check_lock`, and only then renamed into
place; the manifest's ``environment.lock`` (path, format, sha256, resolved_for) is then
updated with a round-trip edit that keeps the manifest's comments.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.env._artifact import MANIFEST, RawArtifact, load_raw
from reprobridge_sdk.env._resolvers import Resolver, resolve, resolver_version, variant_index
from reprobridge_sdk.env.interpreters import minor_of
from reprobridge_sdk.errors import UsageError, require_extra
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io.atomic import atomic_write_bytes
from reprobridge_sdk.io.pointer import pointer_of
from reprobridge_sdk.locks.accelerator import (
    borrowed_hashes,
    cpu_requirements,
    cuda_entries,
    variant_findings,
)
from reprobridge_sdk.locks.lockfile import LockError, check_lock, is_local_location, read_lock

__all__ = [
    "ACCELERATOR_TARGETS",
    "DEFAULT_LOCK_PATHS",
    "LockResult",
    "lock_artifact",
    "strip_local_options",
]

#: Where a new lock is written when the manifest names none.
DEFAULT_LOCK_PATHS = {"requirements": "requirements.txt", "pylock": "pylock.toml"}
#: What ``accelerator`` of :func:`lock_artifact` accepts (``auto`` picks one of the others).
ACCELERATOR_TARGETS = ("auto", "cpu", "cuda")
AcceleratorTarget = Literal["auto", "cpu", "cuda"]
_LOCAL_OPTION = re.compile(
    r"^\s*(--index-url|-i|--extra-index-url|--find-links|-f)(\s+|=)(?P<value>\S+)\s*$"
)


@dataclass(frozen=True)
class LockResult:
    """What :func:`lock_artifact` wrote."""

    path: Path
    format: Literal["requirements", "pylock"]
    sha256: str
    python: str
    platform: str
    resolver: str
    changed: bool
    findings: list[Finding] = field(default_factory=list)
    #: The variant recorded in ``resolved_for.accelerator`` (None: the lock pins no
    #: distribution with accelerator variants).
    accelerator: Literal["cpu", "cuda"] | None = None


def strip_local_options(text: str) -> str:
    """Drop index, extra-index and find-links lines that point at the local machine."""
    kept = []
    for line in text.splitlines(keepends=True):
        match = _LOCAL_OPTION.match(line)
        if match and is_local_location(match.group("value")):
            continue
        kept.append(line)
    return "".join(kept)


_PYTHON = re.compile(r"^\d+\.\d+(\.\d+)?$")


def _refused(message: str, *, path: str = "", file: str = "", hint: str) -> UsageError:
    """The usage error of a lock request that cannot be carried out (L011)."""
    return UsageError(message, [finding("L011", message, path=path, file=file, hint=hint)])


def _declared(art: RawArtifact) -> tuple[str, str, dict[str, Any] | None]:
    """``environment.requirements``, ``environment.python`` and ``environment.lock``, checked
    just enough to lock (the full check is ``reprobridge validate``'s): L011 at the key that
    cannot be used."""
    raw = art.raw
    requirements = raw.get("requirements")
    if not isinstance(requirements, str) or not requirements:
        raise _refused(
            "the manifest declares no environment.requirements to lock",
            path="/environment/requirements",
            file=MANIFEST,
            hint="name the requirements file to resolve (e.g. requirements.in)",
        )
    python = raw.get("python")
    if not isinstance(python, str) or not _PYTHON.match(python):
        raise _refused(
            "environment.python must be a version like '3.11'",
            path="/environment/python",
            file=MANIFEST,
            hint="the interpreter's major.minor version, quoted: python: '3.11'",
        )
    lock = raw.get("lock")
    if lock is not None and not (
        isinstance(lock, dict)
        and isinstance(lock.get("path"), str)
        and lock.get("format") in {"requirements", "pylock"}
    ):
        raise _refused(
            "environment.lock must have a path and a format ('requirements' or 'pylock')",
            path="/environment/lock",
            file=MANIFEST,
            hint="lock: {path: requirements.txt, format: requirements}, or leave it out",
        )
    return requirements, python, lock


def _build_dependencies(lock: dict[str, Any] | None) -> dict[str, list[str]] | None:
    """``environment.lock.build_dependencies``: distribution names mapped to lists of plain
    requirements (no URL, no marker), else L011 at the entry that is not."""
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415

    declared = (lock or {}).get("build_dependencies")
    if declared is None:
        return None
    pointer = "/environment/lock/build_dependencies"
    hint = "map each distribution to the requirements its build needs: {name: [numpy==1.17.0]}"
    if not isinstance(declared, dict):
        raise _refused(
            "environment.lock.build_dependencies must be a mapping",
            path=pointer,
            file=MANIFEST,
            hint=hint,
        )
    checked: dict[str, list[str]] = {}
    for name, needs in declared.items():
        at = pointer_of(["environment", "lock", "build_dependencies", str(name)])
        if (
            not isinstance(name, str)
            or not _DISTRIBUTION.match(name)
            or not isinstance(needs, list)
        ):
            raise _refused(
                f"environment.lock.build_dependencies: {str(name)[:80]!r} must be a "
                "distribution name with a list of requirements",
                path=at,
                file=MANIFEST,
                hint=hint,
            )
        for index, need in enumerate(needs):
            try:
                requirement = Requirement(need) if isinstance(need, str) else None
            except InvalidRequirement:
                requirement = None
            if requirement is None or requirement.url or requirement.marker or "\n" in need:
                raise _refused(
                    f"environment.lock.build_dependencies: {str(need)[:80]!r} is not a plain "
                    "requirement (a name and a version specifier)",
                    path=f"{at}/{index}",
                    file=MANIFEST,
                    hint=hint,
                )
        checked[name] = list(needs)
    return checked or None


_DISTRIBUTION = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


def _platform() -> str:
    return f"{platform.system().lower()}-{platform.machine().lower()}"


def _declares_gpu(art: RawArtifact) -> bool:
    """True when ``environment.accelerator`` asks for a GPU (any kind but none, or gpus > 0)."""
    declared = art.raw.get("accelerator")
    if not isinstance(declared, dict):
        return False
    gpus = declared.get("gpus")
    return declared.get("kind", "none") != "none" or (isinstance(gpus, int) and gpus > 0)


def machine_has_gpu() -> bool:
    """True when an NVIDIA driver is loaded or ``nvidia-smi`` lists a GPU."""
    if Path("/proc/driver/nvidia/version").exists():
        return True
    from reprobridge_sdk.env.snapshot import gpu_info  # noqa: PLC0415 - only for auto

    return bool(gpu_info())


def _reachable(index: str | None, timeout: float = 10.0) -> bool:
    """Whether an HTTP server answers at ``index`` (any status: a 404 is an answer)."""
    import urllib.error  # noqa: PLC0415 - only when a CPU lock fails
    import urllib.request  # noqa: PLC0415

    if not index:
        return False
    try:
        with urllib.request.urlopen(index.rstrip("/") + "/", timeout=timeout):  # noqa: S310 - http(s) index
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def accelerator_target(art: RawArtifact, requested: AcceleratorTarget) -> Literal["cpu", "cuda"]:
    """``requested``, or for ``auto``: cpu when the manifest declares no GPU and the machine
    has none, else cuda."""
    if requested != "auto":
        return requested
    return "cuda" if _declares_gpu(art) or machine_has_gpu() else "cpu"


def lock_artifact(
    path: str | os.PathLike[str] = ".",
    *,
    resolver: Resolver = "uv",
    python: str | None = None,
    upgrade: bool = False,
    fmt: Literal["requirements", "pylock"] | None = None,
    output: str | None = None,
    accelerator: AcceleratorTarget = "auto",
) -> LockResult:
    """Resolve ``environment.requirements`` of the artifact at ``path`` into its lock.

    ``python``, ``fmt`` and ``output`` default to the manifest's; ``accelerator`` is ``cuda``,
    ``cpu`` or ``auto`` (cpu when neither manifest nor machine has a GPU). A cpu lock that pins
    CUDA builds on the default index is resolved again with the CPU index, CUDA-only
    requirements dropped (L013); one that still pins a CUDA build is L012. Raises
    :class:`LockError` (L findings) when resolution fails or the lock is not portable; nothing
    is written then."""
    art = load_raw(path)
    requirements, env_python, declared = _declared(art)
    source = _requirements_file(art, requirements)
    lock_format, lock_rel, target = _lock_target(
        art, declared, fmt=fmt, output=output, resolver=resolver
    )
    python_version = python or env_python
    if accelerator not in ACCELERATOR_TARGETS:
        raise _refused(
            f"unknown accelerator target {accelerator!r}",
            hint="one of: " + ", ".join(ACCELERATOR_TARGETS),
        )
    variant = accelerator_target(art, accelerator)
    build_dependencies = _build_dependencies(declared)
    if resolver == "pip-tools":
        _require_pip_tools(python_version)
        if build_dependencies:
            raise _refused(
                "pip-tools cannot supply the build requirements of "
                "environment.lock.build_dependencies to one distribution's build",
                path="/environment/lock/build_dependencies",
                file=MANIFEST,
                hint="--resolver uv",
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    previous = target.read_bytes() if target.is_file() else None
    # The resolver writes into a temporary directory beside the lock (uv insists on the
    # file name of a pylock.toml), so the rename into place stays on one file system.
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    job = _Resolution(
        art=art,
        resolver=resolver,
        requirements=requirements,
        python=python_version,
        upgrade=upgrade,
        lock_format=lock_format,
        previous=previous,
        tmp=tmp_dir / target.name,
        build_dependencies=build_dependencies,
    )
    try:
        outcome = _resolve_variant(job, source, variant, accelerator)
        findings = _checked_lock(job, outcome, lock_rel)
        resolved = job.tmp.read_bytes()
        changed = previous != resolved
        atomic_write_bytes(target, resolved)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        if job.scratch is not None:
            job.scratch.unlink(missing_ok=True)
    return _record_lock(job, target, lock_rel, outcome, changed=changed, findings=findings)


def _requirements_file(art: RawArtifact, requirements: str) -> Path:
    source = art.inside(
        requirements, what="environment.requirements", pointer="/environment/requirements"
    )
    if not source.is_file():
        msg = f"environment.requirements {requirements!r} does not exist"
        item = finding(
            "F004",
            msg,
            path="/environment/requirements",
            file=requirements,
            hint="write the requirements to resolve into that file, or fix the path",
        )
        raise UsageError(msg, [item])
    return source


def _lock_target(
    art: RawArtifact,
    declared: dict[str, Any] | None,
    *,
    fmt: Literal["requirements", "pylock"] | None,
    output: str | None,
    resolver: Resolver,
) -> tuple[Literal["requirements", "pylock"], str, Path]:
    """The lock's format, its path as written in the manifest, and the file to write."""
    declared_format = declared.get("format") if declared else None
    lock_format = fmt or declared_format or "requirements"
    if output is not None:
        lock_rel = output
    elif declared and (fmt is None or fmt == declared_format):
        lock_rel = str(declared["path"])
    else:
        lock_rel = DEFAULT_LOCK_PATHS[lock_format]
    if lock_format == "pylock" and not Path(lock_rel).name.startswith("pylock"):
        raise _refused(
            f"a PEP 751 lock must be named pylock.toml or pylock.<name>.toml, not {lock_rel!r}",
            hint="--output pylock.toml",
        )
    if lock_format == "pylock" and resolver != "uv":
        raise _refused(
            "only the uv resolver writes pylock.toml locks",
            hint="--resolver uv, or --format requirements for pip-tools",
        )
    pointer = "/environment/lock/path" if output is None and declared else ""
    return lock_format, lock_rel, art.inside(lock_rel, what="the lock path", pointer=pointer)


def _require_pip_tools(python_version: str) -> None:
    # pip-tools is an optional extra: say which, before the resolver fails on its import.
    require_extra("piptools", "pip-tools", feature="lock --resolver pip-tools")
    running = ".".join(platform.python_version_tuple()[:2])
    if minor_of(python_version) != running:
        raise _refused(
            f"pip-tools resolves for the running Python {running}, not {python_version}",
            hint="use the uv resolver, or run reprobridge under that Python",
        )


@dataclass
class _Resolution:
    """One run of ``lock``: what the resolver is asked, and where it writes."""

    art: RawArtifact
    resolver: Resolver
    requirements: str
    python: str
    upgrade: bool
    lock_format: Literal["requirements", "pylock"]
    previous: bytes | None
    tmp: Path
    #: The CPU variant's requirements, written beside the declared ones (removed at the end).
    scratch: Path | None = None
    #: ``environment.lock.build_dependencies``: supplied to those distributions' builds.
    build_dependencies: dict[str, list[str]] | None = None

    def run(self, src: Path, extra_index: str | None, command: str) -> None:
        """Resolve ``src`` into :attr:`tmp`; :class:`LockError` (L010) when it fails."""
        if self.previous is not None and not self.upgrade:
            self.tmp.write_bytes(self.previous)  # existing pins are the resolver's preferences
        else:
            self.tmp.unlink(missing_ok=True)
        root = self.art.root
        run = resolve(
            self.resolver,
            Path(os.path.relpath(src, root)),
            Path(os.path.relpath(self.tmp, root)),
            python=self.python,
            upgrade=self.upgrade,
            pylock=self.lock_format == "pylock",
            cwd=root,
            extra_index=extra_index,
            command=command,
            build_dependencies=self.build_dependencies,
        )
        if run.returncode != 0 or not self.tmp.is_file() or not self.tmp.stat().st_size:
            detail = run.stderr.strip()[-2000:] or f"exit status {run.returncode}"
            item = finding(
                "L010",
                f"{self.resolver} could not resolve {self.requirements}: {detail}",
                file=self.requirements,
                hint="check the requirements and that the package index is reachable",
            )
            msg = f"cannot lock {self.requirements}"
            raise LockError(msg, [item])


@dataclass
class _Outcome:
    """Which variant the resolved lock holds, and what choosing it said."""

    platform: str
    cuda_lock: Any = None
    recorded: Literal["cpu", "cuda"] | None = None
    dropped: list[str] = field(default_factory=list)
    unreachable: list[Finding] = field(default_factory=list)


def _resolve_variant(
    job: _Resolution, source: Path, variant: Literal["cpu", "cuda"], accelerator: str
) -> _Outcome:
    """Resolve against the default index, then (for a CPU target whose lock pins CUDA builds,
    or does not resolve there) again with the CPU builds' index."""
    outcome = _Outcome(platform=_platform())
    cuda_text: bytes | None = None
    try:
        job.run(source, None, "reprobridge lock")
    except LockError:
        if variant != "cpu":
            raise
        # Requirements that name CPU builds (torch==2.1.0+cpu, as a CPU user's pip
        # freeze writes them) resolve only with the CPU index.
    else:
        outcome.cuda_lock = read_lock(job.tmp, job.lock_format)
        cuda_text = job.tmp.read_bytes()
    if outcome.cuda_lock is not None and not cuda_entries(outcome.cuda_lock, outcome.platform):
        return outcome
    outcome.recorded = variant
    if variant == "cpu":
        _resolve_cpu(job, source, outcome, accelerator=accelerator, cuda_text=cuda_text)
    return outcome


def _resolve_cpu(
    job: _Resolution, source: Path, outcome: _Outcome, *, accelerator: str, cuda_text: bytes | None
) -> None:
    cpu_source = source
    if source.suffix != ".toml":  # requirements text; beside it, for its -r lines
        cpu_text, outcome.dropped = cpu_requirements(source.read_text("utf-8"))
        cpu_source = job.scratch = source.with_name(f".{source.name}.cpu")
        job.scratch.write_text(cpu_text, "utf-8")
    cpu_index = variant_index("cpu")
    try:
        job.run(cpu_source, cpu_index, "reprobridge lock --accelerator cpu")
    except LockError:
        # auto chose cpu; the CPU builds' index cannot be reached from here: the
        # default index's lock stands, said as L014 (an explicit cpu still fails)
        if accelerator != "auto" or cuda_text is None or _reachable(cpu_index):
            raise
        job.tmp.write_bytes(cuda_text)
        outcome.recorded, outcome.dropped = "cuda", []
        outcome.unreachable.append(
            finding(
                "L014",
                f"the index of the CPU builds ({cpu_index}) cannot be reached; "
                "the lock takes the default index's builds, which are CUDA builds",
                file=job.requirements,
                hint="lock again where that index is reachable, or set "
                "REPROBRIDGE_ACCELERATOR_INDEX_URL to a mirror of it",
            )
        )


def _checked_lock(job: _Resolution, outcome: _Outcome, lock_rel: str) -> list[Finding]:
    """Clean the resolved lock of machine-local options and check it; :class:`LockError`
    with its errors when it is not usable."""
    tmp, lock_format = job.tmp, job.lock_format
    text = tmp.read_text("utf-8")
    cleaned = strip_local_options(text) if lock_format == "requirements" else text
    if cleaned != text:
        tmp.write_text(cleaned, "utf-8")
    findings = check_lock(tmp, lock_format, display_name=lock_rel)
    locked = read_lock(tmp, lock_format)
    findings += variant_findings(locked, outcome.recorded, file=lock_rel, platform=outcome.platform)
    if outcome.recorded == "cpu" and outcome.cuda_lock is not None:
        findings += borrowed_hashes(locked, outcome.cuda_lock, file=lock_rel)
    findings += outcome.unreachable
    findings += [
        finding(
            "L013",
            f"{spec!r} is a CUDA build; the CPU lock leaves it out",
            file=job.requirements,
            hint="declare the framework without a CUDA-only pin, or lock with --accelerator cuda",
        )
        for spec in outcome.dropped
    ]
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        msg = f"the resolved lock is not usable ({len(errors)} error(s)); nothing was written"
        raise LockError(msg, errors)
    return findings


def _record_lock(
    job: _Resolution,
    target: Path,
    lock_rel: str,
    outcome: _Outcome,
    *,
    changed: bool,
    findings: list[Finding],
) -> LockResult:
    """Record the written lock in the manifest's ``environment.lock``."""
    digest = file_sha256(target)
    tool = resolver_version(job.resolver)
    recorded = outcome.recorded
    resolved_for: dict[str, Any] = {
        "python": job.python,
        "platform": outcome.platform,
        "resolver": tool,
    }
    if recorded is not None:
        resolved_for["accelerator"] = recorded
    art, lock_format = job.art, job.lock_format
    raw_env = dict(art.raw)
    raw_lock = dict(raw_env.get("lock") or {})
    raw_lock.update(
        {"path": lock_rel, "format": lock_format, "sha256": digest, "resolved_for": resolved_for}
    )
    raw_env["lock"] = raw_lock
    # resolved_for.accelerator and build_dependencies are fields of format 1.1: a manifest
    # using one declares 1.1.
    newer = recorded is not None or bool(raw_lock.get("build_dependencies"))
    art.save_raw(raw_env, at_least="1.1" if newer else None)
    return LockResult(
        path=target,
        format=lock_format,
        sha256=digest,
        python=job.python,
        platform=outcome.platform,
        resolver=tool,
        changed=changed,
        findings=findings,
        accelerator=recorded,
    )
