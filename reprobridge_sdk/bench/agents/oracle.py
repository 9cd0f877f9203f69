"""The ``oracle`` reference agent: runs the artifact's launchers (see the package docstring).

It runs the scored launcher that measures the task with ``--env current`` (the sandbox has no
network to build the locked environment) and leaves its evidence records as its results.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from reprobridge_sdk.api import load
from reprobridge_sdk.bench.agents import measured_value, scored_launcher, task_of, write_results
from reprobridge_sdk.bench.records import results_from_records


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
    found = results_from_records(load(workspace).manifest, workspace, task)
    entry: dict[str, Any] = {"task": task, "launcher": launcher.id, "runs": []}
    if found is not None:  # every succeeded record, as the harness would read them
        entry = found.results[0].model_dump(mode="json", exclude_none=True)
        entry["value"] = measured_value(workspace, entry)
    else:
        entry["value"] = None
    write_results(workspace, "oracle", [entry])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
