"""Build state: records by digest; a changed input invalidates the phase."""

from __future__ import annotations

from pathlib import Path

from reprobridge_sdk.agent.state import BuildState, inputs_digest
from reprobridge_sdk.model.build import Gate, PlanRecord


def _record(digest: str, *, passed: bool = True) -> PlanRecord:
    return PlanRecord(inputs_digest=digest, seconds=0.5, gate=Gate(passed=passed))


def test_digest_is_canonical_and_changes_with_any_input() -> None:
    a = inputs_digest(commit="abc", claims={"x": 1, "y": [1, 2]})
    assert a == inputs_digest(claims={"y": [1, 2], "x": 1}, commit="abc")
    assert a != inputs_digest(commit="abd", claims={"x": 1, "y": [1, 2]})
    assert len(a) == 64


def test_a_record_is_reused_only_with_the_same_digest_and_a_passed_gate(tmp_path: Path) -> None:
    state = BuildState(tmp_path)
    digest = inputs_digest(a=1)
    state.save(_record(digest))
    assert state.reusable("planner", PlanRecord, digest) == _record(digest)
    assert state.reusable("planner", PlanRecord, inputs_digest(a=2)) is None
    state.save(_record(digest, passed=False))
    assert state.reusable("planner", PlanRecord, digest) is None


def test_a_damaged_or_foreign_record_is_not_reused(tmp_path: Path) -> None:
    state = BuildState(tmp_path)
    state.root.mkdir(parents=True)
    for text in ("{", '{"phase": "intake"}', "\xff"):
        state.path("planner").write_text(text, "utf-8", errors="surrogateescape")
        assert state.reusable("planner", PlanRecord, "0" * 64) is None


def test_a_record_with_none_values_reads_back_after_it_is_saved(tmp_path: Path) -> None:
    """Records are written without their None values; every field that may be None has that
    default, so a timed-out smoke attempt (exit status None), a dropped requirement and an
    unbounded resolution step read back (else --resume could never reuse their phase)."""
    from reprobridge_sdk.agent.state import BuildState
    from reprobridge_sdk.model.build import (
        BuilderRecord,
        Gate,
        Replacement,
        ReproducerRecord,
        ResolveStep,
        SmokeAttempt,
    )

    state = BuildState(tmp_path)
    repro = ReproducerRecord(
        inputs_digest="0" * 64,
        seconds=1,
        gate=Gate(passed=True),
        attempts=[
            SmokeAttempt(launcher="a", argv=["python"], workdir=".", exit_status=None, seconds=1)
        ],
    )
    built = BuilderRecord(
        inputs_digest="0" * 64,
        seconds=1,
        gate=Gate(passed=True),
        python="3.11",
        requirements=[],
        replaced=[Replacement(original="triton==2.0", replacement=None, why="CUDA only")],
        steps=[
            ResolveStep(
                name="declared", requirements=[], exclude_newer=None, lowest=False, ok=True, why="-"
            )
        ],
    )
    for record in (repro, built):
        state.save(record)
        assert state.stored(record.phase, type(record)) == record
        assert state.reusable(record.phase, type(record), "0" * 64) == record
