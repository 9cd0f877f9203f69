"""The ``readme`` reference agent reads README commands with the build agent's reader
(:func:`reprobridge_sdk.agent.commands.markdown_commands`), not a reader of its own: it
follows what only that reader understands (``$`` prompts, ``cd`` into a folder, a command
continued over lines). A real run of the toy study's script, outside the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toy_study import make_artifact

from reprobridge_sdk.agent.commands import markdown_commands
from reprobridge_sdk.bench.variants import WORKSPACE_DIR, generate_variants

README = """\
# The toy study

Train one seed:

```console
$ cd code
$ python train.py --seed 0 --epochs 10 \\
      --out ../results/metrics-0.json
```
"""


def test_readme_follows_what_the_build_agents_reader_finds(tmp_path: Path) -> None:
    toy = make_artifact(tmp_path / "toy", launchers=("scored",))
    (toy / "README.md").write_text(README, encoding="utf-8")
    generate_variants(toy, tmp_path / "out", ["refined"])
    workspace = tmp_path / "out" / "refined" / WORKSPACE_DIR
    [command] = markdown_commands(README)  # one command, in code/, over two lines
    assert (command.workdir, command.argv[:2], command.argv[-1]) == (
        "code",
        ["python", "train.py"],
        "../results/metrics-0.json",
    )
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk.bench.agents.readme", str(workspace)],
        env={**os.environ, "REPRO_BENCH_TASK": "acc"},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "readme: 1 command(s) to follow" in done.stdout
    log = workspace / "runs" / "readme-0" / "log.txt"
    assert "test accuracy: 90.0000" in log.read_text("utf-8")  # it ran in code/
    assert (workspace / "results" / "metrics-0.json").is_file()
    results = json.loads((workspace / "bench-results.json").read_text("utf-8"))
    [entry] = results["results"]
    assert entry["runs"] == [
        {
            "log": "runs/readme-0/log.txt",
            "outputs": {"metrics": "results/metrics-0.json"},
            "seed": 0,
        }
    ]
    assert (entry["task"], entry["launcher"]) == ("acc", "scored")
    assert entry["value"] == pytest.approx(90.0)  # read with the workspace's extractor
