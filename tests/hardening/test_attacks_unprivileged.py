"""The planted-link, FIFO, shell-template and linked-runs attacks again as an unprivileged user.

CI runs the suite as root; these attacks must hold for an ordinary user as well (a FIFO or
a link behaves the same for both, but root reads every secret, so a test as root alone could
pass for the wrong reason somewhere else). When the suite runs as root, each attack is
repeated in a forked child that has dropped to ``nobody`` (uid and gid 65534, no
supplementary groups) after the parent ran it once as root: the child holds the modules the
parent imported, so it needs no access to the interpreter's own directories (often under a
private ``/root``). As an ordinary user the suite's other tests are the unprivileged run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from toy_study import make_artifact

from reprobridge_sdk.audit import audit
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.extract.template import render_shell_template
from reprobridge_sdk.io import safefs
from reprobridge_sdk.run import run
from reprobridge_sdk.run.evidence import evidence_digest, refused_code

NOBODY = 65534

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or os.geteuid() != 0,
    reason="dropping privileges needs root (as an ordinary user the suite itself is the run)",
)


def _as_nobody(attack: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``attack()`` in a forked child running as ``nobody``; its JSON result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges for good, attack, report, exit
        status = 0
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            assert os.geteuid() == NOBODY
            result = attack()
        except BaseException as exc:  # reported to the parent, which fails the test
            result = {"error": f"{type(exc).__name__}: {exc}"}
            status = 1
        os.write(write, json.dumps(result).encode())
        os.close(write)
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        raw = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(raw)


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory ``nobody`` can enter (in ``/tmp``, not the suite's private temporary tree)."""
    path = Path(tempfile.mkdtemp(prefix="rb-nobody-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _chown(path: Path) -> None:
    for item in [path, *path.rglob("*")]:
        os.lchown(item, NOBODY, NOBODY)


def test_a_planted_log_link_and_fifo_are_refused_as_nobody(place: Path) -> None:
    secret = place / "secret.txt"
    secret.write_text("host secret\n")
    secret.chmod(0o644)  # readable by nobody: the refusal must come from the link itself
    run_dir = place / "run"
    run_dir.mkdir()
    (run_dir / "log.txt").symlink_to(secret)
    os.mkfifo(run_dir / "out.bin")
    _chown(run_dir)

    def attack() -> dict[str, Any]:
        codes = []
        for name in ("log.txt", "out.bin"):
            try:
                evidence_digest(run_dir, name)
                codes.append("hashed")
            except safefs.UnsafeFileError as exc:
                codes.append(refused_code(exc))
        started = time.monotonic()
        try:
            file_sha256(run_dir / "out.bin")
        except safefs.UnsafeFileError as exc:
            codes.append(exc.reason)
        return {"codes": codes, "seconds": time.monotonic() - started}

    as_root = attack()
    as_nobody = _as_nobody(attack)
    assert as_root["codes"] == as_nobody["codes"] == ["A067", "A067", "not-regular"]
    assert as_nobody["seconds"] < 5


def test_a_crafted_runs_dir_in_double_quotes_runs_nothing_as_nobody(place: Path) -> None:
    _chown(place)
    run_dir = place / "r \"$(touch PWNED1)\" `touch PWNED2` '; touch PWNED3; '"

    def attack() -> dict[str, Any]:
        command = render_shell_template(
            'mkdir -p "{run_dir}" && touch "{run_dir}/ok" \'{run_dir}/ok2\'',
            {"run_dir": str(run_dir)},
        )
        subprocess.run(["/bin/sh", "-c", command], cwd=place, check=True)
        return {"pwned": sorted(p.name for p in place.rglob("PWNED*")), "ok": run_dir.exists()}

    result = _as_nobody(attack)
    assert result == {"pwned": [], "ok": True}
    assert (run_dir / "ok").is_file()
    assert (run_dir / "ok2").is_file()


def test_linked_runs_are_never_audited_as_nobody(place: Path) -> None:
    root = make_artifact(place / "toy")
    summary = run(root, ["scored"], env_mode="current", seeds=[0, 1, 2])
    assert all(r.record.status == "succeeded" for r in summary.results)
    outside = place / "elsewhere"
    (root / "runs").rename(outside)
    (root / "runs").symlink_to(outside)
    _chown(place)

    def attack() -> dict[str, Any]:
        result = audit(root)
        return {
            "codes": sorted({f.code for a in result.attempts for r in a.runs for f in r.findings}),
            "verdicts": sorted({v.verdict for t in result.tasks for v in t.attempts}),
        }

    as_root = attack()  # every module the audit imports is loaded before the child forks
    as_nobody = _as_nobody(attack)
    assert "error" not in as_nobody, as_nobody
    assert as_nobody == as_root
    assert "A067" in as_nobody["codes"]
    assert "compatible" not in as_nobody["verdicts"]


def test_the_child_really_is_nobody() -> None:
    assert _as_nobody(lambda: {"uid": os.getuid(), "euid": os.geteuid()}) == {
        "uid": NOBODY,
        "euid": NOBODY,
    }
    assert sys.platform.startswith("linux")
