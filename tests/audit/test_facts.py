"""The auditor's condensed manifest (``audit.facts``) means what the typed manifest means.

Laws, over every conformance case and spec example, over generated tasks, and over a newer
minor version's document read by the forward-compatibility rule:

* ``ManifestFacts.validate(data)`` accepts exactly the documents ``load`` types;
* when both accept, it equals ``ManifestFacts.of`` of the typed manifest (a projection of
  the same models: defaults included);
* it types one task at a time: a condensed task's typed model is released before the next
  is typed (the memory of a 10k-task audit does not hold 10k typed tasks);
* a manifest that fails only in its last task stops the audit with the located finding, as
  before.
"""

from __future__ import annotations

import copy
import functools
import gc
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from reprobridge_sdk.api import consumer_view
from reprobridge_sdk.audit import audit, load_artifact
from reprobridge_sdk.audit import facts as facts_module
from reprobridge_sdk.audit.facts import ManifestFacts, TaskFacts
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.model import Manifest, Task

REPO = Path(__file__).resolve().parents[2]


def _plain(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
        return None


@functools.cache
def _case(path: Path) -> Any:
    """A case's or an example's data, read once (the cases at the size limit take seconds)."""
    return _plain(path)


#: Every case and example whose text reads as a mapping (the others never reach a typing).
DOCUMENTS = [
    path
    for path in sorted(
        [
            *(REPO / "validators" / "cases").glob("*/rra.yaml"),
            *(REPO / "spec" / "examples").glob("*/rra.yaml"),
        ]
    )
    if isinstance(_case(path), dict)
]


def _typed(data: Any) -> Manifest:
    """The typed manifest a consumer reads, strictly, as :func:`reprobridge_sdk.load` does."""
    return Manifest.model_validate(consumer_view(data)[0], strict=True)


def _both(data: Any) -> tuple[ManifestFacts | None, ManifestFacts | None]:
    """(condensed while typed, condensed after typing); None where the reading refuses."""
    try:
        typed: ManifestFacts | None = ManifestFacts.of(_typed(data))
    except (ValidationError, ValueError, TypeError):
        typed = None
    try:
        view, _ = consumer_view(data)
        condensed: ManifestFacts | None = ManifestFacts.validate(view)
    except (ValidationError, ValueError, TypeError):
        condensed = None
    return condensed, typed


@functools.cache
def _both_of(path: Path) -> tuple[ManifestFacts | None, ManifestFacts | None]:
    """:func:`_both` of a case or an example, once per document: two tests ask it of each."""
    return _both(copy.deepcopy(_case(path)))


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_accepted_and_read_as_the_typed_manifest_on_every_case(path: Path) -> None:
    condensed, typed = _both_of(path)
    assert condensed == typed


def test_the_cases_include_accepted_and_refused_documents() -> None:
    outcomes = {_both_of(path)[1] is not None for path in DOCUMENTS}
    assert outcomes == {True, False}


MINIMAL = REPO / "spec" / "examples" / "minimal-valid" / "rra.yaml"

provenance = st.fixed_dictionaries(
    {"source": st.sampled_from(["ref", "lab"])},
    optional={
        "run": st.sampled_from(["r1", "r2", ""]),
        "runs": st.lists(
            st.fixed_dictionaries(
                {"run": st.sampled_from(["a", "b"]), "record_sha256": st.just("0" * 64)}
            ),
            max_size=2,
        ),
        "note": st.text(max_size=3),
    },
)
numbers = st.floats(allow_nan=False, allow_infinity=False, width=64)
tasks = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["t1", "t-2", "T3"]),
        "dataset": st.sampled_from(["d", ""]),
        "metric": st.just("m"),
        "published": st.fixed_dictionaries(
            {},
            optional={
                "value": numbers | st.integers(-5, 5),
                "range": st.lists(numbers, min_size=1, max_size=3),
            },
        ),
        "direction": st.sampled_from(["higher", "lower", "sideways"]),
        "kind": st.sampled_from(["full", "evaluation"]),
    },
    optional={
        "title": st.none() | st.text(max_size=4),
        "statistic": st.fixed_dictionaries(
            {}, optional={"seeds": st.integers(0, 4), "aggregate": st.sampled_from(["mean"])}
        ),
        "reference": st.fixed_dictionaries(
            {},
            optional={
                "observations": st.lists(
                    st.fixed_dictionaries(
                        {"value": numbers | st.integers(-3, 3) | st.just("1.0")},
                        optional={"provenance": provenance},
                    ),
                    max_size=4,
                )
            },
        ),
        "x-note": st.integers(),
        "unknown": st.integers(),
    },
)


@settings(max_examples=150)
@given(generated=st.lists(tasks, min_size=0, max_size=3))
def test_generated_tasks_are_accepted_and_read_as_typed(generated: list[dict[str, Any]]) -> None:
    data = copy.deepcopy(_case(MINIMAL))
    data["tasks"] = generated
    condensed, typed = _both(data)
    assert condensed == typed


def test_a_range_counts_as_its_midpoint_and_missing_parts_take_the_models_defaults() -> None:
    task = Task.model_validate(
        {
            "id": "t",
            "dataset": "d",
            "metric": "m",
            "published": {"range": [1.0, 2.0]},
            "direction": "lower",
            "kind": "evaluation",
        }
    )
    facts = TaskFacts.of(task)
    assert (facts.published, facts.seeds, facts.observations, facts.cited, facts.title) == (
        1.5,
        1,
        (),
        (),
        None,
    )


def test_one_typed_task_is_alive_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _plain(MINIMAL)
    data["tasks"] = [{**copy.deepcopy(data["tasks"][0]), "id": f"t{i}"} for i in range(12)]
    for launcher in data["launchers"]:
        launcher["measurements"] = launcher["measurements"][:1]
    alive: list[int] = []
    condense = TaskFacts.of
    gc.collect()
    # Tasks other tests of the session still hold (a cached manifest) are not this one's
    before = sum(isinstance(o, Task) for o in gc.get_objects())

    def counting(task: Task) -> TaskFacts:
        alive.append(sum(isinstance(o, Task) for o in gc.get_objects()) - before)
        return condense(task)

    monkeypatch.setattr(TaskFacts, "of", counting)
    facts_module._condensing_manifest.cache_clear()
    try:
        result = ManifestFacts.validate(data)
    finally:
        facts_module._condensing_manifest.cache_clear()
    assert [t.id for t in result.tasks] == [f"t{i}" for i in range(12)]
    assert len(alive) == 12 and max(alive) == 1


def test_a_manifest_wrong_in_its_last_task_stops_the_audit_where_it_is_wrong(
    tmp_path: Path,
) -> None:
    root = tmp_path / "a"
    shutil.copytree(MINIMAL.parent, root)
    data = _plain(root / "rra.yaml")
    last = copy.deepcopy(data["tasks"][0])
    data["tasks"] += [{**copy.deepcopy(last), "id": f"extra{i}"} for i in range(50)]
    data["tasks"][-1]["direction"] = "sideways"
    (root / "rra.yaml").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError) as info:
        load_artifact(root)
    assert f"/tasks/{len(data['tasks']) - 1}/direction" in [f.path for f in info.value.findings]
    with pytest.raises(ArtifactError):
        audit(root)
