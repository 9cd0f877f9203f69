"""The specification: generated parts current, anchors and links complete, every example loads.

The specification is split into parts (``spec/*.md``); anchors are unique across the parts and a
link from one part to another names the file (``manifest.md#digests``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk import validate
from reprobridge_sdk.api import load
from reprobridge_sdk.audit import compatibility_interval, holm, score
from reprobridge_sdk.digest import tree_digest
from reprobridge_sdk.findings import registry
from reprobridge_sdk.io import document, yamlio

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "spec"
EXAMPLES = REPO / "spec" / "examples"
CASES = REPO / "validators" / "cases"
PARTS = {path.name: path.read_text("utf-8") for path in sorted(SPEC_DIR.glob("*.md"))}
TEXT = "\n".join(PARTS.values())
PART_ANCHORS = {name: re.findall(r'<a id="([^"]+)"></a>', text) for name, text in PARTS.items()}
ANCHORS = {anchor for anchors in PART_ANCHORS.values() for anchor in anchors}
CATALOGUE = PARTS["codes.md"]
EXAMPLE_DIRS = sorted(p.name for p in EXAMPLES.iterdir() if (p / "rra.yaml").is_file())


def _expected(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CASES / case / "expected.json").read_text("utf-8"))
    return data


def test_the_generated_parts_and_examples_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "spec" / "tools" / "build_spec.py"), "--check"],
        check=False,
        capture_output=True,
        text=True,
    )
    hint = "regenerate with: python spec/tools/build_spec.py\n"
    assert proc.returncode == 0, hint + proc.stdout + proc.stderr


def test_the_specification_has_its_parts() -> None:
    assert {"README.md", "manifest.md", "runner.md", "audit.md", "codes.md"} <= set(PARTS)


def test_every_anchor_is_unique_across_the_parts() -> None:
    every = [anchor for anchors in PART_ANCHORS.values() for anchor in anchors]
    assert sorted(a for a in set(every) if every.count(a) > 1) == []


def test_every_spec_anchor_of_the_registry_exists() -> None:
    """A code's ``spec`` is ``<part>#<anchor>``: the part exists and holds the anchor."""
    missing = []
    for code, info in registry().items():
        part, _, anchor = info.spec.partition("#")
        if anchor not in PART_ANCHORS.get(part, []):
            missing.append((code, info.spec))
    assert missing == []


def test_the_section_of_every_registry_entry_names_its_code() -> None:
    """conformance.md#registry: a section that a registry entry names names its code."""
    sys.path.insert(0, str(REPO / "validators"))
    try:
        check_suite = importlib.import_module("check_suite")
    finally:
        sys.path.remove(str(REPO / "validators"))
    silent = []
    for code, info in registry().items():
        part, _, anchor = info.spec.partition("#")
        section = check_suite.section_text(PARTS[part], anchor) or ""
        if not re.search(rf"\b{code}\b", section):
            silent.append((code, info.spec))
    assert silent == []


def test_documented_codes_are_the_registered_codes() -> None:
    """Both ways: every registered code has a section, every code section is registered."""
    registered = {code: info.name for code, info in registry().items()}
    headings = re.findall(r"^#### ([A-Z]\d{3}) (\S+)$", TEXT, flags=re.MULTILINE)
    anchored = {a for a in PART_ANCHORS["codes.md"] if re.fullmatch(r"[A-Z]\d{3}", a)}
    assert len(headings) == len({code for code, _ in headings})
    assert dict(headings) == registered
    assert anchored == set(registered)
    catalogue = CATALOGUE.split('<a id="codes"></a>', 1)[1]
    for code, info in registry().items():
        section = catalogue.split(f'<a id="{code}"></a>', 1)[1].split("<a id=", 1)[0]
        assert f"[{info.spec}]({info.spec})" in section, code
        assert "Reported for" in section or "reported for:" in section, code
        assert "Not reported for" in section, code


def test_every_code_outside_validation_has_a_runtime_example() -> None:
    sys.path.insert(0, str(REPO / "spec" / "tools"))
    try:
        module = importlib.import_module("_runtime_examples")
    finally:
        sys.path.remove(str(REPO / "spec" / "tools"))
    examples: dict[str, tuple[str, str, str]] = module.RUNTIME_EXAMPLES
    from_cases = set(json.loads((EXAMPLES / "codes.json").read_text("utf-8")))
    assert set(examples) == set(registry()) - from_cases
    for code, (lang, reported, fine) in examples.items():
        assert lang in {"sh", "yaml", "jsonc"}, code
        assert reported.strip() and fine.strip() and reported != fine, code
        assert code in reported, code  # the snippet says where the code appears


def test_every_internal_link_resolves() -> None:
    """``(#anchor)`` names an anchor of the same part, ``(part.md#anchor)`` one of that part."""
    broken = []
    for name, text in PARTS.items():
        for part, anchor in re.findall(r"\]\(([\w-]+\.md)?(?:#([^)]+))?\)", text):
            target = part or name
            if target not in PARTS or (anchor and anchor not in PART_ANCHORS[target]):
                broken.append((name, f"{part}#{anchor}"))
    assert broken == []


def test_every_example_file_the_spec_names_exists() -> None:
    named = set(re.findall(r"spec/examples/([\w./-]+[\w/])", TEXT))
    assert named
    missing = [name for name in named if not (EXAMPLES / name).exists()]
    assert missing == []


def test_the_limits_are_those_of_the_reference_loader() -> None:
    sys.path.insert(0, str(REPO / "spec" / "tools"))
    try:
        cases = importlib.import_module("_cases_valid")
    finally:
        sys.path.remove(str(REPO / "spec" / "tools"))
    assert (cases.MAX_BYTES, cases.MAX_DEPTH, cases.MAX_ALIAS_NODES) == (
        document.MAX_BYTES,
        document.MAX_DEPTH,
        document.MAX_ALIAS_NODES,
    )
    for name in ("size", "depth", "aliases"):
        assert _expected(f"{name}-at-limit")["findings"] == []
        assert len(_expected(f"{name}-past-limit")["findings"]) == 1
    text = PARTS["manifest.md"]
    assert f"8 MiB ({document.MAX_BYTES:,} bytes)" in text
    assert f"| Nesting depth of collections | {document.MAX_DEPTH} | Y005 |" in text
    assert f"| {document.MAX_ALIAS_NODES:,} | Y004 |" in text


@pytest.mark.parametrize("name", EXAMPLE_DIRS)
def test_the_example_artifact_validates_as_its_conformance_case_says(name: str) -> None:
    result = validate(EXAMPLES / name)
    got = sorted((item.code, item.path) for item in result.findings)
    want = sorted((item["code"], item["path"]) for item in _expected(name)["findings"])
    assert got == want
    assert result.ok


@pytest.mark.parametrize("name", [n for n in EXAMPLE_DIRS if _expected(n)["findings"] == []])
def test_the_example_artifact_loads_into_the_typed_model(name: str) -> None:
    artifact = load(EXAMPLES / name)
    assert artifact.manifest.artifact.id == name
    assert artifact.manifest.rra_version == "1.0"


@pytest.mark.parametrize("name", EXAMPLE_DIRS)
def test_the_example_manifest_round_trips(name: str) -> None:
    path = EXAMPLES / name / "rra.yaml"
    doc = yamlio.load(path)
    assert yamlio.dumps(doc) == path.read_text("utf-8")


def test_the_example_artifacts_are_the_conformance_cases() -> None:
    for name in EXAMPLE_DIRS:
        for file in (EXAMPLES / name).rglob("*"):
            twin = CASES / name / file.relative_to(EXAMPLES / name)
            assert twin.exists(), twin
            if file.is_file() and not file.is_symlink():
                assert file.read_bytes() == twin.read_bytes(), file


def test_every_manifest_code_has_an_invalid_and_a_valid_example() -> None:
    examples = json.loads((EXAMPLES / "codes.json").read_text("utf-8"))
    # L010, L011, L013, L014: only `reprobridge lock` reports them. F010 and F011 need a file
    # over a size limit or checks that exhaust recursion or memory, F012 a read past its
    # deadline: no committed case can hold one; they have runtime examples and tests over
    # sparse files and deep documents (tests/hardening).
    # V006: only `upgrade`; V008: only an editor's save(). X006-X008 need an installed
    # extractor plugin (tests/ecosystem/test_plugin_extractors.py).
    not_from_validation = {
        *("L010", "L011", "L013", "L014", "F010", "F011", "F012", "V006", "V008", "X006", "X007"),
        "X008",
    }
    manifest_codes = {code for code in registry() if code[0] in "YVSRFLXG"} - not_from_validation
    assert set(examples) == manifest_codes
    for code, pair in examples.items():
        invalid, valid = pair["invalid"], pair["valid"]
        assert code in {item["code"] for item in _expected(invalid["case"])["findings"]}, code
        assert _expected(valid["case"])["valid"] is True, code
        assert code not in {item["code"] for item in _expected(valid["case"])["findings"]}, code
        for part in (invalid, valid):
            if part["file"] is None:
                continue
            lines = (CASES / part["case"] / part["file"]).read_bytes().splitlines()
            first, last = part["lines"]
            assert 1 <= first <= last <= len(lines), code


def _number(text: str) -> float:
    return float(text)


def test_the_worked_interval_examples_match_the_reference_auditor() -> None:
    data = json.loads((EXAMPLES / "interval.json").read_text("utf-8"))
    tolerance = data["tolerance"]
    for case in data["cases"]:
        observations = [_number(x) for x in case["observations"]]
        interval = compatibility_interval(observations, level=data["level"], floor=data["floor"])
        if case["low"] is None:
            assert not interval.defined
        else:
            assert interval.defined
            for key in ("mean", "half_width", "low", "high"):
                assert getattr(interval, key) == pytest.approx(case[key], abs=tolerance)
            for key in ("sd", "t"):
                if case[key] is None:
                    assert math.isnan(getattr(interval, key))
                else:
                    assert getattr(interval, key) == pytest.approx(case[key], abs=tolerance)
            assert interval.floor_only is case["floor_only"]
        for value, compatible in case["compatible"].items():
            assert interval.contains(float(value)) is compatible, (case["observations"], value)
        for value, pair in case.get("scores", {}).items():
            got = score(interval, float(value))
            if pair is None:
                assert got is None
                continue
            assert got is not None
            assert (got.z, got.p) == pytest.approx(pair, abs=tolerance)
            inside = interval.contains(float(value))
            assert (abs(got.z) <= interval.t) is inside
            assert (got.p >= 1 - data["level"]) is inside
    assert holm(data["holm"]["p"]) == pytest.approx(data["holm"]["adjusted"], abs=1e-12)


def test_the_tree_digest_is_the_byte_layout_the_spec_describes(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_bytes(b"print(1)\n")
    (tmp_path / "run.sh").write_bytes(b"#!/bin/sh\npython train.py\n")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "labels.txt").write_bytes(b"0\n1\n")
    (tmp_path / "data" / "latest").symlink_to("labels.txt")
    (tmp_path / "empty").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "train.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "stale.pyc").write_bytes(b"\0")

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    entries = sorted(
        [
            (b"data/labels.txt", b"f", sha(b"0\n1\n").encode()),
            (b"data/latest", b"l", b"labels.txt"),
            (b"run.sh", b"x", sha(b"#!/bin/sh\npython train.py\n").encode()),
            (b"train.py", b"f", sha(b"print(1)\n").encode()),
        ]
    )
    layout = b"".join(kind + b"\0" + path + b"\0" + value + b"\n" for path, kind, value in entries)
    assert tree_digest(tmp_path) == "sha256-tree1:" + sha(layout)


def test_the_bundled_example_names_its_enclosing_repository_as_the_spec_allows() -> None:
    """spec#upstream-repository: a relative path of `..` segments to the enclosing repo."""
    assert '<a id="upstream-repository"></a>' in TEXT
    artifact = REPO / "examples" / "digits-logreg"
    manifest = load(artifact).manifest
    relative = manifest.codebase.upstream.repository
    assert relative.split("/") == [".."] * len(relative.split("/"))
    top = (artifact / relative).resolve()
    assert artifact.resolve().is_relative_to(top)
    assert not [f for f in validate(artifact).findings if f.path.startswith("/codebase/upstream")]
    if not (top / ".git").exists():
        pytest.skip("not a git checkout: the enclosing repository cannot be inspected")
    git = ["git", "-C", str(artifact)]
    toplevel = subprocess.run(
        [*git, "rev-parse", "--show-toplevel"], check=True, capture_output=True, text=True
    )
    assert Path(toplevel.stdout.strip()).resolve() == top
    commit = manifest.codebase.upstream.commit
    found = subprocess.run(
        [*git, "cat-file", "-t", commit], check=False, capture_output=True, text=True
    )
    assert found.stdout.strip() == "commit"


def _named_codes(text: str) -> set[str]:
    """Codes named in ``text``, ranges such as ``A021-A023`` (hyphen or en dash) expanded."""
    named = set(re.findall(r"\b[A-Z]\d{3}\b", text))
    for family, first, last in re.findall(r"\b([A-Z])(\d{3})[\u2013-]\1?(\d{3})\b", text):
        named |= {f"{family}{n:03d}" for n in range(int(first), int(last) + 1)}
    return named


def test_the_normative_text_names_every_registered_code() -> None:
    """Each code is specified in the prose, not only listed in the generated catalogue."""
    prose = "\n".join(text for name, text in PARTS.items() if name != "codes.md")
    prose = re.sub(r"<!-- begin generated.*?<!-- end generated -->", "", prose, flags=re.DOTALL)
    assert set(registry()) - _named_codes(prose) == set()
