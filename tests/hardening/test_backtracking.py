"""Catastrophic backtracking: author patterns run on a linear-time engine (RE2).

`^(a+)+$` took 40 s on 30 characters with Python's `re`, and `^(?P<value>(a|aa)+)+$` on a
matching sample line hung `validate` and `audit`. Each command here runs in a subprocess with
a timeout: a backtracking engine would never end on 5,000 a's and a b (2 ** 5000 steps), a
linear one finishes in about a second. The timeout is a hang guard, not a measure: generous
enough for a loaded machine, where the same second can take tens.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"
TIMEOUT = 180
LINES = "a" * 30 + "!\n" + "a" * 100_000 + "\n" + "a" * 5_000 + "b\n"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("pattern", [r"^(a+)+$", r"^(?P<value>(a|aa)+)+$"])
def test_validate_replays_an_evil_pattern_in_linear_time(tmp_path: Path, pattern: str) -> None:
    root = tmp_path / "artifact"
    shutil.copytree(EXAMPLE, root)
    manifest = root / "rra.yaml"
    text = manifest.read_text()
    original = "'^logreg_accuracy=(?P<value>[0-9.]+)$'"
    assert original in text
    group = "group: value, " if "value" in pattern else "group: 1, "
    text = text.replace(f"pattern: {original}, group: value, ", f"pattern: '{pattern}', {group}")
    manifest.write_text(text)
    for log in root.glob("samples/*/log.txt"):
        log.write_text(log.read_text() + LINES)
    proc = _cli("validate", "--format", "json", root)
    report = json.loads(proc.stdout)
    codes = {f["code"] for a in report["artifacts"] for f in a["findings"]}
    assert "X002" in codes  # the line matched: 100,000 a's are not a number


def _artifact(root: Path) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "emit.py").write_text(f"print({LINES!r}, end='')\nprint('score=0.5')\n")
    manifest = {
        "rra_version": "1.0",
        "artifact": {"id": "evil", "title": "Evil", "license": "MIT", "paper": {"title": "E"}},
        "codebase": {
            "upstream": {"repository": "https://example.org/e.git", "commit": "0" * 40},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": f"{sys.version_info.major}.{sys.version_info.minor}"},
        "tasks": [
            {
                "id": "t",
                "dataset": "d",
                "metric": "m",
                "published": {"value": 0.5},
                "direction": "higher",
                "kind": "full",
                "reference": {
                    "observations": [
                        {"value": v, "provenance": {"source": "r"}} for v in (0.5, 0.5, 0.5)
                    ]
                },
            }
        ],
        "launchers": [
            {
                "id": "emit",
                "argv": ["python", "emit.py"],
                "workdir": "code",
                "scope": "scored",
                "landmarks": [{"id": "evil", "pattern": r"^(a+)+$"}],
                "measurements": [
                    {
                        "task": "t",
                        "extract": {
                            "kind": "regex",
                            "pattern": r"^(?P<value>(a|aa)+)+$|^score=(?P<s>[0-9.]+)$",
                            "group": "s",
                            "occurrence": "last",
                        },
                    }
                ],
            }
        ],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def test_run_and_audit_match_evil_patterns_in_linear_time(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    proc = _cli("run", root, "emit", "--env", "current", "--no-validate")
    assert proc.returncode == 0, proc.stderr
    proc = _cli("audit", root, "--format", "json")
    report = json.loads(proc.stdout)
    (task,) = report["tasks"]
    (attempt,) = task["attempts"]
    assert attempt["value"] == 0.5
