"""The sandbox of ``reprobridge run --sandbox``: untrusted launchers under bubblewrap.

A launcher of an artifact the committee does not trust runs inside ``bwrap`` (Debian's
``bubblewrap``) with

* no network: a new network namespace with only a loopback interface of its own, so neither
  the internet nor a server on the host's loopback can be reached;
* a read-only view of the whole file system (the interpreter, the environment built from the
  lock and the artifact stay readable) except the run directory, which is writable, and a
  private, empty ``/tmp``; ``/dev`` and ``/proc`` are the sandbox's own;
* its own PID, IPC and UTS namespaces and ``--die-with-parent``: when the runner stops the
  sandbox, every process inside it ends, even one that left the process group (``setsid``).

The command line is built by :func:`sandbox_command`; :func:`check_sandbox` says why the
sandbox cannot be used here (bubblewrap missing, or namespaces not permitted), which the
runner reports as N011 before anything runs. Nothing here changes what is recorded: the
record's argv is the launcher's, not the wrapper's.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["BWRAP", "check_sandbox", "sandbox_command"]

#: The bubblewrap executable looked up on ``PATH``.
BWRAP = "bwrap"


def check_sandbox() -> str | None:
    """``None`` when the sandbox works here, else the reason it does not."""
    exe = shutil.which(BWRAP)
    if exe is None:
        return (
            "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap)"
        )
    probe = [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "true"]
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot start: {exc}"
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no detail"
        return f"bubblewrap cannot create namespaces here: {detail}"
    return None


def sandbox_command(
    argv: Sequence[str],
    *,
    workdir: Path,
    run_dir: Path,
    readable: Sequence[Path] = (),
    writable: Sequence[Path] = (),
) -> list[str]:
    """``argv`` wrapped in bubblewrap (see the module docstring).

    The private ``/tmp`` hides the host's: ``readable`` names directories that must stay
    visible (read-only) although they may lie under ``/tmp`` (the artifact, the interpreter,
    the environment); ``writable`` adds directories the launcher may write besides the run
    directory (caches it needs). Paths that do not exist are left out.
    """
    exe = shutil.which(BWRAP) or BWRAP
    command = [
        exe,
        "--unshare-all",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",  # noqa: S108 - the sandbox's own, empty /tmp
    ]
    for path in readable:
        if path.exists():
            command += ["--ro-bind", str(path), str(path)]
    for path in (run_dir, *writable):
        if path.exists():
            command += ["--bind", str(path), str(path)]
    command += ["--chdir", str(workdir), "--", *argv]
    return command
