"""A manifest's plain data walked whatever its types: what is not a mapping, or a list of
mappings, is skipped here (its type is the structural layer's finding)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def mappings(value: Any, pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(pointer, mapping)`` for each mapping in the list ``value`` at ``pointer``."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield f"{pointer}/{index}", item
