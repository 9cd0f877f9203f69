"""Identical runs of one seed propose ``deterministic: true`` (C027, spec
authoring.md#same-seed-runs), in ``references add`` and in ``check``.

Real runs through the runner: the scaffold's experiment (its log is the seed's value alone)
for ``references add``, the toy study (it builds offline in seconds) for ``check``. Both are
deterministic, so two runs of one seed write the same bytes. Nothing is proposed when a pair
differs, when the launcher is declared deterministic, for a copy, or for identical runs of
*different* seeds (the audit's A079).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from authoring_support import reprobridge
from toy_study import make_artifact

from reprobridge_sdk import api
from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.authoring.references import add_references
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.findings import Finding
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.run import run

SEEDS = [1, 2, 3]


def _artifact(root: Path, *, deterministic: bool = False, seed_free: bool = False) -> Path:
    """The scaffold, its task the mean over :data:`SEEDS`, no reference yet; ``seed_free``:
    its experiment prints one value whatever the seed."""
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    if seed_free:
        script = root / "code" / "experiment.py"
        text = script.read_text()
        assert "random.Random(seed)" in text
        script.write_text(text.replace("random.Random(seed)", "random.Random(7)"))
    art = api.load(root)
    art.manifest.rra_version = "1.1"
    art.manifest.codebase.tree_digest = tree_digest(root / "code")
    task = art.manifest.tasks[0]
    task.statistic.seeds = len(SEEDS)
    task.reference.observations = []
    scored = art.manifest.launcher("scored")
    assert scored is not None
    scored.seeds = list(SEEDS)
    scored.deterministic = deterministic
    art.save()
    return root


def _repetition(root: Path, name: str) -> Path:
    target = root / "reps" / name
    summary = run(root, ["scored"], env_mode="current", runs_dir=target)
    assert all(r.status == "succeeded" for r in summary.results)
    return target


def _records(rep: Path) -> dict[int, dict[str, Any]]:
    """Seed -> the record of that seed's run in the repetition ``rep``."""
    found = (json.loads(p.read_text()) for p in rep.rglob(RECORD_NAME))
    return {data["seed"]: data for data in found}


def _scored_index(root: Path) -> int:
    return [launcher.id for launcher in api.load(root).manifest.launchers].index("scored")


def _only_c027(found: list[Finding]) -> Finding:
    [item] = found
    assert (item.code, item.severity.value) == ("C027", "info")
    return item


def test_two_identical_repetitions_propose_deterministic(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    reps = [_repetition(root, str(i)) for i in range(2)]
    done = reprobridge(
        "references", "add", *map(str, reps), "-C", str(root), "--format", "json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    [item] = json.loads(done.stdout)["suggestions"]
    assert (item["code"], item["severity"]) == ("C027", "info")
    assert item["path"] == f"/launchers/{_scored_index(root)}/deterministic"
    assert item["file"] == str(root / "rra.yaml")
    first = [_records(rep)[SEEDS[0]]["run_id"] for rep in reps]
    message = item["message"]
    assert f"runs {first[0]} and {first[1]} of seed {SEEDS[0]} " in message
    assert "main-result" in message and "so did the runs of seed(s) 2, 3" in message
    assert "interval half-width" in message  # what declaring it would change
    # the text output shows it in the one finding line shape
    again = reprobridge(
        "references", "add", *map(str, reps), "-C", str(root), "--replace", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert f"rra.yaml: C027 info launcher scored: runs {first[0]}" in again.stdout


def test_a_launcher_declared_deterministic_gets_no_proposal(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", deterministic=True)
    reps = [_repetition(root, str(i)) for i in range(2)]
    assert add_references(root, [str(r) for r in reps]).suggestions == []


def test_the_same_value_with_another_log_is_no_proposal(tmp_path: Path) -> None:
    """One seed's second run wrote one more line: its value is the same, its bytes are not."""
    root = _artifact(tmp_path / "art")
    reps = [_repetition(root, str(i)) for i in range(2)]
    [record_path] = [
        p for p in reps[1].rglob(RECORD_NAME) if json.loads(p.read_text())["seed"] == SEEDS[1]
    ]
    log = record_path.parent / "log.txt"
    log.write_text(log.read_text() + "checkpoint written\n")
    data = json.loads(record_path.read_text())
    data["log"].update(sha256=file_sha256(log), size=log.stat().st_size)
    record_path.write_text(json.dumps(data))
    result = add_references(root, [str(r) for r in reps])
    assert len(result.added["main-result"]) == 2  # both repetitions are good references
    assert result.suggestions == []


def test_a_copy_is_no_second_run(tmp_path: Path) -> None:
    """A repetition copied under new run ids (its records' times kept) proves nothing."""
    root = _artifact(tmp_path / "art")
    rep = _repetition(root, "0")
    copy = tmp_path / "copy"
    shutil.copytree(rep, copy)
    for path in copy.rglob(RECORD_NAME):
        data = json.loads(path.read_text())
        data["run_id"] += "-copy"
        path.write_text(json.dumps(data))
    result = add_references(root, [str(rep), str(copy)])
    assert len(result.added["main-result"]) == 2
    assert result.suggestions == []


def test_seeds_without_effect_are_a079_and_one_proposal_not_one_per_pair(tmp_path: Path) -> None:
    """A program whose value ignores its seed: within a repetition its three seeds are
    identical (the audit's A079), which proposes nothing; across two repetitions each seed
    repeats itself, which proposes deterministic once for the launcher."""
    root = _artifact(tmp_path / "art", seed_free=True)
    rep = _repetition(root, "0")
    assert len({json.dumps(d["log"]) for d in _records(rep).values()}) == 1  # identical
    assert add_references(root, [str(rep)]).suggestions == []
    result = add_references(root, [str(rep), str(_repetition(root, "1"))], replace=True)
    item = _only_c027(result.suggestions)
    assert f"of seed {SEEDS[0]} " in item.message


# --- check: the clean room's runs against the recorded ones ------------------------------


def _toy(root: Path, *, deterministic: bool = False) -> Path:
    make_artifact(root, version="1.1")
    if deterministic:
        path = root / "rra.yaml"
        data = yaml.safe_load(path.read_text())
        data["launchers"][1]["deterministic"] = True
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    run(root, ["smoke", "scored"], env_mode="current")
    return root


def test_check_proposes_deterministic_where_its_runs_repeat_the_recorded_ones(
    tmp_path: Path,
) -> None:
    """Through the command line: one C027 line per launcher, in the one finding shape."""
    root = _toy(tmp_path / "toy")
    done = reprobridge("check", str(root), "--scored", "--no-sandbox", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    found = [line for line in done.stdout.splitlines() if " C027 " in line]
    assert len(found) == 2, done.stdout
    for index, line in enumerate(found):
        assert line.startswith("rra.yaml: C027 info launcher ")
        assert line.endswith(f"[/launchers/{index}/deterministic]")
    assert " of seed 0 " in found[0] and "so did the runs of seed(s) 1, 2" in found[0]


def test_check_proposes_nothing_for_a_declared_or_a_differing_launcher(tmp_path: Path) -> None:
    """scored is declared deterministic; smoke's recorded run of seed 0 wrote another log
    (its record agrees), so the clean room's run of seed 0 differs from it: one differing
    seed is enough, though seeds 1 and 2 repeat themselves."""
    root = _toy(tmp_path / "toy", deterministic=True)
    [smoke] = [p.parent for p in (root / "runs").glob(f"smoke-s0-*/{RECORD_NAME}")]
    log = smoke / "log.txt"
    log.write_text("warming up\n" + log.read_text())
    data = json.loads((smoke / RECORD_NAME).read_text())
    data["log"].update(sha256=file_sha256(log), size=log.stat().st_size)
    (smoke / RECORD_NAME).write_text(json.dumps(data))
    report = check(root, scored=True, sandbox=False, work_dir=tmp_path)
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    assert report.suggestions == []
    assert report.to_dict()["suggestions"] == []


def test_check_ignores_a_tampered_or_unreadable_recorded_run(tmp_path: Path) -> None:
    """A recorded run whose log was edited after its record (digests that no longer hold)
    and one whose record is not JSON take no part: no proposal from them, no traceback."""
    root = _toy(tmp_path / "toy")
    runs = sorted(p.parent for p in (root / "runs").rglob(RECORD_NAME))
    scored = [r for r in runs if "scored" in r.name]
    (scored[0] / "log.txt").write_text("edited\n")  # the record still names the old digest
    (scored[1] / RECORD_NAME).write_text("{ not json")
    shutil.rmtree(scored[2])
    for smoke in [r for r in runs if "smoke" in r.name]:
        (smoke / RECORD_NAME).unlink()  # run folders without their records
    report = check(root, sandbox=False, scored=True, work_dir=tmp_path)
    assert [s.name for s in report.steps][:2] == ["copy", "validate"]
    assert report.suggestions == []
