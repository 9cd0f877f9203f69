"""``reprobridge references add``: recorded runs become reference observations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from authoring_support import reprobridge

from reprobridge_sdk import api
from reprobridge_sdk.audit import audit
from reprobridge_sdk.authoring.references import ReferencesError, add_references
from reprobridge_sdk.authoring.scaffold import InitOptions, experiment_value, scaffold
from reprobridge_sdk.digest import file_sha256


def _runs(root: Path, times: int) -> list[Path]:
    """Run the scored launcher (seed 1) ``times`` times into reference-runs/."""
    for _ in range(times):
        done = reprobridge(
            "run",
            str(root),
            "scored",
            "--env",
            "current",
            "--runs-dir",
            str(root / "reference-runs"),
            cwd=root,
        )
        assert done.returncode == 0, done.stderr
    return sorted(p for p in (root / "reference-runs").iterdir() if (p / "record.json").is_file())


def test_runs_become_observations_with_provenance(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    runs = _runs(root, 3)
    done = reprobridge(
        "references",
        "add",
        *map(str, runs),
        "-C",
        str(root),
        "--replace",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    added = json.loads(done.stdout)["added"]["main-result"]
    assert [o["value"] for o in added] == [experiment_value(1)] * 3
    art = api.load(root)
    observations = art.manifest.tasks[0].reference.observations
    assert [o.value for o in observations] == [experiment_value(1)] * 3
    first = observations[0].provenance
    record = json.loads((runs[0] / "record.json").read_text("utf-8"))
    assert first.run == record["run_id"]
    assert first.record_sha256 == file_sha256(runs[0] / "record.json")
    assert first.code_tree_digest == art.manifest.codebase.tree_digest
    assert first.lock_digest == record["lock_digest"]
    assert first.source == "reference run"
    assert art.manifest.rra_version == "1.1"  # provenance digests are format 1.1 fields
    assert not [f for f in art.validate().findings if f.severity.value == "error"]
    # adding the same runs again adds nothing: each run is cited once
    again = add_references(root, [str(root / "reference-runs")])
    assert again.added == {"main-result": []}
    assert len(again.skipped) == 3
    # the auditor notes when the audited runs are the reference runs
    result = audit(root, [str(root / "reference-runs")])
    assert "A045" in [f.code for f in result.findings]
    fresh = _runs(root, 1)
    result = audit(root, [str(fresh[0].parent)])
    assert "A045" in [f.code for f in result.findings]  # the folder still holds them


def test_a_failed_run_is_c012_and_nothing_is_written(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    runs = _runs(root, 1)
    record = runs[0] / "record.json"
    data = json.loads(record.read_text("utf-8"))
    data["measurements"][0]["value"] = 0.5  # a value the log does not support
    record.write_text(json.dumps(data), "utf-8")
    before = (root / "rra.yaml").read_bytes()
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(runs[0])])
    assert [f.code for f in caught.value.findings] == ["C012"]
    assert (root / "rra.yaml").read_bytes() == before


def test_a_run_on_other_code_is_c013(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    runs = _runs(root, 1)
    (root / "code" / "experiment.py").write_text("print('changed')\n", "utf-8")
    art = api.load(root)
    art.refresh_digests()
    art.save()
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(runs[0])])
    assert [f.code for f in caught.value.findings] == ["C013"]


def test_run_refuses_a_manifest_with_errors_unless_no_validate(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    manifest = root / "rra.yaml"
    manifest.write_text(
        manifest.read_text("utf-8").replace("- task: main-result", "- task: no-such-task"),
        "utf-8",
    )
    refused = reprobridge("run", str(root), "smoke", "--env", "current", cwd=tmp_path)
    assert refused.returncode == 1
    assert "R002" in refused.stdout
    assert not (root / "runs").exists()
    forced = reprobridge(
        "run", str(root), "smoke", "--env", "current", "--no-validate", cwd=tmp_path
    )
    assert forced.returncode == 0, forced.stderr
    assert len(list((root / "runs").glob("*/record.json"))) == 1


def test_an_unknown_task_is_c014_and_a_statistic_over_seeds_c015(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    runs = _runs(root, 1)
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(runs[0])], task="nope")
    assert [(f.code, f.path) for f in caught.value.findings] == [("C014", "/tasks")]
    art = api.load(root)
    art.manifest.tasks[0].statistic.seeds = 2
    art.save()
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(runs[0])])
    assert [(f.code, f.path) for f in caught.value.findings] == [("C015", "/tasks/0/statistic")]


def test_implausible_references_are_warnings_of_references_add(tmp_path: Path) -> None:
    """A published value outside the unit's domain (a percentage in a task whose unit says
    fraction): written, with the audit's A080 as a warning (spec plausible-references)."""
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    art = api.load(root)
    art.manifest.tasks[0].published.value = 89.7
    art.manifest.tasks[0].published.unit = "fraction"
    art.save()
    runs = _runs(root, 2)
    done = reprobridge(
        "references",
        "add",
        *map(str, runs),
        "-C",
        str(root),
        "--replace",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["added"]["main-result"]) == 2
    assert [(w["code"], w["severity"], w["path"]) for w in report["warnings"]] == [
        ("A080", "warning", "/tasks/0/published")
    ]
    # stdout holds the JSON alone: the warning goes to stderr, in the one line shape
    assert re.search(r": A080 warning .*\[/tasks/0/published\]$", done.stderr, re.MULTILINE)
    result = audit(root, curation=True)  # the audit holds it for an error
    assert [f.severity for f in result.findings if f.code == "A080"] == ["error"]
