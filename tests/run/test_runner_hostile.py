"""Hostile launchers and hostile hosts: the runner's side of the hardening issue.

Each test writes a small real artifact, runs it with the real runner (real subprocesses in the
current interpreter) and checks the behaviour the issue names: no shell injection through
template values, outputs that leave the artifact are never copied, parallel runs cannot share
an output, children die with the runner, a full disk gives a failed record, and credentials
are redacted by pattern in the record, the events and the environment snapshot.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.run import run
from reprobridge_sdk.run.dryrun import dry_run


def _artifact(
    root: Path, launchers: list[dict[str, Any]], code: dict[str, str] | None = None
) -> Path:
    (root / "code").mkdir(parents=True)
    for name, text in (code or {"noop.py": "print('acc=1')\n"}).items():
        (root / "code" / name).write_text(text)
    manifest = {
        "rra_version": "1.0",
        "artifact": {
            "id": "hostile",
            "title": "Hostile",
            "license": "MIT",
            "paper": {"title": "H"},
        },
        "codebase": {
            "upstream": {"repository": "https://example.org/h.git", "commit": "0" * 40},
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
        "launchers": launchers,
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


# ------------------------------------------------------------------------ shell injection


def test_template_values_are_shell_quoted(tmp_path: Path) -> None:
    """A run directory named like a command substitution is one word to the shell."""
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "sh",
                "shell": True,
                "argv": ["echo {run_dir} {tag} > /dev/null; echo acc=1"],
                "params": {"tag": "$(touch PWNED-param)"},
                "scope": "smoke",
            }
        ],
    )
    runs = tmp_path / "x $(touch PWNED)"
    summary = run(root, ["sh"], env_mode="current", runs_dir=runs)
    (result,) = summary.results
    assert result.record.status == "succeeded", result.record.failure
    assert not list(tmp_path.rglob("PWNED*"))
    assert not list(Path.cwd().glob("PWNED*"))
    # the dry run shows the command line the run executes, quoted the same way
    (planned,) = dry_run(root, ["sh"], env_mode="current", runs_dir=runs)
    assert shlex.split(planned.argv[0])[1:3] == [planned.run_dir, "$(touch PWNED-param)"]


# ------------------------------------------------------------------------ outputs


@pytest.mark.parametrize("path", ["/etc/hostname", "../../outside/x"])
def test_outputs_that_leave_the_artifact_fail_the_run_and_are_not_copied(
    tmp_path: Path, path: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("secret outside\n")
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "out",
                "argv": ["python", "noop.py"],
                "workdir": "code",
                "scope": "smoke",
                "outputs": [{"id": "o", "path": path}],
            }
        ],
    )
    (result,) = run(root, ["out"], env_mode="current").results
    assert result.record.status == "failed"
    assert result.record.failure is not None
    assert result.record.failure.reason == "missing-output"
    assert ("F001" if path.startswith("/") else "F002") in result.record.failure.detail
    assert result.record.outputs == []
    assert not (result.run_dir / "outputs").exists()


def test_an_output_linked_outside_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    code = {"link.py": f"import os\nos.symlink({str(secret)!r}, 'o.txt')\nprint('acc=1')\n"}
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "link",
                "argv": ["python", "link.py"],
                "workdir": "code",
                "scope": "smoke",
                "outputs": [{"id": "o", "path": "o.txt"}],
            }
        ],
        code,
    )
    (result,) = run(root, ["link"], env_mode="current").results
    assert result.record.status == "failed"
    assert result.record.outputs == []
    assert not list(result.run_dir.rglob("o.txt"))


def test_parallel_runs_with_a_shared_output_path_are_refused(tmp_path: Path) -> None:
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "fixed",
                "argv": ["python", "noop.py"],
                "workdir": "code",
                "scope": "smoke",
                "seeds": [0, 1],
                "outputs": [{"id": "o", "path": "results/metrics.json"}],
            }
        ],
    )
    with pytest.raises(UsageError) as caught:
        run(root, ["fixed"], env_mode="current", jobs=2)
    assert [f.code for f in caught.value.findings] == ["N010"]
    assert not (root / "runs").exists()


# ------------------------------------------------------------------------ orphans

_PARENT = """
import os, signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import signal, time\\n"
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)\\n"
    "time.sleep(600)\\n"])
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getpid()} {child.pid}\\n")
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a zombie no longer runs


def test_children_die_with_the_runner(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids.txt"
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "silent",
                "argv": ["python", "parent.py", str(pids_file)],
                "workdir": "code",
                "scope": "smoke",
            }
        ],
        {"parent.py": _PARENT},
    )
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            str(root),
            "silent",
            "--env",
            "current",
            "--no-validate",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if pids_file.is_file() and pids_file.read_text().endswith("\n"):
                break
            assert runner.poll() is None, "the runner ended before its launcher started"
            time.sleep(0.05)
        launcher, grandchild = map(int, pids_file.read_text().split())
        assert _alive(launcher) and _alive(grandchild)
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        # The watchdog notices its runner's death and kills the group: wait for that to have
        # happened (a fixed pause was a race on a loaded machine); both sleep for 600 s.
        deadline = time.monotonic() + 120
        while (_alive(launcher) or _alive(grandchild)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(launcher)
        assert not _alive(grandchild)
    finally:
        runner.kill()
        runner.wait()


# ------------------------------------------------------------------------ full disk


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    mount = tmp_path / "tiny"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_gives_a_failed_run_with_a_whole_record(
    tmp_path: Path, tiny_disk: Path
) -> None:
    fill = "import sys\nwith open(sys.argv[1], 'wb') as f:\n    f.write(b'x' * (4 << 20))\n"
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "fill",
                "argv": ["python", "fill.py", "{run_dir}/big.bin"],
                "workdir": "code",
                "scope": "smoke",
            }
        ],
        {"fill.py": fill},
    )
    (result,) = run(root, ["fill"], env_mode="current", runs_dir=tiny_disk).results
    assert result.record.status == "failed"
    record = json.loads((result.run_dir / "record.json").read_text())
    assert record["status"] == "failed"
    assert record["failure"]["reason"] in ("exit-status", "internal-error")
    assert not (result.run_dir / ".reserve").exists()
    assert not [p for p in result.run_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_disk_full_before_the_run_leaves_no_empty_run_directory(
    tmp_path: Path, tiny_disk: Path
) -> None:
    root = _artifact(
        tmp_path / "art",
        [{"id": "noop", "argv": ["python", "noop.py"], "workdir": "code", "scope": "smoke"}],
    )
    fd = os.open(tiny_disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    from reprobridge_sdk.errors import ArtifactError

    with pytest.raises(ArtifactError) as caught:
        run(root, ["noop"], env_mode="current", runs_dir=tiny_disk)
    assert "disk is full" in caught.value.message
    assert [p.name for p in tiny_disk.iterdir()] == ["filler"]


# ------------------------------------------------------------------------ redaction


def test_credentials_are_redacted_in_record_events_and_snapshot(tmp_path: Path) -> None:
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "creds",
                "argv": [
                    "python",
                    "noop.py",
                    "https://alice:hunter2@example.org/d",
                    "--db-password=hunter3",
                ],
                "workdir": "code",
                "scope": "smoke",
            }
        ],
    )
    env = {
        **os.environ,
        "TF_VAR_db_pw": "hunter4",
        "XLA_FLAGS": "--xla_password=hunter5 --xla_other=1",
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            str(root),
            "creds",
            "--env",
            "current",
            "--format",
            "json",
            "--no-validate",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (record_path,) = (root / "runs").glob("*/record.json")
    texts = [record_path.read_text(), proc.stdout, proc.stderr]
    snapshot = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "env", "snapshot"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    texts.append(snapshot.stdout)
    for secret in ("hunter2", "hunter3", "hunter4", "hunter5"):
        assert not any(secret in text for text in texts), secret
    record = json.loads(record_path.read_text())
    assert record["argv"][2] == "https://<redacted>@example.org/d"
    assert record["argv"][3] == "--db-password=<redacted>"


def test_a_file_extractor_does_not_follow_a_link_the_launcher_planted(tmp_path: Path) -> None:
    """The launcher links a secret into its run directory and asks the runner to read it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("acc=1234.5\n")
    code = {"plant.py": f"import os, sys\nos.symlink({str(secret)!r}, sys.argv[1])\n"}
    root = _artifact(
        tmp_path / "art",
        [
            {
                "id": "plant",
                "argv": ["python", "plant.py", "{run_dir}/metrics.txt"],
                "workdir": "code",
                "scope": "smoke",
                "measurements": [
                    {
                        "task": "acc",
                        "extract": {
                            "kind": "regex",
                            "file": "{run_dir}/metrics.txt",
                            "pattern": "acc=([0-9.]+)",
                        },
                    }
                ],
            }
        ],
        code,
    )
    (result,) = run(root, ["plant"], env_mode="current").results
    (measured,) = result.record.measurements
    assert measured.value is None
    assert measured.error is not None
    assert measured.error.startswith("unsafe-file")
    assert "1234.5" not in (result.run_dir / "record.json").read_text()
