"""The build agent's runs of repository code outside the runner, in the runner's sandbox.

The Reproducer's smoke runs and the Builder's import probes start the repository's code
directly (not through :func:`reprobridge_sdk.run.run`). With the sandbox on (the build's
default) their command is wrapped by :func:`reprobridge_sdk.run.sandbox.sandbox_command`,
the wrapper of ``run --sandbox``: no network, the file system read-only but a scratch
directory of the run, a private ``/tmp``, its own PID namespace (nothing it starts outlives
it). ``visible`` names what must stay readable although it may lie under ``/tmp``: the
working copy and the built environment; the running interpreter's prefixes are added.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["confined"]


def confined(
    argv: Sequence[str], *, workdir: Path, visible: Sequence[Path], scratch: Path
) -> list[str]:
    """``argv`` wrapped in the sandbox; ``scratch`` (an existing directory) is writable."""
    from reprobridge_sdk.run.sandbox import sandbox_command  # noqa: PLC0415 - on use

    seen: list[Path] = []
    for path in (*visible, Path(sys.prefix), Path(sys.base_prefix)):
        for candidate in (path.absolute(), Path(os.path.realpath(path))):
            if candidate not in seen:
                seen.append(candidate)
    return sandbox_command(argv, workdir=workdir, run_dir=scratch, readable=seen)
