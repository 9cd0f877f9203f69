"""The committee's table as a chair reads it: unique names, a why and per-claim columns,
reasons counted, numbers to their interval's precision, the floor marked, and a CSV.

A batch of real artifacts audited by the real auditor: an honest one, one whose every run was
edited (the same code four times), one whose references are identical (the interval is the
floor alone), an unreadable manifest, and copies of the honest one under hostile folder names
(commas, quotes, a line break, spreadsheet formulas). The CSV goes through the CLI as a
subprocess and is read back with the csv module; the HTML's links are checked in a headless
Chromium (Debian's ``chromium``), offline.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from audit_support import make_artifact
from chromium_support import chromium, needs_chromium
from evidence_support import consistent_edit, honest_runs

from reprobridge_sdk.audit import audit, audit_table
from reprobridge_sdk.audit.csv_report import CLAIM_COLUMNS, COLUMNS, render_csv
from reprobridge_sdk.audit.html import anchor, render_html
from reprobridge_sdk.audit.present import rounded
from reprobridge_sdk.audit.report import render_json, render_junit, render_text
from reprobridge_sdk.audit.table import row_names
from reprobridge_sdk.model.audit import AuditTable

#: Folder names a stranger chooses: a comma, quotes, a line break, spreadsheet formulas.
HOSTILE = ['=HYPERLINK("x","y"),z', "+1\nline", "@SUM(A1)", "-2+3"]


def _identical_references(root: Path, value: float) -> None:
    manifest = root / "rra.yaml"
    data = yaml.safe_load(manifest.read_text())
    for obs in data["tasks"][0]["reference"]["observations"]:
        obs["value"] = value
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("committee") / "batch"
    honest = make_artifact(base / "honest")
    honest_runs(honest, "scored", [0, 1, 2])
    fabricated = make_artifact(base / "fabricated")
    for run in honest_runs(fabricated, "scored", [0, 1, 2, 3]):
        consistent_edit(run, accuracy=90.1)
    deterministic = make_artifact(base / "deterministic")
    _identical_references(deterministic, 90.1)
    honest_runs(deterministic, "scored", [0, 1, 2])
    broken = base / "nested" / "broken"
    broken.mkdir(parents=True)
    (broken / "rra.yaml").write_text("rra_version: '1.0'\nartifact: [unclosed\n")
    hostile = []
    for name in HOSTILE:
        shutil.copytree(honest, base / name)
        hostile.append(base / name)
    return [honest, fabricated, deterministic, broken, *hostile]


@pytest.fixture(scope="module")
def table(batch: list[Path]) -> AuditTable:
    return audit_table(batch)


def test_rows_are_named_by_their_path_in_the_batch(table: AuditTable) -> None:
    labels = [r.label for r in table.rows]
    assert labels == ["honest", "fabricated", "deterministic", "nested/broken", *HOSTILE]
    assert len(set(labels)) == len(labels)
    # Every section in every format carries the row's name, never the shared manifest id.
    text = render_text(table)
    for row in table.rows:
        if row.status != "error":
            assert f"{row.label} (toy-study: " in text.replace("\\n", "\n")
    suites = ET.fromstring(render_junit(table)).findall("testsuite")
    assert [s.get("name") for s in suites] == labels
    # each suite states its badges; an honest row on the authors' runs alone is 'consistent'
    badges = [
        next((p.get("value") for p in s.iter("property") if p.get("name") == "badges"), None)
        for s in suites
    ]
    assert badges[0] == "consistent"
    page = render_html(table)
    for index, row in enumerate(table.rows):
        assert f'id="{anchor(index, row.label)}"' in page


def test_row_names_of_hostile_and_odd_paths(tmp_path: Path) -> None:
    a, b = tmp_path / "batch" / "a", tmp_path / "batch" / "sub" / "b"
    assert row_names([a, b]) == ["a", "sub/b"]
    assert row_names([a / "rra.yaml", a]) == ["a", "a #2"]  # a manifest names its folder
    assert row_names([a, tmp_path / "batch" / "x" / ".." / "a"]) == ["a", "a #2"]
    assert row_names([a]) == ["a"]
    assert row_names(["/"]) == ["/"]  # nothing to be relative to: the path as given
    assert row_names([]) == []
    odd = tmp_path / "batch" / "new\nline"
    assert row_names([odd, a]) == ["new\nline", "a"]


def test_why_and_per_claim_columns(table: AuditTable) -> None:
    honest, fabricated, deterministic, broken = table.rows[:4]
    assert [(c.task, c.verdict, c.icml) for c in honest.claims] == [
        ("acc", "compatible", "verified"),
        ("f1", "compatible", "verified"),
    ]
    # Only the smoke launcher has no run: the why says so, nothing else withholds anything.
    assert honest.why is not None and honest.why.code == "A024"
    assert {c.verdict for c in fabricated.claims} == {"invalid-evidence"}
    assert {c.icml for c in fabricated.claims} == {"inconclusive"}
    assert fabricated.why is not None and fabricated.why.code == "A056"
    assert {c.code for c in fabricated.claims} == {"A056"}
    assert broken.why is not None and broken.why.code == "A001"
    assert broken.claims == []
    acc = deterministic.claims[0]
    assert acc.floor_alone == "identical-references"
    assert acc.verdict == "compatible" and acc.code is None
    assert deterministic.claims[1].floor_alone is None
    text = render_text(table)
    assert "    acc: invalid-evidence (inconclusive) - in [89.20, 91.00] A056" in text
    (line,) = [ln for ln in text.splitlines() if ln.split()[:2] == ["fabricated", "failed"]]
    assert line.split()[-13] == "A056"  # the why column: the decisive code and its message


def test_reasons_are_counted_never_capped(table: AuditTable) -> None:
    fabricated = table.rows[1]
    assert fabricated.badges is not None
    functional = [r.code for r in fabricated.badges.reasons["functional"]]
    assert functional.count("A056") == 4  # all four runs, never the first three
    groups = {g.code: g.count for g in fabricated.withheld["functional"]}
    assert groups["A056"] == 4
    text = render_text(table)
    assert "functional withheld: A024, A056 \u00d74" in text
    assert text.count("functional withheld: A056 \u00d74 ") == 1  # the section: once, counted
    page = render_html(table)
    assert 'data-code="A056" data-count="4"' in page


def test_numbers_are_rounded_to_the_interval(table: AuditTable) -> None:
    honest = table.rows[0]
    acc = honest.claims[0]
    assert acc.half_width is not None and acc.value is not None
    shown = rounded(acc.value, acc.half_width)
    assert shown == "90.10"  # h = 0.9: two decimals, the half-width's second digit
    for text in (render_text(table), render_html(table), render_junit(table)):
        assert shown in text
        assert not re.search(r"\d\.\d{7,}", text.split("<svg", 1)[0]), "unrounded number"


@pytest.mark.parametrize(
    ("value", "half_width", "shown"),
    [
        (97.97446420000001, 0.98, "97.97"),  # the value
        (97.97446420000001, 0.012, "97.974"),
        (97.97446420000001, None, "97.9745"),  # no interval: six significant digits
        (97.97446420000001, 0.0, "97.9745"),  # zero half-width: no precision from it
        (97.97446420000001, math.inf, "97.9745"),
        (97.97446420000001, math.nan, "97.9745"),
        (97.97446420000001, -1.0, "97.9745"),
        (98.0, 120.0, "100"),  # coarser than units: rounded to tens
        (4.0, 120.0, "4"),  # never fewer than one significant digit
        (1.2345678e300, 1e290, "1.23456780000e+300"),  # huge: scientific, to the width
        (1.5e-300, 1e-310, "1.50000000000e-300"),  # tiny
        (97.0, 5e-324, "97.0000000000000"),  # a subnormal width: at most 15 digits
        (0.0, 0.012, "0.000"),
        (-0.0001, 0.5, "-0.0001"),
        (-0.00001, 5.0, "-1e-05"),  # below 1e-4: scientific
        (-0.04, 5.0, "-0.04"),
        (-0.004, 0.5, "-0.004"),
        (-0.0, 0.5, "0.00"),  # zero shows no sign
        (math.inf, 1.0, "inf"),
        (-math.inf, 1.0, "-inf"),
        (math.nan, 1.0, "nan"),
        (None, 1.0, ""),
        (0.91181234, 0.0154186, "0.912"),
        (-1234.5678, 0.5, "-1234.57"),
        (99.96, 0.1, "99.96"),
        (99.996, 0.1, "100.00"),
    ],
)
def test_rounding_rule(value: float | None, half_width: float | None, shown: str) -> None:
    assert rounded(value, half_width) == shown


def test_floor_alone_is_marked_in_every_format(table: AuditTable) -> None:
    deterministic = table.artifacts[2]
    acc = deterministic.tasks[0]
    assert acc.interval.floor_alone == "identical-references"
    assert acc.interval.floor_bound and not acc.interval.floor_only
    assert json.loads(render_json(deterministic))["tasks"][0]["interval"]["floor_alone"] == (
        "identical-references"
    )
    table_json = json.loads(render_json(table))
    assert table_json["rows"][2]["claims"][0]["floor_alone"] == "identical-references"
    assert "floor alone (identical references)" in render_text(deterministic)
    assert 'data-floor-alone="identical-references"' in render_html(deterministic)
    suite = ET.fromstring(render_junit(table)).findall("testsuite")[2]
    case = suite.findall("testcase")[0]
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["floor_alone"] == "identical-references"
    assert props["interval"] == "[89.20, 91.00]"
    assert deterministic.tasks[1].interval.floor_alone is None  # references that vary


def test_one_reference_is_the_floor_alone(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "one")
    manifest = root / "rra.yaml"
    data = yaml.safe_load(manifest.read_text())
    del data["tasks"][0]["reference"]["observations"][1:]
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    result = audit(root, curation=True)
    assert result.tasks[0].interval.floor_alone == "one-reference"
    assert "floor alone (one reference)" in render_text(result)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "audit", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_csv_one_row_per_artifact_read_back(batch: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "table.csv"
    out.write_text("an older table\n")
    done = _cli("--table", *map(str, batch), "--format", "csv", "-o", str(out))
    assert done.returncode == 1, done.stderr  # the table fails: it has a broken artifact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]  # atomic: no leftover
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with a byte-order mark: spreadsheets
    assert b"\r\n" in raw
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    header = list(rows[0])
    assert header[: len(COLUMNS)] == list(COLUMNS)
    assert header[len(COLUMNS) :] == [
        f"claim_{n}_{s}" if s else f"claim_{n}" for n in (1, 2) for s in CLAIM_COLUMNS
    ]
    assert len(rows) == len(batch)
    # Hostile names survive quoting; a formula start is quoted so no spreadsheet runs it.
    assert [r["id"] for r in rows] == [
        "honest",
        "fabricated",
        "deterministic",
        "nested/broken",
        "'" + HOSTILE[0],
        "'" + HOSTILE[1],
        "'" + HOSTILE[2],
        "'" + HOSTILE[3],
    ]
    for row in rows:
        for key, cell in row.items():
            if cell and key not in {"claim_1_value", "claim_1_low", "claim_1_high"}:
                assert not cell.startswith(("=", "+", "-", "@")), (key, cell)
    honest = rows[0]
    assert (honest["status"], honest["artifact"], honest["badges"]) == (
        "passed",
        "toy-study",
        "consistent",  # no DOI, a launcher without runs, no committee-made run
    )
    assert (honest["claim_1"], honest["claim_1_verdict"], honest["claim_1_icml"]) == (
        "acc",
        "compatible",
        "verified",
    )
    assert (honest["claim_1_value"], honest["claim_1_low"], honest["claim_1_high"]) == (
        "90.10",
        "89.20",
        "91.00",
    )
    assert honest["why_code"] == "A024"
    fabricated = rows[1]
    withheld = dict(part.split(": ", 1) for part in fabricated["withheld"].split("; "))
    assert list(withheld) == ["available", "functional", "reusable", "reproduced"]
    assert withheld["available"] == "A085"
    assert withheld["functional"].startswith("A024 A056 \u00d74 ")
    assert withheld["reproduced"].startswith("A056 \u00d74 ")
    assert (fabricated["claim_1_verdict"], fabricated["claim_1_code"]) == (
        "invalid-evidence",
        "A056",
    )
    assert rows[2]["claim_1_floor_alone"] == "identical-references"
    assert rows[2]["claim_2_floor_alone"] == ""
    broken = rows[3]
    assert (broken["status"], broken["why_code"], broken["claim_1"]) == ("error", "A001", "")
    # The CLI's file is the renderer's text, byte for byte.
    assert raw.decode("utf-8") == render_csv(audit_table(batch))


def test_csv_of_one_audit_and_hostile_messages(batch: list[Path]) -> None:
    single = audit(batch[1])
    text = render_csv(single)
    (row,) = csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    assert row["id"] == "fabricated"
    assert row["claim_1_verdict"] == "invalid-evidence"
    # A message that opens with a formula and holds a line break, quotes and an escape.
    hostile = single.model_copy(deep=True)
    reasons = hostile.tasks[0].attempts[0].reasons  # the decisive claim's: the row's why
    reasons[0] = reasons[0].model_copy(update={"message": '=cmd|"/c calc"!A1,\n\x1b[2J'})
    (row,) = csv.DictReader(io.StringIO(render_csv(hostile).removeprefix("\ufeff"), newline=""))
    assert row["why"].startswith('\'=cmd|"/c calc"!A1,\n')
    assert "\x1b" not in row["why"]


class _Links(HTMLParser):
    """The summary's row links and the ids of the page's elements, from Chromium's DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: list[str] = []
        self.floors: list[str] = []
        self._in_row = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "tr":
            self._in_row = found.get("class") == "row"
        if tag == "a" and self._in_row and found.get("href", "").startswith("#"):
            self.links.append(found["href"][1:])
        if "id" in found:
            self.ids.append(found["id"])
        if "data-floor-alone" in found:
            self.floors.append(found["data-floor-alone"])


@needs_chromium
def test_html_rows_link_to_their_sections_in_chromium(table: AuditTable, tmp_path: Path) -> None:
    page = tmp_path / "table.html"
    page.write_text(render_html(table), encoding="utf-8")
    done = chromium(page, tmp_path / "profile", "--dump-dom", fragment="#q=A056")
    dom = _Links()
    dom.feed(done)
    assert len(dom.links) == len(table.rows)
    assert len(set(dom.ids)) == len(dom.ids)  # ids are unique
    for link in dom.links:
        assert re.fullmatch(r"a[0-9]+(-[a-z0-9]+)*", link), link  # safe: no quote, no space
        assert link in dom.ids  # every row's section exists, the unloaded one included
    assert dom.floors.count("identical-references") >= 2  # the summary and the section
    # The filter searches the why column: the fabricated row and nothing else holds A056.
    shown = re.findall(r'<tr class="row"[^>]*data-label="([^"]*)"(?![^>]*hidden)', done)
    assert shown == ["fabricated"]
