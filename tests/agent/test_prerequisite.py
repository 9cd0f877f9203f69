"""A step of the repository that writes the file a launcher reads, run first; and the
console scripts of the repository's own package read as Python commands.

The hostile cases run real smoke runs of small stdlib-only repositories under this
interpreter; the fixture ``prerequisite`` runs in the shared fixture environment.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from build_fixtures import EPOCH_SECONDS, git, write_repo

from reprobridge_sdk.agent.builder import build_environment, declared_requirements
from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.commands import markdown_commands, parse_command
from reprobridge_sdk.agent.console_scripts import console_scripts
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.packager import assemble, manifest_launcher
from reprobridge_sdk.agent.pipeline import _Era
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.agent.prerequisite import (
    compose,
    find_step,
    prerequisite_fix,
    shorter_step,
    with_step_imports,
)
from reprobridge_sdk.agent.reproducer import reproduce, run_launcher
from reprobridge_sdk.agent.state import BuildState
from reprobridge_sdk.model.build import (
    BuilderRecord,
    BuildFinding,
    IntakeRecord,
    LauncherPlan,
    PlanRecord,
    PrepareStep,
    ReproducerRecord,
)
from reprobridge_sdk.run.sandbox import check_sandbox

ZERO = "0" * 64
PYTHON = Path(sys.executable)

_MAIN = """\
from pathlib import Path
text = Path("data/x.txt").read_text()
print("result: %d" % len(text))
"""
_GEN = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--num-samples", type=int, default=1000)
args = parser.parse_args()
with open("x" + ".txt", "w") as handle:
    handle.write("a" * args.num_samples)
"""


def _repo(base: Path, files: dict[str, str]) -> Path:
    repo = base / "raw"
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    git("init", "--quiet", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "Initial code", cwd=repo)
    return repo


def _claims(base: Path, script: str = "main.py", label: str = "result") -> Path:
    path = base / "claims.yaml"
    document = {
        "claims_version": "1.0",
        "paper": {"title": "A study", "year": 2024},
        "claims": [
            {
                "id": "result",
                "measured": "the result",
                "value": 3.0,
                "direction": "higher",
                "hints": {"script": script, "label": label},
            }
        ],
    }
    path.write_text(yaml.safe_dump(document), "utf-8")
    return path


def _smoke(
    base: Path,
    repo: Path,
    claims_file: Path,
    python: Path = PYTHON,
    *,
    patches: bool = False,
    sandbox: bool = False,
    timeout: float = 120,
) -> tuple[ReproducerRecord, Path]:
    code = base / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        assert patches and fix.rule != "prerequisite", "a step is a decision, not a patch"
        git("commit", "-qam", fix.summary, cwd=code)
        return fix.rule

    result = reproduce(
        claims,
        planned,
        code,
        python,
        inputs_digest=ZERO,
        record=record,
        timeout=timeout,
        sandbox=sandbox,
    )
    return result, code


def _codes(result: ReproducerRecord) -> list[str]:
    return [f.code for f in result.gate.findings]


def _launcher(script: str = "main.py", **update: object) -> LauncherPlan:
    base = LauncherPlan(id="main-smoke", script=script, argv=["python", script], scope="smoke")
    return base.model_copy(update=update)


# ------------------------------------------------------------------ hostile cases first


def test_a_readme_step_that_needs_a_shell_is_never_adopted(tmp_path: Path) -> None:
    readme = "```\ncd data && python gen.py && rm -rf ../results\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN, "README.md": readme})
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"
    result, code = _smoke(tmp_path, repo, _claims(tmp_path))
    assert "B056" in _codes(result) and "B007" in _codes(result)
    assert not result.fixes and all(not item.prepare for item in result.launchers)
    assert (code / "data/gen.py").is_file()  # nothing of the line ran


@pytest.mark.parametrize(
    "args",
    ["--cache /etc/x", "--cache ../../outside", "--cache=~/x", "--name {param}"],
)
def test_a_readme_step_naming_a_path_outside_the_repository_is_never_adopted(
    tmp_path: Path, args: str
) -> None:
    readme = f"```\ncd data\npython gen.py {args}\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN, "README.md": readme})
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"


@pytest.mark.parametrize(
    "missing",
    ["../x.txt", "data/../../x.txt", "data/$(touch pwned).txt", "data/x;rm -rf .txt", "-x.txt"],
)
def test_a_missing_path_that_leaves_the_repository_or_a_shell_reads_is_refused(
    tmp_path: Path, missing: str
) -> None:
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN})
    found = find_step(repo, missing, _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"
    assert not (repo / "pwned").exists()


def test_a_readme_variable_naming_a_path_outside_is_never_adopted(tmp_path: Path) -> None:
    readme = "```\ncd data\nHOME_DATA=/etc python gen.py\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN, "README.md": readme})
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"


@pytest.mark.parametrize("outside", [False, True])
def test_an_absolute_missing_path_counts_only_inside_the_repository(
    tmp_path: Path, outside: bool
) -> None:
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN})
    where = tmp_path / "elsewhere/data/x.txt" if outside else repo / "data/x.txt"
    message = f"[Errno 2] No such file or directory: '{where}'"
    failure = Failure("FileNotFoundError", message, "main.py", 2)
    refused: list[BuildFinding] = []
    fix = prerequisite_fix(failure, repo, _launcher(), refused)
    assert not refused
    if outside:
        assert fix is None
    else:
        assert fix is not None and fix.prepare[0].produces == "data/x.txt"


def test_a_script_that_only_reads_the_file_is_not_a_generator(tmp_path: Path) -> None:
    reader = 'import numpy\nnumpy.load("x.txt")\nopen("x.txt").read()\n'
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/generate_x.py": reader})
    assert find_step(repo, "data/x.txt", _launcher()) is None


def test_a_generator_found_by_the_name_it_writes_that_does_not_write_it_is_b057(
    tmp_path: Path,
) -> None:
    never = 'def unused():\n    open("x.txt", "w").write("a")\n\nprint("nothing written")\n'
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/generate.py": never})
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, PrepareStep)
    assert (found.workdir, found.argv, found.source) == (
        "data",
        ["python", "generate.py"],
        found.script,
    )
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    assert "B057" in _codes(result) and "B007" in _codes(result)
    assert [r.rule for r in result.rejected] == ["prerequisite"]
    assert all(not item.prepare for item in result.launchers)


def test_a_prerequisite_that_fails_is_b057_and_not_kept(tmp_path: Path) -> None:
    failing = 'open("x.txt", "w")\nraise ValueError("no simulator")\n'
    readme = "```\ncd data\npython gen.py\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": failing, "README.md": readme})
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    b057 = [f for f in result.gate.findings if f.code == "B057"]
    assert len(b057) == 1 and "ValueError" in b057[0].message
    assert "B007" in _codes(result)
    assert not result.fixes and [r.rule for r in result.rejected] == ["prerequisite"]


def test_a_step_whose_error_a_fix_rule_mends_is_kept_and_its_code_fixed(tmp_path: Path) -> None:
    old = 'from collections import Mapping\nopen("x.txt", "w").write("abcd" if Mapping else "")\n'
    readme = "```\ncd data\npython gen.py\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": old, "README.md": readme})
    result, code = _smoke(tmp_path, repo, _claims(tmp_path), patches=True)
    assert result.gate.passed, result.gate.findings
    assert [f.rule for f in result.fixes] == ["prerequisite", "removed-api"]
    assert [f.change for f in result.fixes] == [None, "removed-api"]
    assert "from collections.abc import Mapping" in (code / "data/gen.py").read_text("utf-8")
    assert result.launchers[0].prepare[0].script == "data/gen.py"


def test_a_step_importing_what_the_environment_lacks_names_the_module(tmp_path: Path) -> None:
    needs = 'import no_such_distribution_here\nopen("x.txt", "w").write("abc")\n'
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": needs})
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    b057 = [f for f in result.gate.findings if f.code == "B057"]
    assert len(b057) == 1 and "'no_such_distribution_here'" in (b057[0].hint or "")
    assert "B007" in _codes(result) and not result.fixes


def test_a_step_that_fails_without_a_traceback_is_b057(tmp_path: Path) -> None:
    needs_args = (
        "import argparse\nparser = argparse.ArgumentParser()\n"
        'parser.add_argument("--out", required=True)\nargs = parser.parse_args()\n'
        'open("x.txt", "w").write("abc")\n'
    )
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": needs_args})
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    assert "B057" in _codes(result) and "B007" in _codes(result)
    assert not result.fixes and all(not item.prepare for item in result.launchers)


def test_setup_py_is_never_a_step(tmp_path: Path) -> None:
    files = {
        "main.py": _MAIN,
        "setup.py": 'open("data/x.txt", "w").write("abc")\n',
        "README.md": "    python setup.py build\n",
    }
    repo = _repo(tmp_path, files)
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"


def test_a_step_whose_product_is_its_redirected_output_is_not_run_without_it(
    tmp_path: Path,
) -> None:
    """``python gen.py > data/x.txt`` writes the file through the shell: run as a launcher
    the redirection would go to the log, so it is no step (B056), not a step that writes
    nothing."""
    files = {
        "main.py": _MAIN,
        "gen.py": 'print("abc")\n',
        "README.md": "    python gen.py > data/x.txt\n",
    }
    found = find_step(_repo(tmp_path, files), "data/x.txt", _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"
    assert "the shell writes its output to the file" in found.message


def test_two_steps_each_needing_the_others_output_are_a_cycle(tmp_path: Path) -> None:
    main = (  # reads a.txt before it writes b.txt: neither can go first
        'from pathlib import Path\nsize = len(Path("data/a.txt").read_text())\n'
        'Path("b.txt").write_text("b")\nprint("result: %d" % size)\n'
    )
    gen = 'from pathlib import Path\nPath("../b.txt").read_text()\nopen("a.txt", "w")\n'
    readme = "```\ncd data\npython gen.py\n```\n"
    repo = _repo(tmp_path, {"main.py": main, "data/gen.py": gen, "README.md": readme})
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    assert "B057" not in _codes(result)
    cycle = [f for f in result.gate.findings if f.code == "B056"]
    assert len(cycle) == 1 and "'b.txt'" in cycle[0].message
    assert not result.fixes and "B007" in _codes(result)


def test_the_launchers_own_script_is_never_its_own_step(tmp_path: Path) -> None:
    main = 'import os\nprint(open("data/x.txt").read())\nopen("data/x.txt", "w")\n'
    repo = _repo(tmp_path, {"main.py": main})
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, BuildFinding) and found.code == "B056"


# ------------------------------------------------------------------ the step, kept


def test_a_step_runs_first_in_one_shell_line_and_the_decision_is_recorded(
    tmp_path: Path,
) -> None:
    readme = "```\ncd data\npython gen.py --num-samples 5000\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN, "README.md": readme})
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    assert result.gate.passed, result.gate.findings
    assert [f.rule for f in result.fixes] == ["prerequisite"]
    by_scope = {item.scope: item for item in result.launchers}
    smoke, scored = by_scope["smoke"], by_scope["scored"]
    assert smoke.argv == scored.argv[: len(smoke.argv)]  # the launcher's own argv is kept
    step = scored.prepare[0]
    assert (step.argv, step.smoke_argv) == (
        ["python", "gen.py", "--num-samples", "5000"],
        ["python", "gen.py", "--num-samples", "100"],
    )
    assert (step.workdir, step.source, step.produces) == ("data", "README.md", "data/x.txt")
    assert manifest_launcher(scored)["argv"] == [
        "(cd data && python gen.py --num-samples 5000) && python main.py"
    ]
    assert manifest_launcher(scored)["shell"] is True
    assert compose(smoke) == (
        ["(cd data && python gen.py --num-samples 100) && python main.py"],
        True,
    )
    assert [d.id for d in result.decisions] == ["main-needs-x-txt"]
    assert "python gen.py --num-samples 5000" in result.decisions[0].gap
    # the scored launcher runs as the manifest will: the step writes 5000 characters
    code = tmp_path / "code"
    (code / "data/x.txt").unlink()
    done = run_launcher(scored, code, PYTHON)
    assert done.exit_status == 0 and "result: 5000" in done.stdout


@pytest.mark.skipif(check_sandbox() is not None, reason="the sandbox cannot run here")
def test_in_the_sandbox_the_step_and_the_launcher_share_one_copy_of_the_code(
    tmp_path: Path,
) -> None:
    readme = "```\ncd data\npython gen.py\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN, "README.md": readme})
    result, code = _smoke(tmp_path, repo, _claims(tmp_path), sandbox=True)
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts][:2] == [1, 0]
    assert not (code / "data/x.txt").exists()  # written in the run's own copy, dropped


def test_a_size_option_smaller_than_the_small_value_is_kept(tmp_path: Path) -> None:
    readme = "```\ncd data\npython gen.py --num-samples=7\n```\n"
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN, "README.md": readme})
    found = find_step(repo, "data/x.txt", _launcher())
    assert isinstance(found, PrepareStep)
    assert found.smoke_argv == found.argv == ["python", "gen.py", "--num-samples=7"]


def test_a_path_with_quotes_reaches_the_shell_line_quoted() -> None:
    step = PrepareStep(
        argv=["python", "gen.py", "--name", "it's"],
        smoke_argv=["python", "gen.py"],
        workdir="my data",
        env={"FLAG": "a b"},
        script="my data/gen.py",
        source="README.md",
        produces="my data/x.txt",
    )
    launcher = _launcher(prepare=[step], scope="scored")
    assert compose(launcher)[0] == [
        "(cd 'my data' && FLAG='a b' python gen.py --name 'it'\"'\"'s') && python main.py"
    ]


# ------------------------------------------------------------------ the step, shortened

# A random-walk embedding step (DeepWalk's shape): its work is walks x length, one unit each.
_WALK = f"""\
import argparse, time
parser = argparse.ArgumentParser()
parser.add_argument("--number-walks", type=int, default=10)
parser.add_argument("--walk-length", type=int, default=40)
parser.add_argument("--output", required=True)
args = parser.parse_args()
for _ in range(args.number_walks * args.walk_length):
    time.sleep({EPOCH_SECONDS})
with open(args.output, "w") as handle:
    handle.write("w" * args.number_walks)
"""
# The scoring script: quick, over shuffles (a repetition count its own knob shortens).
_SCORE = """\
import argparse
from pathlib import Path
parser = argparse.ArgumentParser()
parser.add_argument("--num-shuffles", type=int, default=2)
args = parser.parse_args()
text = Path("data/x.txt").read_text()
for _ in range(args.num_shuffles):
    print("result: %d" % len(text))
"""
# A step whose training length is a constant of its code.
_TRAIN_STEP = f"""\
import time
EPOCHS = 80
for epoch in range(EPOCHS):
    time.sleep({EPOCH_SECONDS})
with open("x.txt", "w") as handle:
    handle.write("trained")
"""


def test_a_step_of_the_smoke_run_past_its_budget_passes_its_sizes_at_their_smallest(
    tmp_path: Path,
) -> None:
    """The step the smoke launcher runs first is the long part (two walks of 40: 20 s, over
    a 10 s budget): the smoke-scope rule reaches it, one walk of 10, and the launcher's own
    script one shuffle; the scored launcher runs the README's command as written."""
    readme = "```\ncd data\npython walk.py --number-walks 80 --walk-length 40 --output x.txt\n```\n"
    repo = _repo(tmp_path, {"main.py": _SCORE, "data/walk.py": _WALK, "README.md": readme})
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path), timeout=40 * EPOCH_SECONDS)
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [1, None, 0]
    assert [(f.rule, f.kind, f.files) for f in result.fixes] == [
        ("prerequisite", "convenience", []),
        ("smoke-scope", "convenience", []),
    ]
    assert "--number-walks 1 --walk-length 10" in result.fixes[1].summary
    by_scope = {item.scope: item for item in result.launchers}
    smoke, scored = by_scope["smoke"], by_scope["scored"]
    assert smoke.prepare[0].smoke_argv == [
        "python", "walk.py", "--number-walks", "1", "--walk-length", "10", "--output", "x.txt",
    ]  # fmt: skip
    assert smoke.argv == ["python", "main.py", "--num-shuffles", "1"]
    assert compose(scored) == (
        [
            "(cd data && python walk.py --number-walks 80 --walk-length 40 --output x.txt)"
            " && python main.py"
        ],
        True,
    )
    assert scored.env == smoke.env
    # the guide's decision names the step the smoke launcher runs now
    [decided] = result.decisions
    assert "--number-walks 1 --walk-length 10" in decided.resolution
    assert "--number-walks 80 --walk-length 40" in decided.gap


def test_a_steps_training_length_in_its_code_is_set_by_the_smoke_launchers_environment(
    tmp_path: Path,
) -> None:
    """A step with no option: the constant of its loop reads an environment variable that
    only the smoke launcher sets; the patch of the step's code is recorded."""
    readme = "```\ncd data\npython train_step.py\n```\n"
    repo = _repo(
        tmp_path, {"main.py": _MAIN, "data/train_step.py": _TRAIN_STEP, "README.md": readme}
    )
    result, code = _smoke(
        tmp_path, repo, _claims(tmp_path), patches=True, timeout=40 * EPOCH_SECONDS
    )
    assert result.gate.passed, result.gate.findings
    assert [a.exit_status for a in result.attempts] == [1, None, 0]
    fix = result.fixes[-1]
    assert (fix.rule, fix.files, fix.change) == (
        "smoke-scope",
        ["data/train_step.py"],
        "smoke-scope",
    )
    by_scope = {item.scope: item for item in result.launchers}
    smoke, scored = by_scope["smoke"], by_scope["scored"]
    assert smoke.env == {"MPLBACKEND": "Agg", "REPRO_EPOCHS": "1"}
    assert "REPRO_EPOCHS" not in scored.env
    assert scored.prepare[0].argv == smoke.prepare[0].smoke_argv == ["python", "train_step.py"]
    assert "_repro_knob" in (code / "data/train_step.py").read_text("utf-8")
    assert "_repro_knob" not in (code / "main.py").read_text("utf-8")


@pytest.mark.parametrize(
    ("argv", "text", "smoke_argv"),
    [
        # a value the README gives that is smaller already stays, in either spelling
        (
            ["python", "walk.py", "--walk-length=5"],
            _WALK,
            ["python", "walk.py", "--walk-length=5", "--number-walks", "1"],
        ),
        (["python", "walk.py", "--number-walks", "1", "--walk-length", "3"], _WALK, None),
        # a script without such options, or one that does not parse: the step as it was
        (["python", "walk.py", "--number-walks", "9"], "print('no parser')\n", None),
        (["python", "walk.py", "--number-walks", "9"], "print 'python 2'\n", None),
    ],
)
def test_a_shorter_step_never_passes_a_larger_value(
    argv: list[str], text: str, smoke_argv: list[str] | None
) -> None:
    step = PrepareStep(
        argv=argv, smoke_argv=argv, workdir=".", script="walk.py", source="README.md",
        produces="x.txt",
    )  # fmt: skip
    shorter, changed = shorter_step(step, text)
    assert shorter.argv == argv  # the scored launcher's step is never touched
    if smoke_argv is None:
        assert (shorter, changed) == (step, [])
    else:
        assert shorter.smoke_argv == smoke_argv and changed


# ------------------------------------------------------------------ console scripts


_SETUP = """\
from setuptools import setup
SCRIPTS = ["emb = embed.__main__:main", "plain = embed.cli:run", "bad name = x:y",
           "shell = os:system", "up = ..evil:main", "extra = embed.cli:run [gpu]"]
setup(name="embed", entry_points={"console_scripts": SCRIPTS})
"""
_PYPROJECT = '[project]\nname = "embed"\n[project.scripts]\nother = "embed.cli:run"\n'
_MAIN_MODULE = (
    "import sys\ndef main():\n    print(sys.argv[1:])\n"
    'if __name__ == "__main__":\n    sys.exit(main())\n'
)


def test_console_scripts_are_read_statically_and_run_without_installing(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "setup.py": _SETUP + 'raise SystemExit("setup.py must never run")\n',
            "embed/__init__.py": "",
            "embed/__main__.py": _MAIN_MODULE,
            "embed/cli.py": "def run():\n    print('plain')\n    return 0\n",
            "pyproject.toml": _PYPROJECT,
        },
    )
    scripts = console_scripts(repo)
    assert sorted(scripts) == ["emb", "other", "plain"]
    assert scripts["emb"].head == ["python", "-m", "embed"]
    assert scripts["plain"].head[:2] == ["python", "-c"]
    command = parse_command("emb --input g.txt --output g.emb", scripts=scripts)
    assert command is not None and command.problem is None
    assert command.argv == ["python", "-m", "embed", "--input", "g.txt", "--output", "g.emb"]
    assert (command.script, command.console_script, command.args) == (
        "embed/__main__.py",
        "emb",
        ["--input", "g.txt", "--output", "g.emb"],
    )
    # the -c form is the installed wrapper's call; it runs under the real interpreter
    plain = parse_command("plain --x", scripts=scripts)
    assert plain is not None
    launcher = LauncherPlan(id="p", script="embed/cli.py", argv=plain.argv, scope="smoke")
    done = run_launcher(launcher, repo, PYTHON)
    assert (done.exit_status, done.stdout) == (0, "plain\n")
    # a console script in a line only a shell can run is unusable: no shell finds it
    piped = parse_command("emb --input g.txt | sort", scripts=scripts)
    assert piped is not None and piped.problem is not None


@pytest.mark.parametrize("name", ["emb", "plain"])
def test_a_hint_running_a_console_script_is_planned_as_its_python_command(
    tmp_path: Path, name: str
) -> None:
    repo = _repo(
        tmp_path,
        {
            "setup.py": _SETUP,
            "embed/__init__.py": "",
            "embed/__main__.py": _MAIN_MODULE,
            "embed/cli.py": "def run():\n    print('result: 1')\n",
        },
    )
    claims_file = _claims(tmp_path)
    document = yaml.safe_load(claims_file.read_text("utf-8"))
    document["claims"][0]["hints"] = {"command": f"{name} --input g.txt --window 5"}
    claims_file.write_text(yaml.safe_dump(document), "utf-8")
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    assert intake.gate.passed, intake.gate.findings
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    scored = next(item for item in planned.launchers if item.scope == "scored")
    head = console_scripts(code)[name].head
    assert scored.argv == [*head, "--input", "g.txt", "--window", "5"]
    assert scored.script == ("embed/__main__.py" if name == "emb" else "embed/cli.py")
    assert planned.claims[0].basis == "hint: command"


def test_a_wrapped_readme_command_and_an_rst_block_are_read_whole(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"setup.py": _SETUP, "embed/__main__.py": _MAIN_MODULE})
    text = "Run::\n\n    emb --input g.txt\n    --output g.emb\n\nOr ``$emb --input h.txt``.\n"
    found = markdown_commands(text, scripts=console_scripts(repo))
    assert [c.argv[3:] for c in found] == [
        ["--input", "g.txt", "--output", "g.emb"],
        ["--input", "h.txt"],
    ]


@pytest.mark.parametrize(
    ("block", "argv"),
    [
        ("```\npython a.py\n  --lr 0.1\n```\n", ["python", "a.py", "--lr", "0.1"]),
        ("```\npython a.py\n--- epoch 1 ---\n```\n", ["python", "a.py"]),
        ("```\n$ python a.py\n--lr 0.1\n```\n", ["python", "a.py"]),
        ("```\npython a.py \\\n  --lr 0.1\n```\n", ["python", "a.py", "--lr", "0.1"]),
    ],
)
def test_only_an_option_line_of_a_block_without_prompts_continues_a_command(
    block: str, argv: list[str]
) -> None:
    assert [c.argv for c in markdown_commands(block)] == [argv]


def test_a_console_script_that_writes_the_file_is_the_step(tmp_path: Path) -> None:
    writer = (
        "import argparse, sys\ndef main():\n    p = argparse.ArgumentParser()\n"
        '    p.add_argument("--output")\n    a = p.parse_args()\n'
        '    open(a.output, "w").write("abc")\n'
        'if __name__ == "__main__":\n    sys.exit(main())\n'
    )
    readme = "    emb --output data/x.txt\n"
    repo = _repo(
        tmp_path,
        {
            "setup.py": _SETUP,
            "embed/__init__.py": "",
            "embed/__main__.py": writer,
            "main.py": _MAIN,
            "data/keep.txt": "",
            "README.md": readme,
        },
    )
    result, _ = _smoke(tmp_path, repo, _claims(tmp_path))
    assert result.gate.passed, result.gate.findings
    step = result.launchers[0].prepare[0]
    assert (step.argv, step.console_script) == (
        ["python", "-m", "embed", "--output", "data/x.txt"],
        "emb",
    )
    assert "python -m embed" in result.decisions[0].resolution


# ------------------------------------------------------------------ the fixture


@pytest.mark.slow
def test_the_prerequisite_fixture_generates_its_data_first(
    tmp_path: Path, fixture_python: Path
) -> None:
    repo, claims_file = write_repo(tmp_path / "raw", "prerequisite")
    result, code = _smoke(tmp_path, repo, claims_file, fixture_python)
    assert result.gate.passed, result.gate.findings
    assert [f.rule for f in result.fixes] == ["prerequisite"]
    by_scope = {item.scope: item for item in result.launchers}
    step = by_scope["scored"].prepare[0]
    assert step.argv == ["python", "generate.py", "--num-samples", "1500", "--suffix", "_small"]
    assert step.smoke_argv == [
        "python",
        "generate.py",
        "--num-samples",
        "100",
        "--suffix",
        "_small",
    ]
    assert step.produces == "data/features_small.npy" and step.workdir == "data"
    # the scored launcher, as the manifest runs it, under the fixture environment's interpreter
    for generated in ("features_small.npy", "labels_small.npy"):
        (code / "data" / generated).unlink(missing_ok=True)
    done = run_launcher(by_scope["scored"], code, fixture_python, seed=0)
    assert done.exit_status == 0, done.stderr
    assert "wrote 1500 samples" in done.stdout and "test accuracy:" in done.stdout


# ------------------------------------------------------------------ the step's environment

_MAIN_NUMPY = """\
from pathlib import Path
import numpy
text = Path("data/x.txt").read_text()
print("result: %d" % numpy.int64(len(text)))
"""
_GEN_PLOTS = """\
import matplotlib
import numpy
from helpers import sizes
with open("x.txt", "w") as handle:
    handle.write("a" * sizes())
"""
_HELPERS = """\
import scipy
try:
    import reprobridge_no_such_module_xyz
except ImportError:
    pass
def sizes():
    return 3
"""


def _planned_step(
    tmp_path: Path, files: dict[str, str]
) -> tuple[IntakeRecord, PlanRecord, Path, PrepareStep]:
    repo = _repo(tmp_path, files)
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(_claims(tmp_path))
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    step = find_step(code, "data/x.txt", _launcher())
    assert isinstance(step, PrepareStep), step
    return intake, planned, code, step


def test_a_steps_imports_reach_the_builders_requirements(tmp_path: Path) -> None:
    intake, planned, code, step = _planned_step(
        tmp_path,
        {"main.py": _MAIN_NUMPY, "data/gen.py": _GEN_PLOTS, "data/helpers.py": _HELPERS},
    )
    assert step.script == "data/gen.py"
    assert [u.module for u in planned.imports] == ["numpy"]
    before = declared_requirements(intake, planned)
    assert "matplotlib" not in before.requirements

    wider = with_step_imports(planned, code, [step])
    by_module = {u.module: u for u in wider.imports}
    # the step's own imports and those of the local module it imports; the local module
    # itself is no requirement
    assert sorted(by_module) == ["matplotlib", "numpy", "reprobridge_no_such_module_xyz", "scipy"]
    # the launcher imports numpy itself: its entry (required) stays
    assert by_module["numpy"] == planned.imports[0] and by_module["numpy"].optional is None
    why = "imported by the step data/gen.py, run first to write data/x.txt"
    assert by_module["matplotlib"].optional == why
    assert by_module["scipy"].files == ["data/helpers.py"]
    assert by_module["reprobridge_no_such_module_xyz"].optional == (
        f"under try/except ImportError; {why}"
    )
    declared = declared_requirements(intake, wider)
    assert {"matplotlib", "numpy", "scipy"} <= set(declared.requirements)
    # optional: the launcher's environment never fails for them (left out with B023)
    assert "matplotlib" in declared.optional and "numpy" not in declared.optional
    # nothing new: the plan itself, so the environment is not built again
    assert with_step_imports(wider, code, [step]) is wider


def test_a_step_without_third_party_imports_leaves_the_plan_alone(tmp_path: Path) -> None:
    _, planned, code, step = _planned_step(tmp_path, {"main.py": _MAIN, "data/gen.py": _GEN})
    assert with_step_imports(planned, code, [step]) is planned


def test_a_python2_step_and_an_import_no_index_has_are_optional_requirements(
    tmp_path: Path,
) -> None:
    # Hostile: the step does not parse as Python 3 (its imports are read as text) and
    # imports a module no index has, under a name that is a local folder elsewhere.
    gen = (
        "import reprobridge_no_such_distribution_xyz\nimport cPickle\n"
        'print "writing"\nopen("x.txt", "w").write("abc")\n'
    )
    intake, planned, code, step = _planned_step(
        tmp_path, {"main.py": _MAIN, "data/gen.py": gen, "other/lib/__init__.py": ""}
    )
    wider = with_step_imports(planned, code, [step])
    assert [u.module for u in wider.imports] == ["reprobridge_no_such_distribution_xyz"]
    declared = declared_requirements(intake, wider)
    assert declared.optional == ["reprobridge_no_such_distribution_xyz"]


@pytest.mark.slow
def test_a_step_runs_in_the_environment_widened_for_its_imports(
    tmp_path: Path, fixture_python: Path
) -> None:
    # The step imports yaml, which the shared fixture environment lacks; the launcher does
    # not. The pipeline's widen builds the environment again with it (the Builder, tested
    # below with real resolutions); here it answers with this interpreter, which has yaml,
    # so the Reproducer's part is what is tested: it asks before the launcher runs again
    # with the step, and runs with the interpreter it gets.
    gen = 'import yaml\nopen("x.txt", "w").write(yaml.safe_dump([1]))\n'
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": gen})
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(_claims(tmp_path))
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    asked: list[list[str]] = []

    def widen(steps: list[PrepareStep]) -> tuple[Path | None, list[BuildFinding]]:
        wider = with_step_imports(planned, code, steps)
        asked.append([u.module for u in wider.imports])
        return PYTHON, []

    def record(fix: Fix, failure: Failure | None, tasks: list[str]) -> str:
        raise AssertionError("a step is a decision, not a patch")

    result = reproduce(
        claims, planned, code, fixture_python, inputs_digest=ZERO, record=record, widen=widen
    )
    assert asked == [["yaml"]]
    assert result.gate.passed, result.gate.findings
    assert [s.script for s in result.launchers[0].prepare] == ["data/gen.py"]


@pytest.mark.slow
def test_the_builder_locks_a_steps_import_and_leaves_out_one_no_index_has(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    gen = 'import yaml\nopen("x.txt", "w").write(yaml.safe_dump([1]))\n'
    intake, planned, code, step = _planned_step(tmp_path, {"main.py": _MAIN, "data/gen.py": gen})
    record = build_environment(
        intake,
        tmp_path / "state",
        inputs_digest=ZERO,
        plan=with_step_imports(planned, code, [step]),
        cache_dir=env_cache,
    )
    assert record.gate.passed, record.gate.findings
    assert any(p.startswith("pyyaml==") for p in record.pins)
    lock = (tmp_path / "state/env/environment/requirements.lock").read_text("utf-8")
    assert "pyyaml==" in lock
    assert record.imports_checked == ["yaml"]

    # hostile: a step's import no index has is left out; the launcher's environment builds
    bad = 'import reprobridge_no_such_distribution_xyz\nopen("x.txt", "w").write("a")\n'
    intake, planned, code, step = _planned_step(
        tmp_path / "bad", {"main.py": _MAIN_NUMPY, "data/gen.py": bad}
    )
    record = build_environment(
        intake,
        tmp_path / "bad-state",
        inputs_digest=ZERO,
        plan=with_step_imports(planned, code, [step]),
        cache_dir=env_cache,
    )
    assert record.gate.passed, record.gate.findings
    assert [(f.code, f.severity) for f in record.gate.findings] == [("B023", "warning")]
    assert record.imports_checked == ["numpy"]


@pytest.mark.slow
def test_the_pipeline_widens_the_environment_in_use_and_the_plan_keeps_it(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pipeline's part, phase by phase as build() runs it: the Builder's environment,
    # the artifact assembled on it, then the step's imports: the environment is built
    # again in place (same kind, same inputs digest), the artifact's lock follows, and the
    # plan keeps the import for every later environment.
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    gen = 'import yaml\nopen("x.txt", "w").write(yaml.safe_dump([1]))\n'
    repo = _repo(tmp_path, {"main.py": _MAIN, "data/gen.py": gen})
    claims_file = _claims(tmp_path)
    claims = load_claims(claims_file)
    out = tmp_path / "out"
    state = BuildState(out)
    code = state.root / "source"
    commit, date = checkout(str(repo), code)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    built = build_environment(
        intake, state.root, inputs_digest=ZERO, plan=planned, cache_dir=env_cache
    )
    assert built.gate.passed and not any(p.startswith("pyyaml") for p in built.pins)
    assemble(out, str(repo), claims=claims, intake=intake, plan=planned, env_dir=state.root / "env")
    step = find_step(out / "code", "data/x.txt", _launcher())
    assert isinstance(step, PrepareStep)
    era = _Era(built, intake, planned, claims, state, out, False, {})

    interpreter, notes = era.widen([step])
    assert interpreter is not None and notes == []
    assert [u.module for u in era.planned.imports] == ["yaml"]
    assert era.built.inputs_digest == ZERO and era.built.environment == "newest"
    assert [a.name for a in era.built.attempts] == ["newest", "newest"]
    assert any(p.startswith("pyyaml==") for p in era.built.pins)
    assert state.stored("builder", BuilderRecord) == era.built
    lock = (out / "environment/requirements.lock").read_text("utf-8")
    assert "pyyaml==" in lock
    done = subprocess.run(
        [str(interpreter), "-c", "import yaml"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    # the same step again: nothing new, nothing built
    assert era.widen([step]) == (None, [])
