"""Run any RRA auditor over the audit-report conformance cases; JUnit XML (standard library).

Usage::

    python validators/audit-cases/run_audit_suite.py \
        --command "my-auditor --json --level {level} --floor {floor} {artifact}" \
        [--tags required,interval] [--case NAME ...] [--junit results.xml] [-j 4]

``{artifact}`` is replaced by the (shell-quoted) case's artifact directory, ``{level}`` and
``{floor}`` by the case's options (default 0.95 and 0.01). The auditor audits the artifact's
``runs/`` attempt and prints its audit report (the audit report format, spec/audit.md) as
JSON on stdout. The case passes when the exit status and every expected field and code list
match (spec/audit.md, "Conformance of auditors").
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run_suite import CaseResult, write_junit

__all__ = ["check_report", "load_cases", "main", "resolve", "run_case"]

SUITE = Path(__file__).resolve().parent
DEFAULT_OPTIONS = {"level": 0.95, "floor": 0.01}
_MISSING = object()


def load_cases(suite: Path = SUITE) -> dict[str, dict[str, Any]]:
    """Case name -> its ``expected.json``, for every case directory."""
    result: dict[str, dict[str, Any]] = {}
    for case in sorted((suite / "cases").iterdir()):
        expected = case / "expected.json"
        if case.is_dir() and expected.is_file():
            result[case.name] = json.loads(expected.read_text("utf-8"))
    return result


def _segments(pointer: str) -> list[str]:
    if pointer == "":
        return []
    return [s.replace("~1", "/").replace("~0", "~") for s in pointer[1:].split("/")]


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer`` (RFC 6901, plus ``[key=value]`` selecting the one element of
    an array whose member ``key`` is the string ``value``), or a private "missing" marker."""
    node = document
    for segment in _segments(pointer):
        if segment.startswith("[") and segment.endswith("]") and "=" in segment:
            key, _, value = segment[1:-1].partition("=")
            if not isinstance(node, list):
                return _MISSING
            chosen = [i for i in node if isinstance(i, Mapping) and i.get(key) == value]
            if len(chosen) != 1:
                return _MISSING
            node = chosen[0]
        elif isinstance(node, Mapping):
            if segment not in node:
                return _MISSING
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit():
            index = int(segment)
            if index >= len(node):
                return _MISSING
            node = node[index]
        else:
            return _MISSING
    return node


def _equal(want: Any, got: Any, tolerance: float | None) -> bool:
    """Values equal as JSON; numbers within ``tolerance`` (absolute) or the spec's value
    equality (relative 1e-9, absolute 1e-12); a boolean is never a number."""
    numbers = (int, float)
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and want == got
    if isinstance(want, numbers) and isinstance(got, numbers):
        if math.isnan(want) or math.isnan(got):
            return math.isnan(want) and math.isnan(got)
        if tolerance is not None:
            return abs(want - got) <= tolerance
        return abs(want - got) <= max(1e-9 * max(abs(want), abs(got)), 1e-12)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(
            _equal(a, b, tolerance) for a, b in zip(want, got, strict=True)
        )
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(_equal(want[k], got[k], tolerance) for k in want)
    return bool(want == got)


def check_report(expected: Mapping[str, Any], report: Any) -> list[str]:
    """Why ``report`` does not have the expected fields and codes (empty when it does)."""
    problems: list[str] = []
    for item in expected.get("fields", []):
        got = resolve(report, item["pointer"])
        if got is _MISSING:
            problems.append(f"missing: {item['pointer']}")
        elif not _equal(item["value"], got, item.get("tolerance")):
            problems.append(f"{item['pointer']}: {got!r}, expected {item['value']!r}")
    for item in expected.get("codes", []):
        got = resolve(report, item["pointer"])
        if not isinstance(got, list):
            problems.append(f"missing: {item['pointer']} (a list of findings)")
            continue
        reported = sorted(f.get("code") for f in got if isinstance(f, Mapping))
        want = sorted(item["codes"])
        if item.get("match", "exact") == "includes":
            pool = list(reported)
            lacking = [c for c in want if c not in pool or pool.remove(c)]
            if lacking:
                problems.append(f"{item['pointer']}: {reported} lacks {lacking}")
        elif reported != want:
            problems.append(f"{item['pointer']}: {reported}, expected {want}")
    return problems


def run_case(
    name: str,
    expected: Mapping[str, Any],
    command: str,
    *,
    suite: Path = SUITE,
    timeout: float = 120.0,
) -> CaseResult:
    """Run ``command`` on one case and compare its report and exit status."""
    artifact = suite / "cases" / name / "artifact"
    options = {**DEFAULT_OPTIONS, **expected.get("options", {})}
    argv = command.replace("{artifact}", shlex.quote(str(artifact)))
    for key, value in options.items():
        argv = argv.replace("{" + key + "}", repr(float(value)))
    result = CaseResult(name=name, tags=list(expected["tags"]))
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
    if expected["exit_status"] == 2:  # the artifact cannot be audited: no report to compare
        if proc.returncode != 2:
            result.problems.append(f"exit status {proc.returncode}, expected 2")
        return result
    if proc.returncode not in (0, 1):
        result.error = f"exit status {proc.returncode}: {proc.stderr.strip()[-500:]}"
        return result
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        result.error = "stdout is not JSON"
        return result
    result.problems = check_report(expected, report)
    if proc.returncode != expected["exit_status"]:
        result.problems.append(f"exit status {proc.returncode}, expected {expected['exit_status']}")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--command", required=True, help="auditor command line with {artifact}")
    parser.add_argument("--tags", help="comma-separated tags; run the cases carrying only these")
    parser.add_argument("--case", action="append", default=[], help="run only this case")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--suite", type=Path, default=SUITE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if "{artifact}" not in args.command:
        parser.error("--command must contain {artifact}")
    cases = load_cases(args.suite)
    unknown = [name for name in args.case if name not in cases]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    allowed = {t.strip() for t in args.tags.split(",")} if args.tags else None
    selected = [
        name
        for name, expected in cases.items()
        if (not args.case or name in args.case)
        and (allowed is None or set(expected["tags"]) <= allowed)
    ]

    def one(name: str) -> CaseResult:
        return run_case(name, cases[name], args.command, suite=args.suite, timeout=args.timeout)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, selected))
    for result in results:
        if not result.passed:
            detail = result.error or "; ".join(result.problems)
            sys.stderr.write(f"FAIL {result.name}: {detail}\n")
    passed = sum(1 for r in results if r.passed)
    sys.stderr.write(f"{passed} of {len(results)} audit cases passed\n")
    if args.junit:
        write_junit(results, args.junit)
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
