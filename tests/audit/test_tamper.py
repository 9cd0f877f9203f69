"""A corpus of tampered evidence built from real runs: each trick is caught with its code.

Every case starts from honest runs of the toy artifact (real subprocesses, real files),
changes what a dishonest or careless producer would change, and checks the verdict and the
A codes of the auditor.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from audit_support import edit_record
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit import audit
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model.audit import AuditResult


def _codes(result: AuditResult, task: str) -> set[str]:
    item = next(t for t in result.tasks if t.id == task)
    return {r.code for a in item.attempts for r in a.reasons}


def _verdict(result: AuditResult, task: str) -> str:
    item = next(t for t in result.tasks if t.id == task)
    (attempt,) = item.attempts
    return attempt.verdict


def _edit_manifest(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_honest_runs_pass(toy: Path) -> None:
    result = audit(toy)
    assert [_verdict(result, t) for t in ("acc", "f1")] == ["compatible", "compatible"]
    assert result.passed
    assert result.badges.functional and result.badges.results == "consistent"
    assert all(run.valid and not run.findings for run in result.attempts[0].runs)
    acc = result.tasks[0].attempts[0]
    assert acc.value == pytest.approx(90.1)
    assert acc.seeds == [0, 1, 2]
    assert acc.icml == "verified"


def _edited_log(root: Path) -> None:
    log = root / "runs/scored-s0/log.txt"
    log.write_text(log.read_text().replace("test accuracy: 90.0000", "test accuracy: 90.1000"))


def _hand_typed(root: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["measurements"][0]["value"] = 90.1

    edit_record(root / "runs/scored-s0", change)


def _preexisting_output(root: Path) -> None:
    edit_record(root / "runs/scored-s1", lambda d: d["outputs"][0].update(preexisting=True))


def _edited_output(root: Path) -> None:
    out = next((root / "runs/scored-s1/outputs/metrics").iterdir())
    out.write_text(json.dumps({"test": {"f1": 89.4}}))


def _smoke_passed_off_as_scored(root: Path) -> None:
    shutil.rmtree(root / "runs/scored-s0")
    edit_record(root / "runs/smoke-s0", lambda d: d.update(launcher="scored"))


def _smoke_relabelled_fully(root: Path) -> None:
    shutil.rmtree(root / "runs/scored-s0")
    edit_record(root / "runs/smoke-s0", lambda d: d.update(launcher="scored", scope="scored"))


def _swapped_lock(root: Path) -> None:
    edit_record(root / "runs/scored-s2", lambda d: d.update(lock_digest="0" * 64))


def _other_code(root: Path) -> None:
    edit_record(
        root / "runs/scored-s2", lambda d: d.update(code_tree_digest="sha256-tree1:" + "1" * 64)
    )


def _log_removed(root: Path) -> None:
    (root / "runs/scored-s1/log.txt").unlink()


def _output_removed(root: Path) -> None:
    shutil.rmtree(root / "runs/scored-s1/outputs")


def _foreign_record(root: Path) -> None:
    edit_record(root / "runs/scored-s1", lambda d: d.update(artifact="another-study"))


CASES: list[tuple[str, Callable[[Path], None], str, set[str], str]] = [
    # (name, tampering, task, codes that must be among its reasons, verdict)
    ("edited-log", _edited_log, "acc", {"A004"}, "invalid-evidence"),
    ("hand-typed-measurement", _hand_typed, "acc", {"A007"}, "invalid-evidence"),
    ("output-existed-before-run", _preexisting_output, "f1", {"A018"}, "invalid-evidence"),
    ("edited-output", _edited_output, "f1", {"A006"}, "invalid-evidence"),
    (
        "smoke-run-as-scored",
        _smoke_passed_off_as_scored,
        "acc",
        {"A014", "A015"},
        "invalid-evidence",
    ),
    ("smoke-run-relabelled", _smoke_relabelled_fully, "acc", {"A015"}, "invalid-evidence"),
    ("swapped-lock", _swapped_lock, "acc", {"A011"}, "invalid-evidence"),
    ("other-code", _other_code, "f1", {"A009"}, "invalid-evidence"),
    ("log-removed", _log_removed, "acc", {"A003"}, "invalid-evidence"),
    ("output-removed", _output_removed, "f1", {"A005"}, "invalid-evidence"),
    ("foreign-record", _foreign_record, "acc", {"A002"}, "invalid-evidence"),
]


@pytest.mark.parametrize(
    ("tamper", "task", "codes", "verdict"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_tampered_evidence_is_caught(
    toy: Path, tamper: Callable[[Path], None], task: str, codes: set[str], verdict: str
) -> None:
    tamper(toy)
    result = audit(toy)
    assert _verdict(result, task) == verdict
    assert codes <= _codes(result, task)
    assert not result.passed
    assert result.icml_counts["verified"] < 2


def test_foreign_record_is_reported_on_its_run(toy: Path) -> None:
    _foreign_record(toy)
    result = audit(toy)
    run = next(r for r in result.attempts[0].runs if r.run == "scored-s1")
    assert [f.code for f in run.findings] == ["A002"]
    assert run.findings[0].path == "/artifact"


def test_missing_seed_is_toy(toy: Path) -> None:
    shutil.rmtree(toy / "runs/scored-s2")
    result = audit(toy)
    assert _verdict(result, "acc") == "toy"
    assert _verdict(result, "f1") == "toy"
    reason = next(r for r in result.tasks[0].attempts[0].reasons if r.code == "A017")
    assert reason.path == "/tasks/0/statistic/seeds"
    assert result.icml_counts == {"verified": 0, "falsified": 0, "toy": 2, "inconclusive": 0}


def test_shipped_score_file_never_counts(toy: Path) -> None:
    # The refined code ships a score file; a run "produces" it by copying it.
    shipped = {"test": {"f1": 89.1}}
    (toy / "code" / "scores.json").write_text(json.dumps(shipped))
    tree = tree_digest(toy / "code")
    _edit_manifest(toy, lambda d: d["codebase"].update(tree_digest=tree))
    for seed in (0, 1, 2):
        edit_record(toy / f"runs/scored-s{seed}", lambda d: d.update(code_tree_digest=tree))
    run = toy / "runs/scored-s1"
    out = next((run / "outputs/metrics").iterdir())
    shutil.copyfile(toy / "code" / "scores.json", out)

    def change(data: dict[str, Any]) -> None:
        data["outputs"][0].update(sha256=file_sha256(out), size=out.stat().st_size)
        data["measurements"][1]["value"] = 89.1

    edit_record(run, change)
    result = audit(toy)
    assert _verdict(result, "f1") == "invalid-evidence"
    assert "A019" in _codes(result, "f1")
    assert not result.findings  # the artifact itself is consistent


def _declare_sample(root: Path, directory: str, run: str = "scored-s0") -> Path:
    """Ship a copy of an honest run's log and output as a declared sample of ``scored``."""
    target = root / directory
    target.mkdir(parents=True, exist_ok=True)
    out = next((root / "runs" / run / "outputs/metrics").iterdir())
    shutil.copyfile(root / "runs" / run / "log.txt", target / "log.txt")
    shutil.copyfile(out, target / "metrics.json")
    record = json.loads((root / "runs" / run / "record.json").read_text())
    expected = {m["task"]: m["value"] for m in record["measurements"]}

    def change(data: dict[str, Any]) -> None:
        data["launchers"][1]["samples"] = [
            {
                "log": f"{directory}/log.txt",
                "outputs": {"metrics": f"{directory}/metrics.json"},
                "seed": record["seed"],
                "expected": expected,
            }
        ]

    _edit_manifest(root, change)
    return target / "metrics.json"


def test_output_equal_to_a_declared_sample_counts_with_a_warning(toy: Path) -> None:
    # The sample is an earlier honest run's output; the deterministic rerun equals it.
    _declare_sample(toy, "samples")
    result = audit(toy)
    assert not result.findings
    assert [_verdict(result, t) for t in ("acc", "f1")] == ["compatible", "compatible"]
    assert result.passed and result.badges.results == "consistent"
    assert _codes(result, "f1") == {"A035"}
    assert _codes(result, "acc") == set()  # the log is not the source of f1's warning
    (reason,) = result.tasks[1].attempts[0].reasons
    assert (reason.severity, reason.file, reason.path) == (
        "warning",
        "scored-s0/record.json",
        "/measurements/1",
    )
    run = next(r for r in result.attempts[0].runs if r.run == "scored-s0")
    assert run.valid
    assert [(f.code, f.path) for f in run.findings] == [("A035", "/measurements/1")]
    others = [r for r in result.attempts[0].runs if r.run != "scored-s0"]
    assert all(not r.findings for r in others)


def test_output_equal_to_a_sample_inside_the_code_tree_is_still_shipped(toy: Path) -> None:
    # A "sample" kept in the refined code tree is a score file shipped in the codebase.
    _declare_sample(toy, "code/samples")
    tree = tree_digest(toy / "code")
    _edit_manifest(toy, lambda d: d["codebase"].update(tree_digest=tree))
    for name in ("scored-s0", "scored-s1", "scored-s2", "smoke-s0"):
        edit_record(toy / "runs" / name, lambda d: d.update(code_tree_digest=tree))
    result = audit(toy)
    assert _verdict(result, "f1") == "invalid-evidence"
    assert _codes(result, "f1") == {"A019"}
    assert not result.passed


def test_drift_in_a_record_is_a_warning_on_its_values(toy: Path) -> None:
    drift = ["E002: numpy is installed at 2.0.0, the lock pins 1.26.4"]
    edit_record(toy / "runs/scored-s2", lambda d: d.update(drift=drift))
    result = audit(toy)
    assert [_verdict(result, t) for t in ("acc", "f1")] == ["compatible", "compatible"]
    assert result.passed
    assert _codes(result, "acc") == _codes(result, "f1") == {"A036"}
    reason = result.tasks[0].attempts[0].reasons[0]
    assert (reason.severity, reason.file, reason.path) == (
        "warning",
        "scored-s2/record.json",
        "/drift",
    )
    run = next(r for r in result.attempts[0].runs if r.run == "scored-s2")
    assert run.valid and [f.code for f in run.findings] == ["A036"]


def test_drift_on_an_uncounted_smoke_run_is_not_a_reason(toy: Path) -> None:
    edit_record(toy / "runs/smoke-s0", lambda d: d.update(drift=["E004: other Python"]))
    result = audit(toy)
    assert _codes(result, "acc") == set()
    run = next(r for r in result.attempts[0].runs if r.run == "smoke-s0")
    assert [f.code for f in run.findings] == ["A036"]


def test_lock_replaced_on_disk_fails_available(toy: Path) -> None:
    (toy / "environment" / "requirements.lock").write_text("numpy==1.0\n")
    result = audit(toy)
    codes = [f.code for f in result.findings]
    assert {"F005", "A012"} <= set(codes)  # the validator's and the auditor's digest checks
    assert result.findings[codes.index("A012")].path == "/environment/lock/sha256"
    assert not result.badges.available


def test_code_edited_on_disk_fails_available(toy: Path) -> None:
    (toy / "code" / "train.py").write_text("print('test accuracy: 90.1')\n")
    result = audit(toy)
    assert {"F006", "A010"} <= {f.code for f in result.findings}
    assert not result.badges.available
    assert _verdict(result, "acc") == "compatible"  # records still match the manifest


def test_failed_runs_are_not_executed(toy: Path) -> None:
    for name in ("scored-s0", "scored-s1", "scored-s2", "smoke-s0"):
        edit_record(
            toy / "runs" / name,
            lambda d: d.update(status="failed", failure={"reason": "exit-status"}, exit_code=1),
        )
    result = audit(toy)
    assert _verdict(result, "acc") == "not-executed"
    assert _codes(result, "acc") == {"A021"}
    assert not result.badges.functional


def test_running_record_without_runner_is_interrupted(toy: Path) -> None:
    for name in ("scored-s0", "scored-s1", "scored-s2", "smoke-s0"):
        edit_record(toy / "runs" / name, lambda d: d.update(status="running"))
    result = audit(toy)
    assert _verdict(result, "acc") == "not-executed"
    assert _codes(result, "acc") == {"A022"}


def test_only_smoke_runs_is_toy(toy: Path) -> None:
    for seed in (0, 1, 2):
        shutil.rmtree(toy / f"runs/scored-s{seed}")
    result = audit(toy)
    assert _verdict(result, "acc") == "toy"
    assert "A016" in _codes(result, "acc")
    assert result.tasks[0].attempts[0].value == pytest.approx(85.0)


def test_no_runs_is_not_executed(toy: Path) -> None:
    shutil.rmtree(toy / "runs")
    result = audit(toy)
    assert _verdict(result, "acc") == "not-executed"
    assert _codes(result, "acc") == {"A024"}


def test_unreadable_record(toy: Path) -> None:
    (toy / "runs/scored-s0/record.json").write_text("{not json")
    result = audit(toy)
    run = next(r for r in result.attempts[0].runs if r.run == "scored-s0")
    assert [f.code for f in run.findings] == ["A001"]
    assert run.findings[0].file == "scored-s0/record.json"
    assert _verdict(result, "acc") == "toy"


def test_checkpoint_standing_in_for_training_is_toy(toy: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["environment"]["data"] = [
            {
                "id": "weights",
                "kind": "checkpoint",
                "source": {"url": "https://example.org/weights.bin"},
                "substitutes_training": True,
            }
        ]
        data["launchers"][1]["data"] = ["weights"]

    _edit_manifest(toy, change)
    result = audit(toy)
    assert _verdict(result, "acc") == "toy"
    assert "A020" in _codes(result, "acc")


def test_value_outside_interval_is_incompatible(toy: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        obs = data["tasks"][0]["reference"]["observations"]
        for item, value in zip(obs, [80.0, 80.1, 80.2, 80.05, 80.15], strict=True):
            item["value"] = value

    _edit_manifest(toy, change)
    result = audit(toy)
    assert _verdict(result, "acc") == "incompatible"
    assert _codes(result, "acc") == {"A029"}
    attempt = result.tasks[0].attempts[0]
    assert attempt.icml == "falsified"
    assert attempt.p is not None and attempt.p < 0.05
    assert not result.passed and not result.badges.reproduced


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_FIELDS = [
    "run_id",
    "artifact",
    "launcher",
    "argv",
    "seed",
    "scope",
    "status",
    "log",
    "outputs",
    "measurements",
    "code_tree_digest",
    "lock_digest",
    "started_at",
    "params",
    "failure",
]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(field=st.sampled_from(_FIELDS), value=_JSON)
@example(field="measurements", value=[])  # once compatible: the values were re-extracted
@example(field="seed", value=False)  # pydantic read false as seed 0; the schema says integer
def test_property_any_record_edit_is_a_verdict_not_a_crash(
    toy: Path, field: str, value: Any
) -> None:
    """Any value in any field, mostly schema-invalid: the auditor answers, never raises.

    A record the edit made schema-invalid is unreadable evidence (A001): its run counts for
    nothing, so the task is not compatible. (Schema-valid edits of the fields that tie a run
    to its evidence are caught with their own codes: see the next property.)
    """
    run = toy / "runs" / "scored-s1"
    original = (run / "record.json").read_text()
    try:
        edit_record(run, lambda d: d.update({field: value}))
        edited = json.loads((run / "record.json").read_text())
        result = audit(toy)
        codes = {f.code for r in result.attempts[0].runs for f in r.findings}
        assert all(code.startswith("A") for code in codes)
        verdict = result.tasks[0].attempts[0].verdict
        assert verdict in {"compatible", "invalid-evidence", "toy", "not-executed"}
        if not jsonschema.Draft202012Validator(_EVIDENCE_SCHEMA).is_valid(edited):
            (checked,) = [r for r in result.attempts[0].runs if r.run == "scored-s1"]
            assert [f.code for f in checked.findings] == ["A001"], (field, value)
            assert verdict != "compatible", (field, value)
    finally:
        (run / "record.json").write_text(original)


_HEX = st.text("0123456789abcdef", min_size=64, max_size=64)
# The runner's records are 1.1: they name their environment snapshot by digest.
_EVIDENCE_SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "evidence-1.1.schema.json").read_text()
)


def _retyped(data: st.DataObject, old: str) -> str:
    return data.draw(_HEX.filter(lambda new: new != old))


# Schema-valid edits of the record of scored-s1: (name, edit, task whose evidence it taints,
# the codes of which one must be on the run). Each edit draws a new, well-formed value.
_VALID_EDITS: list[tuple[str, Callable[[dict[str, Any], st.DataObject], None], str, set[str]]] = [
    (
        "log-digest",
        lambda d, data: d["log"].update(sha256=_retyped(data, d["log"]["sha256"])),
        "acc",
        {"A004"},
    ),
    (
        "output-digest",
        lambda d, data: d["outputs"][0].update(sha256=_retyped(data, d["outputs"][0]["sha256"])),
        "f1",
        {"A006"},
    ),
    (
        "measured-value",
        lambda d, data: d["measurements"][0].update(
            value=data.draw(
                st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != 90.1)
            )
        ),
        "acc",
        {"A007"},
    ),
    (
        "argv",
        lambda d, data: d["argv"].__setitem__(
            data.draw(st.integers(0, len(d["argv"]) - 1), label="index"),
            data.draw(st.text(min_size=1, max_size=8).filter(lambda a: a not in d["argv"])),
        ),
        "acc",
        {"A014", "A015"},
    ),
    (
        "lock-digest",
        lambda d, data: d.update(lock_digest=_retyped(data, d["lock_digest"])),
        "acc",
        {"A011"},
    ),
    (
        "code-digest",
        lambda d, data: d.update(
            code_tree_digest="sha256-tree1:" + _retyped(data, d["code_tree_digest"][13:])
        ),
        "f1",
        {"A009"},
    ),
]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    edit=st.sampled_from(_VALID_EDITS),
    data=st.data(),
)
def test_property_schema_valid_tampering_is_caught(
    toy: Path,
    edit: tuple[str, Callable[[dict[str, Any], st.DataObject], None], str, set[str]],
    data: st.DataObject,
) -> None:
    """A record that still validates against the evidence schema, with one value changed, is
    caught: the run is invalid with the edit's code and the task it measures is not compatible.
    """
    name, change, task, codes = edit
    run = toy / "runs" / "scored-s1"
    original = (run / "record.json").read_text()
    try:
        edit_record(run, lambda d: change(d, data))
        edited = json.loads((run / "record.json").read_text())
        assert list(jsonschema.Draft202012Validator(_EVIDENCE_SCHEMA).iter_errors(edited)) == []
        result = audit(toy)
        (tampered,) = [r for r in result.attempts[0].runs if r.run_id == edited["run_id"]]
        assert not tampered.valid, name
        assert codes & {f.code for f in tampered.findings}, (name, tampered.findings)
        assert _verdict(result, task) == "invalid-evidence", name
    finally:
        (run / "record.json").write_text(original)
