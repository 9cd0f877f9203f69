"""Hostile launchers that plant links and special files in their own run folder, and hostile
evidence handed to the auditor and to ``extract``.

Each test is an attack: a real artifact, the real runner (real subprocesses in the current
interpreter), the real auditor, the real CLI. The runner reads what a launcher left from the
run folder's descriptor without following links, as regular files only, with size caps and a
deadline; the auditor refuses a ``runs/`` or a run folder that is a link (A067) and a log past
the hashing cap (F010); ``extract`` never reads a link that leaves the artifact or a
``log.path`` outside the run folder.
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
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.io import safefs
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.run import RecordError, check_samples, replay_log, replay_run, run

CLI = [sys.executable, "-m", "reprobridge_sdk"]
SECRET = "acc=0.4242 top secret of the host\n"


def _artifact(root: Path, launcher: dict[str, Any], script: str) -> Path:
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
        "launchers": [{"id": "plant", "scope": "smoke", "workdir": "code", **launcher}],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    return secret


# A launcher that replaces its own log.txt (or a named file of its run folder) at its end.
PLANT = """
import os, sys
run_dir, name, kind, target = sys.argv[1:5]
print("acc=1", flush=True)
path = os.path.join(run_dir, name)
if os.path.lexists(path):
    os.remove(path)
if kind == "link":
    os.symlink(target, path)
else:
    os.mkfifo(path)
"""


def _planting(tmp_path: Path, name: str, kind: str, target: str, **extra: Any) -> Path:
    launcher = {"argv": ["python", "plant.py", "{run_dir}", name, kind, target], **extra}
    return _artifact(tmp_path / "art", launcher, PLANT)


def _record_text(run_dir: Path) -> str:
    return (run_dir / RECORD_NAME).read_text()


def test_a_log_replaced_by_a_link_to_a_secret_is_neither_hashed_nor_sized(
    tmp_path: Path,
) -> None:
    secret = _secret(tmp_path)
    root = _planting(tmp_path, "log.txt", "link", str(secret))
    (result,) = run(root, ["plant"], env_mode="current").results
    record = result.record
    assert record.log is None
    assert record.status == "failed"
    assert record.failure is not None
    assert record.failure.reason == "internal-error"
    assert record.failure.detail.startswith("A067")
    text = _record_text(result.run_dir)
    assert file_sha256(secret) not in text
    assert "0.4242" not in text


def test_a_log_replaced_by_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    root = _planting(tmp_path, "log.txt", "fifo", "-")
    started = time.monotonic()
    (result,) = run(root, ["plant"], env_mode="current").results
    assert time.monotonic() - started < 30
    assert result.record.log is None
    assert result.record.failure is not None
    assert result.record.failure.detail.startswith("A067")


def test_a_log_linked_to_proc_pagemap_never_keeps_the_runner_busy(tmp_path: Path) -> None:
    """The attack took the runner 509 s; here the runner runs in its own process, with a
    deadline, so that today's code fails the test instead of hanging the suite."""
    root = _planting(tmp_path, "log.txt", "link", "/proc/self/pagemap")
    runs = tmp_path / "runs"
    cmd = [*CLI, "run", "plant", "-C", str(root), "--env", "current", "--no-validate"]
    cmd += ["--runs-dir", str(runs)]
    started = time.monotonic()
    try:
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the runner was still hashing /proc/self/pagemap after 60 s")
    assert time.monotonic() - started < 60
    (record_path,) = runs.glob(f"*/{RECORD_NAME}")
    record = json.loads(record_path.read_text())
    assert record["log"] is None
    assert record["failure"]["detail"].startswith("A067")


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_an_output_replaced_by_a_link_is_never_copied(tmp_path: Path, where: str) -> None:
    """A link to a host secret, or to a file of the artifact itself: a run writes regular
    files, and the runner copies neither."""
    secret = _secret(tmp_path)
    target = str(secret) if where == "outside" else str(tmp_path / "art" / "code" / "plant.py")
    outputs = [{"id": "res", "path": "{run_dir}/res.txt"}]
    root = _planting(tmp_path, "res.txt", "link", target, outputs=outputs)
    (result,) = run(root, ["plant"], env_mode="current").results
    record = result.record
    assert record.outputs == []
    assert record.failure is not None
    assert record.failure.reason == "missing-output"
    assert "A067" in record.failure.detail
    text = _record_text(result.run_dir)
    assert file_sha256(secret) not in text
    assert file_sha256(root / "code" / "plant.py") not in text
    assert not (result.run_dir / "outputs" / "res").exists()


def test_an_output_replaced_by_a_fifo_is_refused(tmp_path: Path) -> None:
    outputs = [{"id": "res", "path": "{run_dir}/res.txt"}]
    root = _planting(tmp_path, "res.txt", "fifo", "-", outputs=outputs)
    started = time.monotonic()
    (result,) = run(root, ["plant"], env_mode="current").results
    assert time.monotonic() - started < 30
    assert result.record.outputs == []
    assert result.record.failure is not None
    assert "A067" in result.record.failure.detail


# ------------------------------------------------------------------------ hashing limits

HASH_PAGEMAP = """
import sys
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.io import safefs
try:
    file_sha256("/proc/self/pagemap", max_bytes=1 << 20)
except safefs.UnsafeFileError as exc:
    print(exc.reason)
"""


def test_hashing_stops_at_its_byte_cap_whatever_fstat_says(tmp_path: Path) -> None:
    """``/proc/self/pagemap`` says size 0 and reads for hundreds of gigabytes."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    try:
        done = subprocess.run(
            [sys.executable, "-c", HASH_PAGEMAP],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("hashing /proc/self/pagemap went past its cap")
    assert done.stdout.strip() == "too-large", done.stderr


def test_hashing_has_a_deadline(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * (8 << 20))
    with pytest.raises(safefs.UnsafeFileError) as caught:
        file_sha256(big, deadline=0.0)
    assert caught.value.reason == "too-slow"
    assert caught.value.findings[0].code == "F012"
    assert file_sha256(big, deadline=60.0) == hashlib.sha256(b"\0" * (8 << 20)).hexdigest()


# ------------------------------------------------------------------------ the auditor


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy artifact with honest scored runs of seeds 0-2 (compatible), built once."""
    root = make_artifact(tmp_path_factory.mktemp("honest") / "toy")
    summary = run(root, ["scored"], env_mode="current", seeds=[0, 1, 2])
    assert all(r.record.status == "succeeded" for r in summary.results)
    return root


@pytest.fixture
def toy(honest: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(honest, target, symlinks=True)
    return target


def _codes(result: Any) -> set[str]:
    found = {f.code for f in result.findings}
    for attempt in result.attempts:
        found |= {f.code for f in attempt.findings}
        for checked in attempt.runs:
            found |= {f.code for f in checked.findings}
    return found


def test_the_honest_toy_is_compatible(toy: Path) -> None:
    result = audit(toy)
    assert {t.attempts[0].verdict for t in result.tasks if t.id == "acc"} == {"compatible"}


def test_a_runs_directory_that_is_a_link_outside_is_never_audited(
    toy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    (toy / "runs").rename(outside)
    (toy / "runs").symlink_to(outside)
    result = audit(toy)
    assert "A067" in _codes(result)
    assert all(a.verdict != "compatible" for t in result.tasks for a in t.attempts)
    done = subprocess.run([*CLI, "audit", str(toy)], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout


def test_a_run_folder_that_is_a_link_is_never_audited(toy: Path, tmp_path: Path) -> None:
    runs = toy / "runs"
    first = sorted(p for p in runs.iterdir() if (p / RECORD_NAME).is_file())[0]
    moved = tmp_path / first.name
    first.rename(moved)
    first.symlink_to(moved)
    result = audit(toy)
    (checked,) = [r for r in result.attempts[0].runs if r.run == first.name]
    assert not checked.valid
    assert {f.code for f in checked.findings} == {"A067"}


def test_a_sparse_log_past_the_cap_is_refused_promptly(toy: Path) -> None:
    """A 100 GiB sparse log: refused from its size, never read (the audit took minutes)."""
    run_dir = sorted(p for p in (toy / "runs").iterdir() if (p / RECORD_NAME).is_file())[0]
    with (run_dir / "log.txt").open("r+b") as handle:
        handle.truncate(100 << 30)
    started = time.monotonic()
    result = audit(toy)
    assert time.monotonic() - started < 30
    (checked,) = [r for r in result.attempts[0].runs if r.run == run_dir.name]
    assert ("F010", "/log/path") in {(f.code, f.path) for f in checked.findings}


# ------------------------------------------------------------------------ extract


def test_a_sample_log_linked_outside_is_refused_and_never_printed(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    secret.write_text("test accuracy: 77.7777\n")
    root = make_artifact(tmp_path / "toy", sample=True)
    (root / "samples" / "log.txt").unlink()
    (root / "samples" / "log.txt").symlink_to(secret)
    (check,) = check_samples(root)
    assert check.value is None
    assert check.error is not None
    assert check.error.startswith("unsafe-file")
    done = subprocess.run(
        [*CLI, "extract", str(root), "--samples"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert "77.77" not in done.stdout + done.stderr
    given = replay_log(root, "scored", root / "samples" / "log.txt")
    assert all(m.value is None for m in given)


@pytest.mark.parametrize("log_path", ["../../secret.txt", "/SECRET"])
def test_a_record_log_path_outside_the_run_folder_is_refused(
    toy: Path, tmp_path: Path, log_path: str
) -> None:
    secret = toy / "secret.txt"
    secret.write_text("test accuracy: 77.7777\n")
    run_dir = sorted(p for p in (toy / "runs").iterdir() if (p / RECORD_NAME).is_file())[0]
    record = json.loads((run_dir / RECORD_NAME).read_text())
    record["log"]["path"] = log_path.replace("/SECRET", str(secret))
    (run_dir / RECORD_NAME).write_text(json.dumps(record))
    with pytest.raises(RecordError) as caught:
        replay_run(run_dir, toy)
    assert [f.code for f in caught.value.findings] == ["N006"]
    done = subprocess.run(
        [*CLI, "extract", str(run_dir), "-C", str(toy)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "77.77" not in done.stdout + done.stderr


def test_a_record_log_linked_out_of_the_run_folder_is_refused(toy: Path, tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    secret.write_text("test accuracy: 77.7777\n")
    run_dir = sorted(p for p in (toy / "runs").iterdir() if (p / RECORD_NAME).is_file())[0]
    (run_dir / "log.txt").unlink()
    (run_dir / "log.txt").symlink_to(secret)
    from_log = [m for m in replay_run(run_dir, toy) if m.source == "log"]
    assert [m.task for m in from_log] == ["acc"]
    assert all((m.error or "").startswith("unsafe-file") for m in from_log)
    assert all(m.value is None for m in from_log)


def test_a_linked_runs_directory_spelled_through_another_path_is_never_audited(
    toy: Path, tmp_path: Path
) -> None:
    """The attempt named through an alias of the artifact's directory: still the artifact's
    ``runs/``, still a link out of it."""
    outside = tmp_path / "elsewhere"
    (toy / "runs").rename(outside)
    (toy / "runs").symlink_to(outside)
    alias = tmp_path / "alias"
    alias.symlink_to(toy)
    result = audit(toy, [alias / "runs"])
    assert "A067" in _codes(result)
    assert all(a.verdict != "compatible" for t in result.tasks for a in t.attempts)
