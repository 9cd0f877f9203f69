"""A committee's table of four artifacts: good, forged, placeholder, broken manifest.

Each is shown for what it is in JSON, text and HTML; the HTML table is sorted and filtered by
its inline script in a real headless Chromium (Debian's ``chromium``), offline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from audit_support import make_artifact
from chromium_support import chromium, needs_chromium
from evidence_support import consistent_edit, honest_runs

from reprobridge_sdk.audit import audit_table
from reprobridge_sdk.audit.html import render_html
from reprobridge_sdk.audit.report import render_text
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model.audit import AuditTable


@pytest.fixture(scope="module")
def committee(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("committee")
    good = make_artifact(base / "good")
    honest_runs(good, "scored", [0, 1, 2])
    forged = make_artifact(base / "forged")  # the same id as good: toy-study
    runs = honest_runs(forged, "scored", [0, 1, 2])
    consistent_edit(runs[1], accuracy=95.0)
    placeholder = base / "placeholder"
    scaffold(placeholder, InitOptions(id="placeholder-study", title="Not filled in"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            str(placeholder),
            "scored",
            "--env",
            "current",
        ],
        capture_output=True,
        check=True,
    )
    broken = base / "broken"
    broken.mkdir()
    (broken / "rra.yaml").write_text("rra_version: '1.0'\nartifact: [unclosed\n")
    return [good, forged, placeholder, broken]


@pytest.fixture(scope="module")
def table(committee: list[Path]) -> AuditTable:
    return audit_table(committee)


def test_each_artifact_is_a_row_for_what_it_is(committee: list[Path], table: AuditTable) -> None:
    _good, _forged, _placeholder, _broken = committee
    rows = table.rows
    assert [r.path for r in rows] == [str(p) for p in committee]
    assert [r.status for r in rows] == ["passed", "failed", "failed", "error"]
    # Two submissions share the id toy-study: every row is named by its path in the batch.
    assert [r.label for r in rows] == ["good", "forged", "placeholder", "broken"]
    assert [r.artifact for r in rows] == ["toy-study", "toy-study", "placeholder-study", None]
    assert (rows[0].runs, rows[0].invalid_runs) == (3, 0)
    assert (rows[1].runs, rows[1].invalid_runs) == (3, 1)
    assert rows[2].badges is not None
    assert rows[2].badges.reasons["available"][0].code == "P003"
    assert rows[3].validation["error"] >= 1
    assert [f.code for f in rows[3].findings] == ["A001"]
    # a folder without a DOI has no archival identifier (A085)
    assert rows[0].badges is not None
    assert [r.code for r in rows[0].badges.reasons["available"]] == ["A085"]
    # the authors' runs alone: consistent, never reproduced (no committee-made run)
    assert rows[0].badges is not None and rows[0].badges.results == "consistent"
    assert not rows[0].badges.reproduced
    assert rows[1].badges is not None and rows[1].badges.results == "not-reproduced"
    # The broken manifest counts in every rate: four papers, not three.
    successes = [r.task_success for r in table.artifacts]
    assert table.paper_macro == pytest.approx(sum(s or 0 for s in successes) / 4)
    assert not table.passed


def test_json_report_holds_the_rows(table: AuditTable) -> None:
    data = json.loads(table.model_dump_json())
    assert [r["status"] for r in data["rows"]] == ["passed", "failed", "failed", "error"]
    assert data["rows"][1]["invalid_runs"] == 1


def test_junit_has_an_error_for_the_artifact_that_does_not_load(table: AuditTable) -> None:
    from xml.etree import ElementTree as ET

    from reprobridge_sdk.audit.report import render_junit

    suites = ET.fromstring(render_junit(table)).findall("testsuite")
    assert [s.get("errors") for s in suites] == ["0", "0", "0", "1"]
    (error,) = suites[-1].iter("error")
    assert error.text is not None and error.text.split()[0] == "A001"


def test_text_report_has_a_line_per_row(table: AuditTable) -> None:
    text = render_text(table)
    lines = text.splitlines()
    for row in table.rows:
        # the summary's line, not the section's heading "<label> (<id>: <title>)"
        (line,) = [
            ln
            for ln in lines
            if ln.startswith(row.label + " ") and not ln.startswith(row.label + " (")
        ]
        assert line.split()[len(row.label.split())] == row.status


@needs_chromium
def test_html_table_sorts_and_filters_offline_in_chromium(
    table: AuditTable, tmp_path: Path
) -> None:
    page = tmp_path / "table.html"
    page.write_text(render_html(table), encoding="utf-8")
    text = page.read_text()
    for needle in ("<link", "src=", "href=", "url(", "@import", "http://", "https://"):
        assert needle not in text.split("<script>", 1)[1].split("</script>", 1)[0]
        assert needle not in text.split("<body>", 1)[0] or needle in ("http://", "https://")
    labels = [r.label for r in table.rows]

    def rows(fragment: str, profile: str) -> list[tuple[str, bool]]:
        done = chromium(page, tmp_path / profile, "--dump-dom", fragment=fragment)
        parser = _Rows()
        parser.feed(done)
        return parser.rows

    unsorted = rows("", "p0")
    assert unsorted == [(label, False) for label in labels]
    by_success = rows("#sort=success&dir=desc", "p1")
    successes = {r.label: r.task_success for r in table.rows}
    order = [successes[label] for label, _ in by_success]
    assert order[-1] is None  # the unloaded artifact has no rate: last in either direction
    numbers = [v for v in order if v is not None]
    assert numbers == sorted(numbers, reverse=True)
    ascending = [successes[label] for label, _ in rows("#sort=success", "p4")]
    assert ascending[-1] is None
    assert ascending[:-1] == sorted(numbers)
    only_errors = rows("#status=error", "p2")
    assert [label for label, hidden in only_errors if not hidden] == [labels[3]]
    by_text = rows("#q=placeholder", "p3")
    assert [label for label, hidden in by_text if not hidden] == ["placeholder"]


class _Rows(HTMLParser):
    """The summary table's rows, in DOM order, with their hidden flag."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("class") == "row":
            self.rows.append((found.get("data-label") or "", "hidden" in found))


def test_packed_archives_are_rows_named_by_path_and_digest(
    committee: list[Path], tmp_path: Path
) -> None:
    """``audit --table`` unpacks archives safely into a scratch directory and audits them,
    re-executions included; a hostile archive is a row in error that counts."""
    import io
    import tarfile

    from reprobridge_sdk.authoring.pack import pack

    good, forged, _placeholder, _broken = committee
    packed_good = pack(good, tmp_path / "good.tar.gz", with_runs=True)
    packed_forged = pack(forged, tmp_path / "forged.tar", with_runs=True)
    hostile = tmp_path / "hostile.tar"
    with tarfile.open(hostile, "w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "audit",
            "--table",
            str(packed_good.path),
            str(packed_forged.path),
            str(hostile),
            "--rerun",
            "all",
            "--rerun-env",
            "current",
            "--no-sandbox",  # the toy writes into the artifact, read-only in the sandbox
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    table = json.loads(done.stdout)
    rows = table["rows"]
    assert [r["path"] for r in rows] == [
        str(packed_good.path),
        str(packed_forged.path),
        str(hostile),
    ]
    assert [r["archive_sha256"] for r in rows] == [packed_good.digest, packed_forged.digest, None]
    # the archive's digest is the archival identifier the committee holds: available
    assert [r["badges"]["available"] for r in rows[:2]] == [True, True]
    assert rows[0]["badges"]["evidence"]["available"] == [
        "rra.yaml",
        f"archive sha256:{packed_good.digest}",
    ]
    # re-executed by the committee: the honest archive's results are reproduced, the forged not
    assert [r["badges"]["results"] for r in rows[:2]] == ["reproduced", "not-reproduced"]
    assert [r["status"] for r in rows] == ["passed", "failed", "error"]
    assert [r["reran"] for r in rows] == [3, 3, 0]
    assert rows[1]["rerun_mismatches"] == 1
    assert [f["code"] for f in rows[2]["findings"]] == ["C017"]
    assert [f["code"] for f in table["errors"]] == ["C017"]
    assert not (tmp_path / "escape.txt").exists()
    assert [r["label"] for r in rows] == ["good.tar.gz", "forged.tar", "hostile.tar"]
    assert rows[1]["why"] is not None
    assert rows[2]["why"]["code"] == "C017"
