"""Run any RRA validator over the conformance suite and write JUnit XML (standard library only).

Usage::

    python validators/run_suite.py --command "my-validator --format json {path}" \
        [--format-version 1.0] [--tags required,digests] [--case NAME ...] \
        [--junit results.xml] [-j 4]

``{path}`` is replaced by the (shell-quoted) case directory. The validator prints JSON on
stdout; every object with a string ``code`` (like ``S001``) and a string ``path`` found
anywhere in it is taken as a finding. The pass criteria are normative in the specification
(spec/conformance.md, "Pass criteria"); this script applies them.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CaseResult",
    "collect_findings",
    "compare",
    "load_cases",
    "load_registry",
    "main",
    "run_case",
    "select",
    "write_junit",
]

SUITE = Path(__file__).resolve().parent
_CODE_RE = re.compile(r"^[A-Z][0-9]{3}$")


#: Tags every conforming validator implements: cases carrying only these are never skipped.
MANDATORY = frozenset({"required", "yaml", "versioning", "beyond-schema"})


@dataclass
class CaseResult:
    """The outcome of one case."""

    name: str
    tags: list[str]
    problems: list[str] = field(default_factory=list)  # non-empty: the case failed
    error: str | None = None  # the validator could not be run or gave no JSON
    seconds: float = 0.0
    output: str = ""

    @property
    def passed(self) -> bool:
        return not self.problems and self.error is None


def load_registry(suite: Path = SUITE) -> dict[str, str]:
    """Code -> its severity in the validation context (its default severity when the
    registry lists no validation context for it), from ``codes.json``."""
    data = json.loads((suite / "codes.json").read_text("utf-8"))
    return {
        entry["code"]: entry.get("contexts", {}).get("validation", entry["severity"])
        for entry in data["codes"]
    }


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def select(
    cases: Mapping[str, Mapping[str, Any]],
    *,
    names: Sequence[str] = (),
    tags: set[str] | None = None,
    format_version: str | None = None,
) -> list[str]:
    """The cases to run: by name, by tags (every tag of the case in ``tags`` or mandatory)
    and by format (the case's ``format`` at most ``format_version``)."""
    allowed = None if tags is None else tags | MANDATORY
    limit = None if format_version is None else _version(format_version)
    return [
        name
        for name, expected in cases.items()
        if (not names or name in names)
        and (allowed is None or set(expected["tags"]) <= allowed)
        and (limit is None or _version(expected.get("format", "1.0")) <= limit)
    ]


def load_cases(suite: Path = SUITE) -> dict[str, dict[str, Any]]:
    """Case name -> its ``expected.json``, for every case directory."""
    result: dict[str, dict[str, Any]] = {}
    for case in sorted((suite / "cases").iterdir()):
        expected = case / "expected.json"
        if case.is_dir() and expected.is_file():
            result[case.name] = json.loads(expected.read_text("utf-8"))
    return result


def collect_findings(document: Any) -> list[dict[str, Any]]:
    """Every finding-shaped object (string ``code`` and ``path``) anywhere in ``document``."""
    found: list[dict[str, Any]] = []
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            code, path = node.get("code"), node.get("path")
            if isinstance(code, str) and _CODE_RE.match(code) and isinstance(path, str):
                found.append(dict(node))
                continue
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return found


def _relative_file(value: Any, case_dir: Path) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("\\", "/")
    for base in (case_dir.resolve().as_posix(), case_dir.as_posix()):
        if text.startswith(base + "/"):
            return text[len(base) + 1 :]
    return text.removeprefix("./")


def compare(
    expected: Iterable[Mapping[str, Any]],
    reported: Iterable[Mapping[str, Any]],
    registry: Mapping[str, str],
    case_dir: Path | None = None,
) -> list[str]:
    """Why ``reported`` does not conform to ``expected`` (empty when it does)."""
    problems: list[str] = []
    pool = [dict(item) for item in reported]
    for item in pool:
        item["_file"] = _relative_file(item.get("file"), case_dir or Path())
    for want in expected:
        code, path, file = want["code"], want["path"], want.get("file")
        severity = want.get("severity") or registry.get(code, "error")
        index = next(
            (
                i
                for i, got in enumerate(pool)
                if got["code"] == code
                and got["path"] == path
                and (file is None or got["_file"] is None or got["_file"].endswith(file))
            ),
            None,
        )
        label = f"{code} at {path!r}" + (f" in {file}" if file else "")
        if index is None:
            problems.append(f"missing: {label}")
            continue
        got = pool.pop(index)
        got_severity = got.get("severity") or registry.get(code, "error")
        if got_severity != severity:
            problems.append(f"severity: {label} is {got_severity}, expected {severity}")
    for got in pool:
        severity = got.get("severity") or registry.get(got["code"], "error")
        if severity != "info":
            where = f" in {got['_file']}" if got["_file"] else ""
            problems.append(f"unexpected: {got['code']} ({severity}) at {got['path']!r}{where}")
    return problems


def run_case(
    name: str,
    expected: Mapping[str, Any],
    command: str,
    registry: Mapping[str, str],
    *,
    suite: Path = SUITE,
    timeout: float = 60.0,
) -> CaseResult:
    """Run ``command`` on one case and compare its findings and exit status."""
    case_dir = suite / "cases" / name
    result = CaseResult(name=name, tags=list(expected["tags"]))
    argv = command.replace("{path}", shlex.quote(str(case_dir)))
    start = time.perf_counter()
    try:
        proc = subprocess.run(  # noqa: S602 - the command line is the user's own
            argv, shell=True, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        result.error = f"timed out after {timeout:g} s"
        return result
    finally:
        result.seconds = time.perf_counter() - start
    result.output = proc.stdout[-4000:] + proc.stderr[-4000:]
    if proc.returncode not in (0, 1):
        result.error = f"exit status {proc.returncode}: {proc.stderr.strip()[-500:]}"
        return result
    try:
        document = json.loads(proc.stdout)
    except ValueError:
        result.error = "stdout is not JSON"
        return result
    reported = collect_findings(document)
    result.problems = compare(expected["findings"], reported, registry, case_dir)
    want_status = 0 if expected["valid"] else 1
    if proc.returncode != want_status:
        result.problems.append(f"exit status {proc.returncode}, expected {want_status}")
    return result


def write_junit(results: Sequence[CaseResult], path: Path) -> None:
    """One testsuite, one testcase per case; failures list the differences."""
    suite = ET.Element(
        "testsuite",
        name="rra-conformance",
        tests=str(len(results)),
        failures=str(sum(1 for r in results if r.problems and r.error is None)),
        errors=str(sum(1 for r in results if r.error is not None)),
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"rra.conformance.{result.tags[0] if result.tags else 'untagged'}",
            name=result.name,
            time=f"{result.seconds:.3f}",
        )
        if result.error is not None:
            element = ET.SubElement(case, "error", message=result.error)
            element.text = result.output
        elif result.problems:
            element = ET.SubElement(case, "failure", message="; ".join(result.problems))
            element.text = "\n".join(result.problems)
    root = ET.Element("testsuites")
    root.append(suite)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--command", required=True, help="validator command line with {path}")
    parser.add_argument(
        "--tags",
        help="comma-separated optional features a case may need besides the mandatory ones"
        " (required, yaml, versioning); default: all",
    )
    parser.add_argument(
        "--format-version",
        help="the newest format version the validator implements (e.g. 1.0): only cases whose"
        " format is that version or lower run; default: every case",
    )
    parser.add_argument("--case", action="append", default=[], help="run only this case")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--suite", type=Path, default=SUITE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if "{path}" not in args.command:
        parser.error("--command must contain {path}")
    registry = load_registry(args.suite)
    cases = load_cases(args.suite)
    unknown = [name for name in args.case if name not in cases]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    if args.format_version is not None and not re.fullmatch(
        r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)", args.format_version
    ):
        parser.error("--format-version must be MAJOR.MINOR, e.g. 1.0")
    tags = {t.strip() for t in args.tags.split(",")} if args.tags else None
    selected = select(cases, names=args.case, tags=tags, format_version=args.format_version)

    def one(name: str) -> CaseResult:
        return run_case(
            name, cases[name], args.command, registry, suite=args.suite, timeout=args.timeout
        )

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, selected))
    for result in results:
        if not result.passed:
            detail = result.error or "; ".join(result.problems)
            sys.stderr.write(f"FAIL {result.name}: {detail}\n")
    passed = sum(1 for r in results if r.passed)
    sys.stderr.write(f"{passed}/{len(results)} cases passed\n")
    if args.junit:
        write_junit(results, args.junit)
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
