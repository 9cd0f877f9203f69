"""``references add`` for a task whose statistic is over several seeds: one repetition (an
attempt directory with one run per declared seed) is one observation, valued as the auditor
values that attempt."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest
from authoring_support import reprobridge
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk import api
from reprobridge_sdk.audit import audit
from reprobridge_sdk.authoring.references import ReferencesError, add_references
from reprobridge_sdk.authoring.scaffold import InitOptions, experiment_value, scaffold
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.run import run

SEEDS = [1, 2, 3]
#: Seeds whose scaffold values differ from every other's: the auditor takes two seeds with
#: byte-identical logs for a copied run (A038), and the scaffold prints only the value.
_VALUES = [experiment_value(seed) for seed in range(60)]
DISTINCT = [seed for seed, value in enumerate(_VALUES) if _VALUES.count(value) == 1]


def _artifact(root: Path, seeds: list[int] = SEEDS, how: str = "mean") -> Path:
    """The scaffold, its task reported as the ``how`` over ``seeds`` (no reference yet)."""
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    art = api.load(root)
    task = art.manifest.tasks[0]
    task.statistic.aggregate = how  # type: ignore[assignment]
    task.statistic.seeds = len(seeds)
    task.reference.observations = []
    scored = art.manifest.launcher("scored")
    assert scored is not None
    scored.seeds = list(seeds)
    scored.measurements[0].aggregate = how  # type: ignore[assignment]
    art.save()
    return root


def _repetition(root: Path, name: str, seeds: list[int] | None = None) -> Path:
    """Run the scored launcher over its seeds (or ``seeds``) into ``reps/<name>``."""
    target = root / "reps" / name
    summary = run(root, ["scored"], env_mode="current", runs_dir=target, seeds=seeds)
    assert all(r.status == "succeeded" for r in summary.results)
    return target


def test_each_repetition_is_one_observation_with_every_run_in_its_provenance(
    tmp_path: Path,
) -> None:
    root = _artifact(tmp_path / "art")
    reps = [_repetition(root, str(i)) for i in range(2)]
    done = reprobridge(
        "references",
        "add",
        *map(str, reps),
        "-C",
        str(root),
        "--replace",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    expected = statistics.fmean(experiment_value(seed) for seed in SEEDS)
    added = json.loads(done.stdout)["added"]["main-result"]
    assert [o["value"] for o in added] == [pytest.approx(expected)] * 2
    art = api.load(root)
    observations = art.manifest.tasks[0].reference.observations
    assert len(observations) == 2
    provenance = observations[0].provenance
    assert provenance.run is None and provenance.record_sha256 is None
    assert provenance.runs is not None
    assert [item.seed for item in provenance.runs] == SEEDS
    for item in provenance.runs:
        [directory] = [p.parent for p in reps[0].rglob("record.json") if item.run in p.parent.name]
        assert item.record_sha256 == file_sha256(directory / "record.json")
    assert provenance.code_tree_digest == art.manifest.codebase.tree_digest
    assert art.manifest.rra_version == "1.1"
    assert not [f for f in art.validate().findings if f.severity.value == "error"]
    # the audit of a fresh repetition is judged against these observations: compatible
    fresh = _repetition(root, "fresh")
    result = audit(root, [str(fresh)])
    [attempt] = result.tasks[0].attempts
    assert attempt.verdict == "compatible"
    # the auditor notes an audited run that a repetition cites (A045)
    result = audit(root, [str(reps[0])])
    assert "A045" in [f.code for f in result.findings]
    # the same repetition again is skipped, run by run
    again = add_references(root, [str(reps[1])])
    assert again.added == {"main-result": []}
    assert len(again.skipped) == len(SEEDS)


def test_a_single_run_for_a_task_over_seeds_is_c015_with_a_hint(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "1")
    one = sorted(p.parent for p in rep.rglob("record.json"))[0]
    before = (root / "rra.yaml").read_bytes()
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(one)])
    [item] = caught.value.findings
    assert (item.code, item.path) == ("C015", "/tasks/0/statistic")
    assert item.hint is not None and item.file.endswith("record.json")
    assert (root / "rra.yaml").read_bytes() == before


def test_a_repetition_without_every_declared_seed_is_c020(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "1", seeds=SEEDS[:2])
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(rep)])
    assert [(f.code, f.path, f.file) for f in caught.value.findings] == [
        ("C020", "/tasks/0/statistic/seeds", str(rep))
    ]


def test_a_seed_the_launcher_does_not_declare_is_c021_naming_the_run(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "1", seeds=[*SEEDS, 10])
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(rep)])
    [item] = caught.value.findings
    assert item.code == "C021"
    record = json.loads(Path(item.file).read_text("utf-8"))
    assert record["seed"] == 10


def test_a_seed_that_ran_twice_is_c022_naming_the_run(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "1")
    run(root, ["scored"], env_mode="current", runs_dir=rep, seeds=[2])
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(rep)])
    [item] = caught.value.findings
    assert item.code == "C022"
    assert json.loads(Path(item.file).read_text("utf-8"))["seed"] == 2


def test_a_run_in_two_repetitions_is_c023(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "1")
    copy = tmp_path / "copy"
    shutil.copytree(rep, copy)
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(rep), str(copy)])
    assert {f.code for f in caught.value.findings} == {"C023"}
    # a repetition that shares some runs with one already cited is C023 too
    add_references(root, [str(rep)])
    mixed = tmp_path / "mixed"
    shutil.copytree(rep, mixed)
    first = sorted(p.parent for p in mixed.rglob("record.json"))[0]
    shutil.rmtree(first)
    run(root, ["scored"], env_mode="current", runs_dir=mixed, seeds=[SEEDS[0]])
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(mixed)])
    assert [f.code for f in caught.value.findings] == ["C023", "C023"]


def test_a_one_seed_task_still_takes_every_run_of_a_folder(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", seeds=[1], how="single")
    rep = _repetition(root, "1", seeds=[1, 1])
    result = add_references(root, [str(rep)], replace=True)
    assert [o.value for o in result.added["main-result"]] == [experiment_value(1)] * 2
    assert all(o.provenance.run and not o.provenance.runs for o in result.added["main-result"])


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seeds=st.lists(st.sampled_from(DISTINCT), min_size=2, max_size=4, unique=True),
    how=st.sampled_from(["mean", "median", "min", "max", "std"]),
)
def test_the_observation_is_the_value_the_auditor_gives_the_attempt(
    tmp_path_factory: pytest.TempPathFactory, seeds: list[int], how: str
) -> None:
    base = tmp_path_factory.mktemp("law")
    root = _artifact(base / "art", seeds=seeds, how=how)
    rep = _repetition(root, "1")
    result = add_references(root, [str(rep)], replace=True)
    [observation] = result.added["main-result"]
    audited = audit(root, [str(rep)])
    [attempt] = audited.tasks[0].attempts
    assert attempt.value == observation.value
    assert attempt.seeds == [item.seed for item in observation.provenance.runs or ()]


def test_a_tampered_run_in_a_repetition_is_c012_and_nothing_is_written(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "1")
    record = sorted(rep.rglob("record.json"))[1]
    data = json.loads(record.read_text("utf-8"))
    data["measurements"][0]["value"] = 0.5  # a value its log does not support
    record.write_text(json.dumps(data), "utf-8")
    before = (root / "rra.yaml").read_bytes()
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(rep)])
    assert [(f.code, f.file) for f in caught.value.findings] == [("C012", str(record))]
    assert (root / "rra.yaml").read_bytes() == before


def test_a_repetition_of_another_launcher_gives_no_value_for_the_task(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    target = root / "reps" / "smoke"
    run(root, ["smoke"], env_mode="current", runs_dir=target)
    with pytest.raises(ReferencesError) as caught:
        add_references(root, [str(target)])
    assert [f.code for f in caught.value.findings] == ["C014"]
