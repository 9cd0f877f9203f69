"""The conformance suite (validators/): sound, current, and passed by the SDK and the CLI."""

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
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk import validate

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "validators"
CASE_NAMES = sorted(p.name for p in (SUITE / "cases").iterdir() if p.is_dir())


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_suite_{name}", SUITE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check_suite = _load("check_suite")
run_suite = _load("run_suite")
REGISTRY: dict[str, str] = run_suite.load_registry(SUITE)
#: The validator under test: this interpreter's SDK, never a ``reprobridge`` found on PATH.
VALIDATE = f"{shlex.quote(sys.executable)} -m reprobridge_sdk validate --format json {{path}}"


def _expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SUITE / "cases" / name / "expected.json").read_text())
    return data


def test_the_suite_is_large_enough_and_has_valid_and_invalid_cases() -> None:
    valid = [name for name in CASE_NAMES if _expected(name)["valid"]]
    assert len(CASE_NAMES) >= 80
    assert len(valid) >= 15
    assert len(CASE_NAMES) - len(valid) >= 60


def test_the_sanity_checker_finds_no_problem() -> None:
    assert check_suite.check(SUITE) == []


#: The cases a validator written from the specification alone failed on its first run, each
#: for want of a rule in the text (issue "The standard, on its own").
FIRST_RUN_FAILURES = (
    "empty-patch-series",
    "empty-patch-series-under-1-0",
    "patch-digest-mismatch",
    "patch-digest-missing",
    "patch-file-missing",
    "patches-codebase",
    "patch-series-beside-code-directory",
    "guide-out-of-date",
    "lock-unparseable-line",
    "plugin-data-scheme-in-1-0",
    "plugin-data-scheme-not-installed",
    "plugin-extractor-in-1-0",
    "wrong-type-seeds-string",
    "yaml-core-schema-readings",
)


def _codes_of_row(table: str, context: str) -> set[str]:
    """The codes a row of the generated table of contexts names (ranges expanded)."""
    row = next(line for line in table.splitlines() if line.startswith(f"| {context} |"))
    codes: set[str] = set()
    for first, last in re.findall(r"\b([A-Z][0-9]{3})(?:\u2013([A-Z][0-9]{3}))?\b", row):
        end = last or first
        codes |= {f"{first[0]}{n:03d}" for n in range(int(first[1:]), int(end[1:]) + 1)}
    return codes


@pytest.mark.parametrize("name", FIRST_RUN_FAILURES)
def test_a_first_run_failure_rests_on_sections_that_name_its_codes(name: str) -> None:
    """Each case cites the sections it rests on, each of its codes is named by one of them,
    and the validation context of the conformance part lists the code: a second validator
    learns from the text which codes it reports, where and how severe."""
    expected = _expected(name)
    texts: dict[str, str] = {}
    cited = []
    for ref in expected.get("spec", []):
        part, _, anchor = ref.partition("#")
        texts.setdefault(part, (REPO / "spec" / part).read_text("utf-8"))
        section = check_suite.section_text(texts[part], anchor)
        assert section is not None, ref
        cited.append(section)
    assert cited, f"{name} cites no section"
    contexts = check_suite.section_text((REPO / "spec" / "conformance.md").read_text(), "families")
    assert contexts is not None
    validation = _codes_of_row(contexts, "validation")
    entries = {e["code"]: e for e in json.loads((SUITE / "codes.json").read_text())["codes"]}
    severities = []
    for item in expected["findings"]:
        code = item["code"]
        assert any(re.search(rf"\b{code}\b", text) for text in cited), (name, code)
        assert code in validation, (name, code)
        # the severity is the validation context's (D015: a warning, though an error in run)
        severities.append(item.get("severity", entries[code]["contexts"]["validation"]))
    assert expected["valid"] is ("error" not in severities)


def test_the_sanity_checker_runs_as_a_script() -> None:
    proc = subprocess.run(
        [sys.executable, str(SUITE / "check_suite.py")], check=False, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == ""


def test_the_sanity_checker_catches_a_broken_suite(tmp_path: Path) -> None:
    suite = tmp_path / "validators"
    (suite / "cases" / "bad-case").mkdir(parents=True)
    for name in ("case.schema.json", "codes.json"):
        (suite / name).write_bytes((SUITE / name).read_bytes())
    (suite / "cases" / "bad-case" / "rra.yaml").write_text('rra_version: "1.0"\n')
    (suite / "cases" / "bad-case" / "expected.json").write_text(
        json.dumps(
            {
                "description": "d",
                "format": "1.0",
                "tags": ["required"],
                "valid": True,
                "findings": [{"code": "Z999", "path": ""}, {"code": "S001", "path": "/x"}],
            }
        )
    )
    (suite / "conformance.yaml").write_text(
        "- id: other\n  doc: d\n  path: cases/other\n  tags: [required]\n  should_fail: true\n"
    )
    problems = check_suite.check(suite)
    assert "bad-case: code Z999 is not in codes.json" in problems
    assert "bad-case: valid is True but the findings include error" in problems
    assert "conformance.yaml: case bad-case is not listed" in problems
    assert "conformance.yaml:1: no case directory other" in problems
    assert any(p.startswith("coverage: no case expects Y001") for p in problems)


def test_the_sanity_checker_holds_versions_lifecycle_and_citations(tmp_path: Path) -> None:
    """A required case expects only stable codes; ``format`` covers the declared version and
    every code's ``since``; the cited sections exist and name every expected code."""
    suite = tmp_path / "validators"
    case = suite / "cases" / "bad-case"
    case.mkdir(parents=True)
    for name in ("case.schema.json", "codes.json"):
        (suite / name).write_bytes((SUITE / name).read_bytes())
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "manifest.md").write_text(
        '<a id="yaml"></a>\n## 3. YAML\n\nV005 and P001 are named here.\n\n## 4. Next\n\nS001\n'
    )
    (case / "rra.yaml").write_text("rra_version: '1.1'\n")
    findings = [
        {"code": "P001", "path": "/artifact/paper/title"},  # preview, in a required case
        {"code": "V005", "path": "/x"},  # since 1.1, under format 1.0
        {"code": "S001", "path": "/y"},  # named only in the next section
    ]
    expected = {
        "description": "d",
        "format": "1.0",
        "tags": ["required", "beyond-schema"],
        "valid": False,
        "findings": findings,
        "spec": ["manifest.md#yaml", "manifest.md#nowhere"],
    }
    (case / "expected.json").write_text(json.dumps(expected))
    problems = check_suite.check(suite)
    assert "bad-case: a required case expects P001, which is preview" in problems
    assert "bad-case: expects V005 (since 1.1) under format 1.0" in problems
    assert "bad-case: declares 1.1 but its format is 1.0" in problems
    assert "bad-case: cites manifest.md#nowhere, which the specification does not have" in problems
    assert "bad-case: no section it cites names S001" in problems
    assert "bad-case: no section it cites names V005" not in problems


def test_the_section_of_an_anchor_ends_at_the_next_heading_of_its_level() -> None:
    part = (
        '<a id="a"></a>\n## 1. A\n\none\n<a id="b"></a>\n### 1.1 B\n\ntwo\n'
        '## 2. C\n\nthree\nan inline <a id="i"></a>anchor\n### 2.1 D\n'
    )
    assert check_suite.section_text(part, "a").strip().endswith("two")
    assert "three" not in (check_suite.section_text(part, "a") or "")
    assert (check_suite.section_text(part, "b") or "").strip().endswith("two")
    assert (check_suite.section_text(part, "i") or "").strip() == "anchor"
    assert check_suite.section_text(part, "missing") is None


def test_the_manifest_lists_exactly_the_case_directories() -> None:
    entries = check_suite.load_conformance(SUITE / "conformance.yaml")
    assert [entry["id"] for entry in entries] == CASE_NAMES
    for entry in entries:
        expected = _expected(entry["id"])
        assert entry["path"] == f"cases/{entry['id']}"
        assert entry["tags"] == expected["tags"]
        assert entry["format"] == expected["format"]
        assert entry["should_fail"] is (not expected["valid"])


def _tree(root: Path) -> dict[str, tuple[str, bytes]]:
    result: dict[str, tuple[str, bytes]] = {}
    for directory, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = Path(directory) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                result[rel] = ("link", os.readlink(path).encode())
            elif path.is_file():
                result[rel] = ("file", path.read_bytes())
    return result


def test_the_committed_cases_are_what_the_authoring_script_writes(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "spec" / "tools" / "build_cases.py"), "--out", str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    fresh, committed = _tree(tmp_path / "cases"), _tree(SUITE / "cases")
    assert sorted(fresh) == sorted(committed)
    stale = [rel for rel in fresh if fresh[rel] != committed[rel]]
    assert stale == [], "regenerate with: python spec/tools/build_cases.py"
    conformance = (tmp_path / "conformance.yaml").read_text()
    assert conformance == (SUITE / "conformance.yaml").read_text()


@pytest.mark.parametrize("name", CASE_NAMES)
def test_the_sdk_passes_the_case(name: str) -> None:
    expected = _expected(name)
    case_dir = SUITE / "cases" / name
    result = validate(case_dir)
    reported = [item.to_dict() for item in result.findings]
    assert run_suite.compare(expected["findings"], reported, REGISTRY, case_dir) == []
    assert result.ok is expected["valid"]
    assert result.exit_code == (0 if expected["valid"] else 1)


CLI_CASES = [
    "full-featured",
    "newer-minor-with-unknown-key",
    "alias-bomb",
    "not-utf8",
    "unknown-key-under-known-version",
    "symlink-escapes-as-lock",
    "pylock-unknown-major",
    "extraction-value-differs",
    "guide-out-of-date",
    "manifest-misnamed",
]


@pytest.mark.parametrize("name", CLI_CASES)
def test_the_cli_passes_the_case(name: str) -> None:
    expected = _expected(name)
    case_dir = SUITE / "cases" / name
    proc = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", "--format", "json", str(case_dir)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == (0 if expected["valid"] else 1), proc.stderr
    reported = run_suite.collect_findings(json.loads(proc.stdout))
    assert run_suite.compare(expected["findings"], reported, REGISTRY, case_dir) == []


def test_the_runner_passes_the_reference_validator_and_writes_junit(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    picked = ["minimal-valid", "duplicate-key", "lock-unhashed-requirement"]
    proc = subprocess.run(
        [
            sys.executable,
            str(SUITE / "run_suite.py"),
            "--command",
            VALIDATE,
            "--junit",
            str(junit),
            *[arg for name in picked for arg in ("--case", name)],
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")
    cases = {str(case.get("name")): case for case in suite.iter("testcase")}
    assert sorted(cases) == sorted(picked)
    assert cases["lock-unhashed-requirement"].get("classname") == "rra.conformance.locks"


def test_the_runner_reports_a_validator_that_finds_nothing(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    silent = f'{sys.executable} -c "print(\'{{\\"findings\\": []}}\')" {{path}}'
    proc = subprocess.run(
        [
            sys.executable,
            str(SUITE / "run_suite.py"),
            "--command",
            silent,
            "--junit",
            str(junit),
            "--case",
            "minimal-valid",
            "--case",
            "unknown-top-level-key",
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failure = next(c for c in suite.iter("testcase") if c.get("name") == "unknown-top-level-key")
    element = failure.find("failure")
    assert element is not None and element.text is not None
    assert element.text.splitlines() == [
        "missing: S001 at '/readme'",
        "exit status 0, expected 1",
    ]


def test_the_runner_reports_a_validator_that_crashes(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    crash = f'{sys.executable} -c "import sys; sys.exit(2)" {{path}}'
    args = [sys.executable, str(SUITE / "run_suite.py"), "--command", crash]
    proc = subprocess.run(
        [*args, "--junit", str(junit), "--case", "minimal-valid"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1"


def test_the_runner_selects_cases_by_tags() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(SUITE / "run_suite.py"),
            "--command",
            VALIDATE,
            "--tags",
            "pylock,locks,digests",
            *[arg for name in SAMPLE_OF_CASES for arg in ("--case", name)],
            "-j",
            "2",
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    # yaml and versioning are mandatory: --tags never leaves their cases out
    tags = {"pylock", "locks", "digests"} | run_suite.MANDATORY
    selected = [n for n in SAMPLE_OF_CASES if set(_expected(n)["tags"]) <= tags]
    assert {"alias-bomb", "version-missing", "pylock-lock"} <= set(selected)
    assert "guide-missing" not in selected
    assert proc.stderr.strip().endswith(f"{len(selected)}/{len(selected)} cases passed")


def test_the_runner_selects_the_cases_of_a_format_level() -> None:
    """``--format-version 1.0`` leaves out every case that needs a 1.1 validator: a 1.1
    document, or a 1.0 document whose expected codes are 1.1's (V005, C005, D015, X005)."""
    cases = run_suite.load_cases(SUITE)
    level_10 = set(run_suite.select(cases, format_version="1.0"))
    assert {"minimal-valid", "alias-bomb", "version-missing"} <= level_10
    needs_11 = {
        "version-1-1",
        "empty-patch-series-under-1-0",
        "plugin-extractor-in-1-0",
        "plugin-data-scheme-in-1-0",
        "patch-series-beside-code-directory",
    }
    assert not level_10 & needs_11
    assert set(run_suite.select(cases, format_version="1.1")) == set(cases)
    assert set(run_suite.select(cases)) == set(cases)
    for name in level_10:
        assert cases[name]["format"] == "1.0"
        assert all(REGISTRY_SINCE[f["code"]] == "1.0" for f in cases[name]["findings"])


REGISTRY_SINCE = {
    entry["code"]: entry["since"]
    for entry in json.loads((SUITE / "codes.json").read_text("utf-8"))["codes"]
}


#: A few cases of every kind of tag, for the selection test (the whole suite runs elsewhere).
SAMPLE_OF_CASES = (
    "alias-bomb",
    "version-missing",
    "pylock-lock",
    "guide-missing",
    "lock-unhashed-requirement",
)


class TestCompare:
    """The matching rules of README.md, on values."""

    def test_an_exact_match_passes(self) -> None:
        want = [{"code": "S001", "path": "/a"}, {"code": "S001", "path": "/a"}]
        got = [{"code": "S001", "path": "/a"}, {"code": "S001", "path": "/a"}]
        assert run_suite.compare(want, got, REGISTRY) == []

    def test_findings_are_a_multiset(self) -> None:
        want = [{"code": "S001", "path": "/a"}, {"code": "S001", "path": "/a"}]
        got = [{"code": "S001", "path": "/a"}]
        assert run_suite.compare(want, got, REGISTRY) == ["missing: S001 at '/a'"]

    def test_an_extra_info_is_allowed_but_not_an_extra_warning(self) -> None:
        got = [
            {"code": "F007", "path": "/x", "severity": "info"},
            {"code": "F007", "path": "/y", "severity": "warning"},
        ]
        assert run_suite.compare([], got, REGISTRY) == ["unexpected: F007 (warning) at '/y'"]

    def test_the_severity_must_match_the_registry_default(self) -> None:
        got = [{"code": "V003", "path": "/rra_version", "severity": "error"}]
        want = [{"code": "V003", "path": "/rra_version"}]
        problems = run_suite.compare(want, got, REGISTRY)
        assert problems == ["severity: V003 at '/rra_version' is error, expected warning"]

    def test_a_file_is_compared_relative_to_the_case(self, tmp_path: Path) -> None:
        want = [{"code": "G003", "path": "", "file": "GUIDE.md"}]
        good = [{"code": "G003", "path": "", "file": str(tmp_path / "GUIDE.md")}]
        bad = [{"code": "G003", "path": "", "file": str(tmp_path / "NOTES.md")}]
        assert run_suite.compare(want, good, REGISTRY, tmp_path) == []
        assert run_suite.compare(want, bad, REGISTRY, tmp_path)[0].startswith("missing: G003")

    def test_findings_are_collected_from_any_json_shape(self) -> None:
        document = {
            "results": [{"artifact": "a", "problems": [{"code": "R001", "path": "/tasks/1/id"}]}],
            "summary": {"code": "not-a-code", "path": ""},
        }
        assert run_suite.collect_findings(document) == [{"code": "R001", "path": "/tasks/1/id"}]


_FINDING = st.fixed_dictionaries(
    {
        "code": st.sampled_from(sorted(REGISTRY)),
        "path": st.sampled_from(["", "/a", "/tasks/0", "/x~1y", "/tasks/0/metric"]),
    }
)


@settings(max_examples=60, deadline=None)
@given(findings=st.lists(_FINDING, max_size=8), data=st.data())
def test_matching_is_order_free_and_counts_every_finding(
    findings: list[dict[str, str]], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(findings))
    assert run_suite.compare(findings, shuffled, REGISTRY) == []
    if findings:
        problems = run_suite.compare(findings, shuffled[1:], REGISTRY)
        assert len(problems) == 1
        assert problems[0].startswith("missing: ")
        extra = run_suite.compare(shuffled[1:], findings, REGISTRY)
        if REGISTRY[shuffled[0]["code"]] == "info":
            assert extra == []
        else:
            assert len(extra) == 1
            assert extra[0].startswith("unexpected: ")


def test_the_suite_readme_only_points_at_the_spec() -> None:
    """The suite's README is informative: the rules live in spec/conformance.md."""
    text = (SUITE / "README.md").read_text("utf-8")
    keywords = r"\b(?:MUST|SHALL|SHOULD|REQUIRED|RECOMMENDED|MAY|OPTIONAL)\b"
    assert re.findall(keywords, text) == []
    assert "../spec/conformance.md" in text
