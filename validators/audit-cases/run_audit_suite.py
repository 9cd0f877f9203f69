"""Run any RRA auditor over the audit-report conformance cases; JUnit XML (standard library).

Usage::

    python validators/audit-cases/run_audit_suite.py \
        --command "my-auditor --json --level {level} --floor {floor} {options} {artifact}" \
        [--table-command "my-auditor --table --json --level {level} --floor {floor} {artifacts}"] \
        [--option NAME=TEMPLATE ...] [--tags required,interval] [--case NAME ...] \
        [--junit results.xml] [-j 4]

``{artifact}`` is replaced by the (shell-quoted) case's artifact directory, ``{level}`` and
``{floor}`` by the case's options (default 0.95 and 0.01), and ``{options}`` by the case's
other options, each written with its template (``--option``; by default the reference
auditor's flags, ``OPTION_TEMPLATES``). The auditor audits the artifact's ``runs/`` attempt
and prints its audit report (the audit report format, spec/audit.md) as JSON on stdout.

A table case (``"report": "table"``) is run with ``--table-command`` from the case's
directory, ``{artifacts}`` replaced by its artifact directories, ``artifacts/<name>``, in
order; the auditor prints its table report as JSON. The case passes when the exit status and
every expected field and code list match (spec/audit.md, "Conformance of auditors").
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run_suite import (  # type: ignore[import-not-found,unused-ignore]  # beside this file
    CaseResult,
    write_junit,
)

__all__ = [
    "NOT_FROM_CASES",
    "OPTION_TEMPLATES",
    "check_report",
    "load_cases",
    "main",
    "render_options",
    "resolve",
    "run_case",
]

SUITE = Path(__file__).resolve().parent
DEFAULT_OPTIONS = {"level": 0.95, "floor": 0.01}
#: How the reference auditor is given each option beyond level and floor: ``{value}`` is the
#: option's value (shell-quoted; ``trust`` and ``submissions`` name a file of the case, given
#: by its absolute path); a boolean option is given when true and left out when false.
OPTION_TEMPLATES = {
    "holm": "--holm",
    "curation": "--curation",
    "expect_head": "--expect-head {value}",
    "trust": "--trust {value}",
    "rerun": "--rerun {value}",
    "rerun_seed": "--rerun-seed {value}",
    "submissions": "--submissions {value}",
}
#: The options whose value is a file of the case, given by its absolute path.
_CASE_FILES = frozenset({"trust", "submissions"})
#: The auditor's codes (families A and K, context "audit" in codes.json) that no case can
#: expect, and why; every other one is expected by some case (spec/audit.md, "Conformance of
#: auditors"). K006 is a code of signing runs, not of the audit (its context is "run").
NOT_FROM_CASES = {
    "A023": "a run in progress needs the live process of its runner, which no case can hold",
    "A027": "a non-finite observation makes the manifest invalid (S004): no artifact with one"
    " loads (case interval-non-finite-reference)",
    "A060": "deprecated and never reported (P003 is reported in its place)",
    "A062": "a failing extractor plugin must be installed where the audit runs; a case"
    " cannot install one",
    "A094": "a time budget that runs out needs a run that outlasts it: the case would take"
    " real time and depend on the machine's speed",
}
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
        # str(): a finding without a code (or with another type) is judged, never a crash
        reported = sorted(str(f.get("code")) for f in got if isinstance(f, Mapping))
        want = sorted(item["codes"])
        if item.get("match", "exact") == "includes":
            lacking = sorted((Counter(want) - Counter(reported)).elements())
            if lacking:
                problems.append(f"{item['pointer']}: {reported} lacks {lacking}")
        elif reported != want:
            problems.append(f"{item['pointer']}: {reported}, expected {want}")
    return problems


def render_options(
    options: Mapping[str, Any], case_dir: Path, templates: Mapping[str, str] = OPTION_TEMPLATES
) -> str:
    """The case's options beyond level and floor, as command-line text (``{options}``)."""
    parts: list[str] = []
    for name, value in options.items():
        if name in DEFAULT_OPTIONS or value is False:
            continue
        template = templates.get(name)
        if template is None:
            msg = f"no template for the option {name} (give --option {name}=TEMPLATE)"
            raise ValueError(msg)
        text = str(case_dir / str(value)) if name in _CASE_FILES else str(value)
        parts.append(template.replace("{value}", shlex.quote(text)))
    return " ".join(parts)


def _command_line(
    name: str,
    expected: Mapping[str, Any],
    command: str,
    suite: Path,
    templates: Mapping[str, str],
) -> str:
    """The shell command that audits case ``name`` (ValueError: it cannot be written)."""
    case_dir = suite / "cases" / name
    options = {**DEFAULT_OPTIONS, **expected.get("options", {})}
    extra = render_options(options, case_dir, templates)
    if extra and "{options}" not in command:
        msg = "the case has options beyond level and floor: the command needs {options}"
        raise ValueError(msg)
    if expected.get("report") == "table":
        names = [shlex.quote(f"artifacts/{a}") for a in expected.get("artifacts", [])]
        argv = command.replace("{artifacts}", " ".join(names))
    else:
        argv = command.replace("{artifact}", shlex.quote(str(case_dir / "artifact")))
    for key in DEFAULT_OPTIONS:
        argv = argv.replace("{" + key + "}", repr(float(options[key])))
    return argv.replace("{options}", extra)


def run_case(
    name: str,
    expected: Mapping[str, Any],
    command: str | None,
    *,
    suite: Path = SUITE,
    timeout: float = 120.0,
    table_command: str | None = None,
    templates: Mapping[str, str] = OPTION_TEMPLATES,
) -> CaseResult:
    """Run ``command`` (``table_command`` for a table case) on one case and compare its
    report and exit status."""
    table = expected.get("report") == "table"
    result = CaseResult(name=name, tags=list(expected["tags"]))
    chosen = table_command if table else command
    if chosen is None:
        result.error = "a table case needs --table-command" if table else "no --command"
        return result
    try:
        argv = _command_line(name, expected, chosen, suite, templates)
    except ValueError as exc:
        result.error = str(exc)
        return result
    start = time.perf_counter()
    try:
        proc = subprocess.run(  # noqa: S602 - the command line is the user's own
            argv,
            shell=True,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=suite / "cases" / name if table else None,
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
    parser.add_argument(
        "--table-command", help="auditor command line with {artifacts}, for the table cases"
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=TEMPLATE",
        help="how the auditor is given an option, e.g. rerun='--re-execute {value}'",
    )
    parser.add_argument("--tags", help="comma-separated tags; run the cases carrying only these")
    parser.add_argument("--case", action="append", default=[], help="run only this case")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--suite", type=Path, default=SUITE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if "{artifact}" not in args.command:
        parser.error("--command must contain {artifact}")
    if args.table_command is not None and "{artifacts}" not in args.table_command:
        parser.error("--table-command must contain {artifacts}")
    templates = dict(OPTION_TEMPLATES)
    for item in args.option:
        key, sep, template = item.partition("=")
        if not sep or not key:
            parser.error(f"--option takes NAME=TEMPLATE, not {item!r}")
        templates[key] = template
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
        return run_case(
            name,
            cases[name],
            args.command,
            suite=args.suite,
            timeout=args.timeout,
            table_command=args.table_command,
            templates=templates,
        )

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
