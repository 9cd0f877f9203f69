"""Implausible references are findings (spec audit.md#plausible-references), and curation
never passes a scaffold with placeholders. Real artifacts, real runs of the toy study."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rerun_support import edit_manifest

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.plausibility import domain
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.model.audit import AuditResult


def _codes(result: AuditResult) -> list[str]:
    return [f.code for f in result.findings if f.code in {"A080", "A081", "A082", "A083"}]


def _references(values: list[float], **published: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        task = data["tasks"][0]
        task["published"] = published
        task["reference"]["observations"] = [
            {"value": v, "provenance": {"source": f"reference run {i}"}}
            for i, v in enumerate(values)
        ]

    return change


@pytest.mark.parametrize(
    ("unit", "metric", "expected"),
    [
        ("%", "accuracy", (0.0, 100.0)),
        (" Percent ", "accuracy", (0.0, 100.0)),
        ("fraction", "accuracy", (0.0, 1.0)),
        ("ratio", "speed-up", None),
        ("BLEU", "BLEU", None),
        (None, "mean squared error", (0.0, float("inf"))),
        (None, "RMSE", (0.0, float("inf"))),
        (None, "mean signed error", None),
        (None, "log error", None),
        (None, "accuracy (%)", None),
    ],
)
def test_the_domain_comes_from_the_unit_or_an_error_metric(
    unit: str | None, metric: str, expected: tuple[float, float] | None
) -> None:
    assert domain(unit, metric) == expected


def test_honest_references_raise_nothing(toy: Path) -> None:
    edit_manifest(toy, _references([90.0, 90.1, 90.2, 90.05, 90.15], value=90.1, unit="%"))
    result = audit(toy)
    assert _codes(result) == []
    assert result.passed


def test_references_near_the_bound_are_not_beyond_it(toy: Path) -> None:
    """99.9 % gives a floor of about 1 point: the interval reaches 100.9, by the floor only."""
    edit_manifest(toy, _references([99.9, 99.9, 99.9], value=99.9, unit="%"))
    assert _codes(audit(toy)) == []


def test_hand_widened_references_of_a_percentage_are_flagged(toy: Path) -> None:
    """Like [72.8, 111.4] for a percentage: past 100 % (A081), wider than 25% of 92.1 (A082)."""
    widened = [85.0, 99.0, 92.0, 88.0, 98.0]  # every one possible, the spread is not
    edit_manifest(toy, _references(widened, value=92.1, unit="%"))
    result = audit(toy)
    assert set(_codes(result)) == {"A081", "A082"}
    assert result.tasks[0].interval.high is not None and result.tasks[0].interval.high > 100
    beyond = next(f for f in result.findings if f.code == "A081")
    assert beyond.severity == "warning" and beyond.path == "/tasks/0/reference"


def test_an_impossible_observation_is_an_error(toy: Path) -> None:
    edit_manifest(toy, _references([90.0, 90.1, 101.2], value=90.1, unit="%"))
    result = audit(toy)
    assert "A080" in _codes(result)
    found = next(f for f in result.findings if f.code == "A080")
    assert found.path == "/tasks/0/reference/observations/2/value"
    assert found.severity == "error"
    assert not result.passed  # an impossible reference fails the audit


def test_a_fraction_written_as_a_percentage_is_an_error(toy: Path) -> None:
    edit_manifest(toy, _references([90.0, 90.1, 90.2], value=90.1, unit="fraction"))
    result = audit(toy, curation=True)
    codes = _codes(result)
    assert codes.count("A080") == 4  # three observations and the published value
    assert not result.passed


def test_a_negative_error_is_an_error(toy: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        _references([0.2, -0.1, 0.3], value=0.2)(data)
        data["tasks"][0]["metric"] = "mean squared error"

    edit_manifest(toy, change)
    assert "A080" in _codes(audit(toy))


def test_a_reference_its_cited_run_does_not_give_is_an_error(toy: Path) -> None:
    record = json.loads((toy / "runs" / "scored-s0" / "record.json").read_text())
    run_id = record["run_id"]

    def change(data: dict[str, Any]) -> None:
        observations = data["tasks"][0]["reference"]["observations"]
        observations[0] = {"value": 90.3, "provenance": {"source": "lab", "run": run_id}}
        observations[1] = {"value": 90.0, "provenance": {"source": "lab", "run": "elsewhere-1"}}

    edit_manifest(toy, change)
    result = audit(toy)
    found = [f for f in result.findings if f.code == "A083"]
    assert len(found) == 1  # the run read by the audit; a run it does not read is not judged
    assert found[0].path == "/tasks/0/reference/observations/0/value"
    assert run_id in found[0].message and "90.0" in found[0].message
    assert not result.passed

    def honest(data: dict[str, Any]) -> None:
        data["tasks"][0]["reference"]["observations"][0]["value"] = 90.0

    edit_manifest(toy, honest)
    assert "A083" not in _codes(audit(toy))


def test_curation_never_passes_an_untouched_scaffold(tmp_path: Path) -> None:
    root = tmp_path / "scaffold"
    scaffold(root, InitOptions(id="untouched", title="Untouched"))
    result = audit(root, curation=True)
    # The scaffold's published values lie in its own invented references' intervals ...
    assert all(t.published_compatible for t in result.tasks)
    # ... yet its placeholders keep it from passing.
    assert "A046" in {f.code for f in result.findings}
    assert not result.passed


def test_a_repetition_is_compared_as_its_aggregate(toy: Path) -> None:
    """A repetition's runs (seeds 0-2: 90.0, 90.1, 90.2) give their mean, 90.1."""
    runs = []
    for seed in (0, 1, 2):
        record = toy / "runs" / f"scored-s{seed}" / "record.json"
        run_id = json.loads(record.read_text())["run_id"]
        runs.append({"run": run_id, "seed": seed, "record_sha256": file_sha256(record)})

    def cite(value: float) -> Any:
        def change(data: dict[str, Any]) -> None:
            data["tasks"][0]["reference"]["observations"][1] = {
                "value": value,
                "provenance": {"source": "lab", "runs": runs},
            }

        return change

    edit_manifest(toy, cite(90.3))
    found = [f for f in audit(toy).findings if f.code == "A083"]
    assert [f.path for f in found] == ["/tasks/0/reference/observations/1/value"]
    edit_manifest(toy, cite(90.1))
    assert "A083" not in _codes(audit(toy))
