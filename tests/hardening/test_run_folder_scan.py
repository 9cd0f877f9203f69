"""Links and special files a launcher plants anywhere in its run folder (not only at its log or
outputs): the runner's scan after the run (N024, the record's ``run_folder``) and the
auditor's own scan (A069, an error under ``--trust``).

Real launchers run by the real runner (subprocesses of the current interpreter), the real
auditor and the real CLI. Nothing planted is followed, read or hashed: the secret a link points
to never appears in a record or a report, and a FIFO never blocks the runner or the auditor.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from toy_study import make_artifact

from reprobridge_sdk.audit import audit
from reprobridge_sdk.findings import Severity
from reprobridge_sdk.io import planted
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.audit import AuditResult
from reprobridge_sdk.run import RunEvent, load_record, run
from reprobridge_sdk.run.executors import ExecutorOptions
from reprobridge_sdk.signing import SigningKey, generate_key, parse_trusted_keys
from reprobridge_sdk.signing.keys import public_line

CLI = [sys.executable, "-m", "reprobridge_sdk"]
SECRET = "acc=0.4242 top secret of the host\n"

# A launcher that leaves, besides its log: a link to a host secret, a FIFO, a unix socket (bound
# from inside the run folder: a socket path is at most 108 bytes), a link to the secret three
# directories down and a link that stays inside the folder (planted too: a run writes files).
PLANT_ALL = """
import os, socket, sys
run_dir, secret = sys.argv[1:3]
print("acc=1", flush=True)
os.chdir(run_dir)
os.symlink(secret, "leak")
os.mkfifo("pipe")
server = socket.socket(socket.AF_UNIX)
server.bind("sock")
server.close()
os.makedirs("a/b/c")
os.symlink(secret, "a/b/c/deep")
os.symlink("../../log.txt", "a/b/inside")
with open("a/b/regular.txt", "w") as handle:
    handle.write("fine")
"""

PLANTED = [
    ("a/b/c/deep", "link"),
    ("a/b/inside", "link"),
    ("leak", "link"),
    ("pipe", "fifo"),
    ("sock", "socket"),
]

# A launcher that writes many regular files (more than a lowered cap) and one link last.
MANY = """
import os, sys
run_dir, count = sys.argv[1], int(sys.argv[2])
print("acc=1", flush=True)
os.makedirs(os.path.join(run_dir, "many"))
for number in range(count):
    with open(os.path.join(run_dir, "many", f"f{number:04d}"), "w") as handle:
        handle.write("x")
"""

CLEAN = """
import os, sys
print("acc=1", flush=True)
os.makedirs(os.path.join(sys.argv[1], "sub", "deeper"))
with open(os.path.join(sys.argv[1], "sub", "deeper", "out.txt"), "w") as handle:
    handle.write("fine")
"""


def _artifact(root: Path, argv: list[str], script: str) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "plant.py").write_text(script)
    manifest = {
        "rra_version": "1.0",
        "artifact": {"id": "planted", "title": "P", "license": "MIT", "paper": {"title": "P"}},
        "codebase": {
            "upstream": {"repository": "https://example.org/p.git", "commit": "0" * 40},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": f"{sys.version_info.major}.{sys.version_info.minor}"},
        "tasks": [
            {
                "id": "acc",
                "dataset": "d",
                "metric": "m",
                "published": {"value": 1.0},
                "direction": "higher",
                "kind": "full",
            }
        ],
        "launchers": [
            {
                "id": "plant",
                "scope": "smoke",
                "workdir": "code",
                "argv": ["python", "plant.py", "{run_dir}", *argv],
            }
        ],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    return secret


def _run(root: Path) -> tuple[Any, list[dict[str, Any]]]:
    events: list[RunEvent] = []
    (result,) = run(root, ["plant"], env_mode="current", on_event=events.append).results
    return result, [e.data for e in events if e.event == "finding"]


def _folder_findings(result: AuditResult) -> list[Any]:
    return [f for r in result.attempts[0].runs for f in r.findings if f.code == "A069"]


# ------------------------------------------------------------------------ the runner


def test_every_link_fifo_and_socket_of_the_run_folder_is_named_n024(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    root = _artifact(tmp_path / "art", [str(secret)], PLANT_ALL)
    started = time.monotonic()
    result, findings = _run(root)
    assert time.monotonic() - started < 60  # the FIFO was never opened
    record = result.record
    assert record.status == "succeeded"  # its log and outputs are fine: a warning only
    assert record.run_folder is not None
    assert [(e.path, e.kind) for e in record.run_folder.planted] == PLANTED
    assert record.run_folder.stopped is None
    assert [(f["code"], f["severity"], f["path"]) for f in findings] == [
        ("N024", "warning", "/run_folder")
    ]
    assert findings[0]["file"] == str(result.run_dir / RECORD_NAME)
    for path, kind in PLANTED:
        assert f"{path!r} ({kind})" in findings[0]["message"]
    text = (result.run_dir / RECORD_NAME).read_text()
    data = json.loads(text)
    assert data["record_version"] == "1.1"
    assert data["run_folder"]["planted"][0] == {"path": "a/b/c/deep", "kind": "link"}
    assert "stopped" not in data["run_folder"] or data["run_folder"]["stopped"] is None
    assert load_record(result.run_dir).run_folder == record.run_folder
    for shown in (text, json.dumps(findings)):
        assert "0.4242" not in shown
        assert "top secret" not in shown
        assert hashlib.sha256(SECRET.encode()).hexdigest() not in shown


def test_the_cli_prints_n024_and_never_blocks_on_the_fifo(tmp_path: Path) -> None:
    """In its own process with a deadline: a runner that opened the FIFO would wait for ever
    for a writer; the test fails instead of hanging the suite."""
    secret = _secret(tmp_path)
    root = _artifact(tmp_path / "art", [str(secret)], PLANT_ALL)
    runs = tmp_path / "runs"
    cmd = [*CLI, "run", "plant", "-C", str(root), "--env", "current", "--no-validate"]
    cmd += ["--runs-dir", str(runs)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the runner blocked on the planted FIFO")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "N024" in line]
    assert len(lines) == 1
    assert " N024 warning " in lines[0]
    for path, _ in PLANTED:
        assert repr(path) in lines[0]
    assert "0.4242" not in done.stdout + done.stderr
    (record_path,) = runs.glob(f"*/{RECORD_NAME}")
    assert [e["path"] for e in json.loads(record_path.read_text())["run_folder"]["planted"]] == [
        p for p, _ in PLANTED
    ]


def test_a_clean_run_folder_gives_no_finding_and_no_run_folder_field(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", [], CLEAN)
    result, findings = _run(root)
    assert result.record.status == "succeeded"
    assert result.record.run_folder is None
    assert findings == []
    data = json.loads((result.run_dir / RECORD_NAME).read_text())
    assert "run_folder" not in data
    assert _folder_findings(audit(root)) == []


def test_a_run_folder_past_the_entry_cap_says_the_scan_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap lowered for the test (the same code path as 100,000 entries, in a second)."""
    monkeypatch.setattr(planted, "MAX_SCAN_ENTRIES", 20)
    root = _artifact(tmp_path / "art", ["50"], MANY)
    result, findings = _run(root)
    scan = result.record.run_folder
    assert scan is not None
    assert scan.stopped == "entries"
    assert scan.stopped_at is not None
    assert scan.stopped_at.startswith("many/")
    assert [(f["code"], f["path"]) for f in findings] == [("N024", "/run_folder")]
    assert "it looked at 20 entries (its cap)" in findings[0]["message"]
    (a069,) = _folder_findings(audit(root))
    assert a069.severity == "warning"
    assert "20 entries" in a069.message


def test_a_non_utf8_name_is_recorded_escaped_and_the_record_still_written(
    tmp_path: Path,
) -> None:
    script = (
        "import os, sys\nprint('acc=1', flush=True)\n"
        "os.symlink('/', os.path.join(os.fsencode(sys.argv[1]), b'bad\\xff\\x1b]52;name'))\n"
    )
    root = _artifact(tmp_path / "art", [], script)
    result, findings = _run(root)
    assert result.record.status == "succeeded"
    assert result.record.run_folder is not None
    (entry,) = result.record.run_folder.planted
    assert (entry.path, entry.kind) == ("bad\\xff\x1b]52;name", "link")
    assert "\x1b" not in findings[0]["message"]  # the path is quoted: no raw ESC on a terminal
    assert load_record(result.run_dir).run_folder == result.record.run_folder


# ------------------------------------------------------------------------ the auditor


def test_the_auditor_reports_a069_for_what_the_launcher_planted(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    root = _artifact(tmp_path / "art", [str(secret)], PLANT_ALL)
    result, _ = _run(root)
    started = time.monotonic()
    report = audit(root)
    assert time.monotonic() - started < 60
    (a069,) = _folder_findings(report)
    assert (a069.severity, a069.path) == ("warning", "")
    assert a069.file == f"{result.run_dir.name}/{RECORD_NAME}"
    for path, kind in PLANTED:
        assert f"{path!r} ({kind})" in a069.message
    done = subprocess.run(
        [*CLI, "audit", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "A069" in done.stdout
    for shown in (done.stdout + done.stderr, report.model_dump_json()):
        assert "0.4242" not in shown
        assert "top secret" not in shown
        assert hashlib.sha256(SECRET.encode()).hexdigest() not in shown


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key()[1]


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory, key: SigningKey) -> Path:
    root = make_artifact(tmp_path_factory.mktemp("signed") / "toy")
    summary = run(root, ["scored"], env_mode="current", seeds=[0, 1, 2], sign_key=key)
    assert all(r.record.status == "succeeded" for r in summary.results)
    assert all(r.record.run_folder is None for r in summary.results)
    return root


@pytest.fixture
def toy(signed: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(signed, target, symlinks=True)
    return target


def _run_dirs(toy: Path) -> list[Path]:
    return sorted(p for p in (toy / "runs").iterdir() if (p / RECORD_NAME).is_file())


def test_the_auditor_does_not_trust_a_record_that_says_nothing_was_planted(
    toy: Path, key: SigningKey, tmp_path: Path
) -> None:
    """A link and a FIFO added after the run: the record (signed) names none; the auditor's
    own scan finds them. A warning without ``--trust``; under it an error that taints the run."""
    secret = _secret(tmp_path)
    first = _run_dirs(toy)[0]
    (first / "outputs" / "nested").mkdir(parents=True)
    (first / "outputs" / "nested" / "key").symlink_to(secret)
    os.mkfifo(first / "fifo")
    plain = audit(toy)
    (a069,) = _folder_findings(plain)
    assert a069.severity == "warning"
    assert "'fifo' (fifo)" in a069.message
    assert "'outputs/nested/key' (link)" in a069.message
    (checked,) = [r for r in plain.attempts[0].runs if r.run == first.name]
    assert checked.valid
    assert {a.verdict for t in plain.tasks for a in t.attempts if t.id == "acc"} == {"compatible"}
    trusted = parse_trusted_keys(f"{public_line('alice', key)}\n")
    strict = audit(toy, trust=trusted)
    (a069,) = _folder_findings(strict)
    assert a069.severity == Severity.ERROR.value
    (checked,) = [r for r in strict.attempts[0].runs if r.run == first.name]
    assert not checked.valid
    assert {a.verdict for t in strict.tasks for a in t.attempts if t.id == "acc"} == {
        "invalid-evidence"
    }
    assert "0.4242" not in strict.model_dump_json()


def test_entries_the_record_names_but_that_are_gone_are_still_a069(toy: Path) -> None:
    first = _run_dirs(toy)[0]
    data = json.loads((first / RECORD_NAME).read_text())
    data["record_version"] = "1.1"
    data["run_folder"] = {"planted": [{"path": "leak", "kind": "link"}]}
    (first / RECORD_NAME).write_text(json.dumps(data))
    (a069,) = _folder_findings(audit(toy))
    assert (a069.path, a069.severity) == ("/run_folder", "warning")
    assert "'leak' (link)" in a069.message


def test_the_clean_signed_toy_has_no_a069_even_under_trust(toy: Path, key: SigningKey) -> None:
    trusted = parse_trusted_keys(f"{public_line('alice', key)}\n")
    assert _folder_findings(audit(toy)) == []
    assert _folder_findings(audit(toy, trust=trusted)) == []


# ------------------------------------------------------------------------ the scan itself


def test_the_depth_cap_is_said_and_the_rest_is_still_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planted, "MAX_SCAN_DEPTH", 2)
    deep = tmp_path / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    (deep / "hidden").symlink_to("/")
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "near").symlink_to("/")
    found = planted.scan_tree(tmp_path)
    assert found.planted == (("z/near", "link"),)
    assert (found.stopped, found.stopped_at) == ("depth", "a/b/c")


def test_the_deadline_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planted, "SCAN_SECONDS", -1.0)
    (tmp_path / "x").write_text("x")
    found = planted.scan_tree(tmp_path)
    assert (found.stopped, found.stopped_at) == ("deadline", "x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists a directory of mode 000")
def test_a_directory_that_cannot_be_listed_is_said(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden").symlink_to("/")
    locked.chmod(0)
    try:
        found = planted.scan_tree(tmp_path)
    finally:
        locked.chmod(0o755)
    assert (found.stopped, found.stopped_at) == ("unreadable", "locked")


def test_devices_are_named_by_kind(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    try:
        os.mknod(tmp_path / "null", 0o600 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("device nodes cannot be made here (a container without CAP_MKNOD)")
    assert planted.scan_tree(tmp_path).planted == (("null", "char-device"),)


# ------------------------------------------------------------------------ remote workers


def test_a_remote_run_reports_n024_and_ships_no_planted_entry(tmp_path: Path) -> None:
    """A worker without a shared file system sends the run folder's files back: the link to
    the worker's secret stays behind (never read, never a file on the client), and the scan's
    N024 travels back with the record."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    secret = _secret(tmp_path)
    root = _artifact(tmp_path / "art", [str(secret)], PLANT_ALL)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
    ) as cluster:
        options = ExecutorOptions(scheduler=cluster.scheduler_address, shared_fs=False)
        events: list[RunEvent] = []
        summary = run(
            root,
            ["plant"],
            env_mode="current",
            executor="dask",
            executor_options=options,
            on_event=events.append,
        )
    (result,) = summary.results
    assert result.run_dir.parent == root / "runs"
    assert result.record.run_folder is not None
    assert [(e.path, e.kind) for e in result.record.run_folder.planted] == PLANTED
    findings = [e.data for e in events if e.event == "finding"]
    assert [(f["code"], f["path"]) for f in findings] == [("N024", "/run_folder")]
    landed = {p.relative_to(result.run_dir).as_posix() for p in result.run_dir.rglob("*")}
    assert {"leak", "a/b/c/deep", "a/b/inside", "pipe", "sock"}.isdisjoint(landed)
    assert "a/b/regular.txt" in landed
    for path in result.run_dir.rglob("*"):
        if path.is_file():
            assert b"top secret" not in path.read_bytes()
