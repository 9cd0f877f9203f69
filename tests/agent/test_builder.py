"""Builder: requirements from files and imports, CUDA-only pins, relaxation steps, lock, env."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reprobridge_sdk.agent.builder import (
    _failing_frame,
    _probe_imports,
    build_environment,
    declared_requirements,
    era_date,
    relaxation_decision,
    relaxed,
    resolve_steps,
)
from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.model.build import (
    BuilderRecord,
    DependencyFile,
    Gate,
    ImportUse,
    IntakeRecord,
    PlanRecord,
    PythonEra,
    ReachedImport,
    ResolveStep,
)
from reprobridge_sdk.model.claims import Claims

ZERO = "0" * 64


def _intake(requirements: list[str] | None, imports: list[str]) -> IntakeRecord:
    files = (
        [DependencyFile(path="requirements.txt", kind="requirements", requirements=requirements)]
        if requirements is not None
        else []
    )
    return IntakeRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        source="repo",
        repo_name="repo",
        commit="a" * 40,
        dependency_files=files,
        imports=[ImportUse(module=m, files=["train.py"]) for m in imports],
        python=PythonEra(syntax="3", commit_date="2019-01-01T00:00:00+00:00", target="3.11"),
    )


def test_requirements_are_inferred_from_imports_through_the_map() -> None:
    declared = declared_requirements(_intake(None, ["cv2", "numpy", "sklearn", "yaml"]))
    assert declared.requirements == ["numpy", "opencv-python-headless", "PyYAML", "scikit-learn"]
    assert [r.replacement for r in declared.replaced] == [
        "opencv-python-headless",
        "numpy",
        "scikit-learn",
        "PyYAML",
    ]
    assert all(r.original is None for r in declared.replaced)


def test_cuda_only_pins_are_dropped_and_cuda_local_versions_cut() -> None:
    declared = declared_requirements(
        _intake(
            [
                "numpy==1.26.4",
                "nvidia-cublas-cu12==12.1.3.1",
                "triton==2.1.0",
                "torch==2.1.0+cu118",
                "cupy-cuda12x",
                "git+https://example.org/x.git#egg=x",
                'pywin32; sys_platform == "win32"',
            ],
            ["numpy", "torch"],
        )
    )
    assert declared.requirements == ["numpy==1.26.4", "torch==2.1.0"]
    dropped = {r.original for r in declared.replaced if r.replacement is None}
    assert dropped == {
        "nvidia-cublas-cu12==12.1.3.1",
        "triton==2.1.0",
        "cupy-cuda12x",
        "git+https://example.org/x.git#egg=x",
        'pywin32; sys_platform == "win32"',
    }
    assert ("torch==2.1.0+cu118", "torch==2.1.0") in {
        (r.original, r.replacement) for r in declared.replaced
    }


def test_names_the_index_holds_as_placeholders_are_replaced_with_their_versions() -> None:
    """``pytorch>=1.5`` (the corpus's APPNP) resolves to nothing: the index's ``pytorch``
    is a placeholder. The requirement becomes ``torch>=1.5``, a recorded replacement, and
    the code's ``import torch`` adds no second one."""
    declared = declared_requirements(
        _intake(
            ["pytorch>=1.5", "sklearn", "tensorflow-gpu[foo]==1.15.0", "numpy"],
            ["torch", "sklearn", "tensorflow", "numpy"],
        )
    )
    assert declared.requirements == [
        "numpy",
        "scikit-learn",
        "tensorflow[foo]==1.15.0",
        "torch>=1.5",
    ]
    assert {(r.original, r.replacement) for r in declared.replaced if r.original} == {
        ("pytorch>=1.5", "torch>=1.5"),
        ("sklearn", "scikit-learn"),
        ("tensorflow-gpu[foo]==1.15.0", "tensorflow[foo]==1.15.0"),
    }
    assert all(r.why for r in declared.replaced)


def test_build_tools_come_from_the_code_never_from_setup_py_alone() -> None:
    intake = _intake(None, ["numpy"]).model_copy(
        update={
            "imports": [
                ImportUse(module="numpy", files=["train.py"]),
                ImportUse(module="setuptools", files=["setup.py"]),
                ImportUse(module="wheel", files=["setup.py", "pkg/setup.py"]),
                ImportUse(module="pkg_resources", files=["train.py"]),
            ]
        }
    )
    declared = declared_requirements(intake)
    assert declared.requirements == ["numpy", "setuptools"]  # pkg_resources: unpinned


def test_the_claims_file_requirements_come_first_and_replace_the_repositorys() -> None:
    claims = Claims.model_validate(
        {
            "claims_version": "1.0",
            "paper": {"title": "P"},
            "requirements": ["numpy<1.24", "Theano==1.0.5"],
            "claims": [{"id": "a", "measured": "m", "value": 1, "direction": "higher"}],
        }
    )
    declared = declared_requirements(_intake(["numpy==1.16.0", "scipy"], ["numpy"]), None, claims)
    assert declared.requirements == ["numpy<1.24", "scipy", "Theano==1.0.5"]
    assert ("numpy==1.16.0", None) in {(r.original, r.replacement) for r in declared.replaced}


def test_relaxed_turns_exact_and_upper_bounds_into_lower_bounds_of_the_same_major() -> None:
    assert relaxed(["numpy==1.16.0", "scipy<1.3,>=1.1", "pandas~=0.24", "six", "x[a]==1"]) == [
        "numpy>=1.16.0,<2",
        "scipy>=1.1,<2",
        "pandas>=0.24",  # a 0.x pin: no major to keep
        "six",
        "x[a]>=1,<2",
    ]


@pytest.mark.parametrize(
    ("declared", "relaxed_to"),
    [
        # TensorFlow 1 code: a relaxed pin never reaches TensorFlow 2 (no tf.app there)
        ("tensorflow==1.15.4", "tensorflow>=1.15.4,<2"),
        ("tensorflow>=1.15.2,<2.0", "tensorflow>=1.15.2,<2"),  # the author's own cap stays
        ("networkx==2.2", "networkx>=2.2,<3"),
        ("keras<=2.2.4", "keras<3"),
        ("c==2.*", "c>=2,<3"),
        ("torch==0.4.1", "torch>=0.4.1"),
        ("b>=2", "b>=2"),  # a bare lower bound says any newer release will do
        ("setuptools==40.6.3", "setuptools>=40.6.3"),  # a build tool: no major to keep
        # but its upper bound (the cap after pkg_resources went away in 82) is kept
        ("setuptools<82.0", "setuptools<82"),
        ("setuptools>=40,<=81.0", "setuptools>=40,<82"),
        ("weird==not.a.version", "weird==not.a.version"),  # not a requirement: as written
    ],
)
def test_a_relaxed_pin_keeps_its_major_version(declared: str, relaxed_to: str) -> None:
    assert relaxed([declared]) == [relaxed_to]


@pytest.mark.slow
def test_an_old_pin_is_relaxed_step_by_step_to_the_newest_never_the_oldest(
    tmp_path: Path,
) -> None:
    steps, pins = resolve_steps(
        ["numpy==1.16.0"], tmp_path, python="3.11", commit_date="2019-01-15T10:00:00+00:00"
    )
    assert [(s.name, s.ok) for s in steps] == [
        ("newest", False),
        ("newest-lower-bounds", True),
    ]
    assert [(s.exclude_newer, s.python) for s in steps] == [(None, "3.11"), (None, "3.11")]
    assert steps[0].error
    assert not any(s.lowest for s in steps)
    assert pins is not None
    [numpy] = [p for p in pins if p.startswith("numpy==")]
    version = tuple(int(x) for x in numpy.split("==")[1].split(".")[:2])
    assert version >= (1, 26)  # the newest, not the first with CPython 3.11 wheels (1.23)


@pytest.mark.slow
def test_a_requirement_no_index_has_is_b005(tmp_path: Path) -> None:
    record = build_environment(
        _intake(["reprobridge-no-such-distribution-xyz==1.0"], []),
        tmp_path,
        inputs_digest=ZERO,
        cache_dir=tmp_path / "cache",
    )
    # every environment was tried: newest, the era's for 3.11, the era's interpreter (3.7,
    # or B048 where no 3.7 is here); none resolves
    assert next(f.code for f in record.gate.findings) == "B005"
    assert {f.code for f in record.gate.findings} <= {"B005", "B048"}
    assert [(s.name, s.ok, s.python) for s in record.steps][:4] == [
        ("newest", False, "3.11"),
        ("newest-lower-bounds", False, "3.11"),
        ("declared", False, "3.11"),
        ("lower-bounds", False, "3.11"),
    ]
    assert [(a.name, a.python, a.ok) for a in record.attempts][:3] == [
        ("newest", "3.11", False),
        ("era", "3.11", False),
        ("era-python", "3.7", False),
    ]
    assert record.attempts[0].outcome.startswith("B005")
    assert record.lock_sha256 is None


@pytest.mark.slow
def test_an_optional_import_that_does_not_resolve_is_left_out_with_b023(
    tmp_path: Path, env_cache: Path
) -> None:
    intake = _intake(None, [])
    planned = PlanRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        imports=[
            ReachedImport(module="numpy", files=["train.py"]),
            ReachedImport(
                module="reprobridge_no_such_module_xyz",
                files=["train.py"],
                optional="under try/except ImportError",
            ),
        ],
    )
    record = build_environment(
        intake, tmp_path, inputs_digest=ZERO, plan=planned, cache_dir=env_cache
    )
    assert record.gate.passed, record.gate.findings
    assert [(s.name, s.ok) for s in record.steps][-1] == ("required-only", True)
    assert [(f.code, f.severity) for f in record.gate.findings] == [("B023", "warning")]
    assert record.imports_checked == ["numpy"]


@pytest.mark.slow
def test_the_fixture_environment_is_locked_built_and_its_imports_work(
    raw_repo, tmp_path: Path, env_cache: Path
) -> None:
    repo, claims_file = raw_repo("cuda-pins")
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    intake = inventory(
        dest,
        load_claims(claims_file),
        source=str(repo),
        commit=commit,
        commit_date=date,
        inputs_digest=ZERO,
    )
    record = build_environment(intake, tmp_path / "state", inputs_digest=ZERO, cache_dir=env_cache)
    assert record.gate.passed, record.gate.findings
    assert [s.name for s in record.steps] == ["newest"]
    assert [(a.name, a.ok) for a in record.attempts] == [("newest", True)]
    [numpy] = [p for p in record.pins if p.startswith("numpy==")]
    assert int(numpy.split("==")[1].split(".")[0]) >= 2  # the newest, not the commit's era
    assert not any(p.startswith(("nvidia", "triton")) for p in record.pins)
    assert record.imports_checked == ["matplotlib", "numpy", "scipy", "sklearn"]
    lock = (tmp_path / "state" / "env" / "environment" / "requirements.lock").read_text("utf-8")
    assert "--hash=sha256:" in lock
    assert record.interpreter is not None
    missing = _probe_imports(Path(record.interpreter), ["no_such_module_xyz"], tmp_path)
    assert [f.code for f in missing] == ["B006"]


def test_an_import_that_needs_the_network_or_a_gpu_says_so(tmp_path: Path) -> None:
    # real imports in a real interpreter: modules beside the probe that fail as such
    # packages do when imported without a network or a GPU
    (tmp_path / "needs_net.py").write_text(
        "import urllib.error\nraise urllib.error.URLError('[Errno -3] Temporary failure in "
        "name resolution')\n",
        "utf-8",
    )
    (tmp_path / "needs_gpu.py").write_text(
        "raise RuntimeError('Found no NVIDIA driver on your system')\n", "utf-8"
    )
    (tmp_path / "plain_bug.py").write_text("raise ValueError('bad')\n", "utf-8")
    found = _probe_imports(
        Path(sys.executable),
        ["needs_net", "needs_gpu", "plain_bug", "json"],
        tmp_path,
        optional={"needs_gpu": "in function train()"},
    )
    assert [(f.code, f.severity) for f in found] == [
        ("B006", "error"),
        ("B023", "warning"),
        ("B006", "error"),
    ]
    assert "(its import needs the network)" in found[0].message
    assert "(its import needs a GPU)" in found[1].message
    assert "needs" not in found[2].message


def _step(name: str, ok: bool) -> ResolveStep:
    return ResolveStep(name=name, requirements=[], exclude_newer=None, ok=ok, why=f"why {name}")


def test_a_relaxed_pin_is_a_recorded_decision_of_the_guide() -> None:
    base = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python="3.11",
        requirements=["numpy==1.16.0", "scipy"],
    )
    as_declared = base.model_copy(update={"steps": [_step("declared", True)]})
    assert relaxation_decision(as_declared, ["accuracy"]) is None
    newest = base.model_copy(update={"steps": [_step("declared", False), _step("newest", True)]})
    assert relaxation_decision(newest, ["accuracy"]) is None  # no pin was changed
    relaxed_steps = [_step("declared", False), _step("newest", False)]
    relaxed_steps.append(_step("newest-lower-bounds", True))
    decision = relaxation_decision(base.model_copy(update={"steps": relaxed_steps}), ["accuracy"])
    assert decision is not None
    assert (decision.id, decision.source, decision.sensitivity, decision.tasks) == (
        "environment-requirements-relaxed",
        "numpy==1.16.0",
        "medium",
        ["accuracy"],
    )
    assert decision.resolution.startswith("step 'newest-lower-bounds'")


def test_a_relaxation_names_only_the_failed_steps_of_its_own_environment() -> None:
    """CQR's guide said its requirements did not resolve for Python 3.6 and listed the steps
    of three environments, each several times: only the 3.6 era's steps count, once each."""

    def step(name: str, ok: bool, python: str, bound: str | None) -> ResolveStep:
        return _step(name, ok).model_copy(update={"python": python, "exclude_newer": bound})

    steps = [
        step("declared", False, "3.11", None),
        step("newest", False, "3.11", None),
        step("declared", False, "3.11", "2019-08-15"),
        step("source-build", False, "3.11", "2019-08-15"),
        step("declared", False, "3.6", "2019-08-15"),
        step("source-build", False, "3.6", "2019-08-15"),
        step("source-build", False, "3.6", "2019-08-15"),
        step("build-dependencies", True, "3.6", "2019-08-15"),
    ]
    record = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python="3.6",
        requirements=["scikit-garden"],
        steps=steps,
    )
    decision = relaxation_decision(record, ["coverage"])
    assert decision is not None
    assert decision.gap == (
        "the requirements as declared do not resolve for Python 3.6 with versions released by "
        "2019-08-15 (steps that failed: declared, source-build)"
    )


@pytest.mark.slow
def test_a_pure_python_sdist_without_a_wheel_is_built_from_source(
    tmp_path: Path, env_cache: Path
) -> None:
    # docopt 0.6.2 is published as a source distribution only (pure Python)
    record = build_environment(
        _intake(None, ["docopt"]), tmp_path, inputs_digest=ZERO, cache_dir=env_cache
    )
    assert record.gate.passed, record.gate.findings
    assert [(s.name, s.ok, s.source_builds) for s in record.steps] == [
        ("newest", False, False),
        ("source-build", True, True),
    ]
    assert record.pins == ["docopt==0.6.2"]
    assert record.imports_checked == ["docopt"]


def test_the_era_is_the_codes_last_change_when_the_plan_knows_it() -> None:
    intake = _intake(None, ["numpy"])  # its commit: 2019-01-01
    assert era_date(intake, None) == "2019-01-01T00:00:00+00:00"
    planned = PlanRecord(inputs_digest=ZERO, seconds=0, gate=Gate(passed=True))
    assert era_date(intake, planned) == "2019-01-01T00:00:00+00:00"
    older = planned.model_copy(update={"code_date": "2017-05-02T10:00:00-04:00"})
    assert era_date(intake, older) == "2017-05-02T10:00:00-04:00"


@pytest.mark.slow
def test_an_era_requirement_without_a_wheel_is_built_from_source_of_the_same_era(
    tmp_path: Path,
) -> None:
    """TensorFlow 2.4 needs termcolor 1.1, published as a source distribution only: an era
    environment allows source builds as the newest one does, still bounded by the era."""
    bound = "2020-01-01T00:00:00+00:00"
    # docopt 0.6.2 (2014) is a pure-Python source distribution without a wheel
    steps, pins = resolve_steps(["docopt"], tmp_path, python="3.11", commit_date=bound, era=True)
    assert [(s.name, s.ok, s.source_builds) for s in steps] == [
        ("declared", False, False),
        ("source-build", True, True),
    ]
    assert {s.exclude_newer for s in steps} == {bound}
    assert pins == ["docopt==0.6.2"]


@pytest.mark.slow
def test_an_era_sdist_builds_under_the_eras_interpreter_with_a_backend_of_today(
    tmp_path: Path,
) -> None:
    """pyDOE (2014) is a source distribution only. Resolving it for Python 3.6 as of May 2018
    builds it with that interpreter, and with a build backend newer than the era (uv's
    default backend for a bare setup.py is setuptools>=40.8, of late 2018). Python 3.6 is a
    legacy interpreter: its era's first step allows source distributions already."""
    from reprobridge_sdk.env.interpreters import discover

    if discover("3.6") is None:
        pytest.skip("no CPython 3.6 on PATH, in pyenv or uv-managed here ('pyenv install 3.6')")
    bound = "2018-05-02T03:51:53+00:00"
    steps, pins = resolve_steps(["pyDOE"], tmp_path, python="3.6", commit_date=bound, era=True)
    assert [(s.name, s.ok, s.source_builds) for s in steps] == [("declared", True, True)]
    assert pins is not None
    assert [p for p in pins if p.lower().startswith("pydoe==")] == ["pydoe==0.3.8"]
    shown = steps[-1].argv
    assert shown[shown.index("--python") + 1] == "python3.6"  # no path of this machine
    assert "--exclude-newer-package=setuptools=2100-01-01T00:00:00Z" in shown


def _index_of(root: Path, wheels: list[tuple[str, dict[str, str]]]) -> Path:
    """A PEP 503 index of one-module wheels: ``(name, modules)`` each at version 1.0."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    from eco_wheelhouse import build_wheel, write_index

    built = [build_wheel(root / "build", name, "1.0", modules=modules) for name, modules in wheels]
    write_index(root / "index", [w.path for w in built])
    return root / "index"


@pytest.mark.slow
@pytest.mark.parametrize("backend_published", [True, False])
def test_a_packages_undeclared_dependency_is_added_when_its_import_fails(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, backend_published: bool
) -> None:
    """Keras 2 imports its backend without declaring it. A package whose import fails on a
    module no pin provides gets that module's distribution added, unpinned, as a recorded
    addition, and the environment is built again. Hostile: when the index has no such
    distribution, the environment keeps its import error as its outcome, and nothing is
    recorded as added."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    from eco_wheelhouse import serve_index

    wheels = [("frontlib", {"frontlib/__init__.py": "import backlib\n"})]
    if backend_published:
        wheels.append(("backlib", {}))
    index = _index_of(tmp_path, wheels)
    # frontlib imports backlib, which frontlib's metadata does not declare
    with serve_index(index) as url:
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
        record = build_environment(
            _intake(None, ["frontlib"]),
            tmp_path / "state",
            inputs_digest=ZERO,
            cache_dir=env_cache,
        )
    if backend_published:
        assert record.gate.passed, record.gate.findings
        assert record.pins == ["backlib==1.0", "frontlib==1.0"]
        [added] = [r for r in record.replaced if r.replacement == "backlib"]
        assert added.original is None
        assert "'frontlib' imports 'backlib' without declaring it" in added.why
    else:
        assert not record.gate.passed
        # the newest environment keeps its own outcome, the import error; the addition was
        # tried, and its resolution is recorded as the step that failed
        newest = record.attempts[0]
        assert newest.name == "newest" and not newest.ok
        assert "No module named 'backlib'" in newest.outcome
        assert "with backlib added: B005" in newest.outcome
        assert [(s.requirements, s.ok) for s in record.steps[:2]] == [
            (["frontlib"], True),
            (["backlib", "frontlib"], False),
        ]
        assert all(r.replacement != "backlib" for r in record.replaced)


_LASAGNE_ON_THEANO_09 = """\
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/env/lib/python3.6/site-packages/lasagne/__init__.py", line 19, in <module>
    from . import layers
  File "/env/lib/python3.6/site-packages/lasagne/layers/pool.py", line 6, in <module>
    from theano.tensor.signal import downsample
ImportError: cannot import name 'downsample'
"""


def test_the_frame_an_installed_package_fails_in_is_named() -> None:
    """Planetoid's Lasagne 0.1 fails inside its own file on a line that imports Theano (0.9
    removed ``downsample``); Python 3.6 names neither in the error's last line. A failure in
    the repository's own code, or a traceback without a source line, names no frame."""
    assert _failing_frame(_LASAGNE_ON_THEANO_09) == (
        "lasagne/layers/pool.py",
        "from theano.tensor.signal import downsample",
    )
    own = 'Traceback (most recent call last):\n  File "/repo/train.py", line 3, in <module>\n'
    assert _failing_frame(own + "    import theano\nImportError: x\n") is None
    assert _failing_frame("ImportError: cannot import name 'x'\n") is None
    cut = '  File "/env/lib/python3.11/site-packages/a/b.py", line 6, in <module>\n'
    assert _failing_frame(cut) is None


@pytest.mark.slow
@pytest.mark.parametrize("old_published", [True, False])
def test_a_dependency_too_new_for_the_package_importing_it_is_capped(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, old_published: bool
) -> None:
    """Lasagne 0.1 imports ``theano.tensor.signal.downsample``, which Theano 0.9 removed. A
    package whose import fails inside its own file on a line importing another pinned
    package gets that package capped below the pinned minor release, a recorded change, and
    the environment is built again. Hostile: when no older release exists, the environment
    keeps its import error, and nothing is recorded as changed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
    from eco_wheelhouse import build_wheel, serve_index, write_index

    build = tmp_path / "build"
    wheels = [
        build_wheel(
            build,
            "frontlib",
            "1.0",
            modules={"frontlib/__init__.py": "from backlib.old import thing\n"},
        ),
        build_wheel(build, "backlib", "2.0", modules={"backlib/__init__.py": ""}),
    ]
    if old_published:
        wheels.append(
            build_wheel(
                build,
                "backlib",
                "1.0",
                modules={"backlib/__init__.py": "", "backlib/old.py": "thing = 1\n"},
            )
        )
    write_index(tmp_path / "index", [w.path for w in wheels])
    with serve_index(tmp_path / "index") as url:
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
        record = build_environment(
            _intake(["frontlib", "backlib"], ["frontlib"]),
            tmp_path / "state",
            inputs_digest=ZERO,
            cache_dir=env_cache,
        )
    if old_published:
        assert record.gate.passed, record.gate.findings
        assert record.pins == ["backlib==1.0", "frontlib==1.0"]
        [capped] = [r for r in record.replaced if r.original == "backlib"]
        assert capped.replacement == "backlib<2"
        assert "frontlib/__init__.py" in capped.why and "backlib 2.0" in capped.why
    else:
        assert not record.gate.passed
        newest = record.attempts[0]
        assert "No module named 'backlib.old'" in newest.outcome
        assert "(at frontlib/__init__.py: from backlib.old import thing)" in newest.outcome
        assert all(r.original != "backlib" for r in record.replaced)
