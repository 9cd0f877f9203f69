"""The ``codebase`` part: upstream pin and refined code (spec §6.2)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ._base import RelPath, Sha256, SpecModel, since

__all__ = ["Codebase", "Patch", "RefinedCode", "Upstream", "UpstreamBundle"]


class UpstreamBundle(SpecModel):
    """The upstream's history carried in the artifact: a git bundle of the pinned commit."""

    path: RelPath = Field(
        description="The git bundle inside the artifact ('upstream/<commit>.bundle' when packed)."
    )
    sha256: Sha256 = Field(description="SHA-256 of the bundle file.")


class Upstream(SpecModel):
    """The original repository the artifact refines."""

    repository: str = Field(
        min_length=1,
        description=(
            "Clone URL of the upstream repository (https, ssh or git), or a relative path of"
            " '..' segments naming the git repository that encloses the artifact."
        ),
    )
    commit: str = Field(
        pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$",
        description="Full commit id (40-hex SHA-1 or 64-hex SHA-256); never a branch or tag.",
    )
    bundle: UpstreamBundle | None = Field(
        default=None,
        description="A git bundle of exactly the pinned commit's history, carried in the "
        "artifact when the repository is not an address anyone can fetch (written by pack); "
        "used instead of the repository, so the artifact reruns offline.",
        json_schema_extra=since("1.1"),
    )


class Patch(SpecModel):
    """One patch of an ordered series applied to the upstream commit."""

    path: RelPath = Field(description="Patch file (unified diff) inside the artifact.")
    sha256: Sha256 | None = Field(default=None, description="SHA-256 of the patch file.")
    summary: str | None = None


class RefinedCode(SpecModel):
    """The refined code: a directory in the artifact or patches on the upstream commit."""

    kind: Literal["directory", "patches"]
    path: RelPath | None = Field(
        default=None, description="For kind 'directory': the directory holding the refined code."
    )
    patches: list[Patch] = Field(
        default_factory=list,
        description=(
            "For kind 'patches': applied in this order. May be empty (since 1.1): the"
            " upstream commit as it is, before the first fix is recorded."
        ),
    )

    def _needs_version(self) -> tuple[int, int]:
        # An empty series (the upstream commit unchanged) is a format 1.1 addition.
        return (1, 1) if self.kind == "patches" and not self.patches else (1, 0)

    @model_validator(mode="after")
    def _kind_fields(self) -> RefinedCode:
        if self.kind == "directory" and self.path is None:
            msg = "kind 'directory' needs 'path'"
            raise ValueError(msg)
        return self


class Codebase(SpecModel):
    """Where the code comes from and what it is."""

    upstream: Upstream
    refined: RefinedCode
    tree_digest: str | None = Field(
        default=None,
        pattern=r"^sha256-tree1:[0-9a-f]{64}$",
        description="Tree digest of the refined code directory (spec §8).",
    )
