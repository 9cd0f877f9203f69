"""Forward compatibility: what a consumer makes of a document of a newer minor version
(spec ``manifest.md#forward-compatibility``).

One rule, one implementation: the structural layer reports it (S005, S006, V007) and
:func:`reprobridge_sdk.api.load` applies it, both from :func:`forward_view`. The items that
an unknown value sets aside are :data:`CARRIERS`. The view is computed on plain data and
never raises: what it cannot read it leaves to the structural layer.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from reprobridge_sdk.io.pointer import pointer_of, resolve, tokens_of

from ._engine import SchemaError

__all__ = ["CARRIERS", "ForwardView", "carrier", "forward_kind", "forward_view"]

#: The list items an unknown enumeration value sets aside, nearest first.
CARRIERS = (
    re.compile(r"^/launchers/[0-9]+/measurements/[0-9]+(?=/|$)"),
    re.compile(r"^/launchers/[0-9]+(?=/|$)"),
    re.compile(r"^/tasks/[0-9]+(?=/|$)"),
    re.compile(r"^/environment/data/[0-9]+(?=/|$)"),
    re.compile(r"^/guide/(ambiguities|changes|discrepancies|pitfalls|open_choices)/[0-9]+(?=/|$)"),
)


def carrier(pointer: str) -> str | None:
    """The pointer of the element an unknown value at ``pointer`` sets aside, or None."""
    for pattern in CARRIERS:
        match = pattern.match(pointer)
        if match is not None:
            return match.group(0)
    return None


def forward_kind(error: SchemaError) -> str | None:
    """``"S005"`` or ``"S006"`` when a newer minor version makes ``error`` a warning, else None."""
    if error.keyword == "additionalProperties" and error.key is not None:
        return "S005"
    if error.keyword in ("enum", "const") and error.allowed and carrier(error.pointer):
        return "S006"
    return None


@dataclass(frozen=True)
class ForwardView:
    """A consumer's view of a newer-minor document (see the module doc)."""

    #: The plain data a consumer uses: unknown keys dropped, set-aside elements removed.
    data: Any
    #: Pointers (into the document) of the keys ignored.
    ignored: tuple[str, ...] = ()
    #: Pointers (into the document) of the elements set aside, in document order.
    skipped: tuple[str, ...] = ()
    #: ``/tasks`` and/or ``/launchers`` when the skips left that list empty (V007).
    emptied: tuple[str, ...] = ()
    #: For each list that lost items (by its pointer in the document): the document index of
    #: each item the view keeps, in order.
    kept: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the view differs from the document."""
        return bool(self.ignored or self.skipped)

    def to_document(self, pointer: str) -> str:
        """The pointer into the document of ``pointer`` into the view (list indices shift
        where items were set aside). A pointer the view does not hold is returned as is."""
        if not self.kept or not pointer:
            return pointer
        out = ""
        for token in pointer.split("/")[1:]:
            indices = self.kept.get(out)
            if indices is not None and token.isdigit() and int(token) < len(indices):
                token = str(indices[int(token)])  # noqa: PLW2901 - the document's index
            out += "/" + token
        return out


def _items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _ident(item: dict[str, Any]) -> str | None:
    value = item.get("id")
    return value if isinstance(value, str) else None


def _strs(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def forward_view(data: Any, errors: list[SchemaError]) -> ForwardView:
    """The consumer's view of ``data`` given its errors against the newest schema."""
    ignored = sorted(
        {e.pointer for e in errors if forward_kind(e) == "S005"}, key=_order, reverse=True
    )
    carriers = {carrier(e.pointer) for e in errors if forward_kind(e) == "S006"}
    if not isinstance(data, dict) or not (ignored or carriers):
        return ForwardView(data=data)
    view = copy.deepcopy(data)
    for pointer in ignored:  # the last first, so a parent is still there
        tokens = tokens_of(pointer)
        parent = resolve(view, pointer_of(tokens[:-1]))
        if isinstance(parent, dict):
            parent.pop(tokens[-1], None)
    skip: set[str] = {c for c in carriers if c is not None}
    tasks = {_ident(t) for i, t in _items(view.get("tasks")) if f"/tasks/{i}" in skip} - {None}
    _skip_dependent_launchers(view, skip)
    _drop_task_references(view, skip, tasks)
    # an element inside another set-aside element goes with it
    skip = {p for p in skip if not any(p.startswith(o + "/") for o in skip)}
    kept = _kept_indices(view, skip)
    for pointer in sorted(skip, key=_order, reverse=True):  # the last index of a list first
        tokens = tokens_of(pointer)
        parent = resolve(view, pointer_of(tokens[:-1]))
        if isinstance(parent, list) and int(tokens[-1]) < len(parent):
            del parent[int(tokens[-1])]
    emptied = tuple(
        f"/{name}"
        for name in ("tasks", "launchers")
        if _items(data.get(name)) and isinstance(view.get(name), list) and not view[name]
    )
    return ForwardView(
        data=view,
        ignored=tuple(sorted(ignored, key=_order)),
        skipped=tuple(sorted(skip, key=_order)),
        emptied=emptied,
        kept=kept,
    )


def _skip_dependent_launchers(view: dict[str, Any], skip: set[str]) -> None:
    """Set aside, until nothing changes, the launchers that need a set-aside launcher or read
    a set-aside data item."""
    environment = view.get("environment")
    data_list = environment.get("data") if isinstance(environment, dict) else None
    gone_data = {_ident(d) for i, d in _items(data_list) if f"/environment/data/{i}" in skip}
    gone_data.discard(None)
    launchers = _items(view.get("launchers"))
    gone: set[str] = set()
    changed = True
    while changed:
        changed = False
        for index, launcher in launchers:
            where, ident = f"/launchers/{index}", _ident(launcher)
            if where in skip:
                if ident is not None and ident not in gone:
                    gone.add(ident)
                    changed = True
                continue
            needs, reads = _strs(launcher.get("needs")), _strs(launcher.get("data"))
            if any(n in gone for n in needs) or any(d in gone_data for d in reads):
                skip.add(where)
                changed = True


def _drop_task_references(view: dict[str, Any], skip: set[str], tasks: set[str | None]) -> None:
    """Set aside the measurements of set-aside tasks; drop them from samples and the guide."""
    for index, launcher in _items(view.get("launchers")):
        for m_index, measurement in _items(launcher.get("measurements")):
            if measurement.get("task") in tasks:
                skip.add(f"/launchers/{index}/measurements/{m_index}")
        for _, sample in _items(launcher.get("samples")):
            expected = sample.get("expected")
            if isinstance(expected, dict):
                for task in tasks & set(expected):
                    del expected[task]
    guide = view.get("guide")
    if not isinstance(guide, dict):
        return
    for name in ("ambiguities", "changes", "discrepancies", "pitfalls", "open_choices"):
        for _, record in _items(guide.get(name)):
            if isinstance(record.get("tasks"), list):
                record["tasks"] = [t for t in record["tasks"] if t not in tasks]


def _kept_indices(view: dict[str, Any], skip: set[str]) -> dict[str, tuple[int, ...]]:
    """For each list losing elements, the document's indices of those it keeps."""
    kept: dict[str, tuple[int, ...]] = {}
    for pointer in skip:
        parent_pointer = pointer.rsplit("/", 1)[0]
        parent = resolve(view, parent_pointer)
        if isinstance(parent, list) and parent_pointer not in kept:
            removed = {
                int(p.rsplit("/", 1)[1]) for p in skip if p.rsplit("/", 1)[0] == parent_pointer
            }
            kept[parent_pointer] = tuple(i for i in range(len(parent)) if i not in removed)
    return kept


def _order(pointer: str) -> tuple[tuple[int, int, str], ...]:
    """Document order of pointers (list indices as numbers)."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in tokens_of(pointer))
