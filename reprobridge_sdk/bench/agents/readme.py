"""The ``readme`` reference agent: runs the workspace README's commands literally, in order
(spec bench.md#reference-agents).

The commands are those the build agent's reader finds (``agent.commands.markdown_commands``).
Values come only from the workspace manifest's extractors.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import subprocess
import sys
from pathlib import Path
from typing import Any

from reprobridge_sdk.bench.agents import measured_value, scored_launcher, task_of, write_results

MAX_COMMANDS = 20
TIMEOUT = 1800
_NAMES = ("README.md", "README.rst", "README.txt", "README", "GUIDE.md")


def _readme(workspace: Path) -> str | None:
    for name in _NAMES:
        path = workspace / name
        if path.is_file() and not path.is_symlink():
            return path.read_text("utf-8", errors="replace")
    return None


def _seed(argv: list[str]) -> int | None:
    for flag, value in itertools.pairwise(argv):
        if flag == "--seed" and value.isdigit():
            return int(value)
    return None


def _outputs(launcher: Any, seed: int | None, run_dir: str) -> dict[str, str]:
    outputs = {}
    for output in launcher.outputs:
        path = output.path.replace("{run_dir}", run_dir)
        if seed is not None:
            path = path.replace("{seed}", str(seed))
        if "{" not in path:
            outputs[output.id] = posixpath.normpath(posixpath.join(launcher.workdir, path))
    return outputs


def main(argv: list[str]) -> int:
    """Run the README's commands and leave the results file."""
    from reprobridge_sdk.agent.commands import markdown_commands  # noqa: PLC0415

    workspace = Path(argv[0] if argv else ".").resolve()
    task = task_of()
    text = _readme(workspace)
    commands = [c for c in markdown_commands(text or "") if c.problem is None][:MAX_COMMANDS]
    sys.stdout.write(f"readme: {len(commands)} command(s) to follow\n")
    ran: list[tuple[str, list[str]]] = []
    for number, command in enumerate(commands):
        cwd = (workspace / command.workdir).resolve()
        if not cwd.is_relative_to(workspace) or not cwd.is_dir():
            continue
        folder = workspace / "runs" / f"readme-{number}"
        folder.mkdir(parents=True, exist_ok=True)
        argv_ = ["/bin/sh", "-c", command.argv[0]] if command.shell else list(command.argv)
        if argv_[0] == "python":
            argv_[0] = sys.executable
        env = {**os.environ, **command.env}
        with (folder / "log.txt").open("wb") as log:
            try:
                done = subprocess.run(
                    argv_,
                    cwd=cwd,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=TIMEOUT,
                    check=False,
                )
                code: int | str = done.returncode
            except (OSError, subprocess.TimeoutExpired) as exc:
                code = type(exc).__name__
        sys.stdout.write(f"readme: {command.text!r} -> {code}\n")
        ran.append((folder.relative_to(workspace).as_posix(), list(command.argv)))
    launcher = scored_launcher(workspace, task)
    if launcher is None:
        write_results(workspace, "readme", [{"task": task, "value": None, "runs": []}])
        return 0
    runs = []
    for name, words in ran:
        seed = _seed(words)
        run: dict[str, Any] = {"log": f"{name}/log.txt"}
        outputs = _outputs(launcher, seed, name)
        present = {k: v for k, v in outputs.items() if (workspace / v).is_file()}
        if present:
            run["outputs"] = present
        if seed is not None:
            run["seed"] = seed
        one = {"task": task, "launcher": launcher.id, "runs": [run]}
        if measured_value(workspace, one) is not None:  # only runs the extractors read
            runs.append(run)
    entry: dict[str, Any] = {"task": task, "launcher": launcher.id, "runs": runs}
    entry["value"] = measured_value(workspace, entry) if runs else None
    write_results(workspace, "readme", [entry])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
