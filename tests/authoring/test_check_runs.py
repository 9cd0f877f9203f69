"""``check`` judges only the runs it made, and a record it cannot read is a finding.

An artifact or an evidence archive may carry a ``runs/`` folder of its own: its records are
never counted as the check's runs, whatever they hold. A record the check cannot read
(malformed JSON, not UTF-8, not an object, over the evidence size cap, a link, nested too
deep) is reported with the auditor's code for an unreadable record (A001), never a traceback;
fields of the wrong type fail the run with a sentence.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

from toy_study import make_artifact

from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.check import _runs_of, check
from reprobridge_sdk.io.safefs import MAX_EVIDENCE_BYTES, MAX_JSON_DEPTH

GOOD: dict[str, Any] = {
    "run_id": "good",
    "scope": "smoke",
    "launcher": "smoke",
    "status": "succeeded",
    "landmarks": [{"id": "done"}],
}


def _hostile_runs(runs: Path, outside: Path) -> dict[str, str]:
    """Write one hostile run folder per case under ``runs``; its name -> what the detail says."""
    cases: dict[str, bytes | None] = {
        "malformed": b'{"scope": "smoke", ',
        "not-utf8": b'{"scope": "smoke", "run_id": "\xff\xfe"}',
        "not-object": b'["scope", "smoke"]',
        "too-deep": b"[" * (MAX_JSON_DEPTH + 10) + b"]" * (MAX_JSON_DEPTH + 10),
        "huge": None,
        "linked": None,
    }
    for name, data in cases.items():
        (runs / name).mkdir(parents=True)
        if data is not None:
            (runs / name / "record.json").write_bytes(data)
    with (runs / "huge" / "record.json").open("wb") as handle:  # sparse: nothing written
        handle.truncate(MAX_EVIDENCE_BYTES + 1)
    outside.write_text(json.dumps({**GOOD, "run_id": "linked"}))
    (runs / "linked" / "record.json").symlink_to(outside)
    (runs / "wrong-types").mkdir()
    wrong = {"scope": "smoke", "status": "failed", "failure": "boom", "launcher": ["x"]}
    (runs / "wrong-types" / "record.json").write_text(json.dumps(wrong))
    (runs / "bad-landmarks").mkdir()
    odd = {**GOOD, "run_id": "bad-landmarks", "landmarks": [1, "x", {"id": ["done"]}]}
    (runs / "bad-landmarks" / "record.json").write_text(json.dumps(odd))
    (runs / "old-failure").mkdir()
    old = {**GOOD, "run_id": "old-failure", "status": "failed"}
    (runs / "old-failure" / "record.json").write_text(json.dumps(old))
    return dict.fromkeys(cases, "cannot read the record") | {
        "wrong-types": "wrong-types: failed",
        "bad-landmarks": "bad-landmarks: landmark(s) not reached",
        "old-failure": "old-failure: failed",
    }


def test_a_record_the_check_cannot_read_is_an_a001_finding(tmp_path: Path) -> None:
    artifact = make_artifact(tmp_path / "toy")
    manifest = load(artifact).manifest
    expected = _hostile_runs(artifact / "runs", tmp_path / "outside.json")
    ok, detail, found = _runs_of(artifact, "smoke", manifest, frozenset())
    assert not ok
    for name, says in expected.items():
        assert f"{name}: " in detail, name
        assert says in detail, (name, detail)
    unreadable = [n for n, says in expected.items() if says == "cannot read the record"]
    assert sorted(f.file for f in found) == sorted(f"runs/{n}/record.json" for n in unreadable)
    assert {f.code for f in found} == {"A001"}
    assert all(f.message.startswith("cannot read the record: ") for f in found)


def test_runs_that_were_there_before_the_check_never_count(tmp_path: Path) -> None:
    artifact = make_artifact(tmp_path / "toy")
    manifest = load(artifact).manifest
    _hostile_runs(artifact / "runs", tmp_path / "outside.json")
    before = frozenset(os.listdir(artifact / "runs"))
    (artifact / "runs" / "new").mkdir()
    (artifact / "runs" / "new" / "record.json").write_text(json.dumps({**GOOD, "run_id": "new"}))
    assert _runs_of(artifact, "smoke", manifest, before) == (
        True,
        "1 smoke run(s) succeeded, every landmark reached",
        [],
    )


def test_check_of_an_archive_carrying_hostile_runs_counts_only_its_own(tmp_path: Path) -> None:
    """The toy builds offline in seconds; its archive carries old and hostile run folders."""
    artifact = make_artifact(tmp_path / "toy")
    _hostile_runs(artifact / "runs", tmp_path / "outside.json")
    (artifact / "runs" / "linked" / "record.json").unlink()  # the archive refuses links out
    (artifact / "runs" / "huge" / "record.json").write_bytes(b"{" * 10)  # keep the tar small
    archive = tmp_path / "toy.tar"
    with tarfile.open(archive, "w") as tar:
        for entry in sorted(artifact.iterdir()):
            tar.add(entry, arcname=entry.name)
    report = check(archive, sandbox=False, work_dir=tmp_path)
    steps = {step.name: step for step in report.steps}
    assert steps["copy"].ok, steps["copy"].detail
    assert steps["smoke"].ok, steps["smoke"].detail
    assert steps["smoke"].detail == "3 smoke run(s) succeeded, every landmark reached"
    assert steps["smoke"].findings == []
