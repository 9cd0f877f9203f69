"""The resolvers' command lines (uv and pip-tools): the volatile part of locking.

Both run isolated from the machine's configuration (its ``pip.conf``, ``uv.toml`` and
``PIP_*``/``UV_*`` variables may name local mirrors), against the public index named
explicitly; kept are caches and what only decides how the index is reached (CA bundles,
client certificates, proxies, timeouts).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reprobridge_sdk.env.interpreters import discover, minor_of, uv_binary

__all__ = [
    "ACCELERATOR_INDEX",
    "PUBLIC_INDEX",
    "Resolver",
    "ToolRun",
    "build_options",
    "extra_index_options",
    "isolated_environ",
    "resolve",
    "resolver_version",
    "variant_index",
]

Resolver = Literal["uv", "pip-tools"]
#: The index locks are resolved against (``REPROBRIDGE_INDEX_URL`` overrides it).
PUBLIC_INDEX = "https://pypi.org/simple"
_COMPILE_COMMAND = "reprobridge lock"
#: Where the CPU (and other non-default) builds of the PyTorch distributions are served, one
#: index per variant below it: ``.../cpu`` (``REPROBRIDGE_ACCELERATOR_INDEX_URL`` overrides it).
ACCELERATOR_INDEX = "https://download.pytorch.org/whl"


@dataclass(frozen=True)
class ToolRun:
    """What one run of a resolver or an installer returned."""

    argv: tuple[str, ...]
    returncode: int
    stderr: str


#: The installers' variables that decide only how an index is reached (module docstring).
_TRANSPORT = ("PIP_CERT", "PIP_CLIENT_CERT", "PIP_PROXY", "UV_SYSTEM_CERTS", "UV_NATIVE_TLS")


def index_url() -> str:
    return os.environ.get("REPROBRIDGE_INDEX_URL", PUBLIC_INDEX)


def variant_index(accelerator: str | None) -> str | None:
    """The extra index of an accelerator variant: ``.../cpu`` for ``cpu``, none for ``cuda``.

    The CUDA builds are the default index's own; the CPU builds sit on their own index,
    searched beside the default one (:func:`extra_index_options`).
    """
    if accelerator != "cpu":
        return None
    base = os.environ.get("REPROBRIDGE_ACCELERATOR_INDEX_URL", ACCELERATOR_INDEX)
    return f"{base.rstrip('/')}/cpu"


def extra_index_options(extra_index: str | None) -> list[str]:
    """uv's options for an accelerator variant's index, searched beside the default one with
    ``unsafe-best-match`` (as pip does): the ``+cpu`` build wins, and a pin missing from the
    mirror still resolves; the lock's hashes fix the file."""
    if not extra_index:
        return []
    return ["--extra-index-url", extra_index, "--index-strategy", "unsafe-best-match"]


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_options(
    build_dependencies: Mapping[str, Sequence[str]] | None, directory: Path
) -> list[str]:
    """uv's options for the configuration: none at all (``--no-config``), or, when source
    distributions need build requirements they do not declare, a configuration file of
    their ``extra-build-dependencies`` (written into ``directory``) and, for the exact pins
    among them, build constraints: a requirement the build backend asks for itself
    (``setup_requires=["cython"]``) gets the same version."""
    if not build_dependencies:
        return ["--no-config"]
    directory.mkdir(parents=True, exist_ok=True)
    table = ", ".join(
        f"{_toml_string(name)} = [{', '.join(_toml_string(r) for r in needs)}]"
        for name, needs in sorted(build_dependencies.items())
    )
    config = directory / "build-dependencies.toml"
    config.write_text(f"extra-build-dependencies = {{ {table} }}\n", "utf-8")
    options = ["--config-file", str(config)]
    pinned = sorted({r for needs in build_dependencies.values() for r in needs if "==" in r})
    if pinned:
        constraints = directory / "build-constraints.txt"
        constraints.write_text("\n".join(pinned) + "\n", "utf-8")
        options += ["--build-constraints", str(constraints)]
    return options


def isolated_environ(base: dict[str, str] | None = None) -> dict[str, str]:
    """``os.environ`` without pip and uv configuration, pointing pip at no config file."""
    source = dict(os.environ if base is None else base)
    keep = {"UV_CACHE_DIR", "PIP_CACHE_DIR", "PIP_DEFAULT_TIMEOUT", *_TRANSPORT}
    cleaned = {
        key: value
        for key, value in source.items()
        if key in keep or not key.startswith(("PIP_", "UV_"))
    }
    cleaned["PIP_CONFIG_FILE"] = os.devnull  # pip loads no configuration file at all
    cleaned["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    cleaned["UV_NO_CONFIG"] = "1"
    cleaned["CUSTOM_COMPILE_COMMAND"] = _COMPILE_COMMAND  # pip-tools' header
    return cleaned


def _uv() -> str:
    found = uv_binary()
    if found is None:  # pragma: no cover - uv is a dependency of the SDK
        msg = "the uv distribution is not installed"
        raise ImportError(msg)
    return found


def resolver_version(resolver: Resolver) -> str:
    """``uv 0.5.1`` or ``pip-tools 7.4.1``."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    if resolver == "uv":
        try:
            return f"uv {version('uv')}"  # the PyPI package ships the binary of its version
        except PackageNotFoundError:  # pragma: no cover - a uv binary from elsewhere
            argv = [_uv(), "--version"]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            match = re.search(r"uv\s+(\S+)", proc.stdout)
            return f"uv {match.group(1)}" if match else "uv"
    return f"pip-tools {version('pip-tools')}"


def build_python(python: str) -> list[str]:
    """``--python PATH`` of an interpreter of ``python`` (``X.Y``) on this machine when it is
    not the running one, else nothing: uv builds a source distribution for its metadata with
    that interpreter. (``--python-version`` alone builds with the running one, and a 2018
    ``setup.py`` that checks the version it runs under refuses Python 3.11.)"""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    short = minor_of(python)
    found = discover(short) if short != running else None
    return ["--python", str(found.path)] if found is not None else []


def resolve(
    resolver: Resolver,
    source: Path,
    output: Path,
    *,
    python: str,
    upgrade: bool = False,
    pylock: bool = False,
    cwd: Path | None = None,
    extra_index: str | None = None,
    command: str = _COMPILE_COMMAND,
    build_dependencies: Mapping[str, Sequence[str]] | None = None,
) -> ToolRun:
    """Resolve ``source`` (requirements.in or pyproject.toml) into ``output`` with hashes.

    An existing ``output`` acts as the preferred pins unless ``upgrade`` is set;
    ``extra_index`` is an accelerator variant's index (:func:`variant_index`); ``command``
    is the one the lock's header names to regenerate it; ``build_dependencies``: the
    undeclared build requirements of source distributions (:func:`build_options`, uv only).
    """
    extra = extra_index_options(extra_index)
    if resolver == "uv":
        argv = [
            _uv(),
            "pip",
            "compile",
            "--quiet",
            *build_options(build_dependencies, (cwd or Path()) / output.parent),
            "--generate-hashes",
            "--index-url",
            index_url(),
            *extra,
            *build_python(python),
            "--python-version",
            python,
            "--custom-compile-command",
            command,
            "--output-file",
            str(output),
        ]
        if pylock:
            argv += ["--format", "pylock.toml"]
    else:
        argv = [
            sys.executable,
            "-m",
            "piptools",
            "compile",
            "--quiet",
            "--generate-hashes",
            "--no-emit-index-url",
            "--no-emit-find-links",
            "--index-url",
            index_url(),
            *(["--extra-index-url", extra_index] if extra_index else []),
            "--output-file",
            str(output),
        ]
    if upgrade:
        argv.append("--upgrade")
    argv.append(str(source))  # last, after either resolver's options
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        env={**isolated_environ(), "CUSTOM_COMPILE_COMMAND": command},
        cwd=cwd,
    )
    return ToolRun(tuple(argv), proc.returncode, proc.stderr)
