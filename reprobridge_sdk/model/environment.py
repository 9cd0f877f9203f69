"""The ``environment`` part: interpreter, lock, system needs, data (spec §6.3 to §6.5)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import Identifier, Integer, OptionalInteger, RelPath, Sha256, SpecModel, since

__all__ = [
    "BUILT_IN_URL_PATTERN",
    "PLUGIN_URL_PATTERN",
    "Accelerator",
    "DataItem",
    "DataSource",
    "Environment",
    "Lock",
    "ResolvedFor",
    "SystemPackage",
]


class ResolvedFor(SpecModel):
    """Interpreter and platform a lock was resolved for."""

    python: str = Field(pattern=r"^[0-9]+\.[0-9]+(\.[0-9]+)?$", description="e.g. '3.11.7'.")
    platform: str = Field(min_length=1, description="e.g. 'linux-x86_64'.")
    resolver: str | None = Field(default=None, description="Tool and version, e.g. 'uv 0.5.1'.")
    accelerator: Literal["cpu", "cuda"] | None = Field(
        default=None,
        description="The accelerator variant of the frameworks the lock pins: 'cpu' (their CPU "
        "builds, from the variant's own index) or 'cuda' (the default index's builds); absent "
        "when the lock pins no distribution that has such variants.",
        json_schema_extra=since("1.1"),
    )


class Lock(SpecModel):
    """A fully pinned, hashed lock of the Python dependencies."""

    path: RelPath = Field(description="The lock file inside the artifact.")
    format: Literal["requirements", "pylock"] = Field(
        description="'requirements': pip hashed requirements; 'pylock': PEP 751 pylock.toml."
    )
    sha256: Sha256 | None = Field(default=None, description="SHA-256 of the lock file.")
    resolved_for: ResolvedFor | None = None
    build_dependencies: dict[str, list[str]] | None = Field(
        default=None,
        description="Build requirements that a source distribution the lock installs needs "
        "but does not declare (its setup.py imports numpy, say), by distribution name: "
        "supplied to that distribution's build only, when locking and when the environment "
        "is built; absent when there are none.",
        json_schema_extra=since("1.1"),
    )


class SystemPackage(SpecModel):
    """A non-Python requirement of the environment."""

    name: str = Field(min_length=1, description="Package name, e.g. Debian's 'libgomp1'.")
    version: str | None = Field(default=None, description="Version constraint, free form.")
    command: str | None = Field(
        default=None, description="A command whose presence on PATH shows the package is there."
    )


class Accelerator(SpecModel):
    """Accelerator needs of the experiments."""

    kind: Literal["none", "cuda", "rocm", "tpu", "mps"] = "none"
    cuda: str | None = Field(default=None, pattern=r"^[0-9]+(\.[0-9]+){0,2}$")
    gpus: Integer = Field(default=0, ge=0)
    gpu_memory_gb: float | None = Field(default=None, gt=0, description="Per GPU.")


#: The URL schemes the SDK downloads itself (format 1.0).
BUILT_IN_URL_PATTERN = r"^(https?|s3|gs|hf)://"
#: A scheme an installed plugin downloads (format 1.1; entry point group
#: ``reprobridge.data_schemes``): ``x-`` keeps the 1.0 set of schemes closed.
PLUGIN_URL_PATTERN = r"^x-[a-z0-9][a-z0-9+.-]*://"

_BuiltInUrl = Annotated[str, Field(pattern=BUILT_IN_URL_PATTERN)]
_PluginUrl = Annotated[str, Field(pattern=PLUGIN_URL_PATTERN, json_schema_extra=since("1.1"))]


class DataSource(SpecModel):
    """Where a data item comes from: exactly one of url, package or codebase."""

    # The description is the field note (1.0's); the x- branch is marked since 1.1.
    url: _BuiltInUrl | _PluginUrl | None = None
    package: str | None = Field(
        default=None, description="A distribution in the lock that ships the item."
    )
    codebase: RelPath | None = Field(
        default=None, description="A path inside the refined code that holds the item."
    )

    def _needs_version(self) -> tuple[int, int]:
        return (1, 1) if self.url is not None and self.url.startswith("x-") else (1, 0)


class DataItem(SpecModel):
    """A dataset or checkpoint to acquire."""

    id: Identifier
    kind: Literal["dataset", "checkpoint", "other"] = "dataset"
    source: DataSource
    sha256: Sha256 | None = None
    size: OptionalInteger = Field(default=None, ge=0, description="Size in bytes.")
    destination: RelPath | None = Field(
        default=None, description="Where the item is placed inside the artifact."
    )
    license: str | None = None
    access: Literal["public", "gated", "manual"] = "public"
    instructions: str | None = Field(
        default=None, description="What a user must do to obtain a gated or manual item."
    )
    substitutes_training: bool = Field(
        default=False,
        description="A checkpoint that may stand in for training in evaluation-only tasks.",
    )


class Environment(SpecModel):
    """The software and hardware an artifact runs on."""

    python: str = Field(pattern=r"^[0-9]+\.[0-9]+(\.[0-9]+)?$", description="e.g. '3.11'.")
    requirements: RelPath | None = Field(
        default=None,
        description="Declared requirements (requirements.in or pyproject.toml) behind the lock.",
    )
    lock: Lock | None = None
    system_packages: list[SystemPackage] = Field(default_factory=list)
    accelerator: Accelerator = Field(default_factory=Accelerator)
    data: list[DataItem] = Field(default_factory=list)
