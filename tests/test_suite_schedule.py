"""The order in which pytest-xdist hands out the suite's files (``suite_schedule``)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from suite_schedule import (
    SPLIT_BY_PARAMETER,
    WEIGHTS,
    heaviest_to_front,
    scope,
    weight,
)

REPO = Path(__file__).resolve().parent.parent
E2E = "tests/agent/test_build_e2e.py"


def test_every_named_file_exists() -> None:
    """A renamed file would silently lose its place at the front."""
    assert (
        sorted(name for name in {*WEIGHTS, *SPLIT_BY_PARAMETER} if not (REPO / name).is_file())
        == []
    )


def test_the_tests_of_one_fixture_are_one_unit_and_other_files_are_whole() -> None:
    assert scope(f"{E2E}::test_every_fixture[seed-flag]") == f"{E2E}[seed-flag]"
    assert scope(f"{E2E}::test_a_seed_option[seed-flag]") == f"{E2E}[seed-flag]"
    assert scope(f"{E2E}::test_every_fixture[python2]") == f"{E2E}[python2]"
    # a parameter that holds brackets or "::" stays whole
    assert scope(f"{E2E}::test_x[a]b::c]") == f"{E2E}[a]b::c]"
    assert scope("tests/run/test_x.py::test_a[x]") == "tests/run/test_x.py"
    assert scope("tests/run/test_x.py::Class::test_a") == "tests/run/test_x.py"
    assert weight(f"{E2E}[python2]") == WEIGHTS[E2E]
    assert weight("tests/yamlio/test_roundtrip.py") == 0.0  # not named: xdist's own place


def test_the_heaviest_units_go_first_and_the_others_keep_their_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("suite_schedule.WEIGHTS", {"b.py": 10.0, "d.py": 50.0, E2E: 20.0})
    units = ["a.py", "b.py", "c.py", f"{E2E}[x]", "d.py", f"{E2E}[y]", "e.py"]
    queue: OrderedDict[str, Any] = OrderedDict((unit, {}) for unit in units)
    handed = []
    while queue:  # what the scheduler does each time a worker needs a unit
        heaviest_to_front(queue)
        handed.append(queue.popitem(last=False)[0])
    assert handed == ["d.py", f"{E2E}[x]", f"{E2E}[y]", "b.py", "a.py", "c.py", "e.py"]
