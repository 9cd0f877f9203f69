"""The ``artifact`` part: identity, paper and license (spec §6.1)."""

from __future__ import annotations

from pydantic import Field

from ._base import Identifier, OptionalInteger, SpecModel, since

__all__ = ["Artifact", "Author", "Paper"]


class Paper(SpecModel):
    """The publication whose results the artifact reproduces."""

    title: str = Field(min_length=1, description="Title of the paper.")
    venue: str | None = Field(default=None, description="Conference or journal, e.g. 'ICML'.")
    year: OptionalInteger = Field(default=None, ge=1900, le=2100, description="Publication year.")
    doi: str | None = Field(
        default=None,
        pattern=r"^10\.[0-9]{4,9}/[^\x00-\x20]+$",
        description="DOI without the resolver prefix.",
    )
    arxiv: str | None = Field(
        default=None,
        pattern=r"^([0-9]{4}\.[0-9]{4,5}|[a-z-]+(\.[A-Z]{2})?/[0-9]{7})(v[0-9]+)?$",
        description="arXiv identifier, e.g. '2401.01234v2'.",
    )
    url: str | None = Field(default=None, pattern=r"^https?://", description="Landing page.")
    authors: list[str] = Field(
        default_factory=list,
        description="The paper's authors as printed, in order ('Ada Lovelace'); "
        "used for the citation (CITATION.cff).",
        json_schema_extra=since("1.1"),
    )


class Author(SpecModel):
    """A person responsible for the artifact."""

    name: str = Field(min_length=1)
    email: str | None = Field(default=None, pattern=r"^[^@\x00-\x20]+@[^@\x00-\x20]+$")
    orcid: str | None = Field(default=None, pattern=r"^[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$")


class Artifact(SpecModel):
    """Identity of the artifact."""

    id: Identifier = Field(description="Stable slug that names the artifact.")
    title: str = Field(min_length=1, description="Human-readable title.")
    version: str | None = Field(
        default=None, description="The artifact's own release version (not the format version)."
    )
    license: str = Field(min_length=1, description="SPDX license expression of the artifact.")
    paper: Paper
    authors: list[Author] = Field(default_factory=list)
