"""A failed build's report, followed by hand: edit the code, ``code record``, ``build --resume``.

A claim that does not reproduce (the code runs, so the build still ends with a valid artifact,
its claim incompatible and the discrepancy recorded) is the ``not-reproducible`` fixture of
``test_build_e2e.py``, which shares that build among its tests.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from build_fixtures import _SEEDED, Fixture, write_repo

from reprobridge_sdk.api import load
from reprobridge_sdk.model.build import BuildReport
from reprobridge_sdk.validation import validate

pytestmark = pytest.mark.slow

_CLAIM = {
    "id": "accuracy",
    "measured": "test accuracy on digits",
    "value": 0.96,
    "direction": "higher",
    "hints": {"label": "test accuracy"},
}

#: The script uses ``os`` and never imports it: a one-line fix no rule of the agent makes.
_MISSING_IMPORT = (
    _SEEDED
    + 'os.makedirs("results", exist_ok=True)\n'
    + 'print("test accuracy: %.4f" % model.score(X_test / 16.0, y_test))\n'
)


def _argv(command: str) -> list[str]:
    """A 'reprobridge ...' step of the report as this interpreter's command line."""
    words = shlex.split(command)
    assert words[0] == "reprobridge", command
    return [sys.executable, "-m", "reprobridge_sdk", *words[1:]]


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=False)


def test_the_author_follows_the_report_fixes_records_and_resumes_to_a_valid_artifact(
    tmp_path: Path, env_cache: Path
) -> None:
    fixture = Fixture("missing-import", {"train.py": _MISSING_IMPORT}, [_CLAIM], ("no os",))
    repo, claims = write_repo(tmp_path / "raw", fixture)
    out = tmp_path / "out"
    env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(env_cache)}
    build = [sys.executable, "-m", "reprobridge_sdk", "build", str(repo), "--claims", str(claims)]
    first = _run([*build, "-o", str(out), "--format", "json"], env)
    assert first.returncode == 1, first.stderr
    report = BuildReport.model_validate_json(first.stdout)
    failure = report.failure
    assert failure is not None and report.stopped_at == "reproducer", "\n".join(failure.tried)
    assert (failure.phase, failure.failure_class, failure.codes) == (
        "reproducer",
        "run-fails",
        ["B007"],
    )
    assert any("NameError" in line and "train-smoke" in line for line in failure.tried)
    edit, record, resume = failure.unblock
    assert edit == f"edit {shlex.quote(str(out / 'code/train.py'))}"
    assert shlex.split(record)[:3] == ["reprobridge", "code", "record"]
    assert shlex.split(resume)[:2] == ["reprobridge", "build"] and resume.endswith("--resume")
    # every command the report names exists
    for command in (record, resume):
        words = _argv(command)
        helped = _run(
            [*words[:5], "--help"] if "code" in words[3:5] else [*words[:4], "--help"], env
        )
        assert helped.returncode == 0, (command, helped.stderr)
    # the human summary says the same
    assert "run-fails at reproducer" in first.stderr and resume in first.stderr

    # the author does what the report says: the edit, then the two commands, as printed
    script = Path(shlex.split(edit)[1])
    script.write_text("import os\n" + script.read_text("utf-8"), "utf-8")
    recorded = _run(_argv(record), env)
    assert recorded.returncode == 0, recorded.stderr + recorded.stdout
    [change] = load(out).manifest.guide.changes
    resumed = _run([*_argv(resume), "--json"], env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = BuildReport.model_validate_json(resumed.stdout)
    assert report.passed and report.failure is None
    assert report.reused == ["intake", "planner", "builder"]
    assert "B041" in [f.code for f in report.findings]
    assert {c.claim: c.status for c in report.claims} == {"accuracy": "compatible"}

    # a valid artifact whose change record holds the author's fix once, and no orphan patch
    assert [(f.code, f.path) for f in validate(out, strict=True).findings] == []
    art = load(out)
    [kept] = art.manifest.guide.changes
    assert (kept.id, kept.kind, kept.rationale) == (change.id, "execution-fix", change.rationale)
    assert kept.files == ["train.py"]
    assert sorted(p.relative_to(out).as_posix() for p in (out / "patches").iterdir()) == [
        kept.patch
    ]
    patch = (out / str(kept.patch)).read_text("utf-8")
    assert patch.count("+import os") == 1
    assert (out / "code/train.py").read_text("utf-8").startswith("import os\n")
    assert not (out / ".rra-build/recorded-changes.json").exists()

    # resumed again with nothing new: every phase is reused, the fix still recorded once
    again = _run([*_argv(resume), "--json"], env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["reused"] == [
        "intake",
        "planner",
        "builder",
        "reproducer",
        "distiller",
        "packager",
        "reviewer",
    ]
    assert [c.id for c in load(out).manifest.guide.changes] == [change.id]
