"""The environment snapshot named by digest (format 1.1): kept once, verified by the auditor.

The runner keeps one snapshot per invocation in ``runs/.env/<sha256>.json`` and each record
names it in ``environment_sha256``; a record of format 1.0 embeds it. The auditor reads both:
a named snapshot that is not there is A065 (a warning: the value counts), one that is not the
file its digest names is A066 (an error: the run's values do not count).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from audit_support import edit_record

from reprobridge_sdk.audit import audit
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run import load_record, read_snapshot
from reprobridge_sdk.run.evidence import SnapshotProblem

SCORED = ("scored-s0", "scored-s1", "scored-s2")


def _run_codes(result: AuditResult) -> dict[str, list[str]]:
    return {r.run: [f.code for f in r.findings] for r in result.attempts[0].runs}


def _verdicts(result: AuditResult) -> list[str]:
    return [t.attempts[0].verdict for t in result.tasks]


def _snapshot_of(toy: Path, run: str) -> Path:
    record = load_record(toy / "runs" / run)
    assert record.environment_sha256 is not None
    return toy / "runs" / ".env" / f"{record.environment_sha256}.json"


def test_each_invocation_keeps_one_snapshot_that_its_records_name(toy: Path) -> None:
    # the template ran two invocations (scored seeds 0-2, then smoke): a snapshot each, one
    # file when both were taken within the same second (the snapshot's clock)
    kept = {p.stem for p in (toy / "runs" / ".env").iterdir()}
    named = {load_record(toy / "runs" / r).environment_sha256 for r in SCORED}
    assert len(named) == 1
    (digest,) = named
    assert kept == named | {load_record(toy / "runs" / "smoke-s0").environment_sha256}
    data = (toy / "runs" / ".env" / f"{digest}.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest
    for run in SCORED:
        written = json.loads((toy / "runs" / run / "record.json").read_text())
        assert written["record_version"] == "1.1"
        assert written["environment"] is None
        snapshot = read_snapshot(toy / "runs" / run, load_record(toy / "runs" / run))
        assert snapshot is not None
        assert snapshot.python == json.loads(data)["python"]
    assert _verdicts(audit(toy)) == ["compatible", "compatible"]


def test_a_missing_snapshot_is_a065_and_the_values_count(toy: Path) -> None:
    _snapshot_of(toy, "scored-s0").unlink()
    result = audit(toy)
    codes = _run_codes(result)
    assert [codes[r] for r in SCORED] == [["A065"]] * 3
    shared = _snapshot_of(toy, "smoke-s0") == _snapshot_of(toy, "scored-s0")  # same second
    assert codes["smoke-s0"] == (["A065"] if shared else [])
    finding = result.attempts[0].runs[0].findings[0]
    assert (finding.severity, finding.path) == ("warning", "/environment_sha256")
    assert _verdicts(result) == ["compatible", "compatible"]
    with pytest.raises(SnapshotProblem) as caught:
        read_snapshot(toy / "runs" / "scored-s0", load_record(toy / "runs" / "scored-s0"))
    assert caught.value.kind == "missing"


def test_the_whole_env_directory_left_behind_is_a065(toy: Path) -> None:
    for path in (toy / "runs" / ".env").iterdir():
        path.unlink()
    (toy / "runs" / ".env").rmdir()
    codes = _run_codes(audit(toy))
    assert set(map(tuple, codes.values())) == {("A065",)}


def _edit_snapshot(path: Path) -> None:
    data = json.loads(path.read_text())
    data["python"] = "3.99.0"  # ran somewhere else than it says
    path.write_text(json.dumps(data, indent=2))


def test_an_edited_snapshot_is_a066_and_the_values_do_not_count(toy: Path) -> None:
    _edit_snapshot(_snapshot_of(toy, "scored-s0"))
    result = audit(toy)
    codes = _run_codes(result)
    assert [codes[r] for r in SCORED] == [["A066"]] * 3
    finding = result.attempts[0].runs[0].findings[0]
    assert (finding.severity, finding.path) == ("error", "/environment_sha256")
    assert not result.passed
    assert "compatible" not in _verdicts(result)


def test_a_record_pointed_at_another_snapshot_that_is_not_one_is_a066(toy: Path) -> None:
    text = b'{"python": "3.99.0"}\n'
    digest = hashlib.sha256(text).hexdigest()
    (toy / "runs" / ".env" / f"{digest}.json").write_bytes(text)
    edit_record(toy / "runs" / "scored-s1", lambda d: d.update(environment_sha256=digest))
    codes = _run_codes(audit(toy))
    assert codes["scored-s1"] == ["A066"]
    assert codes["scored-s0"] == []


def test_a_snapshot_that_is_a_link_is_a066_even_to_the_same_bytes(toy: Path) -> None:
    path = _snapshot_of(toy, "scored-s0")
    elsewhere = toy / "elsewhere.json"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == path.stem
    codes = _run_codes(audit(toy))
    assert [codes[r] for r in SCORED] == [["A066"]] * 3


def test_an_env_directory_that_leads_out_of_the_runs_is_a066(toy: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (toy / "runs" / ".env").rename(outside)
    (toy / "runs" / ".env").symlink_to(outside, target_is_directory=True)
    codes = _run_codes(audit(toy))
    assert set(map(tuple, codes.values())) == {("A066",)}


def test_an_oversized_snapshot_is_refused_unread(toy: Path) -> None:
    path = _snapshot_of(toy, "scored-s0")
    with path.open("r+b") as handle:  # sparse: 9 MiB without writing them
        handle.truncate(9 * 1024 * 1024)
    codes = _run_codes(audit(toy))
    assert [codes[r] for r in SCORED] == [["A066"]] * 3


def test_a_snapshot_replaced_between_two_audits_is_seen(toy: Path) -> None:
    assert _run_codes(audit(toy))["scored-s0"] == []
    path = _snapshot_of(toy, "scored-s0")
    replacement = path.with_name("new.tmp")
    replacement.write_bytes(path.read_bytes().replace(b'"python"', b'"python" '))
    os.replace(replacement, path)
    assert _run_codes(audit(toy))["scored-s0"] == ["A066"]


def test_a_record_of_format_1_0_embeds_its_snapshot_and_needs_none(toy: Path) -> None:
    for run in SCORED:
        snapshot = json.loads(_snapshot_of(toy, run).read_text())

        def _as_1_0(data: dict[str, object], snapshot: dict[str, object] = snapshot) -> None:
            data.pop("environment_sha256")
            data["environment"] = snapshot
            data["record_version"] = "1.0"

        edit_record(toy / "runs" / run, _as_1_0)
    for path in (toy / "runs" / ".env").iterdir():
        path.unlink()
    result = audit(toy)
    codes = _run_codes(result)
    assert [codes[r] for r in SCORED] == [[]] * 3
    assert codes["smoke-s0"] == ["A065"]  # still names its own, now removed
    assert _verdicts(result) == ["compatible", "compatible"]
    record = load_record(toy / "runs" / "scored-s0")
    assert read_snapshot(toy / "runs" / "scored-s0", record) == record.environment
