"""Notebooks as entry points: a claim computed in a Jupyter notebook runs as a script made
from its code cells. The hostile notebooks (not JSON, another nbformat, 10 MB, a name taken,
a path out of the repository) each give B050 or B051, never a traceback; the fixture's phases
(Intake, Planner, the generated script under a real interpreter) are checked one by one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from build_fixtures import RepoFactory, git, notebook

from reprobridge_sdk.agent._smoke import run_launcher
from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.imports import closure
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.notebooks import (
    MAX_NOTEBOOK,
    Notebook,
    convert,
    notebook_in_command,
    rationale,
    read_notebook,
    write_script,
)
from reprobridge_sdk.agent.pipeline import _author_changes, _notebook_scripts, _Stop
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.agent.state import BuildState
from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.codebase import import_code
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model.build import IntakeRecord, NotebookScript, PlanRecord

ZERO = "0" * 64


def _phases(repo: Path, claims_file: Path, tmp_path: Path) -> tuple[IntakeRecord, PlanRecord, Path]:
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    intake = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    return intake, plan(claims, intake, root=dest, inputs_digest=ZERO), dest


def _commit(repo: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, "utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "change", cwd=repo)


def _hint(claims_file: Path, script: str) -> None:
    claims_file.write_text(
        claims_file.read_text("utf-8").replace("script: analysis.ipynb", f"script: {script}"),
        "utf-8",
    )


def _codes(record: PlanRecord) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.severity, f.path) for f in record.gate.findings]


# ----------------------------------------------------------------------- the fixture's phases


def test_intake_lists_the_notebook_from_its_code_never_its_outputs(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    intake, _, _ = _phases(*raw_repo("notebook"), tmp_path)
    [entry] = intake.entry_points
    assert (entry.path, entry.kinds) == ("analysis.ipynb", ["notebook"])
    # the saved output prints 'test_accuracy: 0.1234'; the code prints nothing
    assert entry.prints == []
    assert intake.gate.findings == []  # a hinted notebook in the repository is no B002


def test_the_planner_runs_the_script_made_from_the_notebook(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    _, planned, dest = _phases(*raw_repo("notebook"), tmp_path)
    smoke, scored = planned.launchers
    for item in (smoke, scored):
        assert (item.script, item.workdir) == ("analysis_notebook.py", ".")
        assert item.argv == ["python", "analysis_notebook.py"]
    [made] = planned.notebooks
    assert (made.notebook, made.script, made.display, made.tasks) == (
        "analysis.ipynb",
        "analysis_notebook.py",
        True,  # the notebook prints nothing: its number is a displayed value
        ["accuracy"],
    )
    assert made.commented == [
        "cell 1: %matplotlib inline",
        "cell 2: !pip install -r requirements.txt",
        "cell 3: model?",
    ]
    assert planned.claims[0].basis == "hint: script; a notebook, run as the script made from it"
    # the import closure is the code cells' (a markdown cell's 'import os' is not code)
    assert [use.module for use in planned.imports] == ["matplotlib", "numpy", "scipy", "sklearn"]
    assert _codes(planned) == [("B051", "warning", "/claims/0/hints")]
    assert planned.gate.passed
    assert not (dest / "analysis_notebook.py").exists()  # the Planner writes nothing


def test_without_a_hint_the_notebook_is_the_only_entry_point(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("notebook")
    text = claims_file.read_text("utf-8").replace("script: analysis.ipynb", "label: accuracy")
    claims_file.write_text(text.replace("label: test_accuracy\n", ""), "utf-8")
    _, planned, _ = _phases(repo, claims_file, tmp_path)
    assert planned.claims[0].basis == "only entry point; a notebook, run as the script made from it"
    assert planned.launchers[1].argv == ["python", "analysis_notebook.py"]


def test_a_notebook_that_prints_the_claim_displays_nothing(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("notebook")
    printed = notebook(
        "from sklearn.datasets import load_digits\n"
        "X, y = load_digits(return_X_y=True)\n"
        'print("test_accuracy:", 0.97)\n'
        "X.shape"
    )
    _commit(repo, {"analysis.ipynb": printed})
    _, planned, _ = _phases(repo, claims_file, tmp_path)
    [made] = planned.notebooks
    assert made.display is False
    text = convert(read_notebook(tmp_path / "checkout", "analysis.ipynb")).text
    assert "_notebook_show" not in text
    assert text.rstrip().endswith("X.shape")  # a statement, as python runs it


def test_a_command_naming_a_notebook_runs_it_in_its_folder(
    raw_repo: RepoFactory, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("notebook")
    (repo / "notebooks").mkdir()
    (repo / "analysis.ipynb").rename(repo / "notebooks" / "analysis.ipynb")
    _commit(repo, {})
    text = claims_file.read_text("utf-8").replace(
        "script: analysis.ipynb",
        "command: cd notebooks && jupyter nbconvert --to notebook --execute analysis.ipynb",
    )
    claims_file.write_text(text, "utf-8")
    intake, planned, _ = _phases(repo, claims_file, tmp_path)
    assert intake.gate.findings == []  # the command is read by the Planner: no B022
    scored = planned.launchers[1]
    assert (scored.script, scored.workdir, scored.argv) == (
        "notebooks/analysis_notebook.py",
        "notebooks",
        ["python", "analysis_notebook.py"],
    )
    assert planned.claims[0].basis.startswith("hint: command (a notebook)")


@pytest.mark.slow
def test_the_generated_script_prints_the_number_under_the_real_interpreter(
    raw_repo: RepoFactory, tmp_path: Path, fixture_python: Path
) -> None:
    _, planned, dest = _phases(*raw_repo("notebook"), tmp_path)
    [made] = planned.notebooks
    converted = write_script(dest, made)
    assert not isinstance(converted, str), converted
    outcome = run_launcher(planned.launchers[0], dest, fixture_python)
    assert outcome.exit_status == 0, outcome.stderr
    [line] = [x for x in outcome.stdout.splitlines() if x.startswith("test_accuracy: ")]
    assert float(line.split(": ")[1]) > 0.9  # the run's value, not the saved 0.1234


# ----------------------------------------------------------------------- conversion


def test_a_displayed_last_expression_prints_under_python(tmp_path: Path) -> None:
    (tmp_path / "n.ipynb").write_text(
        notebook(
            "import math\n%time x = 0.81",
            "score = math.sqrt(x)\nscore",
            "score * 100;",  # a ';' hides the value in Jupyter too
            "print('done')\nNone",
        ),
        "utf-8",
    )
    converted = convert(read_notebook(tmp_path, "n.ipynb"), display=True)
    assert converted.shown == 2
    (tmp_path / "n_notebook.py").write_text(converted.text, "utf-8")
    done = subprocess.run(
        [sys.executable, "n_notebook.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["score: 0.9", "done"]


def test_a_cell_source_as_a_list_or_a_string_gives_one_script(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text(notebook(["x = 1\n", "y = x + 1\n"]), "utf-8")
    (tmp_path / "b.ipynb").write_text(notebook("x = 1\ny = x + 1\n"), "utf-8")
    a, b = (convert(read_notebook(tmp_path, n)).text for n in ("a.ipynb", "b.ipynb"))
    assert a.replace("a.ipynb", "b.ipynb") == b
    assert "x = 1\ny = x + 1\n" in a


def test_ipython_only_lines_are_commented_out_and_blocks_stay_blocks() -> None:
    cells = (
        "%%bash\necho hi\nls",
        "%%time\nz = 2",
        "files = !ls\nfor f in range(2):\n    !echo $f\nlen?",
        "get_ipython().run_line_magic('matplotlib', 'inline')\nq = 3 % 2",
        "print('a?')",  # valid Python: its '?' is Python's
        "%matplotlib inline\nok = (1\n    != 2)  # is it?\nwhy = ok  # why?",
    )
    converted = convert(Notebook("n.ipynb", cells=cells))
    assert converted.commented == [
        "cell 1: %%bash",
        "cell 1: echo hi",
        "cell 1: ls",
        "cell 2: %%time",
        "cell 3: files = !ls",
        "cell 3: !echo $f",
        "cell 3: len?",
        "cell 4: get_ipython().run_line_magic('matplotlib', 'inline')",
        "cell 6: %matplotlib inline",
    ]
    assert "    pass  # IPython only: !echo $f" in converted.text
    assert "\nz = 2\n" in converted.text and "q = 3 % 2" in converted.text
    compile(converted.text, "n_notebook.py", "exec")


def test_notebook_in_command() -> None:
    assert notebook_in_command("jupyter nbconvert --execute nb/x.ipynb") == "nb/x.ipynb"
    assert notebook_in_command("cd nb && python x.ipynb") == "nb/x.ipynb"
    assert notebook_in_command("cd .. && python x.ipynb") == "../x.ipynb"
    assert notebook_in_command("python train.py") is None
    assert notebook_in_command("python run.py --notebook x.ipynb") is None
    assert notebook_in_command("python -m papermill x.ipynb out.ipynb") is None


# ----------------------------------------------------------------------- hostile notebooks


@pytest.mark.parametrize(
    ("content", "why"),
    [
        pytest.param("{not json", "it is not JSON (not a notebook file)", id="not-json"),
        pytest.param(b"\xff\xfe{}", "it is not JSON (not a notebook file)", id="not-utf8"),
        pytest.param(
            json.dumps({"nbformat": 3, "worksheets": [{"cells": []}]}),
            "its nbformat 3 is not 4",
            id="nbformat-3",
        ),
        pytest.param(
            json.dumps({"nbformat": 5, "cells": []}), "its nbformat 5 is not 4", id="nbformat-5"
        ),
        pytest.param(
            json.dumps({"cells": []}), "its nbformat None is not 4", id="nbformat-missing"
        ),
        pytest.param("[1, 2]", "it holds no list of cells (not nbformat 4)", id="a-list"),
        pytest.param(
            json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}),
            "a code cell's source is not text",
            id="source-a-number",
        ),
        pytest.param(
            notebook("%matplotlib inline", "!ls\n%who"),
            "it has no code to run (its code cells are empty or IPython-only)",
            id="only-magics",
        ),
        pytest.param(notebook(), "it has no code to run", id="no-code-cells"),
    ],
)
def test_a_notebook_that_cannot_run_is_b050_and_the_claim_is_planned_without_it(
    raw_repo: RepoFactory, tmp_path: Path, content: str | bytes, why: str
) -> None:
    repo, claims_file = raw_repo("notebook")
    _commit(repo, {"broken.ipynb": content})
    _hint(claims_file, "broken.ipynb")
    _, planned, _ = _phases(repo, claims_file, tmp_path)
    assert _codes(planned)[0] == ("B050", "warning", "/claims/0/hints")
    assert why in planned.gate.findings[0].message
    # planned without the hint: analysis.ipynb, found by the claim's label? it prints none,
    # and two notebooks (one broken) leave the one readable entry point
    assert planned.claims[0].status == "planned"
    assert [n.notebook for n in planned.notebooks] == ["analysis.ipynb"]


def test_a_notebook_of_10_mb_is_b050(raw_repo: RepoFactory, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("notebook")
    big = notebook("x = 1", outputs="0" * (10 * 1024 * 1024))
    assert len(big) > MAX_NOTEBOOK
    _commit(repo, {"big.ipynb": big})
    _hint(claims_file, "big.ipynb")
    intake, planned, _ = _phases(repo, claims_file, tmp_path)
    assert "big.ipynb" not in {e.path for e in intake.entry_points}
    assert _codes(planned)[0] == ("B050", "warning", "/claims/0/hints")
    assert "larger than 8 MiB" in planned.gate.findings[0].message


def test_a_name_taken_gives_the_next_name_and_b051(raw_repo: RepoFactory, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("notebook")
    _commit(repo, {"analysis_notebook.py": "print('the author file')\n"})
    _, planned, dest = _phases(repo, claims_file, tmp_path)
    [made] = planned.notebooks
    assert made.script == "analysis_notebook_2.py"
    assert [f.code for f in planned.gate.findings] == ["B051", "B051"]
    assert "'analysis_notebook.py' exists" in planned.gate.findings[0].message
    assert planned.launchers[1].argv == ["python", "analysis_notebook_2.py"]
    # and the writer never overwrites: the name taken afterwards is refused
    taken = made.model_copy(update={"script": "analysis_notebook.py"})
    assert write_script(dest, taken) == "analysis_notebook.py exists already"
    assert (dest / "analysis_notebook.py").read_text("utf-8") == "print('the author file')\n"


def test_a_notebook_path_with_dotdot_is_b050(raw_repo: RepoFactory, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("notebook")
    (tmp_path / "checkout").mkdir()
    (tmp_path / "outside.ipynb").write_text(notebook("print('outside')"), "utf-8")
    _hint(claims_file, "../outside.ipynb")
    _, planned, _ = _phases(repo, claims_file, tmp_path)
    assert _codes(planned)[0] == ("B050", "warning", "/claims/0/hints")
    assert "outside the repository" in planned.gate.findings[0].message
    assert [n.notebook for n in planned.notebooks] == ["analysis.ipynb"]


def test_a_link_to_a_notebook_outside_is_b050(raw_repo: RepoFactory, tmp_path: Path) -> None:
    repo, claims_file = raw_repo("notebook")
    secret = tmp_path / "secret.ipynb"
    secret.write_text(notebook("print('secret')"), "utf-8")
    os.symlink(secret, repo / "linked.ipynb")
    _commit(repo, {})
    _hint(claims_file, "linked.ipynb")
    intake, planned, dest = _phases(repo, claims_file, tmp_path)
    assert (dest / "linked.ipynb").is_symlink()
    assert "linked.ipynb" not in {e.path for e in intake.entry_points}
    assert _codes(planned)[0] == ("B050", "warning", "/claims/0/hints")
    assert "link out of the repository" in planned.gate.findings[0].message
    assert closure(dest, "linked.ipynb").third_party == {}


def test_the_closure_counts_every_cell_and_no_output(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("import yaml\n", "utf-8")
    (tmp_path / "n.ipynb").write_text(
        notebook(
            "import numpy as np",
            "!pip install torch\nfrom helpers import *",
            "try:\n    import tqdm\nexcept ImportError:\n    tqdm = None",
            outputs="import pandas\n",
        ),
        "utf-8",
    )
    reached = closure(tmp_path, "n.ipynb")
    assert reached.files == ["n.ipynb", "helpers.py"]
    assert {n: r.optional for n, r in reached.third_party.items()} == {
        "numpy": None,
        "tqdm": "under try/except ImportError",
        "yaml": None,
    }


def test_the_rationale_names_the_notebook_its_cells_and_its_commented_lines(
    tmp_path: Path,
) -> None:
    (tmp_path / "n.ipynb").write_text(notebook("%pylab inline", "x = 1\nx"), "utf-8")
    converted = convert(read_notebook(tmp_path, "n.ipynb"), display=True)
    item = NotebookScript(
        notebook="n.ipynb", script="n_notebook.py", display=True, change="n", tasks=["c"]
    )
    why = rationale(item, converted)
    assert "n_notebook.py holds its 2 code cell(s)" in why
    assert "cell 1: %pylab inline" in why
    assert "The last expression of 1 cell(s) is printed" in why


# ----------------------------------------------------------------------- the Reproducer's record


def test_the_script_is_recorded_as_a_convenience_patch_and_not_kept_as_the_authors(
    raw_repo: RepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))
    repo, claims_file = raw_repo("notebook")
    text = claims_file.read_text("utf-8").replace("id: accuracy", "id: main-result")
    claims_file.write_text(text, "utf-8")  # the task of the scaffolded manifest
    _, planned, _ = _phases(repo, claims_file, tmp_path)
    out = tmp_path / "out"
    scaffold(out, InitOptions(id="digits", title="Digits"))
    import_code(out, str(repo), as_="directory", force=True)
    _notebook_scripts(out, out / "code", planned)
    [made] = planned.notebooks
    [change] = load(out).manifest.guide.changes
    assert (change.id, change.kind, change.tasks) == (made.change, "convenience", ["main-result"])
    assert change.patch is not None
    patch = (out / change.patch).read_text("utf-8")
    assert "+++ b/analysis_notebook.py" in patch
    assert "0.1234" not in patch  # the saved output is not in the script
    assert (out / "code/analysis_notebook.py").is_file()
    state = BuildState(out)
    assert [c.id for c in _author_changes(out, state)] == [made.change]  # as before
    assert _author_changes(out, state, frozenset({made.change})) == []
    # a second write finds the file: B050 stops the Reproducer, nothing is overwritten
    with pytest.raises(_Stop) as stop:
        _notebook_scripts(out, out / "code", planned)
    assert (stop.value.phase, [f.code for f in stop.value.findings]) == ("reproducer", ["B050"])
