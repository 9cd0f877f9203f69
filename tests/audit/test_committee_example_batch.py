"""The committee's batch rebuilt from the bundled example, judged in ONE table run.

The honest submission is ``examples/digits-logreg`` with real runs of its launchers (the
runner, this interpreter, a real ed25519 key of an author, alice), a DOI, and a real passing
clean-room check on record (``check --scored --record --sign``) signed by the committee's
key, chair, which the KEYS file marks ``committee``. Beside it, in one folder
and one submissions file audited by one ``audit --table --submissions --rerun 4`` in a
subprocess (the default sample: four runs per launcher and task, a secret seed): the same
runs unsigned under a policy that allows it (its time budget lets the committee re-execute
none), signed by a key the committee does not trust, an edited log, a fabricated run, deleted
last runs, a uniform inflation of 0.95 points re-signed by the key holder, a fabrication that
spares the runs a seed-0 sample picks, hand-widened references, references the results
contradict, a toy submission (smoke runs only), a broken one (its code fails), an untouched
scaffold and the honest submission as a packed archive. Each row is asserted by the mechanism
that decides it; the CSV and HTML tables are rendered from that run's JSON report.

The runs take a few seconds each; the re-execution, about fifty of them. The clean-room check
builds the example's environment from its lock (the installers' caches are shared) and runs
its six runs again: measured at about four minutes on two cores loaded to 14.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from chromium_support import chromium, needs_chromium
from evidence_support import forge_ledger_and_signatures, ledger_lines, write_ledger
from rerun_support import run_evidence

from reprobridge_sdk.audit.csv_report import render_csv
from reprobridge_sdk.audit.html import render_html
from reprobridge_sdk.audit.rerun import DEFAULT_SAMPLE, choose
from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.authoring.pack import pack
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.audit import AuditTable
from reprobridge_sdk.run import run
from reprobridge_sdk.run.ledger import ledger_head
from reprobridge_sdk.signing import ENVELOPE_NAME, SigningKey, generate_key
from reprobridge_sdk.signing.keys import public_line

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
CLI = [sys.executable, "-m", "reprobridge_sdk", "audit", "--table", "--submissions"]
SEEDS = [0, 1, 2, 3, 4]
TASK = "logreg-accuracy"
#: What the sample-dodging forger adds to each run it fabricates, in points: more than a
#: re-execution's tolerance (the interval's half-width), little enough that the claims stay
#: compatible, so that only re-execution can tell.
DODGE = 1.2
#: The honest signed submission's archival identifier (Available).
DOI = "10.5281/zenodo.14003592"
ROWS = [
    "p01-signed",
    "p02-unsigned",
    "p03-untrusted-key",
    "p04-edited-log",
    "p05-fabricated",
    "p06-deleted",
    "p07-inflated",
    "p08-sample-dodging",
    "p09-widened",
    "p10-incompatible",
    "p11-toy",
    "p12-broken",
    "p13-scaffold",
    "p14-archive",
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


def _checked_by_the_committee(root: Path, chair: SigningKey, work: Path) -> None:
    """Give the honest submission a DOI, then run the real clean-room check of it, scored,
    its record signed by the committee's key: Reusable and, with re-execution, Reproduced."""
    _edit(root, lambda d: d["artifact"]["paper"].update(doi=DOI))
    report = check(root, scored=True, sandbox=False, record=True, sign=chair, work_dir=work)
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    steps = json.loads((root / "runs" / "check.json").read_text())["steps"]
    assert [s["name"] for s in steps][-2:] == ["scored", "audit-scored"]


def _cut(root: Path, keep: int) -> None:
    """Keep the first ``keep`` runs of the ledger, their entries and directories: a clean
    cut that the ledger alone cannot tell."""
    runs = root / "runs"
    entries = ledger_lines(runs)
    for entry in entries[keep:]:
        shutil.rmtree(runs / entry["run_id"])
    write_ledger(runs, entries[:keep], rechain=False)


def _dodge(root: Path, key: Any) -> list[str]:
    """Fabricate every run but those a seed-0 sample of two picks (yesterday's ``--rerun
    2``); re-sign them as the key holder. The fabricated runs' directory names."""
    runs = run_evidence(root)
    spared = {r.rel for r in choose(runs, 2, 0)}
    forged = [r.rel for r in runs if r.rel not in spared]
    assert len(forged) == len(SEEDS) - 2
    for rel in forged:
        _set_accuracy(root / "runs" / rel, DODGE)
    forge_ledger_and_signatures(root / "runs", key)
    return forged


def _break(root: Path, key: Any) -> None:
    """The example whose code no longer runs (a misspelt import), run by its authors: every
    run failed. The manifest's code digest is the broken code's."""
    script = root / "code" / "train.py"
    text = script.read_text()
    broken = text.replace("import LogisticRegression\n", "import LogisticRegresion\n")
    assert broken != text
    script.write_text(broken)
    _edit(root, lambda d: d["codebase"].update(tree_digest=tree_digest(root / "code")))
    summary = run(root, ["smoke", "scored"], env_mode="current", seeds=[0], sign_key=key)
    assert summary.results
    assert all(r.record.status == "failed" for r in summary.results)


@pytest.fixture(scope="module")
def batch(
    tmp_path_factory: pytest.TempPathFactory, example_runs: tuple[Path, SigningKey]
) -> dict[str, Any]:
    """The committee's folder, its KEYS (alice, an author; chair, the committee) and its
    submissions file; the directory names of the sample dodger's fabricated runs. The honest
    runs are the session's (``example_runs``, read only: every row is a copy)."""
    base = tmp_path_factory.mktemp("example-batch")
    template, alice = example_runs  # the honest runs: smoke seed 0, scored SEEDS, by alice
    assert len(_scored(template / "runs")) == len(SEEDS)
    _raw, bob = generate_key()
    _raw, chair = generate_key()
    folder = base / "batch"
    folder.mkdir()
    keys = f"{public_line('alice', alice)}\n{public_line('chair', chair, 'committee')}\n"
    (folder / "KEYS").write_text(keys)

    def copy(name: str, source: Path = template) -> Path:
        shutil.copytree(source, folder / name)
        return folder / name

    _checked_by_the_committee(copy("signed"), chair, base)
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
    submitted = ledger_head(deleted / "runs")
    _cut(deleted, len(SEEDS))  # the last scored run and its entry
    inflated = copy("inflated")
    for run_dir in _scored(inflated / "runs"):
        _set_accuracy(run_dir, 0.95)
    forge_ledger_and_signatures(inflated / "runs", alice)
    dodged = _dodge(copy("sample-dodging"), alice)
    _edit(copy("widened"), _widen)
    _edit(copy("incompatible"), _contradict)
    _cut(copy("toy"), 1)  # the smoke run alone: what a toy submission has
    broken = folder / "broken"
    shutil.copytree(EXAMPLE, broken)
    _break(broken, alice)
    scaffold(folder / "scaffold", InitOptions(id="untouched", title="Untouched"))
    pack(template, folder / "archive.tar.gz", with_runs=True)
    entries = {
        "p01-signed": 'path = "signed"\n',
        # a budget no run of the example fits in: the committee re-executes none of it
        "p02-unsigned": 'path = "unsigned"\ntrust = { unsigned = true }\nbudget = { time = 0.2 }\n',
        "p03-untrusted-key": 'path = "untrusted"\n',
        "p04-edited-log": 'path = "edited-log"\n',
        "p05-fabricated": 'path = "fabricated"\n',
        "p06-deleted": f'path = "deleted"\nexpect_head = "{submitted}"\n',
        "p07-inflated": 'path = "inflated"\n',
        "p08-sample-dodging": 'path = "sample-dodging"\n',
        "p09-widened": 'path = "widened"\n',
        "p10-incompatible": 'path = "incompatible"\n',
        "p11-toy": 'path = "toy"\n',
        "p12-broken": 'path = "broken"\n',
        "p13-scaffold": 'path = "scaffold"\ntrust = { unsigned = true }\n',
        "p14-archive": 'path = "archive.tar.gz"\n',
    }
    signers = 'signers = ["alice", "chair"]'
    text = f'batch_version = "1.0"\n\n[defaults]\ntrust = {{ keys = "KEYS", {signers} }}\n'
    text += "".join(f'\n[[submission]]\nid = "{i}"\n{entries[i]}' for i in ROWS)
    (folder / "submissions.toml").write_text(text)
    return {"folder": folder, "dodged": dodged}


@pytest.fixture(scope="module")
def done(batch: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The one table run: every row, re-executed with the default sample and a secret seed
    (unsandboxed: the example writes into its run directory, see test_rerun.py)."""
    command = [*CLI, str(batch["folder"] / "submissions.toml"), "--format", "json"]
    command += ["--rerun", str(DEFAULT_SAMPLE), "--rerun-env", "current", "--no-rerun-sandbox"]
    command += ["--jobs", "2"]  # two rows at a time, as a chair would on two cores
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr  # the batch holds forgeries
    return done


@pytest.fixture(scope="module")
def report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(done.stdout)
    assert [row["label"] for row in report["rows"]] == ROWS
    return report


@pytest.fixture(scope="module")
def table(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["label"]: row for row in report["rows"]}


def _earned(row: dict[str, Any]) -> set[str]:
    badges = row["badges"] or {}
    return {b for b in ("available", "functional", "reusable", "reproduced") if badges.get(b)}


def _codes(row: dict[str, Any]) -> set[str]:
    return (
        {f["code"] for f in row["findings"]}
        | {c["code"] for c in row["claims"] if c["code"]}
        | {
            r["code"]
            for reasons in (row["badges"] or {}).get("reasons", {}).values()
            for r in reasons
        }
    )


def _run_codes(report: dict[str, Any], label: str) -> dict[str, set[str]]:
    """Run directory name -> the codes of its findings, in the row's audit."""
    index = ROWS.index(label)
    [attempt] = report["artifacts"][index]["attempts"]
    return {Path(r["run"]).name: {f["code"] for f in r["findings"]} for r in attempt["runs"]}


def test_the_sample_is_secret_and_stated(report: dict[str, Any]) -> None:
    options = report["options"]
    assert (options["rerun"], options["rerun_seed_drawn"]) == (DEFAULT_SAMPLE, True)
    assert isinstance(options["rerun_seed"], int)


def test_honest_signed_work_earns_every_badge_after_re_execution(
    table: dict[str, dict[str, Any]],
) -> None:
    """Four scored runs and the smoke run re-executed cover every scored task."""
    for label in ("p01-signed", "p14-archive"):
        row = table[label]
        assert (row["status"], row["evidence"], row["invalid_runs"]) == ("passed", "signed", 0)
        assert (row["reran"], row["rerun_mismatches"]) == (DEFAULT_SAMPLE + 1, 0)
        assert row["committee_runs"] == DEFAULT_SAMPLE + 1  # the committee's column, apart
        assert [c["icml"] for c in row["claims"]] == ["verified"] * 3
        assert row["badges"]["results"] == "reproduced"
    # a DOI, and a passing scored clean-room check signed by the committee's key
    signed = table["p01-signed"]
    assert _earned(signed) == {"available", "functional", "reusable", "reproduced"}
    assert (signed["badges"]["reasons"] or {}) == {}
    record = signed["badges"]["check_record"]
    assert (record["state"], record["signer"], record["role"]) == ("signed", "chair", "committee")
    assert signed["badges"]["evidence"]["reusable"] == ["rra.yaml", "runs/check.json"]
    assert signed["badges"]["evidence"]["reproduced"][-1] == "runs/check.json"
    # the archive's digest is an identifier the committee holds; it carries no check record
    assert _earned(table["p14-archive"]) == {"available", "functional", "reproduced"}
    assert {r["code"] for r in table["p14-archive"]["badges"]["reasons"]["reusable"]} == {"A086"}


def test_honest_unsigned_is_no_alarm_and_not_reproduced_without_committee_runs(
    table: dict[str, dict[str, Any]], report: dict[str, Any]
) -> None:
    row = table["p02-unsigned"]
    assert (row["status"], row["evidence"], row["invalid_runs"]) == ("passed", "unsigned", 0)
    assert row["submission"]["trust"] == "unsigned allowed"
    assert all(c["verdict"] != "invalid-evidence" for c in row["claims"])
    # its budget stopped the re-execution (A094): no run the committee made, no badge for it
    assert (row["reran"], row["committee_runs"]) == (0, 0)
    [attempt] = report["artifacts"][ROWS.index("p02-unsigned")]["attempts"]
    assert "A094" in {f["code"] for f in attempt["findings"]}
    assert row["badges"]["results"] == "consistent"
    assert _earned(row) == {"functional"}


def test_a_key_the_committee_does_not_trust_is_no_evidence_of_tampering(
    table: dict[str, dict[str, Any]],
) -> None:
    row = table["p03-untrusted-key"]
    assert row["evidence"] == "unsigned"  # a policy outcome, not tampered evidence
    assert "K003" in _codes(row)
    assert "reproduced" not in _earned(row)


@pytest.mark.parametrize(
    ("label", "code"),
    [
        ("p04-edited-log", "A004"),  # the log is not the one recorded
        ("p05-fabricated", "A055"),  # a run directory the ledger never saw
        ("p06-deleted", "A057"),  # the ledger's head is not the submitted one
    ],
)
def test_forged_files_are_caught_by_their_mechanism(
    table: dict[str, dict[str, Any]], label: str, code: str
) -> None:
    row = table[label]
    assert (row["status"], row["evidence"]) == ("failed", "tampered")
    assert code in _codes(row)
    assert row["why"]["code"] == code
    assert not _earned(row) & {"functional", "reusable", "reproduced"}


def test_a_uniform_inflation_is_caught_by_re_execution(table: dict[str, dict[str, Any]]) -> None:
    """Re-signed by the key holder with a rewritten ledger: every file check holds."""
    row = table["p07-inflated"]
    assert (row["status"], row["evidence"]) == ("failed", "tampered")
    # each within the half-width, but the example gives one value per seed (the spread of
    # its run executed twice is 0): the four scored runs are mismatches, the smoke run holds
    assert (row["reran"], row["rerun_mismatches"]) == (DEFAULT_SAMPLE + 1, DEFAULT_SAMPLE)
    # and the four scored runs' shift; the honest smoke run in the sample does not dilute it
    assert row["why"]["code"] == "A070"
    assert _earned(row) == set()


def test_sample_dodging_fabrication_is_caught_with_the_default_sample(
    table: dict[str, dict[str, Any]], report: dict[str, Any], batch: dict[str, Any]
) -> None:
    """The runs a seed-0 sample of two would re-execute are honest, the three others forged:
    a sample of four from the secret seed holds at least two forged runs."""
    row = table["p08-sample-dodging"]
    assert (row["status"], row["evidence"]) == ("failed", "tampered")
    assert row["why"]["code"] == "A058"
    caught = {
        run for run, codes in _run_codes(report, "p08-sample-dodging").items() if "A058" in codes
    }
    assert len(caught) >= DEFAULT_SAMPLE - 2
    assert caught <= set(batch["dodged"])  # never an honest run
    assert _earned(row) == set()


def test_hand_widened_references_are_a_finding(table: dict[str, dict[str, Any]]) -> None:
    row = table["p09-widened"]
    assert row["why"]["code"] in {"A081", "A082"}
    assert row["why"]["path"] == "/tasks/0/reference"


def test_contradicted_references_are_falsified(table: dict[str, dict[str, Any]]) -> None:
    row = table["p10-incompatible"]
    assert row["status"] == "failed"
    claim = next(c for c in row["claims"] if c["task"] == TASK)
    assert (claim["verdict"], claim["icml"]) == ("incompatible", "falsified")
    assert "reproduced" not in _earned(row)


def test_smoke_runs_alone_are_a_toy(table: dict[str, dict[str, Any]]) -> None:
    row = table["p11-toy"]
    assert row["evidence"] == "signed"  # honest, only small
    assert [(c["verdict"], c["icml"]) for c in row["claims"]] == [("toy", "toy")] * 3
    assert "reproduced" not in _earned(row)


def test_code_that_fails_is_not_executed(table: dict[str, dict[str, Any]]) -> None:
    row = table["p12-broken"]
    assert row["status"] == "failed"
    assert [(c["verdict"], c["icml"]) for c in row["claims"]] == [
        ("not-executed", "inconclusive")
    ] * 3
    assert row["reran"] == 0  # a failed run is not re-executed
    assert not _earned(row) & {"functional", "reproduced"}


def test_an_untouched_scaffold_earns_nothing(table: dict[str, dict[str, Any]]) -> None:
    row = table["p13-scaffold"]
    assert row["status"] == "failed"
    assert _earned(row) == set()
    assert row["why"] is not None


def test_the_csv_of_that_run_names_every_row_once_and_says_why(
    done: subprocess.CompletedProcess[str], table: dict[str, dict[str, Any]]
) -> None:
    text = render_csv(AuditTable.model_validate_json(done.stdout))
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    assert [r["id"] for r in rows] == ROWS
    assert len({r["path"] for r in rows}) == len(rows)
    for row in rows:
        decisive = table[row["id"]]["why"]
        assert row["why_code"] == ("" if decisive is None else decisive["code"])
        assert [row[f"claim_{i}_icml"] for i in (1, 2, 3) if row.get(f"claim_{i}_icml")] == [
            c["icml"] for c in table[row["id"]]["claims"]
        ]
    by_id = {r["id"]: r for r in rows}
    assert by_id["p08-sample-dodging"]["why_code"] == "A058"
    assert by_id["p11-toy"]["claim_1_icml"] == "toy"


class _Rows(HTMLParser):
    """The table's rows in the DOM: their labels, whether hidden, and the why codes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, bool]] = []
        self.whys: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("class") == "row":
            self.rows.append((found.get("data-label") or "", "hidden" in found))
        if tag == "span" and found.get("class") == "why":
            self.whys.append(found.get("data-code") or "")


@needs_chromium
def test_the_html_of_that_run_in_chromium(
    done: subprocess.CompletedProcess[str], table: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    page = tmp_path / "table.html"
    page.write_text(render_html(AuditTable.model_validate_json(done.stdout)), encoding="utf-8")
    dom = _Rows()
    dom.feed(chromium(page, tmp_path / "profile", "--dump-dom"))
    assert [label for label, _hidden in dom.rows] == ROWS  # unique names, in the file's order
    assert {t["why"]["code"] for t in table.values() if t["why"]} <= set(dom.whys)
    # the filter searches the why column: the sample dodger's code shows the forged rows
    filtered = _Rows()
    filtered.feed(chromium(page, tmp_path / "profile", "--dump-dom", fragment="#q=A058"))
    shown = [label for label, hidden in filtered.rows if not hidden]
    assert "p08-sample-dodging" in shown
    assert "p01-signed" not in shown
