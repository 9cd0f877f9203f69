"""Builder: optional requirements that do not resolve are left out one at a time."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from reprobridge_sdk.agent._optional_search import leave_out, named_in
from reprobridge_sdk.agent.builder import build_environment, relaxation_decision, resolve_steps
from reprobridge_sdk.model.build import (
    BuilderRecord,
    Gate,
    IntakeRecord,
    PlanRecord,
    PythonEra,
    ReachedImport,
)

ZERO = "0" * 64
MISSING = "reprobridge-no-such-distribution-xyz"
MISSING_TOO = "reprobridge-no-such-distribution-abc"


class _Index:
    """A resolver of a fixed world: the requirements in ``broken`` resolve with nothing; it
    counts resolutions and says nothing useful in its errors (the bisection's case)."""

    def __init__(self, broken: set[str], error: str = "No solution found") -> None:
        self.broken = broken
        self.error = error
        self.calls: list[tuple[list[str], bool]] = []

    def __call__(self, kept: list[str], dropped: list[str], probe: bool) -> str | None:
        self.calls.append((kept, probe))
        return self.error if self.broken & set(kept) else None


def test_the_resolvers_error_names_the_optional_requirement_in_any_spelling() -> None:
    error = (
        "  x No solution found when resolving dependencies:\n"
        "  `-> Because Reprobridge_No.Such-Distribution_XYZ was not found in the package "
        "registry and you require reprobridge-no-such-distribution-xyz>=1.0, we can "
        "conclude that your requirements are unsatisfiable."
    )
    assert named_in(error, ["matplotlib", MISSING, "six>=1"]) == [MISSING]
    # a name inside another word is no mention
    assert named_in("Because matplotlib-extra was not found", ["matplotlib"]) == []
    assert named_in("", ["matplotlib"]) == []


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_bisection_finds_the_one_that_fails_within_ceil_log2_n_plus_one(size: int) -> None:
    optional = [f"opt{i}" for i in range(size)]
    for culprit in optional:
        index = _Index({culprit})
        assert leave_out(optional, "No solution found", index) == [culprit]
        # ceil(log2 n) probes, then the resolution kept
        assert len(index.calls) <= math.ceil(math.log2(size)) + 1
        kept, probe = index.calls[-1]
        assert not probe
        assert kept == [o for o in optional if o != culprit]  # every other one kept


def test_a_named_one_costs_a_single_resolution() -> None:
    index = _Index({"b"})
    assert leave_out(["a", "b", "c", "d"], "Because b was not found", index) == ["b"]
    assert index.calls == [(["a", "c", "d"], False)]


def test_two_that_fail_are_both_left_out_and_the_rest_kept() -> None:
    optional = ["a", "b", "c", "d", "e", "f"]
    index = _Index({"b", "e"})
    assert sorted(leave_out(optional, "No solution found", index) or []) == ["b", "e"]
    assert index.calls[-1] == (["a", "c", "d", "f"], False)


def test_a_wrong_name_in_the_error_still_ends_at_the_one_that_fails() -> None:
    # the error names 'a', but 'c' is what does not resolve: dropping 'a' is not enough
    index = _Index({"c"}, error="Because a depends on something")
    dropped = leave_out(["a", "b", "c"], "Because a depends on something", index)
    assert dropped is not None and "c" in dropped
    assert index.calls[-1][0] == [o for o in ["a", "b", "c"] if o not in dropped]


def test_nothing_is_left_out_when_the_required_ones_alone_do_not_resolve() -> None:
    calls: list[list[str]] = []

    def never(kept: list[str], dropped: list[str], probe: bool) -> str | None:
        calls.append(kept)
        return "No solution found"

    assert leave_out(["a", "b", "c", "d"], "No solution found", never) is None
    assert len(calls) <= 4  # two probes, the candidate, the required ones alone: then stop


@pytest.mark.slow
def test_one_optional_requirement_no_index_has_keeps_the_others(tmp_path: Path) -> None:
    """A prerequisite step imports a package no index has and matplotlib: only the first is
    left out (a real resolution against the package index)."""
    steps, pins = resolve_steps(
        ["six", "matplotlib", MISSING],
        tmp_path,
        python="3.11",
        commit_date="2024-01-01T00:00:00+00:00",
        optional=["matplotlib", MISSING],
    )
    assert pins is not None
    names = {p.split("==")[0].lower() for p in pins}
    assert {"six", "matplotlib"} <= names
    assert MISSING not in names
    assert [(s.name, s.ok) for s in steps] == [("newest", False), ("optional-left-out", True)]
    assert MISSING in steps[-1].why and "matplotlib kept" in steps[-1].why
    record = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python="3.11",
        requirements=["six", "matplotlib", MISSING],
        steps=steps,
        pins=pins,
    )
    decision = relaxation_decision(record, ["t1"])
    assert decision is not None and "optional-left-out" in decision.resolution


@pytest.mark.slow
def test_two_optional_requirements_no_index_has_are_both_left_out(tmp_path: Path) -> None:
    steps, pins = resolve_steps(
        ["six", MISSING_TOO, "packaging", MISSING],
        tmp_path,
        python="3.11",
        commit_date="2024-01-01T00:00:00+00:00",
        optional=[MISSING_TOO, "packaging", MISSING],
    )
    assert pins is not None
    names = {p.split("==")[0].lower() for p in pins}
    assert {"six", "packaging"} <= names
    assert not {MISSING, MISSING_TOO} & names
    # newest, then per missing one: at most log2(3) + 1 resolutions, plus one check that
    # the required ones resolve alone
    assert len(steps) <= 1 + 2 * 2 + 1
    assert steps[-1].ok and steps[-1].name == "optional-left-out"


@pytest.mark.slow
def test_the_gate_warns_b023_for_the_one_left_out_and_imports_the_others(
    tmp_path: Path, env_cache: Path
) -> None:
    intake = IntakeRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        source="repo",
        repo_name="repo",
        commit="a" * 40,
        python=PythonEra(syntax="3", commit_date="2024-01-01T00:00:00+00:00", target="3.11"),
    )
    prerequisite = "a prerequisite step's closure"
    planned = PlanRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        imports=[
            ReachedImport(module="six", files=["train.py"]),
            ReachedImport(
                module="reprobridge_no_such_distribution_xyz",
                files=["prep.py"],
                optional=prerequisite,
            ),
            ReachedImport(module="packaging", files=["prep.py"], optional=prerequisite),
        ],
    )
    record = build_environment(
        intake, tmp_path, inputs_digest=ZERO, plan=planned, cache_dir=env_cache
    )
    assert record.gate.passed, record.gate.findings
    [warning] = record.gate.findings
    assert warning.code == "B023" and "reprobridge_no_such_distribution_xyz" in warning.message
    assert record.imports_checked == ["six", "packaging"]
    assert [(s.name, s.ok) for s in record.steps] == [
        ("newest", False),
        ("optional-left-out", True),
    ]
