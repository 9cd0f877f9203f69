"""``reprobridge init``: the scaffold validates clean, refuses to overwrite, checks options."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk import api
from reprobridge_sdk.authoring.scaffold import InitOptions, default_id, experiment_value, scaffold


def _reprobridge(
    *args: str, cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        input=stdin,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_init_yes_then_validate_has_only_placeholder_warnings(tmp_path: Path) -> None:
    created = _reprobridge("init", "demo", "--yes", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    # init names every placeholder it wrote, as the validator will, in the one line shape
    assert all(
        re.match(r"^\S+: P\d{3} warning ", line)
        for line in created.stdout.splitlines()
        if not line.startswith("    hint: ")
    )
    for pointer in (
        "/artifact/paper/title",
        "/codebase/upstream/commit",
        "/codebase/upstream/repository",
        "/tasks/0/title",
        "/tasks/0/reference/observations/0/provenance/source",
        "/launchers/1/samples/0/log",
    ):
        assert f"[{pointer}]" in created.stdout, pointer
    root = tmp_path / "demo"
    assert (root / "rra.yaml").read_text("utf-8").splitlines()[0] == (
        "# yaml-language-server: $schema=https://reprobridge.org/schemas/rra-1.0.schema.json"
    )
    for relative in (
        "GUIDE.md",
        "code/experiment.py",
        "environment/requirements.in",
        "environment/requirements.txt",
    ):
        assert (root / relative).is_file(), relative
    validated = _reprobridge("validate", "demo", "--format", "json", cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout
    report = json.loads(validated.stdout)
    findings = [f for artifact in report["artifacts"] for f in artifact["findings"]]
    assert {(f["code"], f["severity"]) for f in findings} == {
        ("P001", "warning"),
        ("P002", "warning"),
        ("P003", "warning"),
        ("P004", "warning"),
        ("P005", "warning"),
        ("P006", "warning"),
    }
    assert sum(f["code"] == "P005" for f in findings) == 5  # every scaffold observation
    strict = _reprobridge("validate", "--strict", "demo", cwd=tmp_path)
    assert strict.returncode == 1, strict.stderr


def test_an_untouched_scaffold_earns_no_functional_or_reproduced_badge(tmp_path: Path) -> None:
    from reprobridge_sdk.audit import audit

    assert _reprobridge("init", "demo", "--yes", cwd=tmp_path).returncode == 0
    root = tmp_path / "demo"
    ran = _reprobridge("run", "demo", "--env", "current", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    result = audit(root)
    assert not result.badges.functional
    assert not result.badges.reproduced
    assert "A046" in [f.code for f in result.findings]
    assert [t.attempts[0].verdict for t in result.tasks] == ["compatible"]


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    assert _reprobridge("init", "demo", "--yes", cwd=tmp_path).returncode == 0
    manifest = tmp_path / "demo" / "rra.yaml"
    manifest.write_text(manifest.read_text("utf-8") + "# edited\n", "utf-8")
    before = manifest.read_bytes()
    again = _reprobridge("init", "demo", "--yes", cwd=tmp_path)
    assert again.returncode == 2
    assert manifest.read_bytes() == before
    forced = _reprobridge("init", "demo", "--yes", "--force", "--title", "Again", cwd=tmp_path)
    assert forced.returncode == 0
    assert api.load(tmp_path / "demo").manifest.artifact.title == "Again"


def test_init_flags_fill_the_manifest(tmp_path: Path) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    result = _reprobridge(
        "init",
        "study",
        "--yes",
        "--id",
        "my-study",
        "--title",
        "My study",
        "--paper-title",
        "Deep Things",
        "--license",
        "MIT",
        "--repository",
        "https://github.com/example/deep-things.git",
        "--commit",
        commit,
        "--python",
        "3.10",
        "--author",
        "Ada Lovelace",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    manifest = api.load(tmp_path / "study").manifest
    assert manifest.artifact.id == "my-study"
    assert manifest.artifact.paper.title == "Deep Things"
    assert manifest.artifact.license == "MIT"
    assert manifest.artifact.authors[0].name == "Ada Lovelace"
    assert manifest.codebase.upstream.commit == commit
    assert manifest.environment.python == "3.10"


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--id", "Not A Slug"), ("--commit", "main"), ("--python", "three")],
)
def test_init_rejects_invalid_options_without_writing(
    tmp_path: Path, flag: str, value: str
) -> None:
    result = _reprobridge("init", "bad", "--yes", flag, value, cwd=tmp_path)
    assert result.returncode == 2
    assert flag in result.stderr
    assert not (tmp_path / "bad").exists()


def test_init_prompts_for_what_flags_do_not_give(tmp_path: Path) -> None:
    answers = "\n".join(["", "Prompted title", "Prompted paper", "", "", "3.12"]) + "\n"
    result = _reprobridge("init", "My Study!", "--license", "MIT", cwd=tmp_path, stdin=answers)
    assert result.returncode == 0, result.stderr
    manifest = api.load(tmp_path / "My Study!").manifest
    assert manifest.artifact.id == "my-study"  # the default offered, from the directory name
    assert manifest.artifact.title == "Prompted title"
    assert manifest.artifact.paper.title == "Prompted paper"
    assert manifest.artifact.license == "MIT"
    assert manifest.environment.python == "3.12"


def test_init_without_answers_is_a_usage_error(tmp_path: Path) -> None:
    result = _reprobridge("init", "demo", cwd=tmp_path, stdin="")
    assert result.returncode == 2
    assert "--yes" in result.stderr.strip().splitlines()[-1]  # no answer: use --yes and flags
    assert not (tmp_path / "demo").exists()


def test_default_id_is_a_valid_slug(tmp_path: Path) -> None:
    assert default_id(tmp_path / "My Study!") == "my-study"
    assert default_id(tmp_path / "---") == "my-artifact"


def test_scaffold_values_are_what_the_experiment_prints(tmp_path: Path) -> None:
    art = scaffold(tmp_path / "demo", InitOptions(id="demo", title="Demo"))
    task = art.manifest.tasks[0]
    observed = [obs.value for obs in task.reference.observations]
    assert observed == [experiment_value(seed) for seed in (1, 2, 3, 4, 5)]
    printed = subprocess.run(
        [sys.executable, "code/experiment.py", "--seed", "3"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path / "demo",
    ).stdout.splitlines()
    assert printed == ["training started", "training finished", f"accuracy: {observed[2]:.4f}"]


def test_init_never_overwrites_existing_files_without_force(tmp_path: Path) -> None:
    (tmp_path / "proj" / "code").mkdir(parents=True)
    own = tmp_path / "proj" / "code" / "experiment.py"
    own.write_text("print('my own code')\n", "utf-8")
    result = _reprobridge("init", "proj", "--yes", cwd=tmp_path)
    assert result.returncode == 2
    assert "code/experiment.py" in result.stdout + result.stderr
    assert own.read_text("utf-8") == "print('my own code')\n"
    assert not (tmp_path / "proj" / "rra.yaml").exists()
