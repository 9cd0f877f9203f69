"""The clean shell of the clean-room check: a fresh ``HOME``, the machine's network
configuration (:data:`NETWORK_ENV`), the installers' caches and what ``--pass-env`` names,
nothing else. Rules: ``spec/authoring.md#clean-room-check``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from reprobridge_sdk.env.interpreters import interpreter_homes

__all__ = ["NETWORK_ENV", "clean_environment", "installer_cache_dirs", "network_environment"]

_PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
#: The network configuration that passes into the clean room unasked: what the installers
#: and data downloads need to reach an index behind a proxy or a private CA, as uv and pip
#: name it. Credentials of an index (``UV_INDEX_<NAME>_PASSWORD``, keyrings) are not in it.
NETWORK_ENV: tuple[str, ...] = (
    *_PROXY_ENV,
    *(name.lower() for name in _PROXY_ENV),
    # CA bundles and client certificates (OpenSSL, rustls, requests, curl)
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "SSL_CLIENT_CERT",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    # the indexes the SDK's installers use (env._resolvers.index_url, variant_index)
    "REPROBRIDGE_INDEX_URL",
    "REPROBRIDGE_ACCELERATOR_INDEX_URL",
    # pip
    "PIP_PROXY",
    "PIP_CERT",
    "PIP_CLIENT_CERT",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "PIP_FIND_LINKS",
    "PIP_CONFIG_FILE",
    # uv
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_INSECURE_HOST",
    "UV_NATIVE_TLS",
    "UV_SYSTEM_CERTS",
    "UV_CONFIG_FILE",
)
#: The variables of :data:`NETWORK_ENV` that name files or directories (``os.pathsep``
#: separated for ``SSL_CERT_DIR``): a relative name is made absolute against the caller's
#: working directory, since the clean room's commands run in another one.
_PATH_ENV = frozenset(
    {
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "SSL_CLIENT_CERT",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "PIP_CERT",
        "PIP_CLIENT_CERT",
        "PIP_CONFIG_FILE",
        "UV_CONFIG_FILE",
    }
)


def installer_cache_dirs(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's uv and pip cache directories, as ``UV_CACHE_DIR`` and ``PIP_CACHE_DIR``.

    The caller's own variable, else the installer's default; a directory need not exist yet.
    """
    source = os.environ if environ is None else environ
    home = Path(source.get("HOME") or Path.home())
    xdg = source.get("XDG_CACHE_HOME")
    cache_home = Path(xdg) if xdg else home / ".cache"
    pip_default = (
        home / "Library" / "Caches" / "pip" if sys.platform == "darwin" and not xdg else None
    )
    return {
        "UV_CACHE_DIR": source.get("UV_CACHE_DIR") or str(cache_home / "uv"),
        "PIP_CACHE_DIR": source.get("PIP_CACHE_DIR") or str(pip_default or cache_home / "pip"),
    }


def network_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's network configuration (:data:`NETWORK_ENV`) as the clean room gets it:
    the variables set, a relative file or directory name made absolute."""
    source = os.environ if environ is None else environ
    passed: dict[str, str] = {}
    for name in NETWORK_ENV:
        value = source.get(name)
        if value is None:
            continue
        if name in _PATH_ENV and value:
            value = os.pathsep.join(
                str(Path.cwd() / part) if part and not Path(part).is_absolute() else part
                for part in value.split(os.pathsep)
            )
        passed[name] = value
    return passed


def clean_environment(
    home: Path, pass_env: Sequence[str] = (), *, installer_cache: bool = True
) -> dict[str, str]:
    """The environment of a clean shell (see the module docstring)."""
    bin_dir = str(Path(sys.executable).parent)
    env = {
        "PATH": os.pathsep.join([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "NO_COLOR": "1",
    }
    if installer_cache:
        env.update(installer_cache_dirs())
    env.update(interpreter_homes())
    env.update(network_environment())
    for name in pass_env:
        if name in os.environ:
            env[name] = os.environ[name]
    return env
