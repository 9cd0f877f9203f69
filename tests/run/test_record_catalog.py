"""Fresh records pass the schema SchemaStore's catalog maps them to, read by check-jsonschema.

The catalog maps every ``runs/*/record.json`` to ``evidence-1``, which checks a record against
the schema of its own ``record_version``. Here: the local executor's records (succeeded,
failed, the interim ``running`` one) and hand-made ones that probe the dispatch (a 1.0 record
with 1.1 fields, an unknown key, another major). The Dask and Slurm executors' records are
checked in their own tests (``test_executors.py``, ``test_executor_slurm.py``), with the same
helper.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from catalog_check import catalog_schema, check_as_catalogued

from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.run import run
from reprobridge_sdk.run.evidence import write_record

LAUNCHERS = ["ok", "fail", "no-command", "no-match", "no-output", "bad-template"]


def test_the_catalog_maps_records_to_the_schema_of_every_version() -> None:
    schema = catalog_schema(Path("art/runs/r1/record.json"))
    assert schema.name == "evidence-1.schema.json"
    assert sorted(json.loads(schema.read_text())["$defs"]) == ["evidence-1.0", "evidence-1.1"]


def test_local_records_pass_the_catalogued_schema(toy: Path) -> None:
    summary = run(toy, LAUNCHERS, env_mode="current", seeds=[0])
    records = [result.run_dir / RECORD_NAME for result in summary.results]
    statuses = {json.loads(p.read_text())["status"] for p in records}
    assert statuses == {"succeeded", "failed"}
    versions = {json.loads(p.read_text())["record_version"] for p in records}
    assert versions == {"1.1"}  # the runner's records name their executor (1.1)
    # The interim 'running' record of a run (runner field, 1.1).
    interim_dir = toy / "runs" / "interim"
    interim_dir.mkdir()
    running = summary.results[0].record.model_copy(update={"status": "running"})
    write_record(interim_dir, running, durable=False)
    records.append(interim_dir / RECORD_NAME)
    assert check_as_catalogued(records) == {str(p): [] for p in records}


def _variant(toy: Path, name: str, change: dict[str, Any], drop: tuple[str, ...] = ()) -> Path:
    summary = run(toy, ["ok"], env_mode="current", seeds=[0])
    data = json.loads((summary.results[0].run_dir / RECORD_NAME).read_text())
    for key in drop:
        data.pop(key, None)
    data.update(change)
    target = toy / "runs" / name / RECORD_NAME
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(data))
    return target


_LATER = ("executor", "environment_sha256", "lost_attempts", "runner")


@pytest.mark.parametrize(
    ("name", "change", "drop", "valid"),
    [
        ("as-1-0", {"record_version": "1.0"}, _LATER, True),
        ("no-version", {}, ("record_version", *_LATER), True),  # a record without it is 1.0
        ("legacy-owner", {"record_version": "1.0", "x-runner": {"pid": 7}}, _LATER, True),
        ("1-0-with-1-1-field", {"record_version": "1.0", "executor": "local"}, (), False),
        ("1-1-unknown-key", {"exector": "local"}, (), False),
        ("1-1-bad-runner", {"runner": {"pid": 0}}, (), False),
        ("newer-minor", {"record_version": "1.7", "something_new": 1}, (), True),
        ("other-major", {"record_version": "2.0"}, (), False),
        ("not-a-version", {"record_version": "1.x"}, (), False),
    ],
)
def test_the_catalogued_schema_dispatches_on_record_version(
    toy: Path, name: str, change: dict[str, Any], drop: tuple[str, ...], valid: bool
) -> None:
    path = _variant(toy, name, change, drop)
    errors = check_as_catalogued([path])[str(path)]
    assert (errors == []) is valid, errors
    # a second engine (Rust, ECMA-262 patterns) resolves the embedded schemas alike
    schema = json.loads(catalog_schema(path).read_text())
    assert jsonschema_rs.validator_for(schema).is_valid(json.loads(path.read_text())) is valid
