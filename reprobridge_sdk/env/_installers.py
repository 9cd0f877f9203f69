"""The installers' command lines (uv, and pip where uv is absent): the volatile part of builds.

uv: ``uv venv`` then ``uv pip sync --require-hashes --compile-bytecode`` of the lock as it is
(hashed requirements or ``pylock.toml``). pip: ``python -m venv`` then ``pip install
--require-hashes --no-deps -r``; pip cannot install a ``pylock.toml`` (E013, hint: install
uv). Bytecode is written at install time because a cached environment is shared and read-only
in the sandbox. Both run isolated from the machine's pip and uv configuration.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from reprobridge_sdk.env._resolvers import (
    ToolRun,
    build_options,
    extra_index_options,
    index_url,
    isolated_environ,
    resolver_version,
)
from reprobridge_sdk.env.interpreters import uv_binary

__all__ = [
    "Installer",
    "available",
    "classify_failure",
    "create_venv",
    "install_lock",
    "uv_binary",
]

Installer = Literal["uv", "pip"]


def available(preferred: Installer | None = None) -> Installer:
    """``preferred`` if given, else uv when its binary is present, else pip."""
    if preferred is not None:
        return preferred
    return "uv" if uv_binary() is not None else "pip"


def _run(argv: list[str], *, progress: bool) -> ToolRun:
    proc = subprocess.run(
        argv,
        stdout=sys.stderr if progress else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        env=isolated_environ(),
    )
    return ToolRun(tuple(argv), proc.returncode, proc.stderr)


def create_venv(installer: Installer, base_python: Path, target: Path, prompt: str) -> ToolRun:
    """Create an empty virtual environment of ``base_python`` at ``target``."""
    if installer == "uv":
        uv = uv_binary()
        assert uv is not None
        argv = [uv, "venv", "--no-config", "--quiet", "--python", str(base_python)]
        argv += ["--prompt", prompt, str(target)]
    else:
        argv = [str(base_python), "-m", "venv", "--prompt", prompt, str(target)]
    return _run(argv, progress=False)


def _version(python: Path) -> tuple[int, ...]:
    """``(major, minor)`` of a virtual environment's interpreter, from its ``pyvenv.cfg``;
    ``(3, 99)`` when it does not say (then the newest behaviour is right)."""
    try:
        config = (python.parent.parent / "pyvenv.cfg").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return (3, 99)
    found = re.search(r"^\s*(?:version_info|version)\s*=\s*(\d+)\.(\d+)", config, re.M)
    return (int(found.group(1)), int(found.group(2))) if found else (3, 99)


def install_lock(
    installer: Installer,
    python: Path,
    lock: Path,
    *,
    progress: bool = False,
    extra_index: str | None = None,
    build_dependencies: Mapping[str, Sequence[str]] | None = None,
) -> ToolRun:
    """Install exactly the hashed lock ``lock`` into the environment of ``python``.

    ``extra_index``: the index of the accelerator variant the lock targeted
    (:func:`~reprobridge_sdk.env._resolvers.variant_index`), searched as it was when locking;
    ``build_dependencies``: the lock's undeclared build requirements of source distributions
    (uv only: pip cannot supply them to one distribution's build).
    """
    if installer == "uv":
        uv = uv_binary()
        assert uv is not None
        # uv's bytecode compiler needs Python 3.7+; an older environment compiles its own
        modern = _version(python) >= (3, 7)
        with tempfile.TemporaryDirectory(prefix="reprobridge-build-") as scratch:
            argv = [uv, "pip", "sync", *build_options(build_dependencies, Path(scratch))]
            argv += ["--require-hashes", *(["--compile-bytecode"] if modern else [])]
            argv += ["--python", str(python), "--index-url", index_url()]
            argv += extra_index_options(extra_index)
            if not progress:
                argv.append("--quiet")
            argv.append(str(lock))
            run = _run(argv, progress=progress)
        if run.returncode == 0 and not modern:
            # a file that does not compile (another version's syntax) is left to import time
            compileall = [str(python), "-m", "compileall", "-q", "-j", "0"]
            _run([*compileall, str(python.parent.parent / "lib")], progress=False)
        return run

    argv = [str(python), "-m", "pip", "install", "--require-hashes", "--no-deps", "--no-input"]
    argv += ["--index-url", index_url()]
    if extra_index:
        argv += ["--extra-index-url", extra_index]
    argv += ["-r", str(lock)]
    if not progress:
        argv.append("--quiet")
    return _run(argv, progress=progress)


#: Classes of installer failures, tried in this order on the installer's own output (pip's
#: or uv's): the transport first, since both installers go on to say that no version was
#: found after a download failed, which would otherwise read as a missing distribution.
_FAILURES: tuple[tuple[str, str, str], ...] = (
    (
        "E021",
        "a TLS certificate could not be verified",
        r"(certificate verify failed|certificate_verify_failed|invalid peer certificate|"
        r"self[- ]signed certificate|unknownissuer|ssl: |sslerror|tls handshake|"
        r"certificate is not valid|unable to get local issuer)",
    ),
    (
        "E022",
        "the proxy refused or could not be reached",
        r"(proxyerror|unable to connect to proxy|proxy error|tunnel connection failed|"
        r"407 proxy authentication)",
    ),
    (
        "E023",
        "the package index answered with an error",
        r"(http status (client|server) error|\b[45]\d\d (client|server) error|"
        r"http error \d{3}|status code \d{3})",
    ),
    (
        "E020",
        "the package index is unreachable",
        r"(newconnectionerror|max retries exceeded|temporary failure in name resolution|"
        r"name or service not known|connection refused|failed to fetch|dns error|"
        r"error sending request|connection reset|timed out|network is unreachable)",
    ),
    (
        "E013",
        "a downloaded file does not match its hash in the lock",
        r"(do not match the hashes|hash mismatch)",
    ),
    (
        "E013",
        "a pinned distribution is not available for this platform or index",
        r"(could not find a version|no matching distribution|no solution found|"
        r"not found in the package registry|no wheels? (with a matching|are available))",
    ),
)


def classify_failure(stderr: str) -> tuple[str, str]:
    """``(code, cause)`` of a failed install from either installer's error output.

    E021 TLS, E022 proxy, E020 network, E023 an index's HTTP error, E013 otherwise (a hash
    mismatch, a missing distribution, or another failure of the installer). The one place
    both pip's and uv's output pass through.
    """
    lowered = stderr.lower()
    for code, cause, pattern in _FAILURES:
        if re.search(pattern, lowered):
            return code, cause
    return "E013", "the installer failed"


def tool_version(installer: Installer, python: Path) -> str:
    """``uv X.Y.Z`` or ``pip X.Y`` as recorded in an environment's completion marker."""
    if installer == "uv":
        return resolver_version("uv")
    proc = subprocess.run(
        [str(python), "-m", "pip", "--version"], capture_output=True, text=True, check=False
    )
    match = re.match(r"pip (\S+)", proc.stdout)
    return f"pip {match.group(1)}" if match else "pip"
