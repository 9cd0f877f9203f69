"""``audit --table --submissions FILE``: a committee's batch file (spec audit.md#submissions).

Built from real runs (the runner, real ed25519 keys, a real pack): an honest signed
submission, an honest unsigned one under a policy that allows it, one whose last runs were
deleted (caught by its own expected head) and an archive that is not the one recorded. The
hostile cases of the file itself (bad TOML, unknown keys, duplicate ids, paths that leave the
folder) are located findings, never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from audit_support import make_artifact
from evidence_support import honest_runs, ledger_lines, write_ledger

from reprobridge_sdk.authoring.batch import audit_batch, load_batch
from reprobridge_sdk.authoring.pack import pack
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model.audit import AuditTable, TableRow
from reprobridge_sdk.run.ledger import ledger_head
from reprobridge_sdk.signing import ENVELOPE_NAME, generate_key
from reprobridge_sdk.signing.keys import public_line

CLI = [sys.executable, "-m", "reprobridge_sdk"]


@pytest.fixture(scope="module")
def signed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An honest artifact whose scored runs (seeds 0-2, twice) alice signed; KEYS beside it.
    Twice: deleting the last run leaves every seed measured, so only the head tells."""
    root = make_artifact(tmp_path_factory.mktemp("signed") / "toy")
    _raw, alice = generate_key()
    honest_runs(root, "scored", [0, 1, 2], alice)
    honest_runs(root, "scored", [0, 1, 2], alice)
    (root.parent / "KEYS").write_text(f"{public_line('alice', alice)}\n")
    return root


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def batch(signed_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committee's folder: four submissions and the batch file that lists them."""
    folder = tmp_path_factory.mktemp("committee")
    shutil.copy(signed_template.parent / "KEYS", folder / "KEYS")
    shutil.copytree(signed_template, folder / "signed")
    unsigned = folder / "unsigned"
    shutil.copytree(signed_template, unsigned)
    for envelope in unsigned.glob(f"runs/*/{ENVELOPE_NAME}"):
        envelope.unlink()
    deleted = folder / "deleted"
    shutil.copytree(signed_template, deleted)
    runs = deleted / "runs"
    submitted = ledger_head(runs)
    entries = ledger_lines(runs)
    shutil.rmtree(runs / entries[-1]["run_id"])  # the last run and its entry: a clean cut
    write_ledger(runs, entries[:-1], rechain=False)
    packed = pack(signed_template, folder / "swapped.tar.gz", with_runs=True)
    wrong = "0" * 64 if packed.digest != "0" * 64 else "1" * 64
    return _write(
        folder / "submissions.toml",
        f"""batch_version = "1.0"

[defaults]
reviewers = ["rev-a"]
budget = {{ time = 3600, cpus = 2, gpus = 0, memory = "4GiB" }}
trust = {{ keys = "KEYS", signers = ["alice"] }}

[[submission]]
id = "p1-signed"
path = "signed"
decision = "accept"
notes = "clean"

[[submission]]
id = "p2-unsigned"
path = "unsigned"
trust = {{ unsigned = true }}
reviewers = ["rev-b", "rev-c"]

[[submission]]
id = "p3-deleted"
path = "deleted"
expect_head = "{submitted}"

[[submission]]
id = "p4-swapped"
path = "swapped.tar.gz"
archive_sha256 = "{wrong}"
decision = "reject"
""",
    )


@pytest.fixture(scope="module")
def table(batch: Path) -> AuditTable:
    return audit_batch(batch)


def _rows(table: AuditTable) -> dict[str, TableRow]:
    return {row.label: row for row in table.rows}


def _codes(row: TableRow) -> set[str]:
    codes = {f.code for f in row.findings}
    for artifact in row.claims:
        if artifact.code:
            codes.add(artifact.code)
    return codes


def test_rows_are_named_by_submission_id_in_the_file_order(table: AuditTable) -> None:
    assert [row.label for row in table.rows] == [
        "p1-signed",
        "p2-unsigned",
        "p3-deleted",
        "p4-swapped",
    ]
    assert not table.passed


def test_honest_signed_is_signed_and_passes(table: AuditTable) -> None:
    row = _rows(table)["p1-signed"]
    assert row.status == "passed"
    assert row.evidence == "signed"
    assert row.invalid_runs == 0
    info = row.submission
    assert info is not None
    assert info.trust == "signed by KEYS (alice)"
    assert (info.decision, info.notes, info.reviewers) == ("accept", "clean", ["rev-a"])
    assert info.budget is not None
    assert (info.budget.time, info.budget.cpus, info.budget.memory) == (3600, 2, "4GiB")


def test_honest_unsigned_under_its_policy_is_no_evidence_alarm(table: AuditTable) -> None:
    row = _rows(table)["p2-unsigned"]
    assert row.status == "passed"
    assert row.evidence == "unsigned"
    assert row.invalid_runs == 0
    assert all(c.verdict != "invalid-evidence" for c in row.claims)
    assert row.submission is not None
    assert row.submission.trust == "unsigned allowed"
    assert row.submission.reviewers == ["rev-b", "rev-c"]


def test_deleted_last_run_is_caught_by_its_own_expected_head(table: AuditTable) -> None:
    row = _rows(table)["p3-deleted"]
    assert row.status == "failed"
    assert row.evidence == "tampered"
    assert row.why is not None
    assert row.why.code == "A057"
    [result] = [r for r in table.artifacts if r.path.endswith("deleted")]
    assert [f.code for f in result.attempts[0].findings] == ["A057"]


def test_an_archive_that_is_not_the_recorded_one_is_a093(table: AuditTable, batch: Path) -> None:
    row = _rows(table)["p4-swapped"]
    assert row.status == "failed"
    assert row.evidence == "tampered"
    assert row.why is not None
    assert row.why.code == "A093"
    assert row.why.file == str(batch)
    assert (
        row.why.line
        == batch.read_text()
        .splitlines()
        .index(next(x for x in batch.read_text().splitlines() if x.startswith("archive_sha256")))
        + 1
    )
    assert row.badges is not None
    assert not (row.badges.available or row.badges.functional or row.badges.reproduced)
    assert {g.code for groups in row.withheld.values() for g in groups} >= {"A093"}
    assert row.path.endswith("swapped.tar.gz")
    assert row.archive_sha256 is not None
    assert "rb-batch-" not in json.dumps(row.model_dump())  # names the archive, not scratch


def test_the_same_evidence_without_the_file_passes_unnoticed(batch: Path) -> None:
    """Contrast: the deleted runs and the swapped archive pass a table without the file."""
    from reprobridge_sdk.authoring.submissions import audit_submissions

    folder = batch.parent
    plain = audit_submissions([folder / "deleted", folder / "swapped.tar.gz"])
    assert [row.status for row in plain.rows] == ["passed", "passed"]


def test_unsigned_under_a_signed_policy_is_unsigned_not_tampered(
    batch: Path, tmp_path: Path
) -> None:
    folder = batch.parent
    strict = _write(
        folder / "strict.toml",
        '[defaults]\ntrust = { keys = "KEYS" }\n\n[[submission]]\nid = "p2"\npath = "unsigned"\n',
    )
    [row] = audit_batch(strict).rows
    assert row.status == "failed"
    assert row.evidence == "unsigned"
    assert row.why is not None
    assert row.why.code == "K001"


def test_the_command_line_reads_the_file(batch: Path) -> None:
    done = subprocess.run(
        [*CLI, "audit", "--table", "--submissions", str(batch), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(r["label"], r["evidence"]) for r in report["rows"]] == [
        ("p1-signed", "signed"),
        ("p2-unsigned", "unsigned"),
        ("p3-deleted", "tampered"),
        ("p4-swapped", "tampered"),
    ]
    assert report["rows"][0]["submission"]["decision"] == "accept"
    text = subprocess.run(
        [*CLI, "audit", "--table", "--submissions", str(batch)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert "submission: decision accept; trust signed by KEYS (alice)" in text
    assert "trust unsigned allowed" in text
    csv_text = subprocess.run(
        [*CLI, "audit", "--table", "--submissions", str(batch), "--format", "csv"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    rows = list(csv.DictReader(io.StringIO(csv_text.lstrip("\ufeff"))))
    assert [(r["id"], r["evidence"], r["decision"]) for r in rows] == [
        ("p1-signed", "signed", "accept"),
        ("p2-unsigned", "unsigned", "pending"),
        ("p3-deleted", "tampered", "pending"),
        ("p4-swapped", "tampered", "reject"),
    ]
    assert rows[1]["reviewers"] == "rev-b rev-c"


# ----------------------------------------------------------------- hostile batch files


def _refused(path: Path) -> UsageError:
    with pytest.raises(UsageError) as caught:
        load_batch(path)
    return caught.value


def test_bad_toml_is_a090_at_its_line(tmp_path: Path) -> None:
    bad = _write(tmp_path / "s.toml", '[[submission]]\nid = "p1\npath = "x"\n')
    error = _refused(bad)
    [item] = error.findings
    assert (item.code, item.file, item.line) == ("A090", str(bad), 2)
    assert item.hint


def test_unknown_key_is_a091_at_the_key(tmp_path: Path) -> None:
    bad = _write(
        tmp_path / "s.toml",
        '[[submission]]\nid = "p1"\npath = "a"\n\n[[submission]]\nid = "p2"\npath = "b"\n'
        'expect_hed = "abc"\n',
    )
    [item] = _refused(bad).findings
    assert (item.code, item.line) == ("A091", 8)
    assert "expect_hed" in item.message
    assert item.path == "/submission/1"


def test_wrong_types_and_decisions_are_a091(tmp_path: Path) -> None:
    bad = _write(
        tmp_path / "s.toml",
        '[defaults]\nbudget = { cpus = "many" }\n\n'
        '[[submission]]\nid = "p1"\npath = "a"\ndecision = "maybe"\n',
    )
    found = _refused(bad).findings
    assert {f.code for f in found} == {"A091"}
    assert {f.line for f in found} == {2, 7}


def test_duplicate_ids_are_a091_at_the_second(tmp_path: Path) -> None:
    bad = _write(
        tmp_path / "s.toml",
        '[[submission]]\nid = "p1"\npath = "a"\n\n[[submission]]\nid = "p1"\npath = "b"\n',
    )
    [item] = _refused(bad).findings
    assert (item.code, item.line) == ("A091", 6)
    assert "twice" in item.message


def test_unreadable_file_is_a090(tmp_path: Path) -> None:
    error = _refused(tmp_path / "missing.toml")
    assert [f.code for f in error.findings] == ["A090"]
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    assert [f.code for f in _refused(binary).findings] == ["A090"]


def test_paths_outside_the_folder_or_missing_are_error_rows(batch: Path, tmp_path: Path) -> None:
    """An absolute path, ``..``, a link out and a missing path: each a located A092 row;
    the honest submission beside them is still audited."""
    folder = batch.parent
    outside = tmp_path / "outside"
    shutil.copytree(folder / "signed", outside)
    link = folder / "link-out"
    if not link.exists():
        os.symlink(outside, link)
    hostile = _write(
        folder / "hostile.toml",
        f"[defaults]\ntrust = {{ unsigned = true }}\n\n"
        f'[[submission]]\nid = "abs"\npath = "{outside}"\n\n'
        '[[submission]]\nid = "up"\npath = "../outside"\n\n'
        '[[submission]]\nid = "link"\npath = "link-out"\n\n'
        '[[submission]]\nid = "gone"\npath = "no-such-folder"\n\n'
        '[[submission]]\nid = "ok"\npath = "signed"\n',
    )
    table = audit_batch(hostile)
    rows = _rows(table)
    for name, line in (("abs", 6), ("up", 10), ("link", 14), ("gone", 18)):
        row = rows[name]
        assert row.status == "error", name
        assert row.why is not None
        assert (row.why.code, row.why.file, row.why.line) == ("A092", str(hostile), line)
        assert row.why.hint
    assert rows["ok"].status == "passed"
    assert not table.passed
    assert [f.code for f in table.errors] == ["A092"] * 4


def test_a_keys_file_outside_the_folder_is_refused(batch: Path) -> None:
    bad = _write(
        batch.parent / "keys-out.toml",
        '[defaults]\ntrust = { keys = "../KEYS" }\n\n[[submission]]\nid = "p1"\npath = "signed"\n',
    )
    with pytest.raises(UsageError) as caught:
        audit_batch(bad)
    assert [(f.code, f.line) for f in caught.value.findings] == [("A092", 2)]


def test_the_command_line_never_shows_a_traceback(tmp_path: Path) -> None:
    bad = _write(tmp_path / "s.toml", "[[submission]\n")
    done = subprocess.run(
        [*CLI, "audit", "--table", "--submissions", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "A090" in done.stdout
    assert f"{bad}:1" in done.stdout
    assert "Traceback" not in done.stderr
    usage = subprocess.run(
        [*CLI, "audit", "--submissions", str(bad)], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2
    assert "--table" in usage.stderr


def test_the_published_schema_checks_the_file(batch: Path) -> None:
    """The committed batch-1.0 schema accepts the committee's file and refuses a misspelt key."""
    import tomllib

    import jsonschema

    schema_path = Path(__file__).parents[2] / "schemas" / "batch-1.0.schema.json"
    schema = json.loads(schema_path.read_text())
    data = tomllib.loads(batch.read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    data["submission"][0]["expect_hed"] = "abc"
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert any("expect_hed" in e.message for e in errors)


def test_parallel_audits_keep_each_rows_policy(batch: Path, table: AuditTable) -> None:
    """In worker processes (--jobs 2) each row still gets its own head and keys."""
    parallel = audit_batch(batch, jobs=2)
    assert [(r.label, r.status, r.evidence, r.why and r.why.code) for r in parallel.rows] == [
        (r.label, r.status, r.evidence, r.why and r.why.code) for r in table.rows
    ]


def test_expect_head_with_a_table_points_to_the_file(batch: Path) -> None:
    done = subprocess.run(
        [*CLI, "audit", "--table", str(batch.parent / "signed"), "--expect-head", "abc"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "--submissions" in done.stderr
    both = subprocess.run(
        [*CLI, "audit", "--table", "--submissions", str(batch), str(batch.parent / "signed")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert both.returncode == 2
    assert "no PATHS" in both.stderr


def test_the_html_table_shows_evidence_and_the_submission(table: AuditTable) -> None:
    from html.parser import HTMLParser

    from reprobridge_sdk.audit.html import render_html

    class Spans(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[tuple[str, str]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            for name, value in attrs:
                if name in {"data-row-evidence", "data-decision"} and value is not None:
                    self.found.append((name, value))

    parser = Spans()
    parser.feed(render_html(table))
    assert [v for k, v in parser.found if k == "data-row-evidence"] == [
        "signed",
        "unsigned",
        "tampered",
        "tampered",
    ]
    assert [v for k, v in parser.found if k == "data-decision"] == [
        "accept",
        "pending",
        "pending",
        "reject",
    ]


def test_who_signed_each_row_is_shown_in_every_format(table: AuditTable) -> None:
    """The signers of a row's runs (six runs signed by alice), beside its evidence state."""
    import xml.etree.ElementTree as ET

    from reprobridge_sdk.audit.csv_report import render_csv
    from reprobridge_sdk.audit.html import render_html
    from reprobridge_sdk.audit.report import render_junit, render_text

    rows = _rows(table)
    assert rows["p1-signed"].signers == {"alice": 6}
    assert rows["p2-unsigned"].signers == {}  # unsigned allowed: no signature checked
    text = render_text(table)
    # below the signed row and the archive of its runs; the deleted row keeps five runs
    assert text.count("    signed by: alice \u00d76") == 2
    assert text.count("    signed by: alice \u00d75") == 1
    assert 'class="meta row-signers">signed by: alice \u00d76</span>' in render_html(table)
    suites = ET.fromstring(render_junit(table)).findall("testsuite")
    signers = [
        next(p.get("value") for p in s.iter("property") if p.get("name") == "signers")
        for s in suites
    ]
    assert signers == ["alice \u00d76", "", "alice \u00d75", "alice \u00d76"]
    cells = {
        r["id"]: r["signers"]
        for r in csv.DictReader(io.StringIO(render_csv(table).removeprefix("\ufeff")))
    }
    assert (cells["p1-signed"], cells["p2-unsigned"]) == ("alice \u00d76", "")


def test_a_signer_named_like_a_formula_is_quoted_in_the_csv(table: AuditTable) -> None:
    """KEYS names may begin with ``@``, ``+`` or ``-``: the CSV cell never starts a formula."""
    from reprobridge_sdk.audit.csv_report import render_csv

    hostile = table.model_copy(deep=True)
    hostile.rows[0].signers = {"@x": 2, "-y": 1}
    (row, *_rest) = csv.DictReader(io.StringIO(render_csv(hostile).removeprefix("\ufeff")))
    assert row["signers"] == "'@x \u00d72, -y"
