"""Value-span rewriting of YAML text: change scalar values without re-emitting the document.

Why not a library: ruamel's round-trip dump re-emits the whole document and may reflow it;
replacing only the spans PyYAML's composer reports keeps every other byte as written.
``yamlio`` tries this before its round-trip tree.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import yaml

from .document import Document, load_document

__all__ = ["edit_scalars", "same"]


def same(old: Any, new: Any) -> bool:
    """Equality of plain values where 1 == 1.0 but True != 1 and NaN == NaN."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if isinstance(old, int | float) and isinstance(new, int | float):
        if isinstance(old, float) and isinstance(new, float) and math.isnan(old):
            return math.isnan(new)
        return old == new
    if isinstance(old, dict) and isinstance(new, Mapping):
        return old.keys() == new.keys() and all(same(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list | tuple):
        return len(old) == len(new) and all(same(a, b) for a, b in zip(old, new, strict=True))
    return type(old) is type(new) and old == new


# A string written plain in place of a plain scalar: no indicator first, no ": " or " #", no
# trailing space or colon; in flow collections also no ",[]{}". Read back is checked anyway.
_PLAIN_BLOCK = re.compile(r"^(?![-?:,\[\]{}#&*!|>'\"%@`\s])(?!.*(?:: | #|[\s:]$)).+$")
_PLAIN_FLOW = re.compile(r"^[^,\[\]{}]*$")


def _scalar_changes(
    old: Any, new: Any, path: tuple[str | int, ...], out: list[tuple[tuple[str | int, ...], Any]]
) -> bool:
    """Collect the scalar values that differ; False if the shapes differ (keys, lengths)."""
    if isinstance(old, dict) and isinstance(new, Mapping):
        if list(old) != list(new):
            return False
        return all(_scalar_changes(old[key], new[key], (*path, key), out) for key in old)
    if isinstance(old, list) and isinstance(new, list | tuple):
        if len(old) != len(new):
            return False
        return all(
            _scalar_changes(item, other, (*path, index), out)
            for index, (item, other) in enumerate(zip(old, new, strict=True))
        )
    if isinstance(old, dict | list) or isinstance(new, Mapping | list | tuple):
        return False
    if not same(old, new):
        out.append((path, new))
    return True


def _scalar_text(value: Any, style: str | None, *, flow: bool = False) -> str | None:
    """How to write ``value`` in place of a one-line scalar of ``style``; None if unsure."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if not isinstance(value, str) or not value.isprintable():
        return None
    if style == '"':
        return json.dumps(value, ensure_ascii=False)
    plain = _PLAIN_BLOCK.match(value) and (not flow or _PLAIN_FLOW.match(value))
    if style is None and plain:
        return value  # read back is checked: a value that resolves to a non-string falls back
    return "'" + value.replace("'", "''") + "'"


def edit_scalars(text: str, data: Any, new_data: Any, *, name: str) -> tuple[str, Document] | None:
    """``text`` with its scalar values changed from ``data`` to ``new_data``; None if unsure.

    ``data`` is what ``text`` reads as. Nothing but the changed scalars is touched, and the
    result must read back to exactly ``new_data``; anything else (new keys, other shapes,
    aliases, block scalars, a value whose spelling is unsure) gives None. Returns the new text
    and its validator's view.
    """
    changes: list[tuple[tuple[str | int, ...], Any]] = []
    if not _scalar_changes(data, new_data, (), changes) or not changes:
        return None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:  # pragma: no cover - the text was read once already
        return None
    edits: list[tuple[int, int, str]] = []
    for path, value in changes:
        node, flow = root, False
        for part in path:
            flow = flow or bool(getattr(node, "flow_style", False))
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == part), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                node = node.value[part]
            else:
                return None
        if not isinstance(node, yaml.ScalarNode) or (node.style or None) not in (None, "'", '"'):
            return None
        start, end = node.start_mark.index, node.end_mark.index
        if "\n" in text[start:end] or text[start:end].startswith(("&", "!", "*")):
            return None
        replacement = _scalar_text(value, node.style or None, flow=flow)  # "" is plain
        if replacement is None:
            return None
        edits.append((start, end, replacement))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    check = load_document(text.encode("utf-8"), name=name)
    if check.fatal or check.findings or not same(check.data, new_data):
        return None
    return text, check
