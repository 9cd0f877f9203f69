"""validate clean <=> everything accepts: load(), the models, run --dry-run and the auditor.

Law, over every conformance case and over hypothesis-mutated manifests (among them documents
of a newer minor version with unknown keys and values, read as spec "forward-compatibility"
says):

* ``validate()`` reports no error  =>  ``load()`` (the models) accepts the manifest,
  ``dry_run`` prepares every run without a problem, and the auditor's artifact checks
  (``artifact_facts``) report no error;
* ``load()`` rejects  =>  ``validate()`` reported an error at each place ``load()`` names (the
  same JSON Pointer, or one inside the other);
* a run that cannot be prepared  =>  ``validate()`` reported an error under that launcher;
* the runner refuses the refined code (a patch series' ``code/`` in its way)  =>  the dry run
  and ``validate()`` report the same code at the same pointer with the same severity (C008,
  an error, at ``/codebase/refined``), all three from ``checkout_blocker``.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk import validate
from reprobridge_sdk.api import load
from reprobridge_sdk.audit.verify import artifact_facts
from reprobridge_sdk.authoring.codebase import import_code
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.checkout import CodebaseError
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Severity
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.run import run
from reprobridge_sdk.run.dryrun import dry_run

REPO = Path(__file__).resolve().parents[2]
CASES = sorted(path.parent for path in (REPO / "validators" / "cases").glob("*/rra.yaml"))


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _check(root: Path) -> None:
    report = validate(root)
    errors = [f for f in report.findings if f.severity == Severity.ERROR]
    try:
        artifact = load(root)
    except ArtifactError as exc:
        rejected = [f.path for f in exc.findings]
        assert errors, ("load() rejects what validate() accepts", rejected)
        for path in rejected:
            assert any(_related(path, f.path) for f in errors), (path, [f.path for f in errors])
        return
    launchers = [launcher.id for launcher in artifact.manifest.launchers]
    plan = dry_run(root, env_mode="current") if launchers else []
    triples = {(f.code, f.path, f.severity) for f in errors}
    for planned in plan:
        for refusal in planned.findings:
            assert (refusal.code, refusal.path, refusal.severity) in triples, (refusal, errors)
        if planned.problems:
            index = launchers.index(planned.launcher)
            where = f"/launchers/{index}"
            assert any(_related(where, f.path) for f in errors), (planned.problems, errors)
    if not errors:
        facts = artifact_facts(artifact)
        assert [f for f in facts.findings if f.severity == Severity.ERROR] == []


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_law_holds_on_every_conformance_case(case: Path) -> None:
    _check(case)


BASE = REPO / "validators" / "cases" / "crlf-line-endings"


@st.composite
def _mutations(draw: st.DrawFn) -> Any:
    data = load_document(BASE / "rra.yaml").data
    data = copy.deepcopy(data)
    launcher = data["launchers"][0]
    choice = draw(
        st.sampled_from(
            ["argv", "env", "output", "workdir", "seeds", "landmark", "timeout", "newer"]
        )
    )
    text = st.sampled_from(
        ["{seed}", "{{x}}", "{", "}", "{nope}", "{run_dir}/a", "{{{seed}}}", ".", "code", "x"]
    )
    if choice == "argv":
        launcher["argv"] = [*launcher["argv"], draw(text)]
    elif choice == "env":
        launcher["env"] = {"A": draw(text)}
    elif choice == "output":
        launcher["outputs"] = [{"id": "o", "path": draw(text)}]
    elif choice == "workdir":
        launcher["workdir"] = draw(st.sampled_from([".", "code", "missing", "code/../code"]))
    elif choice == "seeds":
        launcher["seeds"] = draw(st.lists(st.integers(-2, 2**40), max_size=3))
    elif choice == "landmark":
        pattern = draw(st.sampled_from(["epoch", "(a)\\1", "(?=x)", "(", "a{,2}", "\\d+"]))
        launcher["landmarks"] = [{"id": "l", "pattern": pattern}]
    elif choice == "newer":
        _newer_minor(data, draw)
    else:
        launcher["timeout"] = draw(st.sampled_from([1, 0, -1, 1.5, "1", None]))
    return data


#: Where a newer minor version may put what this version does not know: (pointer of an
#: object, key) for an unknown key, or the pointer of an enumeration value to replace.
_OBJECTS = ["", "/artifact", "/codebase", "/environment", "/environment/lock", "/tasks/0",
            "/tasks/0/statistic", "/launchers/0", "/launchers/0/measurements/0",
            "/launchers/0/measurements/0/extract", "/guide"]  # fmt: skip
_ENUMS = ["/tasks/0/direction", "/tasks/0/kind", "/tasks/0/statistic/aggregate",
          "/launchers/0/scope", "/launchers/0/measurements/0/aggregate",
          "/launchers/0/measurements/0/extract/kind", "/codebase/refined/kind",
          "/environment/lock/format", "/environment/data/0/access"]  # fmt: skip


def _at(data: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        data = data[int(token)] if isinstance(data, list) else data.setdefault(token, {})
    return data


def _newer_minor(data: Any, draw: st.DrawFn) -> None:
    """A newer minor version with unknown keys and values here and there (spec
    "forward-compatibility"): the law must hold for them as for any manifest."""
    data["rra_version"] = draw(st.sampled_from(["1.2", "1.9", "1.10"]))
    if draw(st.booleans()):
        data.setdefault("environment", {})["data"] = [
            {"id": "d", "source": {"url": "https://example.org/d"}, "access": "public"}
        ]
        data["launchers"][0]["data"] = ["d"]
    for pointer in draw(st.lists(st.sampled_from(_OBJECTS), max_size=3, unique=True)):
        _at(data, pointer)[draw(st.sampled_from(["later", "baseline", "x"]))] = 1
    for pointer in draw(st.lists(st.sampled_from(_ENUMS), max_size=2, unique=True)):
        parent, key = pointer.rsplit("/", 1)
        target = _at(data, parent) if parent else data
        if isinstance(target, dict):
            target[key] = draw(st.sampled_from(["later-value", "closer"]))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("differential") / "case"
    shutil.copytree(BASE, target)
    return target


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=_mutations())
def test_law_holds_on_generated_manifests(workspace: Path, data: Any) -> None:
    (workspace / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    _check(workspace)


@st.composite
def _newer_minor_documents(draw: st.DrawFn) -> Any:
    data = copy.deepcopy(load_document(BASE / "rra.yaml").data)
    _newer_minor(data, draw)
    return data


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=_newer_minor_documents())
def test_law_holds_on_generated_newer_minor_manifests(workspace: Path, data: Any) -> None:
    (workspace / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    _check(workspace)


# -- the working checkout of a patch series: validate, run and run --dry-run agree ----------

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=os.environ)


@pytest.fixture
def series(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An artifact whose refined code is a patch series on a real local git upstream, with
    its working checkout ``code/`` built (clean)."""
    for key, value in _GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))
    upstream = tmp_path / "paper"
    upstream.mkdir()
    _git("init", "-q", "-b", "main", cwd=upstream)
    (upstream / "train.py").write_text("print('accuracy: 0.9')\n", "utf-8")
    _git("add", "-A", cwd=upstream)
    _git("commit", "-q", "-m", "paper code", cwd=upstream)
    root = tmp_path / "artifact"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    import_code(root, str(upstream), as_="patches", force=True)
    return root


def _refusals(root: Path) -> dict[str, set[tuple[str, str, str]]]:
    """The C findings on the refined code, as validate, run --dry-run and run report them."""
    said = {
        "validate": {
            (f.code, f.path, f.severity.value)
            for f in validate(root).findings
            if f.code in ("C006", "C008")
        },
        "dry-run": {
            (f.code, f.path, f.severity.value)
            for planned in dry_run(root, env_mode="current")
            for f in planned.findings
        },
    }
    try:
        run(root, env_mode="current", runs_dir=root.parent / "runs")
    except CodebaseError as exc:
        said["run"] = {(f.code, f.path, f.severity.value) for f in exc.findings}
    else:
        said["run"] = set()
    return said


def test_a_series_checkout_with_unrecorded_changes_means_one_thing(series: Path) -> None:
    clean = _refusals(series)
    assert clean == {"validate": set(), "dry-run": set(), "run": set()}
    train = series / "code" / "train.py"
    train.write_text("print('accuracy: 0.99')  # unrecorded\n", "utf-8")
    refused = {("C008", "/codebase/refined", "error")}
    assert _refusals(series) == {"validate": refused, "dry-run": refused, "run": refused}
    assert train.read_text("utf-8") == "print('accuracy: 0.99')  # unrecorded\n"
    _check(series)
    # something that is not a checkout in the way: the same decision, the same report
    shutil.rmtree(series / "code")
    (series / "code").mkdir()
    (series / "code" / "notes.txt").write_text("mine\n", "utf-8")
    assert _refusals(series) == {"validate": refused, "dry-run": refused, "run": refused}
    assert (series / "code" / "notes.txt").read_text("utf-8") == "mine\n"
    _check(series)
