"""The audit-report conformance cases (validators/audit-cases/): sound, current, covering the
verdicts, badge rules, interval edge cases, every auditor code and the table, and passed by
the SDK."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reprobridge_sdk.audit import audit, audit_table
from reprobridge_sdk.authoring.batch import audit_batch
from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.run.sandbox import check_sandbox
from reprobridge_sdk.signing import load_trusted_keys

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "validators" / "audit-cases"
CASE_NAMES = sorted(p.name for p in (SUITE / "cases").iterdir() if p.is_dir())
AUDIT = (
    f"{shlex.quote(sys.executable)} -m reprobridge_sdk audit --format json"
    " --level {level} --floor {floor} {artifact}"
)
#: The reference auditor with every option of the cases; re-execution in this interpreter
#: (the cases' experiment needs nothing else), under the runner's sandbox.
AUDIT_ALL = (
    f"{shlex.quote(sys.executable)} -m reprobridge_sdk audit --format json"
    " --level {level} --floor {floor} --rerun-env current {options} {artifact}"
)
TABLE = (
    f"{shlex.quote(sys.executable)} -m reprobridge_sdk audit --table --format json"
    " --level {level} --floor {floor} {options} {artifacts}"
)


def _load(
    path: Path = SUITE / "run_audit_suite.py", name: str = "_suite_run_audit_suite"
) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


runner = _load()
check_suite = _load(REPO / "validators" / "check_suite.py", "_suite_check_suite")
CASES: dict[str, dict[str, Any]] = runner.load_cases(SUITE)


def _sdk_report(name: str, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, Any]:
    """(exit status, JSON report) of the SDK's audit of a case, in this process."""
    expected = CASES[name]
    case_dir = SUITE / "cases" / name
    options: dict[str, Any] = {**runner.DEFAULT_OPTIONS, **expected.get("options", {})}
    try:
        if "trust" in options:
            options["trust"] = load_trusted_keys(case_dir / options["trust"])
        if "rerun" in options:
            # The cases' experiment needs only this interpreter. Under the runner's sandbox
            # where it works; elsewhere (no bubblewrap) without it, which changes nothing for
            # an experiment that writes only into its run directory.
            options["rerun_env"] = "current"
            options["rerun_sandbox"] = check_sandbox() is None
        if expected.get("report") == "table":
            assert monkeypatch is not None
            monkeypatch.chdir(case_dir)  # the rows' paths are as given: artifacts/<name>
            if "submissions" in options:
                listed = case_dir / options.pop("submissions")
                table = audit_batch(listed, **options)
                return (0 if table.passed else 1), json.loads(table.model_dump_json())
            paths = [f"artifacts/{a}" for a in expected["artifacts"]]
            table = audit_table(paths, **options)
            return (0 if table.passed else 1), json.loads(table.model_dump_json())
        result = audit(case_dir / "artifact", **options)
    except ReproBridgeError:
        return 2, None
    return (0 if result.passed else 1), json.loads(result.model_dump_json())


def test_every_case_is_valid_against_the_case_schema() -> None:
    schema = json.loads((SUITE / "case.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert len(CASES) == len(CASE_NAMES) >= 70
    for name, expected in CASES.items():
        assert [e.message for e in validator.iter_errors(expected)] == [], name
        case = SUITE / "cases" / name
        options = expected.get("options", {})
        if expected.get("report") == "table":
            # a table of a submissions file lists its artifacts there, never on the command line
            assert bool(expected.get("artifacts")) != ("submissions" in options), name
            assert all((case / "artifacts" / a).is_dir() for a in expected.get("artifacts", [])), (
                name
            )
        else:
            assert (case / "artifact" / "rra.yaml").is_file(), name
            assert "submissions" not in options, name
        for key in ("trust", "submissions"):
            if key in options:
                assert (case / options[key]).is_file(), name
        assert ("refusal" in expected) <= (expected["exit_status"] == 2), name


def _case_codes(expected: dict[str, Any]) -> set[str]:
    return {c for item in expected["codes"] for c in item["codes"]} | set(
        expected.get("refusal", [])
    )


def test_every_case_cites_sections_that_name_its_codes() -> None:
    texts: dict[str, str] = {}
    for name, expected in CASES.items():
        assert expected.get("spec"), f"{name} cites no section"
        cited = []
        for ref in expected["spec"]:
            part, _, anchor = ref.partition("#")
            if part not in texts:
                texts[part] = (REPO / "spec" / part).read_text("utf-8")
            text = check_suite.section_text(texts[part], anchor)
            assert text is not None, f"{name} cites {ref}, which the specification lacks"
            cited.append(text)
        for code in sorted(_case_codes(expected)):
            assert any(re.search(rf"\b{code}\b", text) for text in cited), (name, code)


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
    return {code for e in CASES.values() for code in _case_codes(e)}


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


def _auditor_codes() -> dict[str, dict[str, Any]]:
    """The auditor's codes: families A and K of the registry, in the audit context."""
    registry = json.loads((REPO / "validators" / "codes.json").read_text())["codes"]
    return {
        e["code"]: e for e in registry if e["code"][0] in "AK" and "audit" in e.get("contexts", {})
    }


def test_every_auditor_code_has_a_case_or_a_stated_reason() -> None:
    codes = _auditor_codes()
    exempt = runner.NOT_FROM_CASES
    assert sorted(set(codes) - _expected_codes() - set(exempt)) == []
    # an exemption is for a code of the registry that no case expects, with its reason
    assert sorted(set(exempt) - set(codes)) == []
    assert sorted(set(exempt) & _expected_codes()) == []
    assert all(len(reason) > 20 for reason in exempt.values())
    # the README and the spec say the same: each exempt code is named there
    readme = (SUITE / "README.md").read_text()
    conformance = check_suite.section_text(
        (REPO / "spec" / "audit.md").read_text(), "auditor-conformance"
    )
    assert conformance is not None
    for code in [*exempt, "K006"]:
        assert code in readme and code in conformance, code


def test_the_options_cases_cover_head_rerun_signing_and_the_table() -> None:
    expected = _expected_codes()
    assert {"A057", "A058", "A059", "A068"} <= expected
    assert {"K001", "K002", "K003", "K004", "K005", "K007"} <= expected
    tables = [e for e in CASES.values() if e.get("report") == "table"]
    assert len(tables) >= 3
    assert {"passed", "failed", "error"} <= _expected_values("/status")


@pytest.mark.parametrize("name", CASE_NAMES)
def test_the_sdk_passes_the_case(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = CASES[name]
    status, report = _sdk_report(name, monkeypatch)
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


def test_the_runner_gives_options_and_tables_to_the_cli(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    picked = ["table-rows", "ledger-head-mismatch", "signed-unknown-signer", "signed-keys-invalid"]
    args = [sys.executable, str(SUITE / "run_audit_suite.py"), "--command", AUDIT_ALL]
    for name in picked:
        args += ["--case", name]
    proc = subprocess.run(
        [*args, "--table-command", TABLE, "--junit", str(junit), "-j", "2"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "0", "0")


def test_a_case_the_command_cannot_express_fails_never_runs_without_its_options() -> None:
    # AUDIT has no {options}: the submitted head would be silently dropped.
    args = [sys.executable, str(SUITE / "run_audit_suite.py"), "--command", AUDIT]
    proc = subprocess.run(
        [*args, "--case", "ledger-head-mismatch", "--case", "table-rows"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    failed = sorted(line for line in proc.stderr.splitlines() if line.startswith("FAIL"))
    assert failed == [
        "FAIL ledger-head-mismatch: the case has options beyond level and floor: the command"
        " needs {options}",
        "FAIL table-rows: a table case needs --table-command",
    ]


def test_options_are_written_with_their_templates(tmp_path: Path) -> None:
    options = {"level": 0.9, "holm": False, "curation": True, "trust": "KEYS", "rerun": "all"}
    text = runner.render_options(options, tmp_path)
    assert text == f"--curation --trust {shlex.quote(str(tmp_path / 'KEYS'))} --rerun all"
    mine = {**runner.OPTION_TEMPLATES, "rerun": "--re-execute={value}"}
    assert runner.render_options({"rerun": 2}, tmp_path, mine) == "--re-execute=2"
    with pytest.raises(ValueError, match="--option colour=TEMPLATE"):
        runner.render_options({"colour": "red"}, tmp_path)
    hostile = runner.render_options({"expect_head": "$(touch x); y"}, tmp_path)
    assert hostile == "--expect-head '$(touch x); y'"


def test_findings_without_codes_are_judged_never_a_crash() -> None:
    expected = {"codes": [{"pointer": "/f", "codes": ["A029", "A029"], "match": "includes"}]}
    report = {"f": [{"code": "A029"}, {"message": "no code"}, {"code": 7}, "not a finding"]}
    assert runner.check_report(expected, report) == ["/f: ['7', 'A029', 'None'] lacks ['A029']"]
