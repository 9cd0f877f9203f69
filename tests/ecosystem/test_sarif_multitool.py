"""The SARIF report passes Microsoft's SARIF multitool with GitHub's ingestion rules.

The multitool (npm package ``@microsoft/sarif-multitool``) is what GitHub documents for
checking a SARIF file before code scanning ingests it: ``validate --rule-kind "Gh;Sarif"``
runs the SARIF specification's rules and GitHub's (GH1001..., GH2012 "provide a 'help'
object", ...). CI (``.ci/run``) installs it beside ajv and sets
``REPROBRIDGE_REQUIRE_SARIF_MULTITOOL=1``, so there a missing multitool fails; elsewhere the
test skips, saying why. The package's ``bin.js`` passes its arguments through a shell, so the
test runs the native program that the package's ``require()`` names.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import reprobridge_sdk as rb
from reprobridge_sdk.findings import finding
from reprobridge_sdk.validation.reporters import render

VECTORS = Path(__file__).resolve().parents[1] / "validate" / "vectors"
_RULE_KINDS = "Gh;Sarif"


def _multitool() -> tuple[str | None, str]:
    """The multitool's program, or None and why not."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not installed"
    probe = subprocess.run(
        [node, "-e", "console.log(require('@microsoft/sarif-multitool'))"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    program = probe.stdout.strip()
    if probe.returncode != 0 or not program or not Path(program).is_file():
        return None, "the npm package @microsoft/sarif-multitool is not installed (NODE_PATH)"
    return program, ""


@pytest.fixture(scope="module")
def multitool() -> str:
    program, why_not = _multitool()
    if program is None:
        if os.environ.get("REPROBRIDGE_REQUIRE_SARIF_MULTITOOL") == "1":
            pytest.fail(f"the SARIF multitool is required here: {why_not}")
        pytest.skip(f"the SARIF multitool is not available: {why_not}; CI installs it")
    return program


def _check(program: str, document: dict[str, Any], tmp_path: Path) -> list[tuple[str, str]]:
    """(rule id, level) of every problem the multitool finds in ``document``."""
    source = tmp_path / "report.sarif"
    source.write_text(json.dumps(document), "utf-8")
    out = tmp_path / "check.sarif"
    out.unlink(missing_ok=True)
    proc = subprocess.run(
        [program, "validate", "--rule-kind", _RULE_KINDS, "-o", str(out), str(source)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "DOTNET_CLI_TELEMETRY_OPTOUT": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text("utf-8"))["runs"][0].get("results", [])
    return [(item["ruleId"], item.get("level", "warning")) for item in results]


def test_validation_sarif_passes_github_rules(multitool: str, tmp_path: Path) -> None:
    result = rb.validate(
        [
            VECTORS / "misspelled-task-key",  # an error, with a region and a pointer
            VECTORS / "version-newer-minor-unknown-key",  # a warning
            VECTORS / "not-a-mapping",
            VECTORS / "valid-minimal",
        ]
    )
    located = finding("L001", "unparseable line", file="locks/req.lock", line=3, col=2)
    pairs = [*result.pairs(), ("env", [located])]
    document = json.loads(render(pairs, "sarif"))
    assert document["runs"][0]["results"]
    problems = _check(multitool, document, tmp_path)
    assert [p for p in problems if p[1] in {"error", "warning"}] == []


def test_a_rule_without_help_is_caught(multitool: str, tmp_path: Path) -> None:
    """The control: the multitool does run GitHub's rules (GH2012 on a rule with no help)."""
    pairs = [("env", [finding("L001", "x", file="req.lock", line=3)])]
    document = json.loads(render(pairs, "sarif"))
    del document["runs"][0]["tool"]["driver"]["rules"][0]["help"]
    assert ("GH2012", "error") in _check(multitool, document, tmp_path)
