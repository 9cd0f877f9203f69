"""``reprobridge lock``: resolve the declared requirements into a hashed, portable lock.

The lock is resolved into a temporary file beside its destination, cleaned of machine-local
options, checked with :func:`reprobridge_sdk.locks.lockfile.check_lock`, and only then renamed into
place; the manifest's ``environment.lock`` (path, format, sha256, resolved_for) is then
updated with a round-trip edit that keeps the manifest's comments.
"""

from __future__ import annotations

import importlib.util
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
from reprobridge_sdk.env._resolvers import Resolver, resolve, resolver_version
from reprobridge_sdk.errors import UsageError, require_extra
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.locks.lockfile import LockError, check_lock, is_local_location

__all__ = ["DEFAULT_LOCK_PATHS", "LockResult", "lock_artifact", "strip_local_options"]

#: Where a new lock is written when the manifest names none.
DEFAULT_LOCK_PATHS = {"requirements": "requirements.txt", "pylock": "pylock.toml"}
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


def _platform() -> str:
    return f"{platform.system().lower()}-{platform.machine().lower()}"


def lock_artifact(
    path: str | os.PathLike[str] = ".",
    *,
    resolver: Resolver = "uv",
    python: str | None = None,
    upgrade: bool = False,
    fmt: Literal["requirements", "pylock"] | None = None,
    output: str | None = None,
) -> LockResult:
    """Resolve ``environment.requirements`` of the artifact at ``path`` into its lock.

    ``python`` defaults to ``environment.python``; ``fmt`` and ``output`` default to the
    manifest's ``environment.lock`` (or hashed requirements at ``requirements.txt``).
    Raises :class:`LockError` (with L findings) when resolution fails or the result is not
    portable; nothing is written then.
    """
    art = load_raw(path)
    requirements, env_python, declared = _declared(art)
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
    target = art.inside(lock_rel, what="the lock path", pointer=pointer)
    python_version = python or env_python
    if resolver == "pip-tools":
        # pip-tools is an optional extra: say which, before the resolver fails on its import.
        require_extra("piptools", "pip-tools", feature="lock --resolver pip-tools")
        running = ".".join(platform.python_version_tuple()[:2])
        if ".".join(python_version.split(".")[:2]) != running:
            raise _refused(
                f"pip-tools resolves for the running Python {running}, not {python_version}",
                hint="use the uv resolver, or run reprobridge under that Python",
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    previous = target.read_bytes() if target.is_file() else None
    # The resolver writes into a temporary directory beside the lock (uv insists on the
    # file name of a pylock.toml), so the rename into place stays on one file system.
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    tmp = tmp_dir / target.name
    try:
        if previous is not None and not upgrade:
            tmp.write_bytes(previous)  # existing pins are the resolver's preferences
        run = resolve(
            resolver,
            Path(os.path.relpath(source, art.root)),
            Path(os.path.relpath(tmp, art.root)),
            python=python_version,
            upgrade=upgrade,
            pylock=lock_format == "pylock",
            cwd=art.root,
        )
        if run.returncode != 0 or not tmp.is_file() or not tmp.stat().st_size:
            detail = run.stderr.strip()[-2000:] or f"exit status {run.returncode}"
            item = finding(
                "L010",
                f"{resolver} could not resolve {requirements}: {detail}",
                file=requirements,
                hint="check the requirements and that the package index is reachable",
            )
            msg = f"cannot lock {requirements}"
            raise LockError(msg, [item])
        text = tmp.read_text("utf-8")
        cleaned = strip_local_options(text) if lock_format == "requirements" else text
        if cleaned != text:
            tmp.write_text(cleaned, "utf-8")
        findings = check_lock(tmp, lock_format, display_name=lock_rel)
        errors = [f for f in findings if f.severity is Severity.ERROR]
        if errors:
            msg = f"the resolved lock is not usable ({len(errors)} error(s)); nothing was written"
            raise LockError(msg, errors)
        changed = previous != tmp.read_bytes()
        tmp.chmod(0o644)
        tmp.replace(target)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    digest = file_sha256(target)
    tool = resolver_version(resolver)
    resolved_for: dict[str, Any] = {
        "python": python_version,
        "platform": _platform(),
        "resolver": tool,
    }
    raw_env = dict(art.raw)
    raw_lock = dict(raw_env.get("lock") or {})
    raw_lock.update(
        {"path": lock_rel, "format": lock_format, "sha256": digest, "resolved_for": resolved_for}
    )
    raw_env["lock"] = raw_lock
    art.save_raw(raw_env)
    return LockResult(
        path=target,
        format=lock_format,
        sha256=digest,
        python=python_version,
        platform=resolved_for["platform"],
        resolver=tool,
        changed=changed,
        findings=findings,
    )


def which_resolver(resolver: Resolver) -> bool:
    """True when ``resolver`` can run here."""
    if resolver == "uv":
        try:
            from uv import find_uv_bin  # noqa: PLC0415

            find_uv_bin()
        except (ImportError, FileNotFoundError):
            return False
        return True
    return importlib.util.find_spec("piptools") is not None
