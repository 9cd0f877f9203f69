"""Audit reports and the ``reprobridge audit`` command, run as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from audit_support import edit_record

from reprobridge_sdk.audit import audit, audit_table
from reprobridge_sdk.audit.report import (
    render_json,
    render_junit,
    render_text,
)
from reprobridge_sdk.findings import finding_line
from reprobridge_sdk.schema import packaged_schema_text


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "audit", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _schema(name: str) -> dict[str, object]:
    loaded = json.loads(packaged_schema_text(name))
    assert isinstance(loaded, dict)
    return loaded


def test_json_report_matches_its_schema(toy: Path) -> None:
    shutil.rmtree(toy / "runs" / "scored-s2")
    document = json.loads(render_json(audit(toy)))
    jsonschema.Draft202012Validator(_schema("audit-1.0")).validate(document)
    assert document["tasks"][0]["attempts"][0]["verdict"] == "toy"
    table = json.loads(render_json(audit_table([toy])))
    jsonschema.Draft202012Validator(_schema("audit-table-1.0")).validate(table)


def test_junit_one_testcase_per_task(toy: Path) -> None:
    edit_record(toy / "runs/scored-s0", lambda d: d["measurements"][0].update(value=90.1))
    shutil.rmtree(toy / "runs/smoke-s0")
    root = ET.fromstring(render_junit(audit(toy)))
    (suite,) = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"acc", "f1"}
    failure = cases["acc"].find("failure")
    assert failure is not None
    assert failure.get("type") == "invalid-evidence"
    assert "A007" in (failure.text or "")
    assert suite.get("failures") == "2"


def test_junit_skips_toy(toy: Path) -> None:
    shutil.rmtree(toy / "runs/scored-s1")
    root = ET.fromstring(render_junit(audit(toy)))
    skipped = [c.find("skipped") for c in root.iter("testcase")]
    assert all(s is not None and "A017" in (s.get("message") or "") for s in skipped)


def test_text_report_names_codes(toy: Path) -> None:
    (toy / "runs/scored-s0/log.txt").write_text("nothing\n")
    result = audit(toy)
    text = render_text(result)
    assert "A004" in text
    # each reason of a verdict in the one finding line shape, named by its task
    reasons = [(t.id, r) for t in result.tasks for a in t.attempts for r in a.reasons]
    assert reasons
    for task, reason in reasons:
        assert finding_line(reason, task) in text
    assert "\x1b[" not in text
    assert "\x1b[" in render_text(audit(toy), color=True)


def test_cli_json_on_stdout_and_exit_codes(toy: Path) -> None:
    done = _cli(str(toy), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["passed"] is True
    shutil.rmtree(toy / "runs/scored-s2")
    failed = _cli(str(toy), "--format", "json")
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["counts"]["toy"] == 2


def test_cli_text_goes_to_stdout_without_colour(toy: Path) -> None:
    done = _cli(str(toy), env={"NO_COLOR": "1"})
    assert done.returncode == 0
    assert "PASS" in done.stdout
    assert "PASS" not in done.stderr
    assert "\x1b[" not in done.stdout


def test_cli_attempts_holm_and_output(toy: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    done = _cli(
        str(toy), "--attempt", f"a={toy / 'runs'}", "--holm", "--format", "junit", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert ET.parse(out).getroot().tag == "testsuites"


def test_cli_table_mode(toy: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(toy, other)
    done = _cli("--table", str(toy), str(other), "--format", "json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert len(table["artifacts"]) == 2
    assert table["paper_macro"] == 1.0


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--level", "1.5"], 2),
        (["--attempt", "x=/nonexistent/dir"], 2),
        (["a", "b"], 2),
    ],
)
def test_cli_usage_errors(toy: Path, args: list[str], code: int) -> None:
    done = _cli(str(toy), *args)
    assert done.returncode == code
    assert "Traceback" not in done.stderr
    assert "PASS" not in done.stdout and "FAIL" not in done.stdout  # no report
    assert "A001" not in done.stderr  # a finding goes to stdout, once


def test_cli_missing_artifact(tmp_path: Path) -> None:
    done = _cli(str(tmp_path / "nothing"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "Y010" in done.stdout  # no rra.yaml there


def test_cli_help_does_not_import_scipy() -> None:
    code = (
        "import sys; from reprobridge_sdk.cli import main\n"
        "try:\n    main(['audit', '--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'scipy' not in sys.modules, 'scipy imported'\n"
        "assert 'reprobridge_sdk.audit' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_table_reports(toy: Path, tmp_path: Path) -> None:
    from reprobridge_sdk.audit.html import render_html

    other = tmp_path / "other"
    shutil.copytree(toy, other)
    shutil.rmtree(other / "runs" / "scored-s0")
    table = audit_table([toy, other])
    page = render_html(table)
    assert page.count('<section class="artifact"') == 2
    assert page.count('<svg class="plot"') == 4
    suites = ET.fromstring(render_junit(table)).findall("testsuite")
    assert [s.get("skipped") for s in suites] == ["0", "2"]
    text = render_text(table)
    assert "A017" in text
    assert text.rstrip().endswith("FAIL")


def test_cli_writes_and_prints_the_json_report(toy: Path, tmp_path: Path) -> None:
    expected = render_json(audit(toy))
    out = tmp_path / "report.json"
    done = _cli(str(toy), "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == expected
    assert _cli(str(toy), "--format", "json").stdout == expected
