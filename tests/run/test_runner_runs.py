"""The runner on real subprocesses: records, templates, failures, outputs, parallel runs."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model import EvidenceRecord
from reprobridge_sdk.run import (
    RunEvent,
    RunResult,
    iter_runs,
    load_record,
    read_snapshot,
    run,
)


def _only(summary_results: Sequence[RunResult], launcher: str) -> EvidenceRecord:
    records = [r.record for r in summary_results if r.record.launcher == launcher]
    assert len(records) == 1
    return records[0]


def test_success_over_seeds(toy: Path) -> None:
    events: list[RunEvent] = []
    summary = run(toy, ["ok"], env_mode="current", on_event=events.append)
    assert summary.exit_code == 0
    assert sorted(r.record.seed or 0 for r in summary.results) == [0, 1, 2]
    for result in summary.results:
        record = load_record(result.run_dir)
        seed = record.seed
        assert seed is not None
        assert record.status == "succeeded"
        assert result.run_dir.parent == toy / "runs"
        assert record.argv[4] == str(seed)
        assert record.argv[6] == f"{result.run_dir}/m.json"
        assert record.argv[8] == "alpha"
        assert [(m.task, m.value, m.source) for m in record.measurements] == [
            ("acc", round((0.9 + seed / 100) * 100, 4), "log"),
            ("acc-json", pytest.approx((0.9 + seed / 100) * 100), "output:metrics"),
        ]
        assert [h.id for h in record.landmarks] == ["loaded", "trained", "done"]
        assert [h.line for h in record.landmarks] == [1, 2, 4]
        assert record.log is not None
        assert record.log.path == "log.txt"
        assert record.log.sha256 == file_sha256(result.run_dir / "log.txt")
        (output,) = record.outputs
        assert (output.id, output.path) == ("metrics", "outputs/metrics/m.json")
        assert output.preexisting is False
        assert output.sha256 == file_sha256(result.run_dir / output.path)
        assert record.code_tree_digest is not None
        assert record.code_tree_digest.startswith("sha256-tree1:")
        # the snapshot is kept once in the runs directory and named by digest (format 1.1)
        assert record.environment is None
        assert record.environment_sha256 is not None
        assert read_snapshot(result.run_dir, record) is not None
        assert '"runner"' not in (result.run_dir / "record.json").read_text()
    (acc, acc_json) = summary.tasks
    assert (acc.task, acc.complete) == ("acc", True)
    assert acc.value == pytest.approx(91.0)
    assert acc_json.values == pytest.approx((90.0, 91.0, 92.0))
    kinds = [e.event for e in events]
    assert kinds.count("run-started") == 3
    assert kinds.count("run-finished") == 3
    assert kinds.count("landmark") == 9
    assert kinds[-1] == "summary"
    # Runs never overwrite each other: a second invocation adds three more directories.
    run(toy, ["ok"], env_mode="current", seeds=[0])
    assert len(list(iter_runs(toy / "runs"))) == 4


#: A run that waits for its two siblings: it marks its start in a directory and ends once three
#: runs marked theirs (120 s at most: a hang guard). Run one after another, the first would
#: wait the whole 120 s; run in parallel, none ends before all started, however loaded the
#: machine (a run of a fixed second could end before a loaded machine started the third).
_BARRIER = (
    "import os, sys, time\n"
    "met = sys.argv[1]\n"
    "open(os.path.join(met, sys.argv[2]), 'w').close()\n"
    "end = time.monotonic() + 120\n"
    "while len(os.listdir(met)) < 3 and time.monotonic() < end:\n"
    "    time.sleep(0.02)\n"
    "print('acc=0.' + sys.argv[2])\n"
)


def test_seeds_override_and_parallel_jobs(toy: Path, tmp_path: Path) -> None:
    met = tmp_path / "met"
    met.mkdir()
    manifest = toy / "rra.yaml"
    launcher = (
        "  - id: barrier\n"
        f"    argv: [python, -c, {json.dumps(_BARRIER)}, {json.dumps(str(met))}, '{{seed}}']\n"
        "    seeds: [0]\n"
        "    scope: smoke\n"
        "    measurements: [{task: acc, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]\n"
    )
    text = manifest.read_text("utf-8")
    manifest.write_text(text.replace("launchers:\n", "launchers:\n" + launcher, 1), "utf-8")
    summary = run(toy, ["barrier"], env_mode="current", jobs=3, seeds=[5, 6, 7])
    assert summary.exit_code == 0
    records = [r.record for r in summary.results]
    assert sorted(r.seed or 0 for r in records) == [5, 6, 7]
    assert sorted(m.value for r in records for m in r.measurements) == [0.5, 0.6, 0.7]
    # Parallel: every run started before any of them ended.
    assert max(r.started_at for r in records) < min(r.ended_at or "" for r in records)


def test_shell_launcher_with_templates_and_env(toy: Path) -> None:
    summary = run(toy, ["shell"], env_mode="current")
    record = _only(summary.results, "shell")
    assert record.status == "succeeded"
    assert record.shell is True
    assert record.argv == ["echo acc=0.45 && echo 'brace {x}' && echo \"$TOY_VAR\""]
    assert [m.value for m in record.measurements] == [0.45]
    assert [h.id for h in record.landmarks] == ["brace", "var"]


@pytest.mark.parametrize(
    ("launcher", "reason", "last"),
    [
        ("fail", "exit-status", "loaded"),
        ("no-command", "command-not-found", None),
        ("shell-no-command", "command-not-found", None),
        ("no-match", "extraction-failed", None),
        ("not-number", "extraction-failed", None),
        ("no-output", "missing-output", None),
        ("bad-template", "template-error", None),
    ],
)
def test_failure_reasons(toy: Path, launcher: str, reason: str, last: str | None) -> None:
    summary = run(toy, [launcher], env_mode="current")
    assert summary.exit_code == 1
    record = _only(summary.results, launcher)
    assert record.status == "failed"
    assert record.failure is not None
    assert (record.failure.reason, record.failure.last_landmark) == (reason, last)
    assert load_record(summary.results[0].run_dir) == record


def test_extraction_errors_are_recorded_per_measurement(toy: Path) -> None:
    summary = run(toy, ["no-match", "not-number", "no-output"], env_mode="current")
    errors = {r.record.launcher: r.record.measurements[0].error for r in summary.results}
    assert {k: (v or "").split(":")[0] for k, v in errors.items()} == {
        "no-match": "no-match",
        "not-number": "not-number",
        "no-output": "missing-file",
    }
    assert all(r.record.measurements[0].value is None for r in summary.results)


def test_dependency_failed_is_recorded_without_running(toy: Path) -> None:
    summary = run(toy, ["fail", "after-fail"], env_mode="current")
    record = _only(summary.results, "after-fail")
    assert record.failure is not None
    assert record.failure.reason == "dependency-failed"
    assert record.exit_code is None
    assert not (toy / "runs" / record.run_id / "log.txt").exists()


def test_needed_launcher_is_added_when_never_run(toy: Path) -> None:
    summary = run(toy, ["after-fail"], env_mode="current")
    assert sorted(r.record.launcher for r in summary.results) == ["after-fail", "fail"]


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, killed but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def test_timeout_kills_a_process_group_that_ignores_sigterm(toy: Path) -> None:
    # The launcher's 5 s timeout is a race with the start of Python on a loaded machine: a run
    # timed out before its process forked and printed 'loaded' did not exercise the kill of a
    # group that ignores SIGTERM, so it is run again (each attempt is a timeout all the same).
    for _ in range(5):
        started = time.monotonic()
        summary = run(toy, ["hang"], env_mode="current", kill_grace=0.5)
        # A guard, not a measure: the toy sleeps 300 s; ending before shows it was killed.
        assert time.monotonic() - started < 150
        record = _only(summary.results, "hang")
        assert record.failure is not None
        assert record.failure.reason == "timeout"
        if record.failure.last_landmark is not None:
            break
    assert (record.failure.reason, record.failure.last_landmark) == ("timeout", "loaded")
    pids = [int(p) for p in (summary.results[-1].run_dir / "pids.txt").read_text().split()]
    # SIGKILL was sent to the group before run() returned; its delivery may lag a moment
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if _alive(pid)] == [], "processes survived the timeout"


def test_non_utf8_log(toy: Path) -> None:
    summary = run(toy, ["binary"], env_mode="current")
    record = _only(summary.results, "binary")
    assert record.status == "succeeded"
    assert [m.value for m in record.measurements] == [0.5]
    assert [(h.id, h.line) for h in record.landmarks] == [("loaded", 2)]
    assert b"\xff\xfe" in (summary.results[0].run_dir / "log.txt").read_bytes()


def test_preexisting_output_is_never_a_measurement_source(toy: Path) -> None:
    summary = run(toy, ["shipped"], env_mode="current")
    record = _only(summary.results, "shipped")
    (output,) = record.outputs
    assert (output.id, output.preexisting) == ("score", True)
    assert output.sha256 == file_sha256(toy / "code" / "shipped" / "score.json")
    assert record.failure is not None
    assert record.failure.reason == "missing-output"
    assert record.measurements[0].value is None
    assert (record.measurements[0].error or "").startswith("missing-file")


@pytest.mark.parametrize(
    ("ids", "scope", "code"),
    [(["nope"], None, "N001"), (["ok"], "smoke", "N002")],
)
def test_usage_errors(toy: Path, ids: list[str], scope: str | None, code: str) -> None:
    with pytest.raises(UsageError) as info:
        run(toy, ids, scope=scope, env_mode="current")
    assert [f.code for f in info.value.findings] == [code]
    assert not (toy / "runs").exists()


@pytest.mark.parametrize(
    "kwargs", [{"jobs": 0}, {"timeout": -1.0}, {"env_mode": "docker"}, {"scope": "full"}]
)
def test_bad_options(toy: Path, kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError) as info:
        run(toy, ["ok"], **kwargs)  # type: ignore[arg-type]
    assert [f.code for f in info.value.findings] == ["N004"]


def test_unloadable_artifact(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        run(tmp_path, env_mode="current")
    assert [f.code for f in info.value.findings] == ["N007"]


def test_record_is_valid_json_of_the_model(toy: Path) -> None:
    summary = run(toy, ["shell"], env_mode="current")
    data = json.loads((summary.results[0].run_dir / "record.json").read_text("utf-8"))
    assert EvidenceRecord.model_validate(data).status == "succeeded"


def test_records_validate_against_the_published_schema(toy: Path, repo_root: Path) -> None:
    import jsonschema

    summary = run(toy, ["ok", "no-match", "shipped"], env_mode="current", seeds=[0])
    snapshot = next((toy / "runs" / ".env").iterdir())
    schemas = repo_root / "schemas"
    for result in summary.results:
        data = json.loads((result.run_dir / "record.json").read_text("utf-8"))
        version = data["record_version"]  # 1.1: the snapshot is named by digest
        assert version == "1.1"
        jsonschema.validate(
            data, json.loads((schemas / f"evidence-{version}.schema.json").read_text())
        )
        # the 1.0 form, the snapshot embedded, is valid against the 1.0 schema
        data.pop("environment_sha256")
        for measured in data["measurements"]:
            measured.pop("count", None)  # 1.1 too (occurrence 'all')
        data.update(record_version="1.0", environment=json.loads(snapshot.read_text()))
        jsonschema.validate(data, json.loads((schemas / "evidence-1.0.schema.json").read_text()))


def test_needed_launcher_with_an_earlier_success_is_not_rerun(toy: Path) -> None:
    manifest = toy / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("needs: [fail]", "needs: [shell]"))
    assert run(toy, ["shell"], env_mode="current").exit_code == 0
    summary = run(toy, ["after-fail"], env_mode="current")
    assert [r.record.launcher for r in summary.results] == ["after-fail"]
    assert summary.exit_code == 0


def test_a_scope_no_launcher_has_selects_nothing(toy: Path) -> None:
    manifest = toy / "rra.yaml"
    text = manifest.read_text("utf-8")
    assert "scope: scored" in text
    manifest.write_text(text.replace("scope: scored", "scope: smoke"), "utf-8")
    with pytest.raises(UsageError) as info:
        run(toy, scope="scored", env_mode="current")
    assert [(f.code, f.hint) for f in info.value.findings] == [
        ("N005", "check the ids and --scope")
    ]
    assert not (toy / "runs").exists()


@pytest.mark.parametrize("content", [None, b"{not json", b'{"record_version": "1.0"}'])
def test_a_directory_without_a_readable_record(tmp_path: Path, content: bytes | None) -> None:
    from reprobridge_sdk.run import RecordError

    if content is not None:
        (tmp_path / "record.json").write_bytes(content)
    with pytest.raises(RecordError) as info:
        load_record(tmp_path)
    assert [(f.code, f.file) for f in info.value.findings] == [
        ("N006", str(tmp_path / "record.json"))
    ]
