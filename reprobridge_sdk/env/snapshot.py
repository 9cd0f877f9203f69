"""Environment snapshots: what a run ran on (``spec/runner.md#environment-snapshot``).

A snapshot records the interpreter, the platform, CPU, memory, GPUs and driver (when
``nvidia-smi`` is present), the installed distributions and an allow-list of environment
variables. Secrets never reach a snapshot: a variable whose *name* looks like a secret, or
whose *value* looks like a credential, is recorded as ``<redacted>``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from reprobridge_sdk.env._distributions import describe
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.model.evidence import Distribution, EnvironmentSnapshot, GpuInfo
from reprobridge_sdk.timestamps import utc_now

__all__ = [
    "DEFAULT_VARIABLES",
    "REDACTED",
    "capture_snapshot",
    "gpu_info",
    "installed_distributions",
    "is_secret",
    "redact_text",
    "select_variables",
]

REDACTED = "<redacted>"
#: Variables recorded by default (exact names; names ending in ``*`` are prefixes).
DEFAULT_VARIABLES = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "VIRTUAL_ENV",
    "CONDA_DEFAULT_ENV",
    "PYTHONHASHSEED",
    "PYTHONPATH",
    "PYTHONUTF8",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "TOKENIZERS_PARALLELISM",
    "CUBLAS_WORKSPACE_CONFIG",
    "CUDA_*",
    "NVIDIA_*",
    "NCCL_*",
    "TORCH_*",
    "TF_*",
    "JAX_*",
    "XLA_*",
    "HF_HOME",
    "HF_DATASETS_CACHE",
    "TRANSFORMERS_CACHE",
    "WANDB_MODE",
)

_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|API_?KEY|ACCESS_?KEY|"
    r"PRIVATE_?KEY|(^|_)KEY($|_)|(^|_)PW($|_)|(^|_)PWD($|_)|SESSION|COOKIE)",
    re.IGNORECASE,
)
#: Credentials inside a text (an argument, a message, a variable's value), replaced in place
#: by :func:`redact_text`: URL userinfo (``scheme://user:pw@``), options whose name holds
#: ``password``/``passwd``/``secret``/``token`` (``--xla_password=...``), and assignments to a
#: secret-looking name (``DB_PW=...``, ``MY_PASSWORD=...``).
_INLINE_SECRETS = (
    (re.compile(r"(?i)([a-z][a-z0-9+.-]*://)[^/\s@]*@"), r"\1" + "<redacted>@"),
    (
        re.compile(
            r"(?i)(--?[a-z0-9_.-]*(?:passw(?:or)?d|secret|token|api[_-]?key)[a-z0-9_.-]*=)\S+"
        ),
        r"\1" + "<redacted>",
    ),
    (
        re.compile(
            r"(?i)\b([a-z0-9_]*(?:passw(?:or)?d|secret|token|_pw|_pwd|api_?key)[a-z0-9_]*=)\S+"
        ),
        r"\1" + "<redacted>",
    ),
)
_SECRET_VALUES = (
    re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"github_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"hf_[A-Za-z0-9]{20,}"),  # Hugging Face
    re.compile(r"sk-[A-Za-z0-9_-]{16,}"),  # OpenAI, Anthropic and similar
    re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"glpat-[A-Za-z0-9_-]{20,}"),  # GitLab
    re.compile(r"(AKIA|ASIA)[0-9A-Z]{16}"),  # AWS access key ids
    re.compile(r"AIza[0-9A-Za-z_-]{35}"),  # Google API keys
    re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # JWTs
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"://[^/\s:@]+:[^/\s@]+@"),  # credentials inside a URL
)
_TOKEN_RE = re.compile(r"[A-Za-z0-9+/=_-]{32,}")
_ENTROPY_BITS = 4.0
_PATH_LIKE = re.compile(r"^[A-Za-z0-9._/-]*/[A-Za-z0-9._/-]*$")


def _entropy(text: str) -> float:
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def redact_text(text: str) -> str:
    """``text`` with credentials written inside it replaced by ``<redacted>`` (by pattern).

    For argv items, log-like messages and URLs: ``https://user:pw@host/x`` becomes
    ``https://<redacted>@host/x``, ``--db-password=x`` becomes ``--db-password=<redacted>``,
    ``DB_PW=x`` becomes ``DB_PW=<redacted>``; the known token shapes of :func:`is_secret`
    (GitHub, Hugging Face, cloud keys, JWTs...) become ``<redacted>``. Other text is kept.
    """
    for pattern, replacement in _INLINE_SECRETS:
        text = pattern.sub(replacement, text)
    for pattern in _SECRET_VALUES[:-1]:  # the last one (URL userinfo) is handled above
        text = pattern.sub(REDACTED, text)
    return text


def is_secret(name: str, value: str) -> bool:
    """True when a variable's name or value looks like a credential."""
    if _SECRET_NAME.search(name):
        return True
    if redact_text(value) != value:
        return True
    if any(pattern.search(value) for pattern in _SECRET_VALUES):
        return True
    for token in _TOKEN_RE.findall(value):
        if token.startswith("/") or (_PATH_LIKE.match(token) and token.count("/") > 1):
            continue  # a path, not a key
        mixed = sum(
            (
                any(c.islower() for c in token),
                any(c.isupper() for c in token),
                any(c.isdigit() for c in token),
            )
        )
        if mixed >= 2 and _entropy(token) >= _ENTROPY_BITS:
            return True
    return False


def select_variables(
    environ: Mapping[str, str] | None = None, extra: Iterable[str] = ()
) -> dict[str, str]:
    """The allow-listed variables of ``environ`` (default: ``os.environ``), secrets redacted."""
    source = os.environ if environ is None else environ
    wanted = (*DEFAULT_VARIABLES, *extra)
    exact = {name for name in wanted if not name.endswith("*")}
    prefixes = tuple(name[:-1] for name in wanted if name.endswith("*"))
    selected: dict[str, str] = {}
    for name in sorted(source):
        if name in exact or (prefixes and name.startswith(prefixes)):
            value = source[name]
            selected[name] = REDACTED if is_secret(name, value) else value
    return selected


def _read_cpu() -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text("utf-8", errors="replace")
    except OSError:
        return platform.processor() or None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in {"model name", "Model", "Hardware", "cpu model"} and value.strip():
            return value.strip()
    return platform.processor() or None


def _read_memory() -> int | None:
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def gpu_info(timeout: float = 10.0) -> list[GpuInfo]:
    """GPUs seen by ``nvidia-smi``; an empty list when it is absent or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        proc = subprocess.run(
            [exe, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    cuda = _cuda_from_smi(exe, timeout)
    gpus: list[GpuInfo] = []
    for line in proc.stdout.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < 3 or not parts[0]:
            continue
        memory = int(float(parts[1])) if re.fullmatch(r"\d+(\.\d+)?", parts[1]) else None
        gpus.append(GpuInfo(name=parts[0], memory_mb=memory, driver=parts[2] or None, cuda=cuda))
    return gpus


def _cuda_from_smi(exe: str, timeout: float) -> str | None:
    try:
        proc = subprocess.run([exe], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"CUDA Version:\s*([\d.]+)", proc.stdout)
    return match.group(1) if match else None


def _probe(python: Path) -> dict[str, Any]:
    try:
        proc = subprocess.run(
            [str(python), "-I", str(Path(__file__).with_name("_distributions.py"))],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except OSError as exc:
        msg = f"cannot run {python}: {exc.strerror}"
        raise ReproBridgeError(msg) from exc
    except subprocess.TimeoutExpired as exc:
        msg = f"{python} did not answer within {exc.timeout} s"
        raise ReproBridgeError(msg) from exc
    if proc.returncode != 0:
        msg = f"{python} failed to list its distributions: {proc.stderr.strip()[-500:]}"
        raise ReproBridgeError(msg)
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def _describe(python: str | os.PathLike[str] | None) -> dict[str, Any]:
    """Version, implementation, executable and distributions of ``python`` (or this one)."""
    return describe() if python is None else _probe(Path(python))


def installed_distributions(python: str | os.PathLike[str] | None = None) -> list[Distribution]:
    """Distributions installed for ``python`` (default: the running interpreter), by name."""
    pairs = _describe(python)["distributions"]
    return [Distribution(name=str(name), version=str(version)) for name, version in pairs]


def capture_snapshot(
    python: str | os.PathLike[str] | None = None,
    *,
    variables: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> EnvironmentSnapshot:
    """Capture the environment of ``python`` (default: the running interpreter).

    ``variables`` adds names (or ``PREFIX*`` patterns) to :data:`DEFAULT_VARIABLES`;
    ``environ`` replaces ``os.environ`` as the source of variables.
    """
    probe = _describe(python)
    pairs = probe["distributions"]
    return EnvironmentSnapshot(
        captured_at=utc_now(),
        python=str(probe["python"]),
        implementation=str(probe["implementation"]),
        executable=str(probe["executable"]),
        platform=platform_tag(),
        machine=platform.machine(),
        cpu=_read_cpu(),
        cpu_count=os.cpu_count(),
        memory_bytes=_read_memory(),
        gpus=gpu_info(),
        distributions=[Distribution(name=str(n), version=str(v)) for n, v in pairs],
        variables=select_variables(environ, variables),
    )


def platform_tag() -> str:
    """``<system>-<machine>`` in lower case, e.g. ``linux-x86_64``."""
    return f"{platform.system().lower()}-{platform.machine().lower()}"
