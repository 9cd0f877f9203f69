"""Sanity checks for the conformance suite's own files (standard library + jsonschema).

Usage: ``python validators/check_suite.py [SUITE_DIR]`` (default: this file's directory).
Prints one line per problem and exits 1 if there is any, 0 otherwise.

Checked invariants (see README.md):

* every directory under ``cases/`` holds exactly one ``expected.json``, valid against
  ``case.schema.json``;
* every expected code exists in ``codes.json`` and is not ``removed``;
* ``valid`` is true exactly when no expected finding has severity ``error`` (the code's
  registry severity unless the finding states its own);
* a finding's ``file``, when given, exists in the case;
* ``conformance.yaml`` lists exactly the case directories, with the same tags, and
  ``should_fail`` equal to ``not valid``;
* every stable code of the validation context appears in at least one case (except the
  few that a case cannot hold, listed in ``NOT_FROM_VALIDATION``);
* a case tagged ``required`` expects only required codes (status ``stable``);
* ``format`` is at least the version the case's ``rra.yaml`` declares (when the registry
  knows it) and the ``since`` of every expected code;
* the sections a case cites (``spec``) exist in the specification beside the suite
  (``../spec``), and together name every code the case expects.

The rules themselves are normative in the specification (spec/conformance.md).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

__all__ = [
    "BEYOND_SCHEMA",
    "COVERED_FAMILIES",
    "NOT_FROM_VALIDATION",
    "SCHEMA_CODES",
    "check",
    "load_conformance",
    "main",
]

#: The context whose stable codes must each appear in at least one case.
COVERED_CONTEXT = "validation"
#: Code families of the validation context (kept for readers of this module's 1.0 API).
COVERED_FAMILIES = ("Y", "V", "S", "R", "F", "L", "X", "G", "C", "D")
#: Codes of the validation context that a committed case cannot hold. F010 (a file over its
#: size limit: 64 MiB and more) and F011 (checks that exhaust the work a program allows).
#: X006 and X007 need an installed extractor plugin, which a case cannot ship. C003, C004,
#: C010 and C024-C026 need an upstream in the cache or a git bundle and git.
NOT_FROM_VALIDATION = frozenset(
    {"F010", "F011", "X006", "X007", "C003", "C004", "C010", "C024", "C025", "C026"}
)
#: The statuses of the codes a conforming program is required to report (spec: conformance,
#: "Lifecycle"); a case tagged ``required`` expects no other.
REQUIRED_STATUSES = frozenset({"stable", "deprecated"})

#: The tag of the cases a JSON Schema validator alone cannot judge (README, "Tag"), and the
#: codes of the schema's own errors: a case that expects others needs more than the schema.
BEYOND_SCHEMA = "beyond-schema"
SCHEMA_CODES = frozenset({"S001", "S002", "S003", "S004"})

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_ENTRY_RE = re.compile(r"^- id: (?P<value>.+)$")
_FIELD_RE = re.compile(r"^  (?P<key>doc|path|format|tags|should_fail): (?P<value>.*)$")
_DECLARED = re.compile(r"^rra_version: *['\"]?(1\.(?:0|[1-9][0-9]*))['\"]? *\r?$", re.MULTILINE)
_ANCHOR_RE = re.compile(r'<a id="([^"]+)"></a>')
_HEADING_RE = re.compile(r"^(#+) ", re.MULTILINE)
_FENCE_RE = re.compile(r"^ *(?:```|~~~)", re.MULTILINE)


def load_conformance(path: Path) -> list[dict[str, Any]]:
    """Read ``conformance.yaml`` (the flat subset of YAML it is written in)."""
    entries: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        entry = _ENTRY_RE.match(line)
        if entry:
            entries.append({"id": entry.group("value").strip(), "line": number})
            continue
        field = _FIELD_RE.match(line)
        if field is None or not entries:
            msg = f"{path.name}:{number}: unexpected line {line!r}"
            raise ValueError(msg)
        key, value = field.group("key"), field.group("value").strip()
        if key == "tags":
            if not (value.startswith("[") and value.endswith("]")):
                msg = f"{path.name}:{number}: tags must be a flow list"
                raise ValueError(msg)
            entries[-1][key] = [t.strip() for t in value[1:-1].split(",") if t.strip()]
        elif key == "should_fail":
            if value not in {"true", "false"}:
                msg = f"{path.name}:{number}: should_fail must be true or false"
                raise ValueError(msg)
            entries[-1][key] = value == "true"
        elif key in ("doc", "format"):
            entries[-1][key] = json.loads(value) if value.startswith('"') else value
        else:
            entries[-1][key] = value
    return entries


def _severity(item: dict[str, Any], registry: dict[str, dict[str, Any]]) -> str:
    """The expected severity: the finding's own, else the code's in the validation context."""
    if "severity" in item:
        return str(item["severity"])
    entry = registry.get(item["code"], {})
    return str(entry.get("contexts", {}).get("validation", entry.get("severity", "error")))


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def section_text(part: str, anchor: str) -> str | None:
    """The text of the section at ``anchor`` in ``part``: from the anchor to the next heading
    of the same or a higher level than the heading that follows it (an anchor inside a
    paragraph runs to the next heading); ``None`` when the part has no such anchor."""
    marker = f'<a id="{anchor}"></a>'
    start = part.find(marker)
    if start < 0:
        return None
    rest = part[start + len(marker) :]
    first = _HEADING_RE.search(rest)
    if first is None:
        return rest
    if rest[: first.start()].strip():  # an anchor in the text, not before a heading
        return rest[: first.start()]
    level = len(first.group(1))
    fenced = {m.start() for m in _HEADING_RE.finditer(rest) if _in_fence(rest, m.start())}
    for heading in _HEADING_RE.finditer(rest, first.end()):
        if len(heading.group(1)) <= level and heading.start() not in fenced:
            return rest[: heading.start()]
    return rest


def _in_fence(text: str, offset: int) -> bool:
    """True when ``offset`` lies inside a fenced code block of ``text``."""
    return len(_FENCE_RE.findall(text, 0, offset)) % 2 == 1


def _check_citations(
    name: str, expected: dict[str, Any], spec_dir: Path, texts: dict[str, str]
) -> list[str]:
    problems: list[str] = []
    cited: list[str] = []
    for ref in expected.get("spec", []):
        part, _, anchor = ref.partition("#")
        if part not in texts:
            path = spec_dir / part
            texts[part] = path.read_text("utf-8") if path.is_file() else ""
        text = section_text(texts[part], anchor)
        if text is None:
            problems.append(f"{name}: cites {ref}, which the specification does not have")
        else:
            cited.append(text)
    if "spec" in expected:
        for code in sorted({item["code"] for item in expected["findings"]}):
            if not any(re.search(rf"\b{code}\b", text) for text in cited):
                problems.append(f"{name}: no section it cites names {code}")
    return problems


def check(suite: Path) -> list[str]:
    """All problems of the suite at ``suite`` (an empty list when it is sound)."""
    problems: list[str] = []
    schema = json.loads((suite / "case.schema.json").read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    codes = json.loads((suite / "codes.json").read_text("utf-8"))["codes"]
    registry = {entry["code"]: entry for entry in codes}
    known = max((_version(entry["since"]) for entry in codes), default=(1, 0))
    spec_dir = suite.parent / "spec"
    spec_texts: dict[str, str] = {}
    cases_dir = suite / "cases"
    case_dirs = sorted(p for p in cases_dir.iterdir() if p.is_dir())
    expected_by_case: dict[str, dict[str, Any]] = {}
    seen_codes: set[str] = set()

    for case in case_dirs:
        name = case.name
        if not _NAME_RE.match(name):
            problems.append(f"{name}: case names are lower-case words joined by '-'")
        candidates = sorted(p.name for p in case.iterdir() if p.name.startswith("expected"))
        if candidates != ["expected.json"]:
            problems.append(f"{name}: needs exactly one expected.json, found {candidates}")
            continue
        try:
            expected = json.loads((case / "expected.json").read_text("utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{name}: expected.json does not parse: {exc}")
            continue
        errors = sorted(validator.iter_errors(expected), key=lambda e: list(e.path))
        for error in errors:
            where = "/" + "/".join(str(p) for p in error.path)
            problems.append(f"{name}: expected.json{where}: {error.message}")
        if errors:
            continue
        expected_by_case[name] = expected
        has_error = False
        for item in expected["findings"]:
            code = item["code"]
            seen_codes.add(code)
            entry = registry.get(code)
            if entry is None:
                problems.append(f"{name}: code {code} is not in codes.json")
                continue
            if entry.get("status") == "removed":
                problems.append(f"{name}: code {code} is removed")
            elif "required" in expected["tags"] and entry.get("status") not in REQUIRED_STATUSES:
                problems.append(
                    f"{name}: a required case expects {code}, which is {entry.get('status')}"
                )
            if _version(entry["since"]) > _version(expected["format"]):
                problems.append(
                    f"{name}: expects {code} (since {entry['since']}) under format "
                    f"{expected['format']}"
                )
            if _severity(item, registry) == "error":
                has_error = True
            if "file" in item and not (case / item["file"]).exists():
                problems.append(f"{name}: finding {code} names a missing file {item['file']}")
        if expected["valid"] == has_error:
            problems.append(
                f"{name}: valid is {expected['valid']} but the findings "
                f"{'include' if has_error else 'have no'} error"
            )
        if (case / "rra.yaml").is_file():
            declared = _DECLARED.search((case / "rra.yaml").read_bytes().decode("utf-8", "replace"))
            if declared and known >= _version(declared.group(1)) > _version(expected["format"]):
                problems.append(
                    f"{name}: declares {declared.group(1)} but its format is {expected['format']}"
                )
        if spec_dir.is_dir():
            problems += _check_citations(name, expected, spec_dir, spec_texts)
        if not (case / "rra.yaml").exists() and "Y010" not in {
            i["code"] for i in expected["findings"]
        }:
            problems.append(f"{name}: no rra.yaml, so Y010 must be expected")
        beyond = (
            not (case / "rra.yaml").exists()
            or "yaml" in expected["tags"]
            or any(i["code"] not in SCHEMA_CODES for i in expected["findings"])
        )
        if beyond != (BEYOND_SCHEMA in expected["tags"]):
            problems.append(
                f"{name}: the tag {BEYOND_SCHEMA} must be there if and only if the schema alone "
                "cannot judge the case (README, 'Tag')"
            )

    manifest_path = suite / "conformance.yaml"
    try:
        entries = load_conformance(manifest_path)
    except (OSError, ValueError) as exc:
        problems.append(f"conformance.yaml: {exc}")
        entries = []
    listed: dict[str, dict[str, Any]] = {}
    for entry in entries:
        case_id = entry["id"]
        if case_id in listed:
            problems.append(f"conformance.yaml:{entry['line']}: {case_id} is listed twice")
        listed[case_id] = entry
        for key in ("doc", "path", "format", "tags", "should_fail"):
            if key not in entry:
                problems.append(f"conformance.yaml:{entry['line']}: {case_id} has no {key}")
        if entry.get("path") != f"cases/{case_id}":
            problems.append(f"conformance.yaml:{entry['line']}: {case_id} has a wrong path")
        expected = expected_by_case.get(case_id)
        if expected is None:
            if not (cases_dir / case_id).is_dir():
                problems.append(f"conformance.yaml:{entry['line']}: no case directory {case_id}")
            continue
        if entry.get("tags") != expected["tags"]:
            problems.append(f"conformance.yaml: {case_id} tags differ from expected.json")
        if entry.get("should_fail") != (not expected["valid"]):
            problems.append(f"conformance.yaml: {case_id} should_fail differs from expected.json")
        if entry.get("format") != expected["format"]:
            problems.append(f"conformance.yaml: {case_id} format differs from expected.json")
        if entry.get("doc") != expected["description"]:
            problems.append(f"conformance.yaml: {case_id} doc differs from the description")
    for case in case_dirs:
        if case.name not in listed:
            problems.append(f"conformance.yaml: case {case.name} is not listed")

    for code, entry in sorted(registry.items()):
        covered = COVERED_CONTEXT in entry.get("contexts", {}) and entry.get("status") == "stable"
        covered = covered and code not in NOT_FROM_VALIDATION
        if covered and code not in seen_codes:
            problems.append(f"coverage: no case expects {code} ({entry['name']})")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    suite = Path(args[0]) if args else Path(__file__).resolve().parent
    problems = check(suite)
    for problem in problems:
        sys.stdout.write(problem + "\n")
    count = len(list((suite / "cases").iterdir()))
    sys.stderr.write(f"{count} cases, {len(problems)} problem(s)\n")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
