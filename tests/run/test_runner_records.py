"""What the runner writes per run: one fsynced record, the snapshot once per invocation.

The interim ``running`` record is renamed into place without an fsync (the final record
replaces it); only the final record, and the invocation's environment snapshot that the
records name by digest (``runs/.env/<sha256>.json``, format 1.1), are fsynced.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from reprobridge_sdk.run import load_record, read_snapshot, run
from reprobridge_sdk.run.evidence import minimal_snapshot, write_snapshot


def test_only_the_final_record_of_each_run_is_fsynced(
    toy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spy, not a mock: each call still reaches the real fsync; it notes which file it was.
    synced: list[str] = []
    real_fsync = os.fsync

    def _spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", _spy)
    summary = run(toy, ["ok"], env_mode="current", seeds=[0, 1, 2])
    assert summary.exit_code == 0
    records = [p for p in synced if Path(p).name.startswith(".record.json.")]
    snapshots = [p for p in synced if Path(p).parent.name == ".env"]
    assert len(records) == 3  # one per run: the final record, never the 'running' one
    assert len(snapshots) == 1
    for result in summary.results:
        assert result.record.status == "succeeded"
        assert '"runner"' not in (result.run_dir / "record.json").read_text()


def test_one_snapshot_per_invocation_named_by_every_record(toy: Path) -> None:
    first = run(toy, ["ok"], env_mode="current", seeds=[0, 1, 2], jobs=2)
    kept = list((toy / "runs" / ".env").iterdir())
    assert len(kept) == 1
    digest = kept[0].stem
    assert hashlib.sha256(kept[0].read_bytes()).hexdigest() == digest
    for result in first.results:
        written = json.loads((result.run_dir / "record.json").read_text())
        assert (written["record_version"], written["environment_sha256"]) == ("1.1", digest)
        assert written["environment"] is None
        assert load_record(result.run_dir) == result.record
        snapshot = read_snapshot(result.run_dir, result.record)
        assert snapshot is not None
        assert snapshot.python == json.loads(kept[0].read_text())["python"]
    second = run(toy, ["ok"], env_mode="current", seeds=[0])
    # taken again; within the same second (the snapshot's clock) it is the same file
    named = {r.record.environment_sha256 for r in (*first.results, *second.results)}
    assert {p.stem for p in (toy / "runs" / ".env").iterdir()} == named


def test_where_the_snapshot_cannot_be_kept_the_records_embed_it(toy: Path) -> None:
    runs = toy / "runs"
    runs.mkdir()
    (runs / ".env").write_text("a file where the directory would go\n")
    summary = run(toy, ["ok"], env_mode="current", seeds=[0])
    assert summary.exit_code == 0
    (result,) = summary.results
    written = json.loads((result.run_dir / "record.json").read_text())
    assert written["record_version"] == "1.0"
    assert "environment_sha256" not in written
    assert written["environment"]["python"]
    assert (runs / ".env").read_text() == "a file where the directory would go\n"


def test_a_planted_link_at_the_snapshot_is_replaced_never_followed(tmp_path: Path) -> None:
    """A link where the snapshot goes (a hostile runs directory) is replaced by the file."""
    runs = tmp_path / "runs"
    snapshot = minimal_snapshot()
    digest = write_snapshot(runs, snapshot)
    path = runs / ".env" / f"{digest}.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    path.unlink()
    path.symlink_to(victim)
    assert write_snapshot(runs, snapshot) == digest
    assert victim.read_text() == "keep me\n"
    assert not path.is_symlink()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    before = path.stat().st_ino
    assert write_snapshot(runs, snapshot) == digest
    assert path.stat().st_ino == before  # the same snapshot again: left as it is


def _watchdogs() -> list[int]:
    """This process's children that are the runner's watchdog."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat[stat.rfind(")") + 2 :].split()[1])
        if parent == os.getpid() and b"groups=set()" in b"".join(cmdline):
            found.append(int(entry.name))
    return found


def test_one_watchdog_serves_every_run_of_the_runner_process(toy: Path) -> None:
    summary = run(toy, ["ok"], env_mode="current", seeds=[0, 1, 2], jobs=2)
    assert summary.exit_code == 0
    (watchdog,) = _watchdogs()  # started with the first run, then shared
    run(toy, ["ok"], env_mode="current", seeds=[3])
    assert _watchdogs() == [watchdog]


def test_the_ledger_grows_by_appending_and_a_torn_last_line_is_left_behind(toy: Path) -> None:
    first = run(toy, ["ok"], env_mode="current", seeds=[0])
    ledger = toy / "runs" / "ledger.jsonl"
    inode = ledger.stat().st_ino
    with ledger.open("ab") as handle:  # a machine crash in the middle of an append
        handle.write(b'{"seq": 2, "prev": "')
    second = run(toy, ["ok"], env_mode="current", seeds=[1])
    assert ledger.stat().st_ino == inode  # appended to, never rewritten
    lines = ledger.read_bytes().split(b"\n")
    assert lines[1] == b'{"seq": 2, "prev": "'  # kept: the auditor reports it (A051)
    from reprobridge_sdk.run.ledger import read_ledger

    state = read_ledger(toy / "runs")
    assert [e.run_id for e in state.entries] == [first.results[0].run_id, second.results[0].run_id]
    assert [e.seq for e in state.entries] == [1, 2]
    assert state.entries[1].prev == state.entries[0].hash
    assert [f.code for f in state.findings] == ["A051"]
    assert second.ledger_head == state.head
