"""The runner of a ``running`` record: ``runner`` (1.1), a 1.0 record's ``x-runner``, or none.

A reader takes a ``running`` record as interrupted when the runner it names is gone or when
it names none; a 1.0 record names its runner with the extension key ``x-runner``, read by the
same rule. Records are written by :func:`write_record` and edited as JSON (a hostile or old
producer), then read with :func:`load_record` and checked against the committed schemas.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reprobridge_sdk.model import EvidenceRecord
from reprobridge_sdk.model.evidence import RunnerProcess
from reprobridge_sdk.run import load_record
from reprobridge_sdk.run.evidence import record_owner, utc_now, write_record

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / f"evidence-{version}.schema.json").read_text())
    return data


def _running(run_dir: Path) -> dict[str, Any]:
    run_dir.mkdir()
    record = EvidenceRecord(
        run_id=run_dir.name,
        artifact="toy",
        launcher="train",
        argv=["python", "train.py"],
        workdir=".",
        scope="scored",
        status="running",
        started_at=utc_now(),
    )
    write_record(run_dir, record, durable=False)
    data: dict[str, Any] = json.loads((run_dir / "record.json").read_text())
    return data


def _rewrite(run_dir: Path, data: dict[str, Any]) -> None:
    (run_dir / "record.json").write_text(json.dumps(data))


def _gone_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(proc.stdout)


def test_a_running_record_names_its_runner_in_the_1_1_field(tmp_path: Path) -> None:
    data = _running(tmp_path / "r1")
    assert data["runner"]["pid"] == os.getpid()
    assert "x-runner" not in data
    assert data["record_version"] == "1.1"
    jsonschema.validate(data, _schema("1.1"))
    with pytest.raises(jsonschema.ValidationError):  # 1.0 has no such field
        jsonschema.validate(data, _schema("1.0"))
    assert load_record(tmp_path / "r1").status == "running"


def test_the_final_record_names_no_runner_and_stays_1_0(tmp_path: Path) -> None:
    run_dir = tmp_path / "r1"
    run_dir.mkdir()
    record = EvidenceRecord(
        run_id="r1",
        artifact="toy",
        launcher="train",
        argv=["python", "train.py"],
        workdir=".",
        scope="scored",
        status="running",
        started_at=utc_now(),
    )
    write_record(run_dir, record, durable=False)  # as the runner does: interim, then final
    assert json.loads((run_dir / "record.json").read_text())["record_version"] == "1.1"
    final = record.model_copy(update={"status": "failed", "ended_at": utc_now()})
    write_record(run_dir, final)
    data = json.loads((run_dir / "record.json").read_text())
    assert "runner" not in data
    assert data["record_version"] == "1.0"
    jsonschema.validate(data, _schema("1.0"))
    stale = final.model_copy(update={"runner": RunnerProcess(pid=4242)})  # a final record
    write_record(run_dir, stale)  # holding a runner (a copy of a running one) loses it
    assert "runner" not in json.loads((run_dir / "record.json").read_text())


def test_a_1_0_record_s_x_runner_is_read_as_its_runner(tmp_path: Path) -> None:
    data = _running(tmp_path / "r1")
    data["x-runner"] = data.pop("runner")
    data["record_version"] = "1.0"
    _rewrite(tmp_path / "r1", data)
    jsonschema.validate(data, _schema("1.0"))
    assert record_owner(data) == {**data["x-runner"]}
    assert load_record(tmp_path / "r1").status == "running"  # this process: alive
    data["x-runner"]["pid"] = _gone_pid()
    _rewrite(tmp_path / "r1", data)
    record = load_record(tmp_path / "r1")
    assert (record.status, record.failure and record.failure.reason) == (
        "interrupted",
        "interrupted",
    )


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_a_running_record_that_names_no_runner_is_interrupted(tmp_path: Path, version: str) -> None:
    data = _running(tmp_path / "r1")
    del data["runner"]
    data["record_version"] = version
    _rewrite(tmp_path / "r1", data)
    jsonschema.validate(data, _schema(version))
    assert load_record(tmp_path / "r1").status == "interrupted"


@pytest.mark.parametrize(
    "junk", [None, "4242", [1], {"pid": "x"}, {"host": "h"}, {"pid": str(os.getpid())}]
)
def test_a_1_0_record_s_junk_x_runner_is_no_runner(tmp_path: Path, junk: object) -> None:
    data = _running(tmp_path / "r1")
    del data["runner"]
    data["x-runner"] = junk
    _rewrite(tmp_path / "r1", data)
    assert load_record(tmp_path / "r1").status == "interrupted"


def test_the_1_1_field_wins_over_a_stale_x_runner(tmp_path: Path) -> None:
    data = _running(tmp_path / "r1")
    data["x-runner"] = {"pid": _gone_pid()}
    _rewrite(tmp_path / "r1", data)
    assert load_record(tmp_path / "r1").status == "running"


@pytest.mark.parametrize(
    "runner", [{"pid": 0}, {"pid": True}, {"pid": "4242"}, {"pid": 1, "cmd": "x"}, "4242"]
)
def test_a_malformed_runner_field_is_not_a_valid_record(tmp_path: Path, runner: object) -> None:
    from reprobridge_sdk.run import RecordError

    data = _running(tmp_path / "r1")
    data["runner"] = runner
    _rewrite(tmp_path / "r1", data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema("1.1"))
    with pytest.raises(RecordError) as caught:
        load_record(tmp_path / "r1")
    assert [f.code for f in caught.value.findings] == ["N006"]
