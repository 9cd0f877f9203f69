"""The ``guide`` part: narrative guide and its structured records (spec §6.10)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Identifier, RelPath, SpecModel

__all__ = ["Ambiguity", "Change", "Discrepancy", "Guide", "OpenChoice", "Pitfall"]


class Ambiguity(SpecModel):
    """A gap in the paper or code and the resolution the artifact adopts."""

    id: Identifier
    source: str = Field(min_length=1, description="Where the gap is, e.g. 'paper §4.2'.")
    gap: str = Field(min_length=1)
    resolution: str = Field(min_length=1)
    sensitivity: Literal["low", "medium", "high", "unknown"] = "unknown"
    tasks: list[Identifier] = Field(default_factory=list)


class Change(SpecModel):
    """One entry of the change record: what was changed in the code and why."""

    id: Identifier
    kind: Literal["execution-fix", "correctness-fix", "convenience"]
    summary: str = Field(min_length=1)
    rationale: str = Field(min_length=1)
    files: list[RelPath] = Field(default_factory=list)
    patch: RelPath | None = None
    tasks: list[Identifier] = Field(default_factory=list)


class Discrepancy(SpecModel):
    """Where paper and code disagree; the paper's setup is followed unless stated."""

    id: Identifier
    paper: str = Field(min_length=1, description="What the paper says.")
    code: str = Field(min_length=1, description="What the code does.")
    followed: Literal["paper", "code"] = "paper"
    rationale: str | None = None
    tasks: list[Identifier] = Field(default_factory=list)


class Pitfall(SpecModel):
    """A trap a reproducer is likely to fall into."""

    id: Identifier
    summary: str = Field(min_length=1)
    remedy: str | None = None
    tasks: list[Identifier] = Field(default_factory=list)


class OpenChoice(SpecModel):
    """A choice left to the reproducer."""

    id: Identifier
    question: str = Field(min_length=1)
    options: list[str] = Field(default_factory=list)
    default: str | None = None
    tasks: list[Identifier] = Field(default_factory=list)


class Guide(SpecModel):
    """The reproduction guide."""

    path: RelPath = Field(default="GUIDE.md")
    ambiguities: list[Ambiguity] = Field(default_factory=list)
    changes: list[Change] = Field(default_factory=list)
    discrepancies: list[Discrepancy] = Field(default_factory=list)
    pitfalls: list[Pitfall] = Field(default_factory=list)
    open_choices: list[OpenChoice] = Field(default_factory=list)
