"""The GitHub Action and the example workflow pass actionlint; the action's inputs are checked."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).with_name("actionlint"))
    assert Path(found).exists(), "actionlint (a test dependency) is not installed"
    return found


def _repository(tmp_path: Path, workflow: str) -> Path:
    """A git repository whose root is this action and whose workflow uses it as ``./``."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    shutil.copy(REPO / "action.yml", tmp_path / "action.yml")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "validate.yml").write_text(workflow)
    return tmp_path


def _lint(root: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        [_actionlint(), "-no-color", "-format", "{{json .}}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode in {0, 1}, proc.stderr
    return json.loads(proc.stdout or "[]")  # type: ignore[no-any-return]


def _example() -> str:
    text = (REPO / "examples" / "ci" / "github-workflow.yml").read_text()
    assert "uses: reprobridge/reprobridge@v0.1.0" in text
    return text.replace("uses: reprobridge/reprobridge@v0.1.0", "uses: ./")


def test_the_example_workflow_and_the_action_pass_actionlint(tmp_path: Path) -> None:
    root = _repository(tmp_path, _example())
    assert _lint(root) == []


def test_actionlint_checks_the_inputs_against_the_action(tmp_path: Path) -> None:
    """A misspelt input is caught, so the action's metadata is really read."""
    root = _repository(tmp_path, _example().replace("strict:", "stricct:"))
    errors = _lint(root)
    assert [(e["kind"], Path(str(e["filepath"])).name) for e in errors] == [
        ("action", "validate.yml")
    ]
    assert "stricct" in str(errors[0]["message"])


def test_the_action_declares_what_its_steps_use() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = set(action["inputs"])
    assert {"paths", "version", "strict", "upload-sarif", "sarif-file", "run", "audit"} <= inputs
    uses = [step.get("uses", "") for step in action["runs"]["steps"]]
    assert "github/codeql-action/upload-sarif@v4" in uses
    # Inputs reach shell steps through env, never spliced into the script.
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]


def test_action_and_workflow_match_schemastore_schemas() -> None:
    """check-jsonschema's vendored SchemaStore schemas for actions and workflows."""
    for schema, path in [
        ("vendor.github-actions", REPO / "action.yml"),
        ("vendor.github-workflows", REPO / "examples" / "ci" / "github-workflow.yml"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
