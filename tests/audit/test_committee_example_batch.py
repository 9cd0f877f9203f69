"""The committee's batch rebuilt from the bundled example (issue: the committee's workflow).

The honest submission is ``examples/digits-logreg`` with real runs of its launchers (the
runner, this interpreter, a real ed25519 key of an author, alice). Beside it, in one folder
and one submissions file audited by ``audit --table --submissions`` in a subprocess: the
same runs unsigned under a policy that allows it, signed by a key the committee does not
trust, an edited log, a fabricated run, deleted last runs, a uniform inflation of 0.95 points
re-signed by the key holder, hand-widened references, references the results contradict, an
untouched scaffold and the honest submission as a packed archive. Each row is asserted by
the mechanism that decides it. A second table run re-executes every run of the rows that
only re-execution can judge: then the honest work is "reproduced" and the inflation caught.

The runs take a few seconds each; the re-execution, about fifteen of them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from evidence_support import forge_ledger_and_signatures, honest_runs, ledger_lines, write_ledger

from reprobridge_sdk.authoring.pack import pack
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.run.ledger import ledger_head
from reprobridge_sdk.signing import ENVELOPE_NAME, generate_key
from reprobridge_sdk.signing.keys import public_line

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
CLI = [sys.executable, "-m", "reprobridge_sdk", "audit", "--table", "--submissions"]
SEEDS = [0, 1, 2, 3, 4]
TASK = "logreg-accuracy"
ROWS = [
    "p01-signed",
    "p02-unsigned",
    "p03-untrusted-key",
    "p04-edited-log",
    "p05-fabricated",
    "p06-deleted",
    "p07-inflated",
    "p08-widened",
    "p09-incompatible",
    "p10-scaffold",
    "p11-archive",
]


def _set_accuracy(run_dir: Path, points: float) -> None:
    """Add ``points`` to the logistic regression's accuracy in the log, and make the record
    agree (its log digest and value): what a forger with the files does."""
    log = run_dir / "log.txt"
    lines = log.read_text().splitlines(keepends=True)
    [index] = [i for i, line in enumerate(lines) if line.startswith("logreg_accuracy=")]
    text = f"{float(lines[index].split('=', 1)[1]) + points / 100:.6f}"
    lines[index] = f"logreg_accuracy={text}\n"
    log.write_text("".join(lines))
    path = run_dir / RECORD_NAME
    data = json.loads(path.read_text())
    data["log"]["sha256"] = file_sha256(log)
    data["log"]["size"] = log.stat().st_size
    for item in data["measurements"]:
        if item["task"] == TASK:
            item["value"] = float(text) * 100
            item["raw"] = text
    path.write_text(json.dumps(data, indent=2))


def _edit(root: Path, change: Any) -> None:
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _task(data: dict[str, Any]) -> dict[str, Any]:
    return next(t for t in data["tasks"] if t["id"] == TASK)


def _widen(data: dict[str, Any]) -> None:
    widened = [85.0, 99.0, 92.0, 88.0, 98.0]
    for item, value in zip(_task(data)["reference"]["observations"], widened, strict=True):
        item["value"] = value


def _contradict(data: dict[str, Any]) -> None:
    """References and claim three points above what the code gives: falsified."""
    task = _task(data)
    task["published"]["value"] = 99.9
    for item in task["reference"]["observations"]:
        item["value"] = round(item["value"] + 3.0, 4)


def _scored(runs: Path) -> list[Path]:
    return [runs / e["run_id"] for e in ledger_lines(runs) if e["launcher"] == "scored"]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("example-batch")
    template = base / "template"
    shutil.copytree(EXAMPLE, template)
    _raw, alice = generate_key()
    _raw, bob = generate_key()
    honest_runs(template, "smoke", [0], alice)
    honest_runs(template, "scored", SEEDS, alice)
    folder = base / "batch"
    folder.mkdir()
    (folder / "KEYS").write_text(f"{public_line('alice', alice)}\n")

    def copy(name: str) -> Path:
        shutil.copytree(template, folder / name)
        return folder / name

    copy("signed")
    unsigned = copy("unsigned")
    for envelope in unsigned.glob(f"runs/*/{ENVELOPE_NAME}"):
        envelope.unlink()
    forge_ledger_and_signatures(copy("untrusted") / "runs", bob)  # signed by bob, not alice
    edited = copy("edited-log")
    log = _scored(edited / "runs")[0] / "log.txt"
    log.write_text(log.read_text().replace("logreg_accuracy=0.", "logreg_accuracy=1."))
    fabricated = copy("fabricated")
    forged = fabricated / "runs" / "scored-s0-forged"
    shutil.copytree(_scored(fabricated / "runs")[0], forged)
    (forged / ENVELOPE_NAME).unlink()
    record = json.loads((forged / RECORD_NAME).read_text())
    record["run_id"] = forged.name
    (forged / RECORD_NAME).write_text(json.dumps(record, indent=2))
    _set_accuracy(forged, 2.0)
    deleted = copy("deleted")
    runs = deleted / "runs"
    submitted = ledger_head(runs)
    entries = ledger_lines(runs)
    shutil.rmtree(runs / entries[-1]["run_id"])
    write_ledger(runs, entries[:-1], rechain=False)
    inflated = copy("inflated")
    for run_dir in _scored(inflated / "runs"):
        _set_accuracy(run_dir, 0.95)
    forge_ledger_and_signatures(inflated / "runs", alice)
    _edit(copy("widened"), _widen)
    _edit(copy("incompatible"), _contradict)
    scaffold(folder / "scaffold", InitOptions(id="untouched", title="Untouched"))
    pack(template, folder / "archive.tar.gz", with_runs=True)
    entries_text = {
        "p01-signed": 'path = "signed"\n',
        "p02-unsigned": 'path = "unsigned"\ntrust = { unsigned = true }\n',
        "p03-untrusted-key": 'path = "untrusted"\n',
        "p04-edited-log": 'path = "edited-log"\n',
        "p05-fabricated": 'path = "fabricated"\n',
        "p06-deleted": f'path = "deleted"\nexpect_head = "{submitted}"\n',
        "p07-inflated": 'path = "inflated"\n',
        "p08-widened": 'path = "widened"\n',
        "p09-incompatible": 'path = "incompatible"\n',
        "p10-scaffold": 'path = "scaffold"\ntrust = { unsigned = true }\n',
        "p11-archive": 'path = "archive.tar.gz"\n',
    }
    head = 'batch_version = "1.0"\n\n[defaults]\ntrust = { keys = "KEYS", signers = ["alice"] }\n'

    def write(name: str, ids: list[str]) -> None:
        rows = "".join(f'\n[[submission]]\nid = "{i}"\n{entries_text[i]}' for i in ids)
        (folder / name).write_text(head + rows)

    write("submissions.toml", ROWS)
    write("rerun.toml", ["p01-signed", "p02-unsigned", "p07-inflated"])
    return folder


def _cli(batch: Path, name: str, *options: str) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [*CLI, str(batch / name), "--format", "json", *options],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    return {row["label"]: row for row in json.loads(done.stdout)["rows"]}


@pytest.fixture(scope="module")
def table(batch: Path) -> dict[str, dict[str, Any]]:
    rows = _cli(batch, "submissions.toml")
    assert list(rows) == ROWS
    return rows


def _earned(row: dict[str, Any]) -> set[str]:
    badges = row["badges"] or {}
    return {b for b in ("available", "functional", "reusable", "reproduced") if badges.get(b)}


def _codes(row: dict[str, Any]) -> set[str]:
    return {c["code"] for c in row["claims"] if c["code"]} | {
        r["code"] for reasons in (row["badges"] or {}).get("reasons", {}).values() for r in reasons
    }


def test_the_honest_example_is_consistent_until_the_committee_re_executes(
    table: dict[str, dict[str, Any]],
) -> None:
    for label in ("p01-signed", "p11-archive"):
        row = table[label]
        assert (row["status"], row["evidence"], row["invalid_runs"]) == ("passed", "signed", 0)
        assert [c["icml"] for c in row["claims"]] == ["verified"] * 3
        assert row["badges"]["results"] == "consistent"
    assert _earned(table["p01-signed"]) == {"functional"}
    assert _earned(table["p11-archive"]) == {"available", "functional"}  # the archive's digest
    unsigned = table["p02-unsigned"]
    assert (unsigned["status"], unsigned["evidence"]) == ("passed", "unsigned")
    assert unsigned["badges"]["results"] == "consistent"


def test_a_key_the_committee_does_not_trust_is_no_evidence_of_tampering(
    table: dict[str, dict[str, Any]],
) -> None:
    row = table["p03-untrusted-key"]
    assert row["evidence"] == "unsigned"  # a policy outcome, not tampered evidence
    assert "K003" in _codes(row)
    assert "reproduced" not in _earned(row)


@pytest.mark.parametrize(
    ("label", "code"),
    [("p04-edited-log", "A004"), ("p05-fabricated", "A055"), ("p06-deleted", "A057")],
)
def test_forgeries_are_caught_by_their_mechanism(
    table: dict[str, dict[str, Any]], label: str, code: str
) -> None:
    row = table[label]
    assert (row["status"], row["evidence"]) == ("failed", "tampered")
    assert row["why"]["code"] == code
    assert not _earned(row) & {"functional", "reusable", "reproduced"}


def test_references_that_are_implausible_or_contradicted(
    table: dict[str, dict[str, Any]],
) -> None:
    widened = table["p08-widened"]
    assert widened["why"]["code"] in {"A081", "A082"}
    incompatible = table["p09-incompatible"]
    assert incompatible["status"] == "failed"
    claim = next(c for c in incompatible["claims"] if c["task"] == TASK)
    assert (claim["verdict"], claim["icml"]) == ("incompatible", "falsified")
    assert "reproduced" not in _earned(incompatible)


def test_an_untouched_scaffold_earns_nothing(table: dict[str, dict[str, Any]]) -> None:
    row = table["p10-scaffold"]
    assert row["status"] == "failed"
    assert _earned(row) == set()


def test_only_re_execution_reproduces_and_catches_the_inflation(
    table: dict[str, dict[str, Any]], batch: Path
) -> None:
    inflated = table["p07-inflated"]
    assert (inflated["status"], inflated["evidence"]) == ("passed", "signed")
    reran = _cli(
        batch, "rerun.toml", "--rerun", "all", "--rerun-env", "current", "--no-rerun-sandbox"
    )
    for label in ("p01-signed", "p02-unsigned"):
        row = reran[label]
        assert row["status"] == "passed", row["why"]
        assert (row["reran"], row["rerun_mismatches"]) == (len(SEEDS) + 1, 0)
        assert row["badges"]["results"] == "reproduced"
        assert row["committee_runs"] == len(SEEDS) + 1
    caught = reran["p07-inflated"]
    assert caught["status"] == "failed"
    assert caught["evidence"] == "tampered"
    assert caught["why"]["code"] in {"A058", "A070"}
    assert _earned(caught) == set()
