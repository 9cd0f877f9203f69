"""Planner: a claim over several seeds becomes a launcher of every seed and a statistic."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.intake import checkout, inventory
from reprobridge_sdk.agent.packager import manifest_launcher
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.model.build import PlanRecord

ZERO = "0" * 64


def _plan(repo: Path, claims_file: Path, tmp_path: Path, hints: dict[str, object]) -> PlanRecord:
    document = yaml.safe_load(claims_file.read_text("utf-8"))
    document["claims"][0]["hints"] = {**document["claims"][0].get("hints", {}), **hints}
    claims_file.write_text(yaml.safe_dump(document), "utf-8")
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    intake = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    return plan(claims, intake, root=dest, inputs_digest=ZERO)


def test_seeds_and_a_statistic_plan_every_seed_and_five_repetitions(
    raw_repo, tmp_path: Path
) -> None:
    record = _plan(*raw_repo("no-deps"), tmp_path, {"seeds": [3, 1, 3, 2], "statistic": "median"})
    smoke, scored = record.launchers
    assert (scored.seeds, scored.repeats) == ([3, 1, 2], 5)  # duplicates dropped, order kept
    assert smoke.seeds == [3]
    [claim] = record.claims
    assert (claim.status, claim.statistic) == ("planned", "median")
    assert manifest_launcher(scored)["seeds"] == [3, 1, 2]
    assert manifest_launcher(smoke)["seeds"] == [3]
    assert record.gate.passed and record.gate.findings == []


def test_seeds_without_a_statistic_are_b017_and_one_seed(raw_repo, tmp_path: Path) -> None:
    record = _plan(*raw_repo("no-deps"), tmp_path, {"seeds": [4, 5]})
    assert [(f.code, f.path) for f in record.gate.findings] == [("B017", "/claims/0/hints")]
    assert record.gate.passed  # a warning
    assert [item.seeds for item in record.launchers] == [[4], [4]]
    assert record.claims[0].statistic is None


def test_a_statistic_over_seeds_of_an_unseeded_script_waits_for_the_seed_option(
    raw_repo, tmp_path: Path
) -> None:
    """No B018 at planning: the scored launcher keeps every seed (no seed flag yet) and the
    claim no statistic, until the Reproducer's seed option passes its gate and it re-plans
    (or gives B018)."""
    record = _plan(*raw_repo("unseeded"), tmp_path, {"seeds": [0, 1, 2], "statistic": "mean"})
    assert record.gate.passed and record.gate.findings == []
    assert record.claims[0].statistic is None
    assert [(item.scope, item.seed_flag, item.seeds) for item in record.launchers] == [
        ("smoke", None, [0]),
        ("scored", None, [0, 1, 2]),
    ]


def test_one_seed_with_a_statistic_stays_a_one_seed_plan(raw_repo, tmp_path: Path) -> None:
    record = _plan(*raw_repo("no-deps"), tmp_path, {"seeds": [7], "statistic": "mean"})
    assert record.claims[0].statistic is None
    assert [item.seeds for item in record.launchers] == [[7], [7]]
    assert record.gate.findings == []


def test_an_unknown_statistic_in_a_claims_file_is_b001_at_the_hint(tmp_path: Path) -> None:
    from reprobridge_sdk.agent.claims import ClaimsError

    path = tmp_path / "claims.yaml"
    path.write_text(
        'claims_version: "1.0"\n'
        "paper: {title: A paper}\n"
        "claims:\n"
        "  - id: top1\n"
        "    measured: accuracy\n"
        "    value: 0.9\n"
        "    direction: higher\n"
        "    hints: {seeds: [0, 1], statistic: average}\n",
        "utf-8",
    )
    with pytest.raises(ClaimsError) as caught:
        load_claims(path)
    assert {(f.code, f.path) for f in caught.value.findings} == {
        ("B001", "/claims/0/hints/statistic")
    }
