"""A failed build's report, followed by hand: edit the code, ``code record``, ``build --resume``.

A claim that does not reproduce (the code runs, so the build still ends with a valid artifact,
its claim incompatible and the discrepancy recorded) is the ``not-reproducible`` fixture of
``test_build_e2e.py``, which shares that build among its tests. A script that never ends on
its own also yields a valid artifact, its claim not run, below.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from build_fixtures import _COMMON, _SEEDED, Fixture, write_repo
from generated_docs import problems

from reprobridge_sdk.api import load
from reprobridge_sdk.model.build import BuildReport, ReviewRecord
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


#: The Planetoid class (a 2016 Theano repository): the training loop prints the accuracy at
#: every step and never exits; its authors stopped it by hand.
_PLANETOID = {
    "planetoid/model.py": (
        "import numpy as np\n\n\n"
        "def step(weights, rng):\n"
        "    return weights - 0.01 * rng.normal(size=weights.shape)\n"
    ),
    "train.py": _COMMON
    + (
        "from planetoid.model import step\n\n\n"
        "def main():\n"
        "    rng = np.random.default_rng(0)\n"
        "    weights = rng.normal(size=8)\n"
        "    it = 0\n"
        "    while True:\n"
        "        weights = step(weights, rng)\n"
        "        it += 1\n"
        '        print("iter %d accuracy 0.71" % it, flush=True)\n\n\n'
        'if __name__ == "__main__":\n'
        "    main()\n"
    ),
}


def test_a_script_that_never_ends_yields_a_valid_artifact_with_its_claim_not_run(
    tmp_path: Path, env_cache: Path
) -> None:
    """Its smoke run passes its budget, no knob cuts the loop, and the loop has no way out:
    the claim is not run (B061, naming the loop's place), the build goes on to a valid
    artifact whose task says it is not measured and whose guide says what was seen, and the
    clean-room check passes without running the launcher that never ends."""
    loop = f"train.py:{_PLANETOID['train.py'].splitlines().index('    while True:') + 1}"
    claim = {**_CLAIM, "measured": "test accuracy on Citeseer", "value": 0.71}
    claim["hints"] = {"label": "accuracy"}
    fixture = Fixture("planetoid", _PLANETOID, [claim], ("trains until it is stopped",))
    repo, claims = write_repo(tmp_path / "raw", fixture)
    out = tmp_path / "out"
    env = {**os.environ, "REPROBRIDGE_CACHE_DIR": str(env_cache)}
    build = [sys.executable, "-m", "reprobridge_sdk", "build", str(repo), "--claims", str(claims)]
    done = _run([*build, "-o", str(out), "--smoke-budget", "3", "--format", "json"], env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = BuildReport.model_validate_json(done.stdout)
    assert report.passed and report.failure is None and report.reviewed
    [summary] = report.claims
    assert (summary.claim, summary.status) == ("accuracy", "not run")
    assert summary.reason is not None and loop in summary.reason and "(B061)" in summary.reason
    [b061] = [f for f in report.findings if f.code == "B061"]
    assert b061.severity == "warning" and loop in b061.message
    assert [(f.code, f.path) for f in validate(out, strict=True).findings] == []
    art = load(out)
    assert [launcher.id for launcher in art.manifest.launchers] == ["train-scored"]
    [task] = art.manifest.tasks
    assert task.reference.not_measured == summary.reason
    [discrepancy] = art.manifest.guide.discrepancies
    assert discrepancy.tasks == ["accuracy"] and loop in discrepancy.code
    readme = (out / "README.md").read_text("utf-8")
    assert "--scope smoke" not in readme and "--scope scored" not in readme
    assert "reprobridge run . train-scored --timeout" in readme and loop in readme
    assert problems(out) == []  # every command it names exists, every path is there
    guide = (out / art.manifest.guide.path).read_text("utf-8")
    assert loop in guide and "stopped at its budget after" in guide
    review = ReviewRecord.model_validate_json((out / ".rra-build/reviewer.json").read_text())
    assert review.check_passed and "scored: ok" in review.check_steps
    assert review.verdicts == {"accuracy": "not-run"}
