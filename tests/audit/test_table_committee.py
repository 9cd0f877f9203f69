"""The committee's attempt is a column of its own, never averaged into the authors' success.

An attempt labelled ``committee`` (``--attempt committee=DIR``) holds the runs the committee
made. Before, adding it halved every honest row's success when the committee had not run
everything yet; now the authors' success counts the authors' attempts only, and the
committee's runs and success are shown beside it in every table format.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from audit_support import make_artifact
from evidence_support import honest_runs

from reprobridge_sdk.audit import audit_table
from reprobridge_sdk.audit.csv_report import render_csv
from reprobridge_sdk.audit.html import render_html
from reprobridge_sdk.audit.report import render_text


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_artifact(tmp_path_factory.mktemp("committee-column") / "toy")
    honest_runs(root, "scored", [0, 1, 2])
    shutil.copytree(root / "runs", root / "committee-runs")  # the committee ran them too
    return root


def test_the_committees_attempt_is_its_own_column(honest: Path) -> None:
    table = audit_table([honest], ["runs", "committee=committee-runs"])
    [row] = table.rows
    assert row.task_success == 1.0
    assert (row.committee_runs, row.committee_success) == (3, 1.0)
    attempts = {a.label: a.committee for a in table.artifacts[0].attempts}
    assert attempts == {"runs": False, "committee": True}
    # the committee's own, compatible runs are committee-made: results reproduced
    assert row.badges is not None
    assert row.badges.results == "reproduced"


def test_a_committee_attempt_not_yet_run_does_not_halve_the_authors_success(
    honest: Path,
) -> None:
    waiting = audit_table([honest], ["runs", "committee=not-yet"])
    [row] = waiting.rows
    assert row.task_success == 1.0  # before: 0.5, an honest row halved
    assert (row.committee_runs, row.committee_success) == (0, 0.0)
    assert waiting.paper_macro == 1.0
    # any other label is one more reproducer of the authors' kind, and counts
    other = audit_table([honest], ["runs", "agent=not-yet"]).rows[0]
    assert other.task_success == 0.5
    assert other.committee_success is None


def test_the_committee_column_in_text_html_and_csv(honest: Path) -> None:
    table = audit_table([honest], ["runs", "committee=committee-runs"])
    text = render_text(table)
    header = next(line for line in text.splitlines() if line.startswith("artifact"))
    assert header.split()[3:5] == ["success", "committee"]
    assert "3 run(s), success 100.0%" in text
    html = render_html(table)
    assert '<th data-key="committee"' in html
    assert '<td data-value="1.0">3 run(s), success 100.0%</td>' in html
    [row] = list(csv.DictReader(io.StringIO(render_csv(table).lstrip("\ufeff"))))
    assert (row["committee_runs"], row["committee_success"]) == ("3", "100.0%")
    authors = audit_table([honest]).rows[0]
    assert (authors.committee_runs, authors.committee_success) == (0, None)
    [plain] = list(csv.DictReader(io.StringIO(render_csv(audit_table([honest])).lstrip("\ufeff"))))
    assert (plain["committee_runs"], plain["committee_success"]) == ("0", "")
