"""Many attempts, labels, Holm, curation, the committee's table and purity (spec: audit)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from audit_support import edit_record

from reprobridge_sdk.audit import audit, audit_table
from reprobridge_sdk.audit.attempts import parse_attempt, unique_labels
from reprobridge_sdk.errors import UsageError


def _attempts(toy: Path) -> dict[str, Path]:
    """Split the honest runs into attempts: a full one, one missing a seed, a tampered one."""
    runs = toy / "runs"
    made: dict[str, Path] = {}
    for name in ("agent-a", "agent-b", "agent-c"):
        target = toy / "attempts" / name
        shutil.copytree(runs, target)
        made[name] = target
    shutil.rmtree(made["agent-b"] / "scored-s2")  # toy: a seed is missing
    edit_record(made["agent-c"] / "scored-s0", lambda d: d["measurements"][0].update(value=90.1))
    return made


def test_labelled_attempts(toy: Path) -> None:
    made = _attempts(toy)
    result = audit(toy, [f"{k}={v}" for k, v in made.items()])
    acc = result.tasks[0]
    assert [(a.attempt, a.verdict) for a in acc.attempts] == [
        ("agent-a", "compatible"),
        ("agent-b", "toy"),
        ("agent-c", "invalid-evidence"),
    ]
    assert acc.success_rate == pytest.approx(1 / 3)
    assert acc.disagreement
    f1 = result.tasks[1]
    assert [a.verdict for a in f1.attempts] == ["compatible", "toy", "invalid-evidence"]
    assert result.disagreements == 2
    rates = {r.label: r.success_rate for r in result.labels}
    assert rates == {"agent-a": 1.0, "agent-b": 0.0, "agent-c": 0.0}
    assert result.label_spread == pytest.approx(1.0)
    assert result.task_success == pytest.approx(1 / 3)
    # tampered evidence in agent-c withholds every badge resting on runs, whatever agent-a
    assert result.badges.results == "not-reproduced"
    assert not result.badges.functional
    assert not result.passed  # tampered evidence in one attempt fails the audit
    assert [a.counts["compatible"] for a in result.attempts] == [2, 0, 0]


def test_repeated_label_pools_attempts(toy: Path) -> None:
    made = _attempts(toy)
    result = audit(toy, [f"x={made['agent-a']}", f"x={made['agent-b']}"])
    assert [a.label for a in result.attempts] == ["x", "x#2"]
    assert [(r.label, r.attempts, r.success_rate) for r in result.labels] == [("x", 2, 0.5)]
    assert result.label_spread is None


def test_attempt_parsing() -> None:
    assert parse_attempt("gpt=runs/gpt").label == "gpt"
    assert parse_attempt("runs/gpt").label == "gpt"
    assert unique_labels([parse_attempt("a=x"), parse_attempt("a=y")]) == ["a", "a#2"]
    with pytest.raises(UsageError):
        parse_attempt("=runs")


def test_missing_attempt_directory_is_a_usage_error(toy: Path) -> None:
    with pytest.raises(UsageError) as info:
        audit(toy, [str(toy / "nowhere")])
    assert [f.code for f in info.value.findings] == ["A001"]


def _shift_references(toy: Path, task: int, values: list[float]) -> None:
    path = toy / "rra.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    for item, value in zip(data["tasks"][task]["reference"]["observations"], values, strict=True):
        item["value"] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_holm_correction_can_spare_a_marginal_task(toy: Path) -> None:
    # acc = 90.1 against references with mean 88.456 and sd 0.5: just outside the interval
    # (z ~ 3.0, p ~ 0.04 before correction); f1 is far inside (p ~ 1). Holm over 2 tasks
    # doubles the smallest p-value, which no longer rejects at 0.05.
    _shift_references(toy, 0, [87.82, 88.14, 88.46, 88.77, 89.09])
    plain = audit(toy)
    corrected = audit(toy, holm=True)
    before = plain.tasks[0].attempts[0]
    after = corrected.tasks[0].attempts[0]
    assert before.verdict == "incompatible"
    assert before.p is not None and 0.025 < before.p < 0.05
    assert before.p_adjusted is None
    assert after.verdict == "compatible"
    assert after.p_adjusted == pytest.approx(2 * before.p)
    assert [r.code for r in after.reasons] == ["A029", "A030"]
    assert corrected.options.holm


def test_curation_checks_published_values(toy: Path) -> None:
    _shift_references(toy, 1, [80.0, 80.1, 80.2, 80.1, 80.05])
    result = audit(toy, curation=True)
    assert [a.attempt for a in result.tasks[0].attempts] == ["published"]
    assert [(t.id, t.attempts[0].verdict) for t in result.tasks] == [
        ("acc", "compatible"),
        ("f1", "incompatible"),
    ]
    assert [r.code for r in result.tasks[1].attempts[0].reasons] == ["A031"]
    assert result.tasks[1].attempts[0].reasons[0].path == "/tasks/1/published"
    assert result.tasks[1].published_compatible is False
    assert not result.passed


def test_table_over_many_artifacts(toy: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(toy, other)
    shutil.rmtree(other / "runs" / "scored-s1")
    _attempts(toy)
    _attempts(other)
    table = audit_table(
        [toy, other, tmp_path / "missing"], ["a=attempts/agent-a", "b=attempts/agent-b"]
    )
    assert [r.artifact for r in table.artifacts] == ["toy-study", "toy-study"]
    assert [e.code for e in table.errors] == ["A001"]
    # toy: a compatible, b toy -> 0.5 per task; other: both attempts lack seed 1 -> 0.
    assert [r.task_success for r in table.artifacts] == [0.5, 0.0]
    # The artifact that does not load counts in every rate: as one paper and one task with
    # success 0, and as one non-compatible pair in each label group.
    assert [(r.status, r.artifact) for r in table.rows] == [
        ("passed", "toy-study"),
        ("failed", "toy-study"),
        ("error", None),
    ]
    assert table.task_level == pytest.approx((0.5 + 0.5 + 0 + 0 + 0) / 5)
    assert table.paper_macro == pytest.approx((0.5 + 0 + 0) / 3)
    assert {r.label: r.success_rate for r in table.labels} == {"a": 2 / 5, "b": 0.0}
    assert table.label_spread == pytest.approx(0.4)
    assert not table.passed


def test_result_is_a_pure_function_of_files_and_options(toy: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(toy, moved)
    first = audit(toy).model_dump(mode="json", exclude={"path"})
    again = audit(toy).model_dump(mode="json", exclude={"path"})
    there = audit(moved).model_dump(mode="json", exclude={"path"})
    assert first == again == there
    assert json.dumps(first, sort_keys=True) == json.dumps(there, sort_keys=True)


def test_options_change_the_interval(toy: Path) -> None:
    wide = audit(toy, level=0.99, floor=0.05)
    interval = wide.tasks[0].interval
    assert interval.half_width == pytest.approx(0.05 * 90.1)
    assert interval.floor_bound
    assert wide.options.level == 0.99


def test_table_in_parallel_equals_serial_and_missing_attempts_count(
    toy: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(toy, other)
    _attempts(toy)  # ``other`` has no attempts/ at all: its tasks are not executed
    labels = ["a=attempts/agent-a"]
    serial = audit_table([toy, other], labels)
    parallel = audit_table([toy, other], labels, jobs=2)
    assert parallel.model_dump() == serial.model_dump()
    missing = serial.artifacts[1]
    assert {a.verdict for t in missing.tasks for a in t.attempts} == {"not-executed"}
    assert {r.code for t in missing.tasks for a in t.attempts for r in a.reasons} == {"A024"}
    assert serial.paper_macro == pytest.approx(0.5)
    with pytest.raises(UsageError):
        audit_table([toy], jobs=0)
