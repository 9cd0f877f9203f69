"""Hypothesis strategies shared by the validator's tests: JSON-like values and mutated manifests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from reprobridge_sdk.io.document import load_document

REPO = Path(__file__).resolve().parents[2]
MINIMAL = load_document(REPO / "tests/validate/vectors/valid-minimal/rra.yaml").data
EXAMPLE = load_document(REPO / "examples/digits-logreg/rra.yaml").data

values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-5, max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=True),
        st.sampled_from([0, 1, 1.0, 2.5, -1, 0.0, 100, 1900, 2101, 10**400, -(10**400)]),
        st.sampled_from(
            [
                "",
                "x",
                "regex",
                "json",
                "csv",
                "yaml",
                "full",
                "scored",
                "smoke",
                "higher",
                "directory",
                "patches",
                "/abs/path",
                "rel/path",
                "1.0",
                "2.0",
                "3.11",
                "x-ext",
                "Upper",
                "0123456789abcdef0123456789abcdef01234567",
                "sha256-tree1:" + "0" * 64,
                "a" * 70,
            ]
        ),
        st.text(max_size=6),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.one_of(st.sampled_from(["id", "kind", "path", "x-a", "value"]), st.text(max_size=4)),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)


def _pointers(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_pointers(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_pointers(item, (*prefix, index)))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    data = copy.deepcopy(draw(st.sampled_from([MINIMAL, EXAMPLE])))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        pointers = _pointers(data)
        where = draw(st.sampled_from(pointers))
        if not where:
            if draw(st.integers(0, 20)) == 0:
                return draw(values)
            continue
        parent = data
        for token in where[:-1]:
            parent = parent[token]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        last = where[-1]
        if action == "replace":
            parent[last] = draw(values)
        elif action == "delete":
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(values)
        else:
            parent.append(draw(values))
    return data
