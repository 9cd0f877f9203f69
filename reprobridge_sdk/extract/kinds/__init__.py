"""The built-in extractor kinds (spec §6.9): one module a kind, one table.

Every layer looks a kind up in :data:`KINDS`; ``tests/extraction/test_kinds.py`` fails when a
layer does not know one.
"""

from __future__ import annotations

from collections.abc import Mapping

from reprobridge_sdk.extract._errors import REASONS, Reason

from . import csv, json, regex, yaml
from ._base import Check, Extracted, Kind, Request

__all__ = ["KINDS", "Check", "Extracted", "Kind", "Request", "reasons"]

#: Every built-in extractor kind by name; a new kind is one module and one entry.
KINDS: Mapping[str, Kind] = {
    kind.name: kind for kind in (regex.KIND, json.KIND, csv.KIND, yaml.KIND)
}


def reasons() -> dict[str, Reason]:
    """Every reason an extraction may fail with: the common ones and each kind's."""
    found = dict(REASONS)
    for kind in KINDS.values():
        found.update((reason.name, reason) for reason in kind.reasons)
    return found
