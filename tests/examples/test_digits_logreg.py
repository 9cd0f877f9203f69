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


def test_lock_digest_matches_and_lock_is_clean(data: dict[str, Any]) -> None:
    from reprobridge_sdk.digest import file_sha256
    from reprobridge_sdk.lockfile import check_lock, read_lock

    lock = data["environment"]["lock"]
    path = EXAMPLE / lock["path"]
    assert file_sha256(path) == lock["sha256"]
    assert [f.code for f in check_lock(path, lock["format"])] == []
    pinned = read_lock(path, lock["format"]).by_name()
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


@pytest.mark.parametrize("launcher_id", ["smoke", "scored"])
def test_samples_replay_to_expected_values(data: dict[str, Any], launcher_id: str) -> None:
    from reprobridge_sdk.extraction import apply_transform, extract_value

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
    from reprobridge_sdk.audit.interval import compatibility_interval, is_stable

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
