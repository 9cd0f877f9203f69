"""Environments of the code's era: the era's interpreters, their discovery, and builds of code
that needs older versions or an older interpreter (real uv, real venvs, real interpreters).

The fixtures are defined here, each a git repository committed on a date of its era.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from reprobridge_sdk.agent.builder import (
    _plan_steps,
    build_environment,
    era_decision,
    in_use,
    legacy_interpreter,
    relaxation_decision,
    resolve_steps,
    still_in_use,
)
from reprobridge_sdk.agent.pipeline import BuildOptions, build
from reprobridge_sdk.api import load
from reprobridge_sdk.env.interpreters import (
    RELEASES,
    SETTLING,
    discover,
    era_versions,
    servable,
)
from reprobridge_sdk.model.build import (
    BuilderRecord,
    DependencyFile,
    EnvironmentAttempt,
    Gate,
    IntakeRecord,
    PythonEra,
    ReproducerRecord,
    ResolveStep,
)

ZERO = "0" * 64
RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"


def _intake(commit_date: str, syntax: str = "3") -> IntakeRecord:
    return IntakeRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        source="repo",
        repo_name="repo",
        commit="a" * 40,
        python=PythonEra(syntax=syntax, commit_date=commit_date, target=RUNNING),
    )


# --------------------------------------------------------------------------- the era table


@pytest.mark.parametrize(
    ("commit_date", "era"),
    [
        ("2018-03-01T00:00:00+00:00", ["3.6", "3.5"]),  # 3.7 is not out yet
        ("2018-09-01T00:00:00+00:00", ["3.6", "3.5"]),  # 3.7 out, not settled
        ("2019-01-01T00:00:00+00:00", ["3.7", "3.6"]),
        ("2021-06-01T00:00:00+00:00", ["3.9", "3.8"]),
        ("2011-03-01T00:00:00+00:00", ["2.7"]),
        ("2005-01-01T00:00:00+00:00", ["2.7"]),  # before the table: its oldest
    ],
)
def test_the_era_of_a_commit_is_its_settled_python_versions_newest_first(
    commit_date: str, era: list[str]
) -> None:
    assert era_versions(commit_date) == era


def test_the_resolver_serves_cpython_3_6_and_newer_only() -> None:
    assert [m for m in ("2.7", "3.4", "3.5", "3.6", "3.7", "3.13") if servable(m)] == [
        "3.6",
        "3.7",
        "3.13",
    ]


def test_uv_refuses_python_2_7_and_3_5_as_the_table_says(tmp_path: Path) -> None:
    from uv import find_uv_bin

    source = tmp_path / "r.in"
    source.write_text("six\n", "utf-8")
    for minor, ok in (("2.7", False), ("3.5", False)):
        proc = subprocess.run(
            [str(find_uv_bin()), "pip", "compile", "--no-config", "--offline",
             "--python-version", minor, str(source)],
            capture_output=True, text=True, check=False, cwd=tmp_path,
        )  # fmt: skip
        assert (proc.returncode == 0) is ok, proc.stderr
        assert "not supported" in proc.stderr


# --------------------------------------------------------------------------- discovery


def _older_interpreter() -> tuple[str, Path] | None:
    """The newest CPython on this machine older than the running one and than 3.11 (the
    fixture's code needs an interpreter before 3.11) that the resolver serves."""
    current = sys.version_info[:2]
    for minor in sorted(RELEASES, key=lambda m: tuple(map(int, m.split("."))), reverse=True):
        parts = tuple(map(int, minor.split(".")))
        if parts >= current or parts >= (3, 11) or not servable(minor):
            continue
        found = discover(minor)
        if found is not None:
            return minor, found.path
    return None


def _need_older() -> tuple[str, Path]:
    found = _older_interpreter()
    if found is None:
        reason = (
            "no CPython 3.6-3.10 on PATH, in pyenv or uv-managed here; "
            "install one ('pyenv install 3.10' or 'uv python install 3.10')"
        )
        if os.environ.get("REPROBRIDGE_REQUIRE_ERA_PYTHON"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def test_a_pyenv_install_is_found_and_a_shim_that_does_not_run_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minor, real = _need_older()
    # a PATH entry named like the version that does not run (as pyenv's shims of a version
    # not selected): passed over
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / f"python{minor}"
    shim.write_text("#!/bin/sh\necho 'pyenv: command not found' >&2\nexit 127\n", "utf-8")
    shim.chmod(0o755)
    # a pyenv root with the real interpreter, and a decoy that claims the version but is not it
    root = tmp_path / "pyenv"
    good = root / "versions" / f"{minor}.1" / "bin"
    good.mkdir(parents=True)
    (good / f"python{minor}").symlink_to(real)
    decoy = root / "versions" / f"{minor}.99" / "bin"
    decoy.mkdir(parents=True)
    (decoy / f"python{minor}").symlink_to(sys.executable)  # the running one: another version
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("PYENV_ROOT", str(root))
    found = discover(minor)
    assert found is not None
    assert (found.source, found.path, found.minor) == (
        "pyenv",
        good / f"python{minor}",
        minor,
    )


def test_a_version_nowhere_here_is_none_and_nothing_is_downloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "uv-pythons"))
    assert discover("3.4") is None
    assert not (tmp_path / "uv-pythons").exists() or not any((tmp_path / "uv-pythons").iterdir())


# --------------------------------------------------------------------------- B048


def _no_interpreters_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process finds no other CPython: an empty PATH entry, pyenv root and uv store."""
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "uv-pythons"))


def _tried_the_era(syntax: str = "2") -> BuilderRecord:
    """A record whose newest and era environments (the running interpreter) were tried."""
    return BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python=RUNNING,
        requirements=[],
        environment="era",
        attempts=[
            EnvironmentAttempt(name="newest", python=RUNNING, why="w", ok=True, outcome="o"),
            EnvironmentAttempt(name="era", python=RUNNING, why="w", ok=True, outcome="o"),
        ],
    )


def test_an_era_older_than_the_resolver_serves_takes_the_nearest_interpreter_here(
    tmp_path: Path,
) -> None:
    """A 2015 commit of Python 2 code: 2.7 and 3.4 are older than the resolver serves, so the
    oldest servable interpreter found here is tried, resolved as of its first settled day
    (not the commit's, when it had no release then): the Python 2 code is then ported by the
    fix rules. B048 still names each era interpreter that could not be used."""
    older = sorted(
        (m for m in RELEASES if servable(m) and tuple(map(int, m.split("."))) < (3, 11)),
        key=lambda m: tuple(map(int, m.split("."))),
    )
    nearest = next((m for m in older if discover(m) is not None), None)
    if nearest is None:
        reason = "no CPython 3.6-3.10 here ('pyenv install 3.10' or 'uv python install 3.10')"
        if os.environ.get("REPROBRIDGE_REQUIRE_ERA_PYTHON"):
            pytest.fail(reason)
        pytest.skip(reason)
    record = build_environment(
        _intake("2015-03-01T00:00:00+00:00", syntax="2"),
        tmp_path,
        inputs_digest=ZERO,
        after=_tried_the_era(),
        because="the smoke run failed with SyntaxError",
    )
    tried = [(a.name, a.python) for a in record.attempts[2:]]
    era = ["2.7", *era_versions("2015-03-01T00:00:00+00:00")]
    assert era == ["2.7", "3.4", "3.3"]
    assert tried == [*(("era-python", m) for m in era), ("era-python", nearest)]
    last = record.attempts[-1]
    settled = (RELEASES[nearest] + SETTLING).isoformat()
    assert last.exclude_newer is not None and last.exclude_newer.startswith(settled)
    assert f"Python {nearest}, the nearest found here, as of {settled}" in last.why
    assert all(
        not a.ok and "older than the resolver serves" in a.outcome for a in record.attempts[2:-1]
    )
    # nothing to install: the nearest interpreter's environment passes, and is the one in use
    assert last.ok and record.gate.passed and record.python == nearest


def test_after_a_legacy_environment_the_eras_older_interpreter_is_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GCN's era (2020-09) is Python 3.8 and 3.7: its 3.8 environment relaxed the pinned
    TensorFlow 1.15 and the code failed there. The next environment is the era's 3.7, not
    the end of the era: here 3.7 is not found (B048), and 3.8 is not tried again."""
    _no_interpreters_here(tmp_path, monkeypatch)
    date = "2020-09-25T18:30:21+00:00"
    assert era_versions(date) == ["3.8", "3.7"]
    legacy = EnvironmentAttempt(
        name="era-python", python="3.8", exclude_newer=date, why="w", ok=True, outcome="o"
    )
    before = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python="3.8",
        requirements=[],
        environment="era-python",
        attempts=[
            EnvironmentAttempt(name="newest", python=RUNNING, why="w", ok=False, outcome="o"),
            EnvironmentAttempt(name="era", python=RUNNING, why="w", ok=False, outcome="o"),
            legacy,
        ],
        in_use=legacy,
    )
    record = build_environment(
        _intake(date),
        tmp_path / "state",
        inputs_digest=ZERO,
        after=before,
        because="the smoke run failed with AttributeError",
    )
    assert [(a.name, a.python, a.ok) for a in record.attempts[3:]] == [("era-python", "3.7", False)]
    assert "no Python 3.7 on this machine" in record.attempts[3].outcome
    assert record.in_use == legacy  # the 3.8 environment stays in use


def test_an_era_the_resolver_does_not_serve_is_b048_with_the_step_that_unblocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a 2016 commit: Python 3.5 and 3.4; Python 2 code puts 2.7 first. The newest and the
    # era environment for the running interpreter were tried (the record says so). No
    # other interpreter is found here, so none nearer the era is tried either.
    _no_interpreters_here(tmp_path, monkeypatch)
    before = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python=RUNNING,
        requirements=[],
        environment="era",
        attempts=[
            EnvironmentAttempt(name="newest", python=RUNNING, why="w", ok=True, outcome="o"),
            EnvironmentAttempt(name="era", python=RUNNING, why="w", ok=True, outcome="o"),
        ],
    )
    record = build_environment(
        _intake("2016-06-01T00:00:00+00:00", syntax="2"),
        tmp_path,
        inputs_digest=ZERO,
        after=before,
        because="the smoke run failed with SyntaxError",
    )
    assert not record.gate.passed
    assert [(f.code, f.severity) for f in record.gate.findings] == [
        ("B005", "error"),
        ("B048", "warning"),
        ("B048", "warning"),
        ("B048", "warning"),
    ]
    assert [(a.name, a.python, a.ok) for a in record.attempts[2:]] == [
        ("era-python", "2.7", False),
        ("era-python", "3.5", False),
        ("era-python", "3.4", False),
    ]
    assert all(
        "code record --kind execution-fix" in (f.hint or "") for f in record.gate.findings[1:]
    )
    assert not (tmp_path / "env").exists()  # nothing replaced the environment in use


def _resolved(name: str, pins: list[str]) -> ResolveStep:
    return ResolveStep(name=name, requirements=["x"], ok=True, why=name, pins=pins)  # type: ignore[arg-type]


def test_a_rebuild_that_fails_keeps_the_era_environment_in_use_and_its_guide_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The era environment passed, its smoke run failed, and the legacy rebuild failed too
    (no interpreter of the era, nor a nearer one, is found here): the era environment stays
    in use, and the guide still says so."""
    _no_interpreters_here(tmp_path, monkeypatch)
    era = EnvironmentAttempt(
        name="era",
        python=RUNNING,
        exclude_newer="2016-06-01T00:00:00+00:00",
        why="newest failed",
        ok=True,
        outcome="resolved, built, and every required import works",
    )
    before = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python=RUNNING,
        requirements=["x"],
        environment="era",
        steps=[_resolved("newest", ["x==2"]), _resolved("lower-bounds", ["x==1"])],
        pins=["x==1"],
        attempts=[
            EnvironmentAttempt(name="newest", python=RUNNING, why="w", ok=False, outcome="B006"),
            era,
        ],
        in_use=era,
    )
    assert era_decision(before, ["score"]) is not None
    failed = build_environment(
        _intake("2016-06-01T00:00:00+00:00", syntax="2"),
        tmp_path,
        inputs_digest=ZERO,
        after=before,
        because="the smoke run failed with SyntaxError",
    )
    assert not failed.gate.passed
    assert failed.attempts[-1].ok is False and failed.in_use == era
    # a later environment that resolved, then failed its gate, has an ok step of its own
    failed = failed.model_copy(update={"steps": [*failed.steps, _resolved("declared", ["x==0"])]})
    kept = still_in_use(before, failed)
    assert kept.attempts == failed.attempts and kept.attempts[-1].ok is False
    assert in_use(kept) == era
    assert kept.pins == ["x==1"]
    note = era_decision(kept, ["score"])
    assert note is not None and note == era_decision(before, ["score"])
    assert "environment 'era'" in note.resolution and "2016-06-01" in note.source
    relaxed = relaxation_decision(kept, ["score"])
    assert relaxed is not None and "'lower-bounds'" in relaxed.resolution
    # a record written before 'in_use' existed: the last attempt that passed
    older = kept.model_copy(update={"in_use": None})
    assert in_use(older) == era and era_decision(older, ["score"]) == note


# --------------------------------------------------------------------------- fixtures


def _repo(base: Path, name: str, files: dict[str, str], date: str) -> Path:
    repo = base / name
    repo.mkdir(parents=True)
    for rel, text in files.items():
        (repo / rel).write_text(text, "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="Research Author",
        GIT_AUTHOR_EMAIL="author@example.org",
        GIT_COMMITTER_NAME="Research Author",
        GIT_COMMITTER_EMAIL="author@example.org",
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
    )
    for args in (["init", "--quiet", "-b", "main"], ["add", "-A"], ["commit", "-qm", "code"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def _claims(base: Path, name: str, value: float, label: str) -> Path:
    path = base / f"{name}.claims.yaml"
    document = {
        "claims_version": "1.0",
        "paper": {"title": f"A study of {name}", "year": 2021},
        "claims": [
            {
                "id": "score",
                "measured": label,
                "value": value,
                "direction": "higher",
                "hints": {"label": label},
            }
        ],
    }
    path.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    return path


#: numpy 2.0 (June 2024) removed np.product; no fix rule knows it. January 2024: numpy 1.26.
NUMPY_ERA = {
    "train.py": "import numpy as np\n\n"
    "weights = np.array([0.5, 0.9, 0.98])\n"
    "score = np.product(weights)\n"
    'print("product score: %.4f" % score)\n',
    "requirements.txt": "numpy\n",
}

#: inspect.getargspec was removed in Python 3.11; no fix rule knows it.
GETARGSPEC = {
    "main.py": "from inspect import getargspec\n\nimport six\n\n\n"
    "def model(alpha, beta, gamma=0.5):\n    return alpha + beta + gamma\n\n\n"
    "spec = getargspec(model)\n"
    'print("argument score: %.4f" % (len(spec.args) / 4.0 + (0.0 if six.PY2 else 0.0)))\n',
    "requirements.txt": "six\n",
}


def _built(tmp_path: Path, name: str, repo: Path, claims: Path) -> tuple[Path, BuilderRecord]:
    out = tmp_path / f"{name}-rra"
    report = build(BuildOptions(source=str(repo), claims=claims, out=out))
    assert report.passed, (report.stopped_at, report.findings, report.failure)
    record = BuilderRecord.model_validate_json((out / ".rra-build/builder.json").read_text())
    repro = ReproducerRecord.model_validate_json((out / ".rra-build/reproducer.json").read_text())
    assert repro.fixes == []  # the era environment, not a port forward, made it run
    return out, record


@pytest.mark.slow
def test_code_that_needs_older_versions_builds_in_the_era_environment(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    repo = _repo(tmp_path / "raw", "numpy-era", NUMPY_ERA, "2024-01-15T12:00:00+00:00")
    claims = _claims(tmp_path, "numpy-era", 0.441, "product score")
    out, record = _built(tmp_path, "numpy-era", repo, claims)
    assert (record.environment, record.python, record.legacy) == ("era", RUNNING, None)
    assert [(a.name, a.python, a.ok) for a in record.attempts] == [
        ("newest", RUNNING, True),
        ("era", RUNNING, True),
    ]
    assert "AttributeError" in record.attempts[1].why  # the smoke failure that called for it
    assert record.attempts[1].exclude_newer == "2024-01-15T12:00:00+00:00"
    assert [f.code for f in record.gate.findings] == ["B047"]
    [numpy] = [p for p in record.pins if p.startswith("numpy==")]
    assert numpy.split("==")[1].startswith("1.26.")
    art = load(out)
    lock = (out / "environment/requirements.lock").read_text("utf-8")
    assert numpy in lock
    assert art.manifest.environment.python == RUNNING
    [decision] = [a for a in art.manifest.guide.ambiguities if a.id == "environment-era"]
    assert decision.tasks == ["score"]
    assert "environment-era" in (out / "GUIDE.md").read_text("utf-8")


@pytest.mark.slow
def test_code_that_needs_an_older_interpreter_builds_in_a_legacy_environment(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minor, _path = _need_older()
    # committed when that interpreter was the era's newest settled one
    day = RELEASES[minor] + SETTLING + timedelta(days=20)
    date = f"{day.isoformat()}T12:00:00+00:00"
    assert era_versions(date)[0] == minor
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    repo = _repo(tmp_path / "raw", "getargspec", GETARGSPEC, date)
    claims = _claims(tmp_path, "getargspec", 0.75, "argument score")
    out, record = _built(tmp_path, "getargspec", repo, claims)
    assert (record.environment, record.python) == ("era-python", minor)
    assert [(a.name, a.python, a.ok) for a in record.attempts] == [
        ("newest", RUNNING, True),
        ("era", RUNNING, True),
        ("era-python", minor, True),
    ]
    assert "ImportError" in record.attempts[2].why
    assert record.legacy is not None
    assert [f.code for f in record.gate.findings] == ["B047"]
    assert {s.python for s in record.steps} == {RUNNING, minor}
    art = load(out)
    assert art.manifest.environment.python == minor
    assert art.manifest.environment.lock is not None
    resolved = art.manifest.environment.lock.resolved_for
    assert resolved is not None and resolved.python == minor
    [decision] = [a for a in art.manifest.guide.ambiguities if a.id == "environment-era"]
    assert decision.resolution.startswith(f"a legacy environment, Python {minor}")
    assert decision == era_decision(record, ["score"])
    assert "environment-era" in (out / "GUIDE.md").read_text("utf-8")
    report = json.loads((out / ".rra-build/report.json").read_text("utf-8"))
    assert report["passed"] is True


@pytest.mark.slow
def test_an_environment_of_python_36_installs_and_compiles_its_bytecode(tmp_path: Path) -> None:
    """uv's bytecode compiler runs only on Python 3.7+: a 3.6 environment (code of 2017 and
    2018) is installed without it and compiled by its own interpreter, so its read-only
    sandboxed runs do not compile every import again."""
    found = discover("3.6")
    if found is None:
        pytest.skip("no CPython 3.6 on PATH, in pyenv or uv-managed here ('pyenv install 3.6')")
    from reprobridge_sdk.env._installers import create_venv, install_lock
    from reprobridge_sdk.env._resolvers import index_url

    lock = tmp_path / "requirements.lock"
    (tmp_path / "requirements.in").write_text("six==1.16.0\n", "utf-8")
    subprocess.run(
        [sys.executable, "-m", "uv", "pip", "compile", "--quiet", "--no-config",
         "--generate-hashes", "--python-version", "3.6", "--index-url", index_url(),
         "--output-file", str(lock), str(tmp_path / "requirements.in")],
        check=True, capture_output=True,
    )  # fmt: skip
    env = tmp_path / "env"
    assert create_venv("uv", found.path, env, "py36").returncode == 0
    run = install_lock("uv", env / "bin" / "python", lock)
    assert run.returncode == 0, run.stderr
    cached = list((env / "lib").glob("python3.6/site-packages/__pycache__/six.cpython-36.pyc"))
    assert len(cached) == 1
    done = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import six; print(six.__version__)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout == "1.16.0\n"


# --------------------------------------------------------------------------- legacy steps


@pytest.mark.parametrize(
    ("python", "sources"), [("2.7", True), ("3.6", True), ("3.7", False), (RUNNING, False)]
)
def test_the_eras_steps_allow_sources_from_the_first_for_a_legacy_interpreter_only(
    python: str, sources: bool
) -> None:
    bound = "2018-02-01T00:00:00+00:00"
    steps = _plan_steps(["tensorflow==1.4.0", "networkx"], python=python, bound=bound)
    assert [(s.name, s.wheels_only, s.exclude_newer) for s in steps] == [
        ("declared", not sources, bound),
        ("lower-bounds", not sources, bound),
    ]
    assert ("source distributions allowed" in steps[0].why) is sources
    assert legacy_interpreter(python) is sources
    # the newest versions (the running interpreter only) stay wheels first
    newest = _plan_steps(["tensorflow==1.4.0"], python=python, bound=None)
    assert all(s.wheels_only for s in newest)


def test_a_version_that_is_not_one_is_no_legacy_interpreter() -> None:
    assert legacy_interpreter("garbage") is False
    assert legacy_interpreter("") is False


@pytest.mark.slow
def test_tensorflow_1_code_gets_the_release_of_its_date_on_python_36(tmp_path: Path) -> None:
    """Wheels only, TensorFlow for Python 3.6 as of February 2018 backtracks to 1.1 (the
    last release whose every dependency had a wheel); with source distributions allowed in
    the first era step it is 1.5, the release of the date."""
    if discover("3.6") is None:
        pytest.skip("no CPython 3.6 on PATH, in pyenv or uv-managed here ('pyenv install 3.6')")
    bound = "2018-02-01T00:00:00+00:00"
    steps, pins = resolve_steps(
        ["tensorflow", "networkx"], tmp_path, python="3.6", commit_date=bound, era=True
    )
    assert [(s.name, s.ok, s.source_builds) for s in steps] == [("declared", True, True)]
    assert pins is not None and "tensorflow==1.5.0" in pins
    argv = steps[0].argv
    assert "--only-binary" not in argv
    assert argv[argv.index("--exclude-newer") + 1] == bound
    assert "--exclude-newer-package=setuptools=2100-01-01T00:00:00Z" in argv


# --------------------------------------------------------------------------- hostile dates


def _garbage_commit(repo: Path, committer: str) -> None:
    """Point ``main`` at a commit whose committer line is ``committer``, written as is (git
    itself refuses to make one)."""

    def git(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", *args], cwd=repo, input=stdin, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    tree = git("write-tree")
    body = (
        f"tree {tree}\nauthor Research Author <author@example.org> 1500000000 +0000\n"
        f"committer Research Author <author@example.org> {committer}\n\ncode\n"
    )
    commit = git("hash-object", "-t", "commit", "-w", "--literally", "--stdin", stdin=body)
    git("update-ref", "refs/heads/main", commit)


@pytest.mark.parametrize(
    ("committer", "bound"),
    [
        (None, "2017-07-18T06:39:00+00:00"),  # GIT_COMMITTER_DATE '@1500000000 +9959'
        ("garbage +zzzz", None),  # git prints no date at all
        ("-5000000000000 +0000", None),
        ("99999999999999999999 +0000", "1970-01-01T00:00:00+00:00"),  # git's own reading
    ],
)
def test_a_commit_date_that_is_not_a_date_bounds_no_era_and_crashes_nothing(
    tmp_path: Path, committer: str | None, bound: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reprobridge_sdk.agent.intake import checkout, code_date

    # only the running interpreter: a 1970 era is older than any the resolver serves, and
    # the nearest served one (its own bound) is another test's
    _no_interpreters_here(tmp_path / "none", monkeypatch)

    repo = _repo(tmp_path, "raw", {"train.py": "print(1)\n"}, "@1500000000 +9959")
    if committer is not None:
        _garbage_commit(repo, committer)
    _, date = checkout(str(repo), tmp_path / "checkout")
    assert code_date(tmp_path / "checkout", ["train.py"], date) in {None, date}
    missing = "reprobridge-no-such-distribution-xyz"  # every resolution fails, fast
    intake = _intake(date).model_copy(
        update={
            "dependency_files": [
                DependencyFile(path="requirements.txt", kind="requirements", requirements=[missing])
            ]
        }
    )
    newest = BuilderRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        python=RUNNING,
        requirements=[missing],
        environment="newest",
        attempts=[EnvironmentAttempt(name="newest", python=RUNNING, why="w", ok=True, outcome="o")],
    )
    record = build_environment(
        intake,
        tmp_path / "state",
        inputs_digest=ZERO,
        after=newest,
        because="the smoke run failed",
    )
    assert not record.gate.passed
    era = record.attempts[1]
    if bound is None:
        assert [(a.name, a.ok) for a in record.attempts[1:]] == [
            ("era", False),
            ("era-python", False),
        ]
        assert all("is not a date" in a.outcome for a in record.attempts[1:])
    else:
        assert era.name == "era" and era.exclude_newer == bound
        assert {s.exclude_newer for s in record.steps} == {bound}
