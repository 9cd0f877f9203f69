"""The independent auditor: intervals, evidence verification, verdicts and reports.

Layer 5 of the SDK. It reads files only (the artifact and the run directories of one or more
attempts) and shares no state with the runner; :func:`audit` is a pure function of those files
and its options.
"""

from __future__ import annotations

from .auditor import audit, load_artifact
from .interval import Interval, Score, compatibility_interval, holm, score
from .table import audit_table

__all__ = [
    "Interval",
    "Score",
    "audit",
    "audit_table",
    "compatibility_interval",
    "holm",
    "load_artifact",
    "score",
]
