"""``--format github``: workflow commands that GitHub Actions turns into annotations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reprobridge_sdk.findings import Severity, finding
from reprobridge_sdk.validation.reporters import render


def test_one_command_per_finding_with_position_and_code() -> None:
    items = [
        finding(
            "S001", "unknown key 'metrik'", path="/tasks/0/metrik", file="a/rra.yaml", line=3, col=5
        ),
        finding("R010", "no reference", file="a/rra.yaml", severity=Severity.WARNING),
        finding("S001", "x", severity=Severity.INFO),
    ]
    lines = render([("a", items)], "github").splitlines()
    assert lines[0] == (
        "::error file=a/rra.yaml,line=3,col=5,title=S001 /tasks/0/metrik::unknown key 'metrik'"
    )
    assert lines[1] == "::warning file=a/rra.yaml,title=R010::no reference"
    assert lines[2] == "::notice file=a,title=S001::x"  # no file: the artifact's label
    assert lines[3].startswith("1 artifact checked")


def test_hostile_text_cannot_inject_a_workflow_command() -> None:
    item = finding(
        "S001",
        "bad\n::error file=x::injected 100%",
        file="dir,with:odd\nname/rra.yaml",
        hint="fix\r\nit",
    )
    [command, summary] = render([("a", [item])], "github").splitlines()
    assert command == (
        "::error file=dir%2Cwith%3Aodd%0Aname/rra.yaml,title=S001::"
        "bad%0A::error file=x::injected 100%25%0Ahint: fix%0D%0Ait"
    )
    assert summary.startswith("1 artifact checked")


def test_data_verify_and_env_check_annotate_too(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    (art / "rra.yaml").write_text(
        'rra_version: "1.0"\nenvironment:\n  python: "3.11"\n  data:\n'
        "    - id: weights\n      source: {url: 'https://example.org/w.bin'}\n"
        f"      sha256: {'a' * 64}\n      destination: data/w.bin\n"
    )
    for command in (["data", "verify"], ["env", "check", "--current"]):
        proc = subprocess.run(
            [sys.executable, "-m", "reprobridge", *command, str(art), "--format", "github"],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert proc.returncode == 1, proc.stderr
        first = proc.stdout.splitlines()[0]
        assert first.startswith("::error file=rra.yaml,line="), first
