"""Accelerator variants of a lock: which distributions tie it to CUDA.

What counts as a CUDA sign, and L012 for a ``cpu`` lock that shows one, is spec/manifest.md
§6.4 ("locks").
"""

from __future__ import annotations

import re
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from reprobridge_sdk.findings import Finding, finding

from ._types import Lock, LockEntry

__all__ = [
    "ACCELERATORS",
    "CUDA_ONLY",
    "PYTORCH_VARIANTS",
    "Accelerator",
    "borrowed_hashes",
    "cpu_requirements",
    "cuda_entries",
    "is_cuda_entry",
    "variant_findings",
]

#: The variants a lock can target: ``cpu`` (the CPU builds) or ``cuda`` (the default index).
Accelerator = Literal["cpu", "cuda"]
ACCELERATORS: tuple[Accelerator, ...] = ("cpu", "cuda")
#: Distributions that exist only as CUDA builds (matched on the canonical name).
CUDA_ONLY = re.compile(
    r"^(nvidia-.+|triton|pytorch-triton(-rocm)?|cupy-cuda.+|jax-cuda\d+-(plugin|pjrt))$"
)
#: Distributions whose default build on Linux and Windows is the CUDA one.
PYTORCH_VARIANTS = frozenset({"torch", "torchvision", "torchaudio"})
_LOCAL_GPU = re.compile(r"^(cu\d+|cuda\d+(\.\w+)*|rocm[\d.]+)$")  # jaxlib: +cuda12.cudnn89
#: JAX selects its build by extra: ``jax[cuda12]`` pulls the CUDA plugin, ``jax[cpu]`` not.
_JAX_GPU_EXTRA = re.compile(r"^(cuda\d*(_\w+)?|tpu|rocm)$")
_CUDA_DEFAULT_PLATFORMS = ("linux", "windows")


def _local(version: str | None) -> str | None:
    if version is None:
        return None
    try:
        return Version(version).local
    except InvalidVersion:
        return None


def is_cuda_entry(entry: LockEntry, platform: str | None = None) -> bool:
    """True when ``entry`` is a CUDA build (see the module's list of CUDA signs)."""
    if CUDA_ONLY.match(entry.name):
        return True
    local = _local(entry.version)
    if local is not None and _LOCAL_GPU.match(local):
        return True
    cuda_by_default = platform is None or platform.startswith(_CUDA_DEFAULT_PLATFORMS)
    return (
        entry.name in PYTORCH_VARIANTS
        and entry.url is None
        and entry.version is not None
        and local != "cpu"
        and cuda_by_default
    )


def cuda_entries(lock: Lock, platform: str | None = None) -> list[LockEntry]:
    """The entries of ``lock`` that are CUDA builds, in file order."""
    return [entry for entry in lock.entries if is_cuda_entry(entry, platform)]


def variant_findings(
    lock: Lock, accelerator: str | None, *, file: str, platform: str | None = None
) -> list[Finding]:
    """L012 for every CUDA build in a lock that records the ``cpu`` target."""
    if accelerator != "cpu":
        return []
    return [
        finding(
            "L012",
            f"the lock targets the CPU build but pins the CUDA build {entry.requirement!r}",
            file=file,
            line=entry.line,
            col=1 if entry.line else 0,
            hint="lock again with 'reprobridge lock --accelerator cpu', "
            "or record 'cuda' if the CUDA build is meant",
        )
        for entry in cuda_entries(lock, platform)
    ]


def borrowed_hashes(cpu: Lock, cuda: Lock, *, file: str) -> list[Finding]:
    """L012 for every pin of the CPU lock whose hash another pin of the CUDA lock has: a CUDA file
    under a CPU pin (the same file under the same pin in both is fine)."""
    owner = {digest: entry for entry in cuda.entries for digest in entry.hashes}
    found = []
    for entry in cpu.entries:
        for digest in entry.hashes:
            other = owner.get(digest)
            if other is not None and (other.name, other.version) != (entry.name, entry.version):
                found.append(
                    finding(
                        "L012",
                        f"{entry.requirement!r} is locked with the hash of the CUDA build "
                        f"{other.requirement!r}",
                        file=file,
                        line=entry.line,
                        col=1 if entry.line else 0,
                        hint="the CPU index lists a wrong hash; check the index, then lock again",
                    )
                )
    return found


def cpu_requirements(text: str) -> tuple[str, list[str]]:
    """Declared requirements for the CPU target, and what was dropped: CUDA-only
    distributions go, ``+cu``/``+rocm`` local versions are cut to the public one, and
    ``jax[cuda*]`` becomes ``jax[cpu]``."""
    kept: list[str] = []
    changed: list[str] = []
    for line in text.splitlines():
        spec = line.split("#", 1)[0].strip()
        if not spec or spec.startswith("-"):
            kept.append(line)
            continue
        try:
            req = Requirement(spec)
        except InvalidRequirement:
            kept.append(line)
            continue
        if CUDA_ONLY.match(canonicalize_name(req.name)):
            changed.append(spec)
            continue
        cut = re.sub(r"\+(cu\d+|cuda\d+(\.\w+)*|rocm[\d.]+)(?=\s*(,|;|$))", "", spec)
        if canonicalize_name(req.name) == "jax" and any(
            _JAX_GPU_EXTRA.match(e) for e in req.extras
        ):
            extras = sorted({e for e in req.extras if not _JAX_GPU_EXTRA.match(e)} | {"cpu"})
            cut = re.sub(r"\[[^\]]*\]", "[" + ",".join(extras) + "]", cut, count=1)
        if cut != spec:
            changed.append(spec)
        kept.append(cut if cut != spec else line)
    return "".join(f"{line}\n" for line in kept), changed
