"""Predicates of the in-toto statements that sign evidence (spec ``signatures``).

A signed run record, audit or clean-room check record is an in-toto Statement v1 in a DSSE
envelope. These models are the statement and its three predicates; their JSON Schemas are
generated into ``schemas/``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Identifier, Sha256, SpecModel

__all__ = [
    "AUDIT_PREDICATE",
    "CHECK_PREDICATE",
    "RUN_PREDICATE",
    "STATEMENT_TYPE",
    "AuditPredicate",
    "CheckPredicate",
    "LedgerLink",
    "RunPredicate",
    "Statement",
    "Subject",
]

#: The in-toto statement type.
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
#: The predicate type of a signed run record.
RUN_PREDICATE = "https://reprobridge.org/predicates/rra-run/v1"
#: The predicate type of a signed audit report.
AUDIT_PREDICATE = "https://reprobridge.org/predicates/rra-audit/v1"
#: The predicate type of a signed clean-room check record (``runs/check.json``).
CHECK_PREDICATE = "https://reprobridge.org/predicates/rra-check/v1"


class Subject(SpecModel):
    """A file the statement is about: its path and SHA-256."""

    name: str = Field(min_length=1, description="Path relative to the run directory or artifact.")
    digest: dict[Literal["sha256"], Sha256]


class LedgerLink(SpecModel):
    """The run's entry in the runs directory's ledger when it was signed."""

    seq: int = Field(ge=1)
    entry: Sha256 = Field(description="The hash of the run's ledger entry: the head after it.")


class RunPredicate(SpecModel):
    """What the runner vouches for about one finished run (the record is a subject)."""

    artifact: Identifier
    run_id: str = Field(min_length=1)
    launcher: Identifier
    seed: int | None = None
    scope: Literal["smoke", "scored"]
    status: Literal["succeeded", "failed", "interrupted"]
    code_tree_digest: str | None = None
    lock_digest: Sha256 | None = None
    measurements: dict[str, float | None] = Field(
        default_factory=dict, description="Task id -> the recorded value."
    )
    ledger: LedgerLink | None = None


class AuditPredicate(SpecModel):
    """An audit report as signed by the auditor (the manifests are subjects)."""

    passed: bool
    report: dict[str, object] = Field(
        description="The JSON report (schema audit-1.0 or audit-table-1.0)."
    )


class CheckPredicate(SpecModel):
    """A clean-room check's record as signed by whoever ran the check (the record is the
    subject)."""

    passed: bool
    record: dict[str, object] = Field(
        description="The check record, runs/check.json (spec authoring.md#check-record)."
    )


class Statement(SpecModel):
    """An in-toto Statement v1 with one of the RRA predicates."""

    type_: Literal["https://in-toto.io/Statement/v1"] = Field(alias="_type")
    subject: list[Subject] = Field(min_length=1)
    predicateType: Literal[
        "https://reprobridge.org/predicates/rra-run/v1",
        "https://reprobridge.org/predicates/rra-audit/v1",
        "https://reprobridge.org/predicates/rra-check/v1",
    ]
    predicate: RunPredicate | AuditPredicate | CheckPredicate
