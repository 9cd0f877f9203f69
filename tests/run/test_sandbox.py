"""`reprobridge run --sandbox`: an untrusted launcher under bubblewrap (real bwrap, real runs).

The launcher tries what a hostile one would: reach a server on the host's loopback, write
into the artifact and outside it, leave a file in /tmp. Only its run directory and its own
copy of the code (shown in the code's place) are writable: the artifact stays as it was.
Where bubblewrap is missing the sandbox tests skip with the reason, except in CI
(``REPROBRIDGE_REQUIRE_SANDBOX=1``, set by ``.ci/run``, which installs bubblewrap).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.run import run
from reprobridge_sdk.run.sandbox import check_sandbox

_PROBLEM = check_sandbox()
if _PROBLEM is not None and os.environ.get("REPROBRIDGE_REQUIRE_SANDBOX") != "1":
    pytestmark = pytest.mark.skip(reason=f"the sandbox cannot run here: {_PROBLEM}")

HOSTILE = """
import socket, sys
from pathlib import Path
port, outside, run_dir = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("127.0.0.1", port))
    print("net=reached")
except OSError as exc:
    print(f"net=blocked {type(exc).__name__}")
for target in (
    outside / "escaped.txt",
    Path("written-in-artifact.txt"),
    Path("../beside-the-manifest.txt"),
    run_dir / "ok.txt",
):
    try:
        target.write_text("x")
        print(f"write={target.name}:ok")
    except OSError as exc:
        print(f"write={target.name}:refused {exc.errno}")
Path("/tmp/left-by-launcher.txt").write_text("x")
print("acc=1")
"""


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            accepted.append(str(addr))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


def _artifact(root: Path, argv: list[str]) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "hostile.py").write_text(HOSTILE)
    manifest = {
        "rra_version": "1.0",
        "artifact": {"id": "sbx", "title": "Sandbox", "license": "MIT", "paper": {"title": "S"}},
        "codebase": {
            "upstream": {"repository": "https://example.org/s.git", "commit": "0" * 40},
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
        "launchers": [{"id": "hostile", "argv": argv, "workdir": "code", "scope": "smoke"}],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def test_a_sandboxed_launcher_reaches_no_network_and_writes_only_its_run_dir(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _artifact(
        tmp_path / "art", ["python", "hostile.py", str(port), str(outside), "{run_dir}"]
    )
    (result,) = run(root, ["hostile"], env_mode="current", sandbox=True).results
    log = (result.run_dir / "log.txt").read_text()
    assert result.record.status == "succeeded", log
    assert "net=blocked" in log
    assert accepted == []
    assert "write=escaped.txt:refused" in log
    assert "write=written-in-artifact.txt:ok" in log  # into the run's own copy of the code
    assert "write=beside-the-manifest.txt:refused" in log
    assert "write=ok.txt:ok" in log
    assert not (outside / "escaped.txt").exists()
    assert sorted(p.name for p in (root / "code").iterdir()) == ["hostile.py"]
    assert not (root / "beside-the-manifest.txt").exists()
    assert (result.run_dir / "ok.txt").read_text() == "x"
    assert not Path("/tmp/left-by-launcher.txt").exists()  # its /tmp was private


WRITES_BESIDE_ITS_CODE = """
import json, os, sys
from pathlib import Path
print("stale=" + ("present" if Path("results/metrics.json").exists() else "absent"))
os.makedirs("results/deep", exist_ok=True)
Path("results/metrics.json").write_text(json.dumps({"acc": 0.75}))
Path("results/deep/checkpoint.bin").write_bytes(b"0" * 1024)
print("acc=0.75")
"""


def test_research_code_that_writes_beside_itself_runs_and_leaves_the_artifact_as_it_was(
    tmp_path: Path,
) -> None:
    """``os.makedirs("results")`` in the working directory, as research code does: the run
    writes into its own copy of the code, its declared output and the value read from it
    come from that copy, and neither the artifact nor the next run sees what it wrote."""
    root = _artifact(tmp_path / "art", ["python", "writes.py"])
    (root / "code" / "writes.py").write_text(WRITES_BESIDE_ITS_CODE)
    (root / "code" / "data").mkdir()
    (root / "code" / "data" / "train.csv").write_text("x,y\n1,2\n")
    (root / "code" / "link-to-data").symlink_to("data")
    os.mkfifo(root / "code" / "a-fifo")  # never copied, never opened: the copy cannot block
    manifest = yaml.safe_load((root / "rra.yaml").read_text())
    manifest["launchers"][0]["argv"] = ["python", "writes.py"]
    manifest["launchers"][0]["outputs"] = [{"id": "metrics", "path": "results/metrics.json"}]
    manifest["launchers"][0]["measurements"] = [
        {"task": "acc", "extract": {"kind": "json", "output": "metrics", "pointer": "/acc"}}
    ]
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    for _ in range(2):
        (result,) = run(root, ["hostile"], env_mode="current", sandbox=True).results
        log = (result.run_dir / "log.txt").read_text()
        assert result.record.status == "succeeded", (log, result.record.failure)
        assert "stale=absent" in log
        [output] = result.record.outputs
        assert (output.id, output.preexisting) == ("metrics", False)
        assert [m.value for m in result.record.measurements] == [0.75]
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if "runs" not in p.parts)
    assert after == before
    assert not list(Path(tempfile.gettempdir()).glob("rb-tree-*/tree/writes.py"))


def test_the_same_launcher_unsandboxed_reaches_the_server(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    """The control: without --sandbox the attack works, so the test above tests something."""
    port, _accepted = listener
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _artifact(
        tmp_path / "art", ["python", "hostile.py", str(port), str(outside), "{run_dir}"]
    )
    (result,) = run(root, ["hostile"], env_mode="current").results
    log = (result.run_dir / "log.txt").read_text()
    assert "net=reached" in log
    assert (outside / "escaped.txt").exists()
    Path("/tmp/left-by-launcher.txt").unlink(missing_ok=True)


def test_the_sandbox_is_refused_clearly_where_bubblewrap_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PATH without bubblewrap is a real host without it (no mock of the check)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    python_dir = tmp_path / "py-bin"
    python_dir.mkdir()
    (python_dir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{python_dir}:{empty}")
    assert shutil.which("bwrap") is None
    root = _artifact(tmp_path / "art", ["python", "-c", "print('acc=1')"])
    with pytest.raises(UsageError) as caught:
        run(root, ["hostile"], env_mode="current", sandbox=True)
    assert [f.code for f in caught.value.findings] == ["N011"]
    assert not (root / "runs").exists()


SEES_TMP = """
import sys
from pathlib import Path
secret = Path(sys.argv[1])
print("host-tmp=" + ("visible" if secret.exists() else "hidden"))
Path("/tmp/left-by-launcher.txt").write_text("x")
print("own-tmp=writable")
"""


def test_a_path_entry_directly_in_tmp_does_not_bring_the_host_tmp_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PATH entry directly in /tmp (a shim directory made by mktemp, as CI makes one) lies
    outside what the sandbox shows: it is left out of PATH (N023), never bound, so neither it
    nor the host's /tmp around it shows over the sandbox's own /tmp.
    """
    shim = Path(tempfile.mkdtemp(dir="/tmp"))
    secret = Path(tempfile.mkstemp(dir="/tmp", prefix="host-secret-")[1])
    try:
        monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
        root = _artifact(tmp_path / "art", ["python", "sees_tmp.py", str(secret)])
        (root / "code" / "sees_tmp.py").write_text(SEES_TMP)
        (result,) = run(root, ["hostile"], env_mode="current", sandbox=True).results
        log = (result.run_dir / "log.txt").read_text()
        assert result.record.status == "succeeded", log
        assert log.splitlines()[:2] == ["host-tmp=hidden", "own-tmp=writable"]
        assert not Path("/tmp/left-by-launcher.txt").exists()
    finally:
        shutil.rmtree(shim)
        secret.unlink()


#: Writes up to 200 MiB into /tmp in 1 MiB pieces, then says how far it got.
FILLS_TMP = """
import sys
written, chunk = 0, b"x" * (1 << 20)
with open("/tmp/fill", "wb") as sink:
    while written < (200 << 20):
        sink.write(chunk)
        sink.flush()
        written += len(chunk)
print("acc=1")
"""


def test_a_launcher_that_fills_tmp_past_its_bound_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox's /tmp is memory no process limit counts: it is bounded as bench bounds
    it (ResourceLimits.tmp_size: the memory bound, else 1 GiB), and a launcher writing past
    it fails with ENOSPC ("No space left on device") instead of filling the host's memory."""
    from reprobridge_sdk.run import sandbox
    from reprobridge_sdk.run.process import TMP_SIZE, ResourceLimits

    sizes: list[int | None] = []
    real = sandbox.sandbox_command

    def spy(*args: object, **kwargs: object) -> list[str]:
        sizes.append(kwargs.get("tmp_size"))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox, "sandbox_command", spy)
    root = _artifact(tmp_path / "art", ["python", "fill.py"])
    (root / "code" / "fill.py").write_text(FILLS_TMP)
    limits = ResourceLimits(memory=128 << 20)
    (result,) = run(root, ["hostile"], env_mode="current", sandbox=True, limits=limits).results
    log = (result.run_dir / "log.txt").read_text()
    assert result.record.status == "failed"
    assert result.record.failure is not None and result.record.failure.reason == "exit-status"
    assert "No space left on device" in log and "acc=1" not in log
    # without a memory bound, a run of `reprobridge run --sandbox` gets the default bound
    (root / "code" / "fill.py").write_text("print('acc=1')\n")
    (result,) = run(root, ["hostile"], env_mode="current", sandbox=True).results
    assert result.record.status == "succeeded"
    # (the sandbox's availability probe, which runs `true`, calls it without a size)
    assert [size for size in sizes if size is not None] == [128 << 20, TMP_SIZE]


#: Writes 24 MiB into /tmp, then says so.
WRITES_24_MIB = """
with open("/tmp/fill", "wb") as sink:
    for _ in range(24):
        sink.write(b"x" * (1 << 20))
print("acc=1")
"""


def test_run_sandbox_tmp_sizes_the_private_tmp(tmp_path: Path) -> None:
    """`run --sandbox --sandbox-tmp SIZE` bounds the private /tmp at SIZE, as a user types it:
    24 MiB do not fit in 16MiB (No space left on device), and do in 32MiB."""
    root = _artifact(tmp_path / "art", ["python", "fill.py"])
    (root / "code" / "fill.py").write_text(WRITES_24_MIB)

    def cli(size: str) -> int:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "reprobridge_sdk", "run", str(root), "hostile"),
                *("--env", "current", "--no-validate", "--sandbox", "--sandbox-tmp", size),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return done.returncode

    def logs() -> set[Path]:
        return set((root / "runs").glob("*/log.txt"))

    assert cli("16MiB") == 1
    (small,) = logs()
    assert "No space left on device" in small.read_text()
    assert cli("32MiB") == 0
    (big,) = logs() - {small}
    assert big.read_text().strip().endswith("acc=1")
