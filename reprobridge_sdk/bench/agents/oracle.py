"""The ``oracle`` reference agent: runs the artifact's launchers (see the package docstring).

It runs ``reprobridge run WORKSPACE LAUNCHER --env current`` for the scored launcher that
measures the task (in the current interpreter: the sandbox has no network to build the
locked environment), then reports every record of that launcher under ``runs/``: its log,
its outputs and its seed, with the value the workspace's extractors read from them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from reprobridge_sdk.bench.agents import measured_value, scored_launcher, task_of, write_results
from reprobridge_sdk.io import reading


def _records(workspace: Path, launcher: str) -> list[dict[str, Any]]:
    runs = []
    for record_path in sorted((workspace / "runs").glob("*/record.json")):
        try:
            record = reading.read_json(record_path, allow_links=False)
        except reading.Unreadable:
            continue
        if record.get("launcher") != launcher or record.get("status") != "succeeded":
            continue
        base = record_path.parent.relative_to(workspace).as_posix()
        run: dict[str, Any] = {"log": f"{base}/{record['log']['path']}"}
        run["outputs"] = {o["id"]: f"{base}/{o['path']}" for o in record.get("outputs", [])}
        if record.get("seed") is not None:
            run["seed"] = record["seed"]
        runs.append(run)
    return runs


def main(argv: list[str]) -> int:
    """Run the launcher and leave the results file."""
    workspace = Path(argv[0] if argv else ".").resolve()
    task = task_of()
    launcher = scored_launcher(workspace, task)
    if launcher is None:
        sys.stdout.write("oracle: no manifest with a launcher that measures the task\n")
        return 0
    command = [sys.executable, "-m", "reprobridge_sdk", "run", str(workspace), launcher.id]
    done = subprocess.run([*command, "--env", "current", "--no-validate"], check=False)
    sys.stdout.write(f"oracle: reprobridge run exited {done.returncode}\n")
    runs = _records(workspace, launcher.id)
    entry: dict[str, Any] = {"task": task, "launcher": launcher.id, "runs": runs}
    entry["value"] = measured_value(workspace, entry) if runs else None
    write_results(workspace, "oracle", [entry])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
