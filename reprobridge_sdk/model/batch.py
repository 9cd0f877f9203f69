"""The batch file: a committee's list of submissions (spec/audit.md, "submissions").

One TOML document read by ``reprobridge audit --table --submissions FILE`` and, as its suite,
by ``reprobridge bench run``. Its paths are relative to the file's folder; the reader, not
this model, refuses one that leaves it (A092).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Identifier, OptionalInteger, Sha256, SpecModel
from .launcher import MEMORY_PATTERN

__all__ = ["BATCH_VERSION", "BatchDefaults", "BatchFile", "Budget", "Submission", "TrustPolicy"]

BATCH_VERSION = "1.0"


class TrustPolicy(SpecModel):
    """Which runs of a submission count as trusted evidence."""

    unsigned: bool = Field(
        default=False,
        description="true: runs need no signature (a policy outcome, not an evidence alarm); "
        "the ledger is still checked.",
    )
    keys: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="The KEYS file whose keys may sign the runs, relative to the batch file's "
        "folder (required unless unsigned is true).",
    )
    signers: list[str] = Field(
        default_factory=list,
        description="Only these signers of the KEYS file (names or key ids); empty: any key of it.",
    )


class Budget(SpecModel):
    """What the committee grants one submission, recorded and shown; ``time``, ``memory`` and
    ``cpus`` bound the re-execution of the submission's runs (A094), ``gpus`` is recorded
    only (spec audit.md#submissions)."""

    time: float | None = Field(
        default=None, gt=0, description="Wall-clock seconds of each attempt's re-execution."
    )
    cpus: OptionalInteger = Field(
        default=None, ge=1, le=4096, description="CPU cores each re-executed run may use."
    )
    gpus: OptionalInteger = Field(
        default=None, ge=0, le=1024, description="GPUs: recorded and shown, not enforced."
    )
    memory: str | None = Field(
        default=None,
        pattern=MEMORY_PATTERN,
        description="Memory with a unit, e.g. '16GiB': the address space of each process of "
        "a re-executed run.",
        examples=["16GiB"],
    )
    cost: float | None = Field(
        default=None,
        ge=0,
        description="bench: the cost an agent may report for one run before it is stopped "
        "(in the currency it reports); the audit records it only.",
    )


class BatchDefaults(SpecModel):
    """What a submission that does not say otherwise gets."""

    trust: TrustPolicy | None = Field(
        default=None,
        description="The trust policy of a submission that states none; absent: the ledger "
        "is checked, signatures only under --trust.",
    )
    budget: Budget | None = Field(default=None, description="The budget of each submission.")
    reviewers: list[str] = Field(default_factory=list, description="Reviewers of each.")


class Submission(SpecModel):
    """One artifact of the batch."""

    id: Identifier = Field(description="Unique in the file: names the submission's row.")
    path: str = Field(
        min_length=1,
        max_length=4096,
        description="The artifact's folder, its rra.yaml or its packed archive, relative to "
        "the batch file's folder.",
    )
    archive_sha256: Sha256 | None = Field(
        default=None,
        description="The SHA-256 of the archive's uncompressed tar stream, as the committee "
        "recorded it (reprobridge pack prints it); a mismatch is A093.",
    )
    expect_head: str | None = Field(
        default=None,
        min_length=1,
        description="The run ledger head the authors submitted (audit --expect-head).",
    )
    trust: TrustPolicy | None = Field(
        default=None, description="Its trust policy (replaces the default one whole)."
    )
    reviewers: list[str] | None = Field(
        default=None, description="Who reviews it; null: the defaults' reviewers."
    )
    budget: Budget | None = Field(
        default=None, description="Its budget (replaces the default one whole)."
    )
    tasks: list[str] | None = Field(
        default=None,
        description="bench: only these tasks (claims) of the artifact; null: every task.",
    )
    notes: str | None = Field(default=None, description="The committee's notes, shown.")
    decision: Literal["accept", "reject", "pending"] = Field(
        default="pending", description="The committee's decision."
    )


class BatchFile(SpecModel):
    """A batch of submissions (``reprobridge audit --table --submissions``)."""

    batch_version: Literal["1.0"] = Field(
        default="1.0", description="The batch file format version."
    )
    defaults: BatchDefaults = Field(
        default_factory=BatchDefaults, description="What a submission that does not say gets."
    )
    submission: list[Submission] = Field(
        default_factory=list, description="One [[submission]] table per artifact."
    )
