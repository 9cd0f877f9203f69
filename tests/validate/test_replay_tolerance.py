"""Sample replay has one owner (``validation/replay.py``): the author's check
(:func:`reprobridge_sdk.run.replay.check_samples`) and the validator's X003 replay a sample
the same way and compare with the same tolerance, so they agree on every value, the edges
of the tolerance included (spec "extraction", replay: equal when
``|a - b| <= max(1e-9 * max(|a|, |b|), 1e-12)``)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk import validate
from reprobridge_sdk.run import check_samples
from tests.toy_study import make_artifact

PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
OWNER = "validation/replay.py"
WHERE = "/launchers/1/samples/0/expected/acc"


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    extract = {"kind": "regex", "pattern": r"test accuracy: (\S+)"}
    return make_artifact(tmp_path_factory.mktemp("toy") / "art", sample=True, acc_extract=extract)


def _spec_equal(a: float, b: float) -> bool:
    """The spec's rule, written out (not the SDK's function)."""
    return abs(a - b) <= max(1e-9 * max(abs(a), abs(b)), 1e-12)


def _both(root: Path, expected: float, value: float) -> tuple[bool, bool]:
    """(the author's check passes, validation reports no X003) for a sample log that prints
    ``value`` where ``expected`` is declared."""
    (root / "samples" / "log.txt").write_text(f"test accuracy: {value!r}\n", "utf-8")
    data = yaml.safe_load((root / "rra.yaml").read_text("utf-8"))
    data["launchers"][-1]["samples"][0]["expected"] = {"acc": expected}
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    (check,) = check_samples(root)
    assert check.error is None and check.value is not None
    assert check.value == value or math.isnan(value)
    x003 = [f for f in validate(root).findings if f.code == "X003" and f.path == WHERE]
    return check.ok, not x003


#: An expected value, and a value off it by about the relative tolerance (``ratio`` of it).
_RELATIVE = st.tuples(
    st.floats(min_value=1e-3, max_value=1e12) | st.floats(min_value=-1e12, max_value=-1e-3),
    st.floats(min_value=0.5, max_value=1.5),
    st.sampled_from([-1.0, 1.0]),
)
#: Near zero, where the absolute tolerance decides.
_ABSOLUTE = st.tuples(st.just(0.0), st.floats(min_value=-3e-12, max_value=3e-12))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_RELATIVE)
def test_the_check_and_x003_agree_at_the_relative_edge(
    toy: Path, case: tuple[float, float, float]
) -> None:
    expected, ratio, sign = case
    value = expected * (1 + sign * ratio * 1e-9)
    ok, clean = _both(toy, expected, value)
    assert ok == clean == _spec_equal(value, expected)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_ABSOLUTE)
def test_the_check_and_x003_agree_at_the_absolute_edge(
    toy: Path, case: tuple[float, float]
) -> None:
    expected, value = case
    ok, clean = _both(toy, expected, value)
    assert ok == clean == _spec_equal(value, expected)


def test_the_edges_themselves(toy: Path) -> None:
    """Just inside and just outside each tolerance, on both sides."""
    inside = [(100.0, 100.0 + 9.9e-8), (100.0, 100.0 - 9.9e-8), (0.0, 1e-12), (0.0, -1e-12)]
    outside = [(100.0, 100.0 + 1.01e-7), (100.0, 100.0 - 1.01e-7), (0.0, 1.01e-12)]
    for expected, value in inside:
        assert _both(toy, expected, value) == (True, True), (expected, value)
    for expected, value in outside:
        assert _both(toy, expected, value) == (False, False), (expected, value)


def test_a_sample_that_prints_nan_fails_both(toy: Path) -> None:
    """NaN equals only NaN, and a manifest cannot expect NaN: a ``nan`` printed fails both."""
    assert _both(toy, 1.0, math.nan) == (False, False)
    assert _both(toy, 0.0, math.nan) == (False, False)


def _compares(tree: ast.AST) -> list[int]:
    """Lines that compare floats with a tolerance of their own (``math.isclose``)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "isclose"
    ]


def test_only_the_owner_holds_a_tolerance() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel != OWNER and not rel.startswith("agent/"):
            found += [f"{rel}:{line}" for line in _compares(ast.parse(path.read_text("utf-8")))]
    assert found == [], "compare through reprobridge_sdk.validation.replay.same_value"
    assert _compares(ast.parse("import math\nmath.isclose(a, b)\n")) == [2]
