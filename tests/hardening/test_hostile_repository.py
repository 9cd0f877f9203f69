"""A hostile repository through ``build``, ``check``, ``audit --rerun`` and ``review``.

Each command runs the repository's code in the sandbox by default. The code tries what a
hostile one would: write a file into the host's ``/tmp`` and into ``$HOME``, read a secret
the test planted outside the repository (and print it, so that it would reach the logs,
records and outputs), connect to a TCP server the test runs on ``127.0.0.1``, and leave an
orphan behind (double fork, ``setsid``, ``sleep``, standard streams closed, as a daemon
does). None of it may succeed: no file written, the secret in no file the command leaves and
in none of its output, no connection accepted, no orphan alive once the command returned.

The commands run as real processes, with real bubblewrap. Where the sandbox cannot run the
tests skip with the reason, except in CI (``REPROBRIDGE_REQUIRE_SANDBOX=1``). The control,
the same code unsandboxed, is in ``test_the_attacks_work_without_the_sandbox``: it shows
the assertions can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from sandbox_support import SANDBOX_PROBLEM, SKIP_SANDBOX
from toy_study import TRAIN, make_artifact

from reprobridge_sdk.agent._smoke import run_launcher
from reprobridge_sdk.agent.builder import _probe_imports
from reprobridge_sdk.authoring.digests import refresh
from reprobridge_sdk.model.build import LauncherPlan
from reprobridge_sdk.run import run

pytestmark = [pytest.mark.slow]
if SKIP_SANDBOX:
    pytestmark.append(pytest.mark.skip(reason=f"the sandbox cannot run here: {SANDBOX_PROBLEM}"))

CLI = [sys.executable, "-m", "reprobridge_sdk"]


@dataclass
class Hostile:
    """The traps of one test: the server, the secret, the places the code tries to write."""

    port: int
    secret: Path
    token: str
    marker: str
    targets: list[Path]
    accepted: list[str] = field(default_factory=list)

    def attack(self) -> str:
        """Python code that attacks, then carries on (each attempt's failure is swallowed)."""
        return textwrap.dedent(
            f"""\
            import os as _os, socket as _socket
            from pathlib import Path as _Path
            for _target in {[str(t) for t in self.targets]!r}:
                try:
                    _Path(_target).write_text("written by a hostile repository")
                except OSError:
                    pass
            try:
                print("secret: " + _Path({str(self.secret)!r}).read_text())
            except OSError as _exc:
                print("secret: unreadable", type(_exc).__name__)
            for _ in range(3):
                try:
                    _socket.create_connection(("127.0.0.1", {self.port}), timeout=2).close()
                except OSError:
                    pass
            _child = _os.fork()
            if _child == 0:
                _os.setsid()
                if _os.fork() == 0:
                    _null = _os.open(_os.devnull, _os.O_RDWR)
                    for _fd in (0, 1, 2):
                        _os.dup2(_null, _fd)
                    _os.execvp("sh", ["sh", "-c", "sleep 600; : {self.marker}"])
                _os._exit(0)
            _os.waitpid(_child, 0)
            """
        )

    def orphans(self) -> list[int]:
        """Processes on this host whose command line carries the marker."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if self.marker.encode() in cmdline:
                found.append(int(entry.name))
        return found

    def assert_contained(self, outputs: list[str], trees: list[Path]) -> None:
        """Nothing of the attack succeeded (see the module docstring)."""
        time.sleep(0.5)  # an orphan that survived would be running by now
        assert self.orphans() == []
        assert [t for t in self.targets if t.exists()] == []
        assert self.accepted == []
        for text in outputs:
            assert self.token not in text
        for tree in trees:
            for path in tree.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    assert self.token.encode() not in path.read_bytes(), path


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Hostile]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()
    token = f"secret-{uuid.uuid4().hex}"
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(token)
    marker = f"rb-orphan-{uuid.uuid4().hex}"
    home_target = Path.home() / f".{marker}-home"
    traps = Hostile(
        port=server.getsockname()[1],
        secret=secret,
        token=token,
        marker=marker,
        targets=[Path("/tmp") / f"{marker}-tmp", home_target],
    )

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            traps.accepted.append(str(addr))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield traps
    stop.set()
    thread.join()
    server.close()
    for target in traps.targets:
        target.unlink(missing_ok=True)
    for pid in traps.orphans():  # never leave one behind, even when the test failed
        os.kill(pid, 9)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, check=False, cwd=cwd, timeout=1800
    )


def _hostile_artifact(root: Path, traps: Hostile) -> Path:
    """The toy artifact whose training script attacks first; its metrics go under /tmp (the
    sandbox's own), so that its runs succeed in the sandbox."""
    make_artifact(root)
    (root / "code" / "train.py").write_text(traps.attack() + TRAIN)
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["tasks"] = [t for t in data["tasks"] if t["id"] == "acc"]
    for launcher in data["launchers"]:
        launcher["argv"] = [a.replace("results/", "/tmp/") for a in launcher["argv"]]
        launcher["outputs"] = []
        launcher["measurements"] = [m for m in launcher["measurements"] if m["task"] == "acc"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    refresh(root, write=True)
    return root


def test_build_runs_a_hostile_repository_in_the_sandbox(
    hostile: Hostile, tmp_path: Path, env_cache_dir: Path
) -> None:
    repo = tmp_path / "raw" / "hostile"
    repo.mkdir(parents=True)
    (repo / "train.py").write_text(hostile.attack() + 'print("test accuracy: 0.9100")\n')
    (repo / "README.md").write_text("# Hostile\n\nRun:\n\n    python train.py\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    claims = tmp_path / "raw" / "hostile.claims.yaml"
    claims.write_text(
        yaml.safe_dump(
            {
                "claims_version": "1.0",
                "paper": {"title": "A hostile study", "year": 2024},
                "claims": [
                    {
                        "id": "accuracy",
                        "measured": "test accuracy",
                        "value": 0.91,
                        "direction": "higher",
                        "hints": {"label": "test accuracy"},
                    }
                ],
            },
            sort_keys=False,
        )
    )
    out = tmp_path / "hostile-rra"
    done = _cli("build", str(repo), "--claims", str(claims), "-o", str(out), cwd=tmp_path)
    # every phase ran the repository's code (smoke runs, references, the clean-room check)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / ".rra-build" / "reviewer.json").is_file()
    hostile.assert_contained([done.stdout, done.stderr], [out, repo])


def test_check_runs_a_hostile_artifact_in_the_sandbox(hostile: Hostile, tmp_path: Path) -> None:
    root = _hostile_artifact(tmp_path / "art", hostile)
    work = tmp_path / "work"
    work.mkdir()
    done = _cli(
        "check",
        str(root),
        "--scored",
        "--keep",
        "--pass-env",
        "PYTHONPATH",
        "--format",
        "json",
        cwd=work,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    copy = Path(json.loads(done.stdout)["copy"])
    try:
        hostile.assert_contained([done.stdout, done.stderr], [root, copy.parent])
    finally:
        shutil.rmtree(copy.parent)


@pytest.mark.parametrize("command", [["audit", "--rerun", "all"], ["review"]])
def test_re_execution_runs_a_hostile_artifact_in_the_sandbox(
    hostile: Hostile, tmp_path: Path, command: list[str]
) -> None:
    root = _hostile_artifact(tmp_path / "art", hostile)
    recorded = run(root, ["scored"], env_mode="current", seeds=[0, 1], sandbox=True)
    assert [r.record.status for r in recorded.results] == ["succeeded", "succeeded"]
    done = _cli(*command, str(root), "--rerun-env", "current", "--format", "json", cwd=tmp_path)
    assert done.returncode in {0, 1}, done.stderr[-3000:]  # 1: two seeds of three, not a pass
    attempt = json.loads(done.stdout)["attempts"][0]
    assert attempt["reran"] == 2  # both runs executed again, and they held up in the sandbox
    assert [f["code"] for r in attempt["runs"] for f in r["findings"]] == []
    hostile.assert_contained([done.stdout, done.stderr], [root])


def test_the_builders_import_probe_and_a_smoke_run_are_confined(
    hostile: Hostile, tmp_path: Path
) -> None:
    """The two runs of repository code the build agent starts itself (not through the
    runner), one by one: importing a module of the repository (its top level runs) and one
    smoke run of its script."""
    code = tmp_path / "artifact" / "code"
    code.mkdir(parents=True)
    (code / "hostile_module.py").write_text(hostile.attack())
    (code / "train.py").write_text(hostile.attack() + 'print("test accuracy: 0.9100")\n')
    python = Path(sys.executable)
    assert _probe_imports(python, ["hostile_module"], code, sandbox=True) == []
    smoke = LauncherPlan(id="smoke", script="train.py", argv=["python", "train.py"], scope="smoke")
    outcome = run_launcher(smoke, code, python, sandbox=True, visible=code.parent)
    assert outcome.exit_status == 0, outcome.stderr
    assert "test accuracy: 0.9100" in outcome.stdout
    hostile.assert_contained([outcome.stdout, outcome.stderr], [code.parent])


def test_the_attacks_work_without_the_sandbox(hostile: Hostile, tmp_path: Path) -> None:
    """The control: unsandboxed, the same code writes, reads, connects and leaves an orphan,
    so every assertion above can fail. The control never writes into the real ``$HOME``."""
    hostile.targets = [hostile.targets[0]]
    root = _hostile_artifact(tmp_path / "art", hostile)
    (result,) = run(root, ["smoke"], env_mode="current", seeds=[0]).results
    log = (result.run_dir / "log.txt").read_text()
    assert hostile.token in log
    assert hostile.targets[0].exists()
    assert hostile.accepted
    with pytest.raises(AssertionError):
        hostile.assert_contained([log], [])


@pytest.fixture
def env_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The build's environments in the test's own cache (subprocesses inherit it)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
    return cache
