"""The audit pauses the cyclic garbage collector for its own work only: the collector's state
is the caller's again afterwards, after an audit that fails too, and the report is the one an
audit with the collector left running gives."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.auditor import _audit, _options, collector_paused, load_artifact
from reprobridge_sdk.audit.interval import DEFAULT_FLOOR, DEFAULT_LEVEL
from reprobridge_sdk.errors import UsageError


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_an_enabled_collector_is_enabled_again_after_the_audit(
    toy: Path, collector_on: None
) -> None:
    result = audit(toy)
    assert gc.isenabled()
    assert {t.attempts[0].verdict for t in result.tasks} == {"compatible"}


def test_a_disabled_collector_stays_disabled(toy: Path, collector_on: None) -> None:
    gc.disable()
    audit(toy)
    assert not gc.isenabled()


def test_the_collector_is_back_after_a_failed_audit(toy: Path, collector_on: None) -> None:
    with pytest.raises(UsageError) as caught:
        audit(toy, ["missing=" + str(toy / "no-such-runs")])
    assert caught.value.findings[0].code == "A001"
    assert gc.isenabled()


def test_the_report_is_the_one_with_the_collector_running(toy: Path, collector_on: None) -> None:
    paused = audit(toy)
    running = _audit(
        load_artifact(toy),
        toy,
        None,
        _options(DEFAULT_LEVEL, DEFAULT_FLOOR, holm=False, curation=False),
    )
    assert gc.isenabled()
    assert paused.model_dump() == running.model_dump()


def test_the_pause_holds_inside_the_block_and_nests(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
