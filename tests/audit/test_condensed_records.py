"""The audit keeps each run's record condensed once verified (``RunRecord``), not typed: at
30k runs the typed records were most of the audit's memory (about forty model objects a run).

Proved on honest runs of the toy artifact (real subprocesses, real files): no typed record
or measured value outlives the verification; the condensed record holds what the verdicts,
the report and the later checks read, equal to the typed record's; hostile records (a value
given twice, a seed relabelled, a copy under another seed, an embedded snapshot) give the
same findings and verdicts as the checks of the typed record describe.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

from audit_support import edit_record

from reprobridge_sdk.audit import audit, load_artifact
from reprobridge_sdk.audit._execute import snapshot_of, values
from reprobridge_sdk.audit.duplicates import copy_signs, record_files
from reprobridge_sdk.audit.verify import RunEvidence, RunRecord, verify_attempt
from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.model import EvidenceRecord, MeasuredValue
from reprobridge_sdk.run import load_record


def _alive(kind: type) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


def test_no_typed_record_outlives_the_verification(toy: Path) -> None:
    facts = load_artifact(toy)
    before = (_alive(EvidenceRecord), _alive(MeasuredValue))
    cache = ExtractionCache()
    try:
        runs = verify_attempt(facts, toy / "runs", cache)
    finally:
        cache.close()
    assert len(runs) == 4 and all(r.valid for r in runs)
    assert all(type(r.record) is RunRecord for r in runs)
    # the runs are alive, their typed records and measured values are not
    assert (_alive(EvidenceRecord), _alive(MeasuredValue)) == before
    assert not hasattr(runs[0], "__dict__")  # slotted: no per-run attribute dictionary


def test_the_condensed_record_holds_what_the_checks_read(toy: Path) -> None:
    for run_dir in sorted((toy / "runs").iterdir()):
        if not (run_dir / "record.json").is_file():
            continue
        typed = load_record(run_dir)
        condensed = RunRecord.of(typed)
        for name in (
            "run_id",
            "artifact",
            "launcher",
            "seed",
            "scope",
            "status",
            "started_at",
            "ended_at",
            "code_tree_digest",
            "lock_digest",
            "environment_sha256",
            "environment",
        ):
            assert getattr(condensed, name) == getattr(typed, name), name
        assert [(m.task, m.value) for m in condensed.measurements] == [
            (m.task, m.value) for m in typed.measurements
        ]
        assert values(condensed) == values(typed)
        assert record_files(condensed) == record_files(typed)
        assert copy_signs(condensed, typed) == copy_signs(typed, typed)
        assert snapshot_of(run_dir, condensed) == snapshot_of(run_dir, typed)
        # a caller's typed record is condensed by the evidence it builds
        assert RunEvidence(run_dir, run_dir.name, typed).record == condensed


def _report(root: Path) -> dict[str, object]:
    result = audit(root)
    data: dict[str, object] = json.loads(result.model_dump_json())
    return data


def _run(report: dict[str, object], name: str) -> dict[str, object]:
    attempts = report["attempts"]
    assert isinstance(attempts, list)
    found: dict[str, object] = next(r for r in attempts[0]["runs"] if r["run"] == name)
    return found


def test_a_value_given_twice_is_read_as_the_typed_record_gives_it(toy: Path) -> None:
    """The condensed record keeps the measurements in order, duplicates included: the last
    of a task's values is the one the evidence is compared with (A007, located at the
    first), as for the typed record."""

    def twice(data: dict[str, object]) -> None:
        measurements = data["measurements"]
        assert isinstance(measurements, list)
        extra = dict(measurements[0], value=measurements[0]["value"] + 0.25)
        measurements.append(extra)

    edit_record(toy / "runs" / "scored-s1", twice)
    condensed = RunRecord.of(load_record(toy / "runs" / "scored-s1"))
    assert len(condensed.measurements) == len(load_record(toy / "runs" / "scored-s1").measurements)
    report = _report(toy)
    run = _run(report, "scored-s1")
    findings = run["findings"]
    assert isinstance(findings, list)
    assert [(f["code"], f["path"]) for f in findings] == [("A007", "/measurements/0/value")]
    values_ = run["values"]
    assert isinstance(values_, dict)
    assert run["valid"] is False and values_["acc"] is None
    assert run["run_id"] == condensed.run_id and run["seed"] == 1


def test_hostile_records_give_their_findings_from_the_condensed_record(toy: Path) -> None:
    """A seed relabelled (A039), a run copied under another seed (A038, from the condensed
    digests and start times) and a record of another artifact (A002), in one audit."""
    edit_record(toy / "runs" / "scored-s2", lambda d: d.update(seed=1))
    source = load_record(toy / "runs" / "scored-s0")
    copied = toy / "runs" / "scored-s0"

    def copy_of_s0(data: dict[str, object]) -> None:
        data.update(
            log=source.log.model_dump() if source.log else None,
            outputs=[o.model_dump() for o in source.outputs],
            started_at=source.started_at,
        )

    edit_record(toy / "runs" / "scored-s1", copy_of_s0)
    for name in ("log.txt",):
        (toy / "runs" / "scored-s1" / name).write_bytes((copied / name).read_bytes())
    for output in source.outputs:
        (toy / "runs" / "scored-s1" / output.path).write_bytes((copied / output.path).read_bytes())
    edit_record(toy / "runs" / "smoke-s0", lambda d: d.update(artifact="another"))
    report = _report(toy)
    codes = {
        name: {f["code"] for f in _run(report, name)["findings"]}  # type: ignore[index]
        for name in ("scored-s0", "scored-s1", "scored-s2", "smoke-s0")
    }
    assert "A039" in codes["scored-s2"]
    assert "A038" in codes["scored-s1"]
    assert "A002" in codes["smoke-s0"]
    assert codes["scored-s0"] <= {"A050"}
