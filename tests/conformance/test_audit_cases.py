"""The audit-report conformance cases (validators/audit-cases/): sound, current, covering the
verdicts, badge rules, interval edge cases and tampering codes, and passed by the SDK."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reprobridge_sdk.audit import audit
from reprobridge_sdk.errors import ReproBridgeError

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "validators" / "audit-cases"
CASE_NAMES = sorted(p.name for p in (SUITE / "cases").iterdir() if p.is_dir())
AUDIT = (
    f"{shlex.quote(sys.executable)} -m reprobridge_sdk audit --format json"
    " --level {level} --floor {floor} {artifact}"
)


def _load() -> ModuleType:
    path = SUITE / "run_audit_suite.py"
    spec = importlib.util.spec_from_file_location("_suite_run_audit_suite", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


runner = _load()
CASES: dict[str, dict[str, Any]] = runner.load_cases(SUITE)


def _sdk_report(name: str) -> tuple[int, Any]:
    """(exit status, JSON report) of the SDK's audit of a case, in this process."""
    expected = CASES[name]
    options = {**runner.DEFAULT_OPTIONS, **expected.get("options", {})}
    try:
        result = audit(SUITE / "cases" / name / "artifact", **options)
    except ReproBridgeError:
        return 2, None
    return (0 if result.passed else 1), json.loads(result.model_dump_json())


def test_every_case_is_valid_against_the_case_schema() -> None:
    schema = json.loads((SUITE / "case.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert len(CASES) == len(CASE_NAMES) >= 40
    for name, expected in CASES.items():
        assert [e.message for e in validator.iter_errors(expected)] == [], name
        assert (SUITE / "cases" / name / "artifact" / "rra.yaml").is_file(), name


def _tree(root: Path) -> dict[str, tuple[str, bytes]]:
    result = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            result[rel] = ("link", os.readlink(path).encode())
        elif path.is_file():
            result[rel] = ("file", path.read_bytes())
    return result


def test_the_committed_cases_are_what_the_authoring_script_writes(tmp_path: Path) -> None:
    script = REPO / "spec" / "tools" / "build_audit_cases.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    fresh, committed = _tree(tmp_path / "cases"), _tree(SUITE / "cases")
    assert sorted(fresh) == sorted(committed)
    stale = [rel for rel in fresh if fresh[rel] != committed[rel]]
    assert stale == [], "regenerate with: python spec/tools/build_audit_cases.py"


def _expected_values(pointer_end: str) -> set[Any]:
    return {
        item["value"]
        for expected in CASES.values()
        for item in expected["fields"]
        if item["pointer"].endswith(pointer_end)
    }


def _expected_codes() -> set[str]:
    return {code for e in CASES.values() for item in e["codes"] for code in item["codes"]}


def test_the_cases_cover_every_verdict_badge_and_interval_edge() -> None:
    verdicts = {"compatible", "incompatible", "toy", "not-executed", "invalid-evidence"}
    assert verdicts | {"inconclusive"} <= _expected_values("/verdict")
    for badge in ("available", "functional", "reproduced"):
        assert {True, False} <= _expected_values(f"/badges/{badge}")
    # each verdict reason and badge rule of spec/audit.md that needs no extra option
    reasons = {"A016", "A017", "A021", "A024", "A025", "A026", "A028", "A029", "A034", "A063"}
    rules = {"R006", "A010", "A012", "P003", "A051"}
    assert reasons | rules <= _expected_codes()
    # the interval's edges: n = 0 and 1, zero spread, the floor (binding and not), non-finite
    assert {0, 1, 5} <= _expected_values("/interval/n")
    assert {True, False} <= _expected_values("/interval/floor_bound")
    assert 0.0 in _expected_values("/interval/sd")
    assert 2 in {e["exit_status"] for e in CASES.values()}  # a NaN observation: not loaded


#: Every evidence and ledger check of spec/runner.md that needs no option of the audit (A057
#: needs the submitted head, A058 and A059 re-execution, K001-K007 trusted keys).
TAMPERING = {
    "A001", "A002", "A003", "A004", "A005", "A006", "A007", "A008", "A009", "A011", "A014",
    "A015", "A018", "A019", "A037", "A038", "A039", "A040", "A051", "A052", "A053", "A054",
    "A055", "A056", "A066",
}  # fmt: skip


def test_the_cases_cover_every_tampering_code() -> None:
    assert sorted(TAMPERING - _expected_codes()) == []


@pytest.mark.parametrize("name", CASE_NAMES)
def test_the_sdk_passes_the_case(name: str) -> None:
    expected = CASES[name]
    status, report = _sdk_report(name)
    assert status == expected["exit_status"]
    if status != 2:
        assert runner.check_report(expected, report) == []


def test_a_report_that_differs_is_caught() -> None:
    name = "verdict-incompatible"
    _, report = _sdk_report(name)
    report["tasks"][0]["attempts"][0]["verdict"] = "compatible"
    report["tasks"][0]["attempts"][0]["reasons"].append({"code": "A036"})
    report["badges"]["reproduced"] = 1  # a number is not a boolean
    problems = runner.check_report(CASES[name], report)
    assert [p.split(":")[0] for p in problems] == [
        "/tasks/[id=acc]/attempts/0/verdict",
        "/badges/reproduced",
        "/tasks/[id=acc]/attempts/0/reasons",
    ]


@pytest.mark.parametrize("report", [None, [], "x", 1.5, {"tasks": "x"}, {"tasks": [{"id": 1}]}])
def test_a_report_of_any_shape_is_judged_never_a_crash(report: Any) -> None:
    expected = CASES["verdict-incompatible"]
    problems = runner.check_report(expected, report)
    assert len(problems) == len(expected["fields"]) + len(expected["codes"])
    assert all(p.startswith("missing: ") for p in problems)


@pytest.mark.parametrize(
    ("pointer", "found"),
    [
        ("/tasks/[id=acc]/attempts/0/verdict", "incompatible"),
        ("/tasks/[id=nope]/id", None),
        ("/tasks/9", None),
        ("/tasks/x", None),
        ("/badges/reasons/reproduced/0/code", "A029"),
        ("", "report"),
    ],
)
def test_pointers_select_by_member(pointer: str, found: Any) -> None:
    _, report = _sdk_report("verdict-incompatible")
    got = runner.resolve(report, pointer)
    if found is None:
        assert got is runner._MISSING
    elif found == "report":
        assert got is report
    else:
        assert got == found


def test_the_runner_passes_the_cli_and_writes_junit(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    picked = ["verdict-compatible", "interval-floor-excludes", "interval-non-finite-reference"]
    args = [sys.executable, str(SUITE / "run_audit_suite.py"), "--command", AUDIT]
    for name in picked:
        args += ["--case", name]
    proc = subprocess.run(
        [*args, "--junit", str(junit), "-j", "2"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")


@pytest.mark.parametrize(
    ("program", "why"),
    [("raise SystemExit(3)", "exit status 3"), ("print('not json')", "stdout is not JSON")],
)
def test_the_runner_reports_an_auditor_that_fails_or_prints_no_json(program: str, why: str) -> None:
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(program)} {{artifact}}"
    args = [sys.executable, str(SUITE / "run_audit_suite.py"), "--command", command]
    proc = subprocess.run(
        [*args, "--case", "verdict-compatible"], check=False, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert f"FAIL verdict-compatible: {why}" in proc.stderr


def test_the_runner_fails_an_auditor_that_judges_nothing(tmp_path: Path) -> None:
    lazy = f"{shlex.quote(sys.executable)} -c 'print(\"{{}}\")' {{artifact}}"
    args = [sys.executable, str(SUITE / "run_audit_suite.py"), "--command", lazy]
    proc = subprocess.run(
        [*args, "--case", "verdict-incompatible", "--case", "interval-non-finite-reference"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    failed = sorted(line.split(":")[0] for line in proc.stderr.splitlines() if line[:4] == "FAIL")
    assert failed == ["FAIL interval-non-finite-reference", "FAIL verdict-incompatible"]
