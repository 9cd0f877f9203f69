"""The bundled example artifact examples/digits-logreg: well formed, consistent and honest.

These tests read the real artifact in the repository. They check what the example claims:
digests match the files, the lock is portable and pinned, the shipped samples replay to the
expected values, the guide is up to date, and every published value lies inside the
compatibility interval of its five reference observations.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    loaded = yaml.safe_load((EXAMPLE / "rra.yaml").read_text("utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_manifest_loads_as_typed_model() -> None:
    from reprobridge_sdk import load

    artifact = load(EXAMPLE)
    manifest = artifact.manifest
    assert manifest.artifact.id == "digits-logreg"
    assert [t.id for t in manifest.tasks] == ["logreg-accuracy", "logreg-macro-f1", "knn-accuracy"]
    assert {launcher.scope for launcher in manifest.launchers} == {"smoke", "scored"}
    assert manifest.launcher("scored").seeds == [0, 1, 2, 3, 4]


def test_manifest_matches_committed_schema(data: dict[str, Any], repo_root: Path) -> None:
    import jsonschema

    schema = json.loads((repo_root / "schemas" / "rra-1.0.schema.json").read_text("utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert [e.json_path for e in errors] == []


def test_code_tree_digest_matches(data: dict[str, Any]) -> None:
    from reprobridge_sdk.digest import tree_digest

    code = EXAMPLE / data["codebase"]["refined"]["path"]
    assert tree_digest(code) == data["codebase"]["tree_digest"]


def test_upstream_commit_is_full_and_holds_the_original_script(data: dict[str, Any]) -> None:
    upstream = data["codebase"]["upstream"]
    assert len(upstream["commit"]) == 40
    # The upstream repository is this repository, seen from the artifact directory.
    assert (EXAMPLE / upstream["repository"]).resolve() == EXAMPLE.parents[1]


def _by_name(entries: Any) -> dict[str, list[Any]]:
    """Lock entries grouped by normalised name (a name may repeat under different markers)."""
    groups: dict[str, list[Any]] = {}
    for entry in entries:
        groups.setdefault(entry.name, []).append(entry)
    return groups


def test_lock_digest_matches_and_lock_is_clean(data: dict[str, Any]) -> None:
    from reprobridge_sdk.digest import file_sha256
    from reprobridge_sdk.locks.lockfile import check_lock, read_lock

    lock = data["environment"]["lock"]
    path = EXAMPLE / lock["path"]
    assert file_sha256(path) == lock["sha256"]
    assert [f.code for f in check_lock(path, lock["format"])] == []
    pinned = _by_name(read_lock(path, lock["format"]).entries)
    for name in ("numpy", "scipy", "scikit-learn"):
        entries = pinned[name]
        assert len(entries) == 1
        assert entries[0].hashes, name


def test_lock_has_no_machine_local_locations(data: dict[str, Any]) -> None:
    text = (EXAMPLE / data["environment"]["lock"]["path"]).read_text("utf-8")
    for marker in ("file:", "--find-links", "--index-url", "--extra-index-url", "/opt/", "/home/"):
        assert marker not in text


def test_dataset_digest_matches_the_file_in_the_locked_package(data: dict[str, Any]) -> None:
    """The declared dataset is the file the installed scikit-learn ships (the file has been
    the same across releases; the test extra installs scikit-learn)."""
    from importlib.metadata import distribution

    from reprobridge_sdk.digest import file_sha256

    dist = distribution("scikit-learn")
    (item,) = data["environment"]["data"]
    assert item["source"] == {"package": "scikit-learn"}
    files = [f for f in dist.files or [] if f.name == "digits.csv.gz"]
    assert len(files) == 1
    path = Path(str(dist.locate_file(files[0])))
    assert path.stat().st_size == item["size"]
    assert file_sha256(path) == item["sha256"]


def test_data_verify_finds_the_dataset_in_the_installed_package() -> None:
    from reprobridge_sdk.env import verify_data

    result = verify_data(EXAMPLE)
    assert [f.code for f in result.findings] == []
    assert result.present == ["digits"]
    assert result.needs_user == []


@pytest.mark.parametrize("launcher_id", ["smoke", "scored"])
def test_samples_replay_to_expected_values(data: dict[str, Any], launcher_id: str) -> None:
    from reprobridge_sdk import extract_value
    from reprobridge_sdk.extract.extraction import apply_transform

    (launcher,) = [item for item in data["launchers"] if item["id"] == launcher_id]
    (sample,) = launcher["samples"]
    outputs = {key: EXAMPLE / value for key, value in sample["outputs"].items()}
    got = {}
    for measurement in launcher["measurements"]:
        extracted = extract_value(
            measurement["extract"],
            log=EXAMPLE / sample["log"],
            files_base=EXAMPLE / launcher["workdir"],
            outputs=outputs,
            context={"seed": sample["seed"], "run_dir": str(EXAMPLE / "samples")},
        )
        got[measurement["task"]] = apply_transform(extracted.value, measurement.get("transform"))
    assert got.keys() == sample["expected"].keys()
    for task, value in got.items():
        assert math.isclose(value, sample["expected"][task], rel_tol=1e-12), task


def test_every_task_has_five_references_and_published_inside_interval(
    data: dict[str, Any],
) -> None:
    from reprobridge_sdk.audit import compatibility_interval
    from reprobridge_sdk.audit.interval import is_stable

    for task in data["tasks"]:
        values = [obs["value"] for obs in task["reference"]["observations"]]
        assert len(values) == 5, task["id"]
        interval = compatibility_interval(values)
        published = task["published"]["value"]
        assert interval.contains(published), (task["id"], interval.low, interval.high)
        assert is_stable(values, published) is True, task["id"]
        runs = {obs["provenance"]["run"] for obs in task["reference"]["observations"]}
        assert len(runs) == 5, task["id"]


def test_guide_records_are_rendered(data: dict[str, Any]) -> None:
    from reprobridge_sdk.guide import check_guide

    assert [f.code for f in check_guide(EXAMPLE, data["guide"])] == []


def test_guide_has_a_change_of_every_kind(data: dict[str, Any]) -> None:
    guide = data["guide"]
    kinds = {change["kind"] for change in guide["changes"]}
    assert kinds == {"execution-fix", "correctness-fix", "convenience"}
    for key in ("ambiguities", "discrepancies", "pitfalls", "open_choices"):
        assert guide[key], key


# --------------------------------------------------------------------------- validate, run, audit


def test_example_validates_clean() -> None:
    from reprobridge_sdk import validate

    result = validate(EXAMPLE, strict=True)
    assert [(f.code, f.path) for f in result.findings] == []


def test_cli_validates_and_replays_samples_as_the_readme_says() -> None:
    import subprocess
    import sys

    cli = [sys.executable, "-m", "reprobridge_sdk"]
    validate = subprocess.run(
        [*cli, "validate", str(EXAMPLE), "--strict", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert validate.returncode == 0
    report = json.loads(validate.stdout)
    assert [a["findings"] for a in report["artifacts"]] == [[]]

    extract = subprocess.run(
        [*cli, "extract", str(EXAMPLE), "--samples", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert extract.returncode == 0
    rows = json.loads(extract.stdout)["samples"]
    assert sorted((r["launcher"], r["task"], r["ok"]) for r in rows) == sorted(
        (launcher, task, True)
        for launcher in ("smoke", "scored")
        for task in ("logreg-accuracy", "logreg-macro-f1", "knn-accuracy")
    )


def _locked_versions(data: dict[str, Any]) -> dict[str, str]:
    from reprobridge_sdk.locks.lockfile import read_lock

    lock = data["environment"]["lock"]
    entries = _by_name(read_lock(EXAMPLE / lock["path"], lock["format"]).entries)
    return {name: str(items[0].version) for name, items in entries.items()}


def _current_matches_lock(data: dict[str, Any]) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    locked = _locked_versions(data)
    try:
        return all(version(name) == locked[name] for name in ("numpy", "scipy", "scikit-learn"))
    except PackageNotFoundError:
        return False


def test_smoke_launcher_runs_in_current_interpreter(data: dict[str, Any], tmp_path: Path) -> None:
    from reprobridge_sdk.audit import audit
    from reprobridge_sdk.digest import tree_digest
    from reprobridge_sdk.run import run

    summary = run(EXAMPLE, ["smoke"], env_mode="current", runs_dir=tmp_path)
    assert summary.exit_code == 0
    (result,) = summary.results
    record = result.record
    assert (record.status, record.scope, record.seed) == ("succeeded", "smoke", 0)
    assert [hit.id for hit in record.landmarks] == [
        "data-loaded",
        "split",
        "logreg-fitted",
        "knn-fitted",
        "metrics-written",
        "done",
    ]
    assert [o.id for o in record.outputs] == ["metrics"]
    assert record.outputs[0].preexisting is False
    assert record.code_tree_digest == data["codebase"]["tree_digest"]
    assert record.lock_digest == data["environment"]["lock"]["sha256"]
    values = {m.task: m.value for m in record.measurements}
    (sample,) = next(item for item in data["launchers"] if item["id"] == "smoke")["samples"]
    assert values.keys() == sample["expected"].keys()
    if _current_matches_lock(data):
        # Deterministic per seed: the locked versions give the shipped sample's values.
        for task, value in values.items():
            assert value is not None
            assert math.isclose(value, sample["expected"][task], rel_tol=1e-12), task
    else:  # other library versions: still a sane accuracy in percent
        assert all(v is not None and 80.0 <= v <= 100.0 for v in values.values())
    # The run wrote nothing into the artifact's code.
    assert tree_digest(EXAMPLE / "code") == data["codebase"]["tree_digest"]

    # Smoke evidence is valid but only ever toy for the auditor.
    report = audit(EXAMPLE, [str(tmp_path)])
    assert [f.code for f in report.findings] == []
    verdicts = {task.id: [a.verdict for a in task.attempts] for task in report.tasks}
    assert verdicts == {task["id"]: ["toy"] for task in data["tasks"]}
    assert report.badges.functional is False  # the scored launcher has not run


@pytest.mark.slow
def test_scored_launcher_in_locked_environment_audits_compatible(
    data: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole path from a fresh machine: build the environment from the hashed lock
    (real wheels from the public index), run the scored launcher over seeds 0-4 in it, and
    audit the evidence against the five reference observations."""
    from reprobridge_sdk.audit import audit
    from reprobridge_sdk.env import ensure_environment
    from reprobridge_sdk.run import read_snapshot, run

    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))
    python = ensure_environment(EXAMPLE)
    assert python.is_file()
    assert str(python).startswith(str(tmp_path / "cache"))

    runs = tmp_path / "runs"
    summary = run(EXAMPLE, ["scored"], env_mode="cached", runs_dir=runs, jobs=2)
    assert summary.exit_code == 0
    assert sorted(r.record.seed or 0 for r in summary.results) == [0, 1, 2, 3, 4]
    assert all(r.record.seed is not None for r in summary.results)
    for result in summary.results:
        record = result.record
        assert record.env_mode == "cached"
        snapshot = read_snapshot(result.run_dir, record)
        assert snapshot is not None
        assert snapshot.executable.startswith(str(tmp_path / "cache"))
        installed = {d.name.lower(): d.version for d in snapshot.distributions}
        for name, version in _locked_versions(data).items():
            assert installed[name] == version, name
        assert record.drift == []

    report = audit(EXAMPLE, [str(runs)])
    assert report.findings == []
    by_task = {task.id: task for task in report.tasks}
    for task in data["tasks"]:
        (attempt,) = by_task[task["id"]].attempts
        assert attempt.verdict == "compatible", task["id"]
        assert attempt.icml == "verified"
        assert attempt.seeds == [0, 1, 2, 3, 4]
        assert attempt.value is not None
        # Deterministic in the locked environment: the published value, unrounded.
        assert round(attempt.value, 1) == task["published"]["value"]
    # the authors' runs, not re-executed: consistent, not yet reproduced
    assert report.badges.results == "consistent"
