"""An installed package's undeclared dependency met only at run time: Theano 0.8's
``theano.sparse`` imports ``nose_parameterized`` through its test tools, a module Theano's
metadata does not declare; ``import theano`` (the Builder's gate) works, the smoke run stops
on ``ModuleNotFoundError``. The environment in use is built again with that distribution."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from build_fixtures import git

from reprobridge_sdk.agent.builder import build_environment, undeclared_import
from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.fixes import classify, portable
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.packager import assemble
from reprobridge_sdk.agent.pipeline import _Era
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.agent.state import BuildState
from reprobridge_sdk.env import ensure_environment
from reprobridge_sdk.model.build import BuilderRecord

ZERO = "0" * 64

_THEANO_SPARSE = """\
Traceback (most recent call last):
  File "test_trans.py", line 2, in <module>
    from trans_model import trans_model as model
  File "/work/a/code/trans_model.py", line 3, in <module>
    from theano import sparse
  File "/env/lib/python3.6/site-packages/theano/sparse/basic.py", line 25, in <module>
    import theano.tests.unittest_tools as utt
  File "/env/lib/python3.6/site-packages/theano/tests/unittest_tools.py", line 7, in <module>
    from nose_parameterized import parameterized
ModuleNotFoundError: No module named 'nose_parameterized'
"""


def test_the_module_an_installed_package_imports_undeclared_is_named() -> None:
    assert undeclared_import(_THEANO_SPARSE, ["theano==0.8.2", "numpy==1.13.0"]) == (
        "theano/tests/unittest_tools.py",
        "nose_parameterized",
        "nose-parameterized",
    )
    # as the build writes it, with the machine's paths made portable (the form the
    # Reproducer hands over)
    written = portable(_THEANO_SPARSE, Path("/work/a"))
    assert '"<site-packages>/theano/tests/unittest_tools.py"' in written
    assert undeclared_import(written, []) == (
        "theano/tests/unittest_tools.py",
        "nose_parameterized",
        "nose-parameterized",
    )
    # a Windows environment's path, and the import map (``yaml`` is PyYAML)
    windows = (
        '  File "C:\\env\\Lib\\site-packages\\tool\\io.py", line 1, in <module>\n'
        "    import yaml\n"
        "ModuleNotFoundError: No module named 'yaml'\n"
    )
    assert undeclared_import(windows, []) == ("tool/io.py", "yaml", "pyyaml")


@pytest.mark.parametrize(
    ("tail", "pins"),
    [
        # already pinned: the distribution is there, another name is missing (no loop)
        (_THEANO_SPARSE, ["nose-parameterized==0.6.0"]),
        # the repository's own file imports it: the Planner's closure, not this rule
        (
            '  File "/work/a/code/train.py", line 3, in <module>\n'
            "    import nose_parameterized\n"
            "ModuleNotFoundError: No module named 'nose_parameterized'\n",
            [],
        ),
        # a module inside a package that is there (an API that moved, not a dependency)
        (
            '  File "/env/lib/python3.11/site-packages/lasagne/pool.py", line 6, in <module>\n'
            "    from theano.tensor.signal import downsample\n"
            "ModuleNotFoundError: No module named 'theano.tensor.signal.downsample'\n",
            [],
        ),
        # the standard library's module (a Python 2 name): not an installable distribution
        (
            '  File "/env/lib/python3.11/site-packages/old/io.py", line 1, in <module>\n'
            "    import cPickle\n"
            "ModuleNotFoundError: No module named 'tkinter'\n",
            [],
        ),
        # hostile: code that raises the message itself, on a line that imports nothing
        (
            '  File "/env/lib/python3.11/site-packages/evil/__init__.py", line 1, in <module>\n'
            "    raise ModuleNotFoundError(\"No module named 'typosquat'\")\n"
            "ModuleNotFoundError: No module named 'typosquat'\n",
            [],
        ),
        # hostile: the line imports another module than the one the message names
        (
            '  File "/env/lib/python3.11/site-packages/evil/__init__.py", line 1, in <module>\n'
            "    import json\n"
            "ModuleNotFoundError: No module named 'typosquat'\n",
            [],
        ),
        # a relative import inside the package, and a message that is not a module name
        (
            '  File "/env/lib/python3.11/site-packages/pkg/a.py", line 1, in <module>\n'
            "    from . import b\n"
            "ModuleNotFoundError: No module named 'b'\n",
            [],
        ),
        (
            '  File "/env/lib/python3.11/site-packages/pkg/a.py", line 1, in <module>\n'
            "    import x\n"
            "ModuleNotFoundError: No module named 'x; rm -rf /'\n",
            [],
        ),
        ("", []),
        ("ModuleNotFoundError: No module named 'x'\n", []),
    ],
)
def test_what_is_not_an_installed_packages_undeclared_import(tail: str, pins: list[str]) -> None:
    assert undeclared_import(tail, pins) is None


def _index(root: Path, published: bool) -> Path:
    """frontlib 1.0, whose ``frontlib.extra`` (not ``frontlib`` itself) imports backlib
    without declaring it; backlib 1.0 beside it when ``published``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    from eco_wheelhouse import build_wheel, write_index

    wheels = [
        build_wheel(
            root / "build",
            "frontlib",
            "1.0",
            modules={"frontlib/__init__.py": "", "frontlib/extra.py": "import backlib\n"},
        )
    ]
    if published:
        wheels.append(build_wheel(root / "build", "backlib", "1.0", modules={}))
    write_index(root / "index", [w.path for w in wheels])
    return root / "index"


@pytest.mark.slow
@pytest.mark.parametrize("published", [True, False])
def test_the_environment_in_use_gains_the_undeclared_dependency_a_run_stops_on(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, published: bool
) -> None:
    """The pipeline's part, as build() runs it: the Builder's environment passes its gate
    (``import frontlib``); the smoke run stops inside frontlib; the environment in use is
    built again with backlib (once), the artifact's lock follows and the run passes. Hostile:
    no index has backlib; nothing is added, the environment in use stays."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    from eco_wheelhouse import serve_index

    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    repo = tmp_path / "raw"
    repo.mkdir()
    (repo / "main.py").write_text("from frontlib import extra\nprint('result: 3')\n", "utf-8")
    git("init", "--quiet", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "Initial code", cwd=repo)
    claims_file = tmp_path / "claims.yaml"
    claims_file.write_text(
        yaml.safe_dump(
            {
                "claims_version": "1.0",
                "paper": {"title": "A study", "year": 2024},
                "claims": [
                    {
                        "id": "result",
                        "measured": "the result",
                        "value": 3.0,
                        "direction": "higher",
                        "hints": {"script": "main.py", "label": "result"},
                    }
                ],
            }
        ),
        "utf-8",
    )
    claims = load_claims(claims_file)
    out = tmp_path / "out"
    state = BuildState(out)
    code = state.root / "source"
    commit, date = checkout(str(repo), code)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    planned = plan(claims, intake, root=code, inputs_digest=ZERO)
    with serve_index(_index(tmp_path, published)) as url:
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
        built = build_environment(
            intake, state.root, inputs_digest=ZERO, plan=planned, cache_dir=env_cache
        )
        assert built.gate.passed, built.gate.findings
        assert built.pins == ["frontlib==1.0"]
        assemble(
            out, str(repo), claims=claims, intake=intake, plan=planned, env_dir=state.root / "env"
        )
        interpreter = ensure_environment(out)
        ran = subprocess.run(
            [str(interpreter), "main.py"],
            cwd=out / "code",
            capture_output=True,
            text=True,
            check=False,
        )
        failure = classify(ran.stderr, out / "code")
        assert failure is not None and failure.message == "No module named 'backlib'"
        era = _Era(built, intake, planned, claims, state, out, False, {})
        # the Reproducer hands over the failure as the build writes it (paths made portable)
        failure = failure.portable(out)
        again, notes = era.rebuild(failure)
    assert notes == []
    if not published:
        # the era's next environments follow as before; no index has backlib in any
        assert era.undeclared == {"backlib"}
        assert all(not p.startswith("backlib") for p in era.built.pins)
        assert "backlib==" not in (out / "environment/requirements.lock").read_text("utf-8")
        return
    assert again is not None
    assert era.built.pins == ["backlib==1.0", "frontlib==1.0"]
    assert era.built.environment == "newest" and era.built.inputs_digest == ZERO
    assert [u.module for u in era.planned.imports] == ["backlib", "frontlib"]
    [added] = [r for r in era.built.replaced if r.replacement == "backlib"]
    assert "frontlib/extra.py (an installed package)" in added.why
    assert "imports 'backlib', which its distribution does not declare" in (
        era.built.attempts[-1].why
    )
    assert state.stored("builder", BuilderRecord) == era.built
    assert "backlib==1.0" in (out / "environment/requirements.lock").read_text("utf-8")
    ran = subprocess.run(
        [str(again), "main.py"], cwd=out / "code", capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0 and "result: 3" in ran.stdout, ran.stderr
    # the same failure again is not met with the same addition twice
    assert era._with_undeclared(failure) is None
