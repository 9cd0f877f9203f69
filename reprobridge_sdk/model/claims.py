"""The claims file: the paper's targets that ``reprobridge build`` turns into tasks.

A claims file (``claims.yaml``, schema ``claims-1.0``) is written by whoever asks for an
artifact: the paper, then one entry per claim with optional hints, requirements and a patch.
Its rules are spec/building.md §13.1 ("claims-file").
"""

from __future__ import annotations

from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import Field, field_validator, model_validator

from ._base import Identifier, RelPath, SpecModel
from .artifact import Paper

__all__ = ["CLAIMS_VERSION", "AuthorPatch", "Claim", "ClaimHints", "Claims"]

#: The claims-file version this SDK writes and reads.
CLAIMS_VERSION = "1.0"


class ClaimHints(SpecModel):
    """Optional hints that narrow the search for the command and the number."""

    command: str | None = Field(
        default=None,
        min_length=1,
        description="The command that prints the number, as the README or paper gives it.",
    )
    script: str | None = Field(
        default=None,
        min_length=1,
        description="The script (path relative to the repository root) that prints the number.",
    )
    dataset: str | None = Field(default=None, min_length=1, description="The dataset, in words.")
    label: str | None = Field(
        default=None,
        min_length=1,
        description="Text printed next to the number in the log, e.g. 'test accuracy'.",
    )
    seeds: list[int] = Field(
        default_factory=list, description="The seeds the paper's statistic is over, if known."
    )
    statistic: Literal["mean", "median", "min", "max", "std"] | None = Field(
        default=None,
        description=(
            "How the paper aggregates its seeds into the number (with two or more 'seeds'), "
            "e.g. 'mean' for the mean over seeds [0, 1, 2]."
        ),
    )
    tolerance: float | None = Field(
        default=None,
        ge=0,
        description="Relative tolerance the authors consider a match (e.g. 0.01 for 1%).",
    )


class Claim(SpecModel):
    """One number of the paper to reproduce."""

    id: Identifier = Field(description="Slug unique in the file; it becomes the task id.")
    measured: str = Field(min_length=1, description="What was measured, in words.")
    value: float | None = Field(default=None, description="The published value.")
    range: list[float] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="The published range [low, high]; counts as its midpoint.",
    )
    unit: str | None = Field(default=None, description="e.g. '%'.")
    direction: Literal["higher", "lower"] = Field(description="Which way is better.")
    location: str | None = Field(
        default=None, description="Where the number is in the paper, e.g. 'Table 2, row 3'."
    )
    hints: ClaimHints = Field(default_factory=ClaimHints)

    @model_validator(mode="after")
    def _one_value(self) -> Claim:
        if (self.value is None) == (self.range is None):
            msg = "a claim needs exactly one of 'value' and 'range'"
            raise ValueError(msg)
        if self.range is not None and self.range[0] > self.range[1]:
            msg = "'range' must be [low, high]"
            raise ValueError(msg)
        return self

    @property
    def target(self) -> float:
        """The published value, or the midpoint of the published range."""
        if self.value is not None:
            return self.value
        assert self.range is not None
        return (self.range[0] + self.range[1]) / 2


class AuthorPatch(SpecModel):
    """A change the author asks the build to make to the code first (a recorded patch)."""

    path: RelPath = Field(
        description="A unified diff (as 'git diff' writes it), relative to the claims file.",
    )
    kind: Literal["execution-fix", "correctness-fix", "convenience"] = Field(
        default="execution-fix", description="Its kind in the change record."
    )
    why: str = Field(min_length=1, description="Why the code needs it (the change's rationale).")


class Claims(SpecModel):
    """A claims file: the paper and its claims."""

    claims_version: str = Field(
        pattern=r"^1\.[0-9]+$",
        description="Claims-file version 'MAJOR.MINOR'; this schema is major 1.",
    )
    paper: Paper
    requirements: list[str] = Field(
        default_factory=list,
        description=(
            "Requirement lines (PEP 508) the build uses before the repository's own: one "
            "replaces the repository's line for the same distribution, e.g. 'numpy<1.24'."
        ),
    )
    patch: AuthorPatch | None = Field(
        default=None,
        description="A patch the build applies to the code before anything else, recorded "
        "as the first change of the artifact, so that nobody has to fork a repository.",
    )
    claims: list[Claim] = Field(min_length=1)

    @field_validator("requirements")
    @classmethod
    def _requirements(cls, lines: list[str]) -> list[str]:
        for line in lines:
            try:
                requirement = Requirement(line)
            except InvalidRequirement as exc:
                msg = f"{line!r} is not a requirement: {exc}"
                raise ValueError(msg) from None
            if requirement.url:
                msg = f"{line!r} is a URL requirement; name a distribution of the index"
                raise ValueError(msg)
        return lines

    @field_validator("claims")
    @classmethod
    def _unique_ids(cls, claims: list[Claim]) -> list[Claim]:
        seen: set[str] = set()
        for claim in claims:
            if claim.id in seen:
                msg = f"claim id {claim.id!r} appears twice"
                raise ValueError(msg)
            seen.add(claim.id)
        return claims
