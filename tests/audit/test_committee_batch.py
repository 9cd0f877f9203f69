"""A committee's batch, end to end, through the command line (issue: the committee's workflow).

One folder of submissions built from real runs of the toy study (the runner, a real ed25519
key), listed in one submissions file and audited by ``audit --table --submissions`` in a
subprocess, as a chair would: an honest signed and an honest unsigned submission, an edited
log, a fabricated run, deleted last runs, a uniform inflation of every recorded value by 0.95
points (re-signed by the key holder), hand-widened references and an untouched scaffold. Each
row is asserted by the mechanism that decides it. A second table run re-executes (``--rerun
all``): only then is the honest work "reproduced", and only then is the inflation caught.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from evidence_support import (
    consistent_edit,
    fabricate,
    forge_ledger_and_signatures,
    honest_runs,
    ledger_lines,
    write_ledger,
)
from rerun_support import edit_manifest, seeded_toy
from toy_study import observations

from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.run.ledger import ledger_head
from reprobridge_sdk.signing import ENVELOPE_NAME, generate_key
from reprobridge_sdk.signing.keys import public_line

CLI = [sys.executable, "-m", "reprobridge_sdk", "audit", "--table", "--submissions"]
SEEDS = [0, 1, 2, 3, 4]
INFLATION = 0.95
#: References whose interval (half-width about 1.39 around 90.1) is wider than the inflation:
#: within the half-width, an inflated run is caught by re-execution because the toy gives one
#: value per seed (the spread of its run executed twice is 0), and the sample by the shift test.
REFERENCES = [88.6, 89.6, 90.1, 90.6, 91.6]
ROWS = [
    "p01-signed",
    "p02-unsigned",
    "p03-edited-log",
    "p04-fabricated",
    "p05-deleted",
    "p06-inflated",
    "p07-widened",
    "p08-scaffold",
]


def _widen(data: dict[str, Any]) -> None:
    """References widened by hand, like [72.8, 111.4] for a percentage."""
    task = data["tasks"][0]
    task["published"] = {"value": 92.1, "unit": "%"}
    task["reference"]["observations"] = observations([85.0, 99.0, 92.0, 88.0, 98.0])


def _honest_template(base: Path) -> Path:
    root = seeded_toy(base / "toy", seeds=len(SEEDS))

    def references(data: dict[str, Any]) -> None:
        data["tasks"][0]["reference"]["observations"] = observations(REFERENCES)

    edit_manifest(root, references)
    return root


def _copy(template: Path, folder: Path, name: str) -> Path:
    target = folder / name
    shutil.copytree(template, target)
    return target


def _build(folder: Path, template: Path) -> str:
    """The submissions beside the honest one; the head the deleted one was submitted with."""
    unsigned = _copy(template, folder, "unsigned")
    for envelope in unsigned.glob(f"runs/*/{ENVELOPE_NAME}"):
        envelope.unlink()
    edited = _copy(template, folder, "edited-log")
    log = edited / "runs" / ledger_lines(edited / "runs")[0]["run_id"] / "log.txt"
    text = log.read_text()
    assert "test accuracy: 90.0000" in text
    log.write_text(text.replace("test accuracy: 90.0000", "test accuracy: 90.1000"))
    fabricated = _copy(template, folder, "fabricated")
    first = fabricated / "runs" / ledger_lines(fabricated / "runs")[0]["run_id"]
    fabricate(first, fabricated / "runs" / "scored-s0-forged", accuracy=95.0)
    deleted = _copy(template, folder, "deleted")
    runs = deleted / "runs"
    submitted = ledger_head(runs)
    entries = ledger_lines(runs)
    shutil.rmtree(runs / entries[-1]["run_id"])  # the last run and its entry: a clean cut
    write_ledger(runs, entries[:-1], rechain=False)
    inflated = _copy(template, folder, "inflated")
    for entry in ledger_lines(inflated / "runs"):
        run_dir = inflated / "runs" / entry["run_id"]
        record = json.loads((run_dir / "record.json").read_text())
        consistent_edit(run_dir, accuracy=round(record["measurements"][0]["value"] + INFLATION, 4))
    edit_manifest(_copy(template, folder, "widened"), _widen)
    scaffold(folder / "scaffold", InitOptions(id="untouched", title="Untouched"))
    return submitted


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committee's folder, its KEYS (alice, an author) and two submissions files: every
    row, and the rows the committee re-executes."""
    base = tmp_path_factory.mktemp("committee-batch")
    template = _honest_template(base / "template")
    _raw, alice = generate_key()
    honest_runs(template, "scored", SEEDS, alice)
    folder = base / "batch"
    folder.mkdir()
    (folder / "KEYS").write_text(f"{public_line('alice', alice)}\n")
    shutil.copytree(template, folder / "signed")
    submitted = _build(folder, template)
    forge_ledger_and_signatures(folder / "inflated" / "runs", alice)
    head = '[defaults]\ntrust = { keys = "KEYS", signers = ["alice"] }\n'
    entries = {
        "p01-signed": 'path = "signed"\n',
        "p02-unsigned": 'path = "unsigned"\ntrust = { unsigned = true }\n',
        "p03-edited-log": 'path = "edited-log"\n',
        "p04-fabricated": 'path = "fabricated"\n',
        "p05-deleted": f'path = "deleted"\nexpect_head = "{submitted}"\n',
        "p06-inflated": 'path = "inflated"\n',
        "p07-widened": 'path = "widened"\n',
        "p08-scaffold": 'path = "scaffold"\ntrust = { unsigned = true }\n',
    }

    def write(name: str, ids: list[str]) -> None:
        rows = "".join(f'\n[[submission]]\nid = "{i}"\n{entries[i]}' for i in ids)
        (folder / name).write_text(f'batch_version = "1.0"\n\n{head}{rows}')

    write("submissions.toml", ROWS)
    write("rerun.toml", ["p01-signed", "p02-unsigned", "p06-inflated", "p08-scaffold"])
    write("scaffold.toml", ["p08-scaffold"])
    return folder


def _cli(batch: Path, name: str, *options: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*CLI, str(batch / name), *options],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr  # the batch holds forgeries
    return done


@pytest.fixture(scope="module")
def report(batch: Path) -> dict[str, Any]:
    """The JSON report of the one table run over every submission."""
    report = json.loads(_cli(batch, "submissions.toml", "--format", "json").stdout)
    assert [row["label"] for row in report["rows"]] == ROWS
    return report


@pytest.fixture(scope="module")
def table(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["label"]: row for row in report["rows"]}


@pytest.fixture(scope="module")
def reran_done(batch: Path) -> subprocess.CompletedProcess[str]:
    return _cli(
        batch,
        "rerun.toml",
        "--format",
        "json",
        "--rerun",
        "all",
        "--rerun-env",
        "current",
        "--no-rerun-sandbox",  # the toy writes into the artifact (see test_rerun.py)
    )


@pytest.fixture(scope="module")
def reran(reran_done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {row["label"]: row for row in json.loads(reran_done.stdout)["rows"]}


def test_the_junit_table_carries_evidence_and_re_execution(batch: Path) -> None:
    done = _cli(
        batch,
        "rerun.toml",
        "--format",
        "junit",
        "--rerun",
        "all",
        "--rerun-env",
        "current",
        "--no-rerun-sandbox",
    )
    suites = {s.get("name"): s for s in ET.fromstring(done.stdout).iter("testsuite")}
    assert list(suites) == ["p01-signed", "p02-unsigned", "p06-inflated", "p08-scaffold"]

    def props(element: ET.Element) -> dict[str, str | None]:
        found = element.find("properties")
        assert found is not None
        return {p.get("name"): p.get("value") for p in found.iter("property")}

    signed = props(suites["p01-signed"])
    assert (signed["evidence"], signed["reran"], signed["rerun_mismatches"]) == ("signed", "5", "0")
    assert signed["committee"] == "5 run(s), 5 re-executed, 0 mismatched"
    [case] = suites["p01-signed"].iter("testcase")
    assert props(case)["rerun"] == "5 re-executed, 5 held, 0 did not, largest difference 0"
    assert props(case)["shift"] == "p = 1 over 5 runs: no shift"
    inflated = props(suites["p06-inflated"])
    assert inflated["evidence"] == "tampered"
    [case] = suites["p06-inflated"].iter("testcase")
    assert (props(case)["shift"] or "").endswith("over 5 runs: shifted")
    assert props(suites["p02-unsigned"])["evidence"] == "unsigned"


def test_re_execution_prints_its_progress_on_stderr(
    reran_done: subprocess.CompletedProcess[str],
) -> None:
    """A line before the first run and one after each, naming the table's row first (the
    finding line's shape), with the count, the run just done and its task, and the time
    left."""
    lines = [ln for ln in reran_done.stderr.splitlines() if ": re-executing " in ln]
    rows = [ln.split(": re-executing ", 1)[0] for ln in lines]
    assert list(dict.fromkeys(rows)) == ["p01-signed", "p02-unsigned", "p06-inflated"]
    after = [ln for ln in lines if ": 0/" not in ln]  # a line after each run names it
    assert all(re.search(r"runs \(last [^ ]+( again)?: task [^)]+\), ", ln) for ln in after), lines
    # every run, and the first once more (the repeat that measures the same-seed spread)
    total = len(SEEDS) + 1
    assert sum(" again: " in ln for ln in lines) == 3
    counts = [re.search(r": (\d+)/(\d+) runs", ln) for ln in lines]
    assert all(counts), lines
    seen = [(int(m.group(1)), int(m.group(2))) for m in counts if m]
    # three honest or inflated rows re-execute every run; the scaffold has none
    assert seen == [(i, total) for i in range(total + 1)] * 3
    assert all("left" in ln for ln in lines[1:total])
    assert lines[total].endswith(", done")
    assert not any(": re-executing " in ln for ln in reran_done.stdout.splitlines())


def _codes(row: dict[str, Any]) -> set[str]:
    codes = {f["code"] for f in row["findings"]}
    codes.update(claim["code"] for claim in row["claims"] if claim["code"])
    return codes


def _earned(row: dict[str, Any]) -> set[str]:
    badges = row["badges"] or {}
    return {b for b in ("available", "functional", "reproduced", "reusable") if badges.get(b)}


def test_honest_signed_passes_consistent_not_reproduced(table: dict[str, dict[str, Any]]) -> None:
    row = table["p01-signed"]
    assert (row["status"], row["evidence"], row["invalid_runs"]) == ("passed", "signed", 0)
    assert row["submission"]["trust"] == "signed by KEYS (alice)"
    assert _earned(row) == {"functional"}  # not reproduced: the authors' runs alone
    assert row["badges"]["results"] == "consistent"
    withheld = {
        badge: {r["code"] for r in reasons} for badge, reasons in row["badges"]["reasons"].items()
    }
    assert withheld == {"available": {"A085"}, "reusable": {"A086"}, "reproduced": {"A084"}}
    assert [c["icml"] for c in row["claims"]] == ["verified"]


def test_honest_unsigned_under_its_policy_is_no_evidence_alarm(
    table: dict[str, dict[str, Any]],
) -> None:
    row = table["p02-unsigned"]
    assert (row["status"], row["evidence"], row["invalid_runs"]) == ("passed", "unsigned", 0)
    assert row["submission"]["trust"] == "unsigned allowed"
    assert all(c["verdict"] != "invalid-evidence" for c in row["claims"])
    assert "reproduced" not in _earned(row)
    assert row["badges"]["results"] == "consistent"


@pytest.mark.parametrize(
    ("label", "code"),
    [
        ("p03-edited-log", "A004"),  # the log is not the one recorded
        ("p04-fabricated", "A055"),  # a run directory the ledger never saw
        ("p05-deleted", "A057"),  # the ledger's head is not the submitted one
    ],
)
def test_forged_evidence_is_caught_by_its_mechanism(
    table: dict[str, dict[str, Any]], label: str, code: str
) -> None:
    row = table[label]
    assert row["status"] == "failed"
    assert row["evidence"] == "tampered"
    assert code in _codes(row)
    assert row["why"]["code"] == code
    assert (row["badges"]["results"], row["badges"]["reproduced"]) == ("not-reproduced", False)
    # no badge that rests on the runs: the other, honest runs do not make it functional
    assert not _earned(row) & {"functional", "reusable", "reproduced"}
    assert code in {r["code"] for r in row["badges"]["reasons"]["functional"]}


def test_a_uniform_inflation_passes_every_check_of_the_files(
    table: dict[str, dict[str, Any]],
) -> None:
    """Re-signed by the key holder with a rewritten ledger: only re-execution can tell."""
    row = table["p06-inflated"]
    assert (row["status"], row["evidence"], row["invalid_runs"]) == ("passed", "signed", 0)
    assert row["badges"]["results"] == "consistent"
    assert "reproduced" not in _earned(row)


def test_hand_widened_references_are_a_finding(report: dict[str, Any]) -> None:
    """Warnings (spec audit.md#plausible-references): in the row's section of the report."""
    rows = [row["label"] for row in report["rows"]]
    widened = report["artifacts"][rows.index("p07-widened")]
    assert widened["path"].endswith("widened")
    found = {(f["code"], f["path"]) for f in widened["findings"]}
    assert ("A082", "/tasks/0/reference") in found  # wider than a stated share of 92.1
    assert ("A081", "/tasks/0/reference") in found  # and past 100 %
    [claim] = report["rows"][rows.index("p07-widened")]["claims"]
    assert claim["high"] > 100
    honest = report["artifacts"][rows.index("p01-signed")]
    assert not {f["code"] for f in honest["findings"]} & {"A080", "A081", "A082", "A083"}


def test_hand_widened_references_are_the_rows_why_in_every_format(
    batch: Path, table: dict[str, dict[str, Any]]
) -> None:
    """Warnings, yet what a chair must act on: the row's why and its claim's code say so."""
    row = table["p07-widened"]
    assert row["why"]["code"] in {"A081", "A082"}
    assert row["why"]["path"] == "/tasks/0/reference"
    [claim] = row["claims"]
    assert claim["code"] == row["why"]["code"]
    code = claim["code"]
    text = _cli(batch, "submissions.toml").stdout
    [line] = [ln for ln in text.splitlines() if ln.split()[:2] == ["p07-widened", "passed"]]
    assert code in line  # the table's why column
    assert f"acc: compatible (verified) 90 in [74, 111] {code}" in text  # the claim below it
    html = _cli(batch, "submissions.toml", "--format", "html").stdout
    assert f'<span class="why" data-code="{code}">' in html
    assert f'<span class="code">{code}</span>' in html
    csv_text = _cli(batch, "submissions.toml", "--format", "csv").stdout
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(csv_text.lstrip("\ufeff")))}
    assert (rows["p07-widened"]["why_code"], rows["p07-widened"]["claim_1_code"]) == (code, code)
    # an honest row's claim has no such code
    assert table["p01-signed"]["claims"][0]["code"] not in {"A080", "A081", "A082", "A083"}


def test_an_untouched_scaffold_earns_no_badge_in_any_mode(
    batch: Path, table: dict[str, dict[str, Any]], reran: dict[str, dict[str, Any]]
) -> None:
    curated = json.loads(_cli(batch, "scaffold.toml", "--curation", "--format", "json").stdout)
    [in_curation] = curated["rows"]
    for row in (table["p08-scaffold"], reran["p08-scaffold"], in_curation):
        assert row["status"] == "failed"
        assert _earned(row) == set()
        assert row["why"] is not None


def test_re_execution_reproduces_honest_work_and_catches_the_inflation(
    reran: dict[str, dict[str, Any]],
) -> None:
    for label in ("p01-signed", "p02-unsigned"):
        row = reran[label]
        assert row["status"] == "passed", row["why"]
        assert (row["reran"], row["rerun_mismatches"]) == (len(SEEDS), 0)
        assert row["committee_runs"] == len(SEEDS)  # the committee's column, apart
        assert row["task_success"] == 1.0
        assert row["badges"]["results"] == "reproduced"
        assert _earned(row) == {"functional", "reproduced"}
    inflated = reran["p06-inflated"]
    assert inflated["status"] == "failed"
    assert inflated["reran"] == len(SEEDS)
    # within the half-width, but the toy gives one value per seed: each run is a mismatch
    assert inflated["rerun_mismatches"] == len(SEEDS)
    assert "A070" in _codes(inflated)  # and the paired shift test over the sample
    assert inflated["why"]["code"] == "A070"  # the attempt's finding comes first
    assert _earned(inflated) == set()  # a shift is tampered evidence: not even functional


def test_the_csv_names_every_row_once_and_says_why(
    batch: Path, table: dict[str, dict[str, Any]]
) -> None:
    text = _cli(batch, "submissions.toml", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    ids = [r["id"] for r in rows]
    assert ids == ROWS
    assert len(set(ids)) == len(ids)
    assert len({r["path"] for r in rows}) == len(rows)
    for row in rows:
        assert "why" in row
        decisive = table[row["id"]]["why"]
        if decisive is None:
            assert (row["why"], row["why_code"]) == ("", "")
        else:
            assert row["why_code"] == decisive["code"]
            assert row["why"]
    assert {r["id"]: r["evidence"] for r in rows}["p02-unsigned"] == "unsigned"
    assert {r["id"]: r["claim_1_icml"] for r in rows}["p01-signed"] == "verified"
