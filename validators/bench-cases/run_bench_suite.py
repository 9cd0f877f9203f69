#!/usr/bin/env python3
"""Run the bench-report conformance cases against a reporter (see README.md).

    python validators/bench-cases/run_bench_suite.py --command "REPORTER {input}"

Exit status 0 when every case passes, 1 otherwise. The default command is the reference
reporter, ``python -m reprobridge_sdk bench report {input} --format json``.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parent / "cases"
TOLERANCE = 5e-5
DEFAULT = f"{shlex.quote(sys.executable)} -m reprobridge_sdk bench report {{input}} --format json"


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            _same(value, actual.get(key)) for key, value in expected.items()
        )
    if isinstance(expected, float) or isinstance(actual, float):
        if expected is None or actual is None:
            return expected is actual
        return math.isclose(float(expected), float(actual), abs_tol=TOLERANCE)
    return bool(expected == actual)


def _find(items: list[dict[str, Any]], keys: dict[str, Any]) -> dict[str, Any] | None:
    for item in items:
        if all(item.get(k) == v for k, v in keys.items()):
            return item
    return None


def check_case(folder: Path, command: str) -> list[str]:
    """The problems of one case (empty: it passes)."""
    expected = json.loads((folder / "expected.json").read_text("utf-8"))
    argv = [word.replace("{input}", str(folder / "input.json")) for word in shlex.split(command)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        return [f"exit {done.returncode}: {done.stderr.strip()[-300:]}"]
    try:
        report = json.loads(done.stdout)
    except ValueError as exc:
        return [f"not JSON on stdout: {exc}"]
    problems = []
    parts = (
        ("rates", ("agent", "variant")),
        ("paired", ("agent", "a", "b")),
        ("versus", ("variant", "a", "b")),
    )
    for part, keys in parts:
        if part not in expected:
            continue
        for want in expected[part]:
            key = {k: want[k] for k in keys}
            got = _find(report.get(part, []), key)
            if got is None:
                problems.append(f"{part} {key}: missing")
            elif not _same(want, got):
                problems.append(f"{part} {key}: expected {want}, got {got}")
        if len(report.get(part, [])) != len(expected[part]):
            problems.append(
                f"{part}: {len(report.get(part, []))} entries, not {len(expected[part])}"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run every case; print one line per case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", default=DEFAULT, help="the reporter; {input} is replaced")
    options = parser.parse_args(argv)
    failed = 0
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        problems = check_case(folder, options.command)
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'ok  '} {folder.name}")
        for problem in problems:
            print(f"     {problem}")
    print(f"{failed} of {len(list(CASES.iterdir()))} case(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
