"""The realistic-shape benchmarks run in their quick mode and print their tables.

``bench_validate_scale.py``, ``bench_audit_scale.py`` (by tasks and by runs) and
``bench_batch.py`` each take ``--quick``: small sizes, one pair each. Here each runs so in a
subprocess, as a user would, and its output is checked for its table: the header, one row per
case and size, the targets and the fitted exponents. The figures themselves are not checked
(they are timings of a tiny input on a shared machine).

``bench_validate_scale.py`` needs ajv (npm ``ajv-cli``) on ``PATH``; without it the test
skips, unless ``REPROBRIDGE_REQUIRE_AJV=1`` (as in CI) makes it fail.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _quick(script: str, *args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    got = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    return got.stdout.splitlines()


def _rows(lines: list[str], first: str) -> list[list[str]]:
    """The table's rows whose first cell matches ``first`` (a regex), split on blanks."""
    return [line.split() for line in lines if re.match(first, line)]


def _numbers(cells: list[str]) -> bool:
    return all(re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", c) for c in cells)


def test_the_audit_benchmark_prints_its_table_by_tasks() -> None:
    lines = _quick("bench_audit_scale.py")
    assert lines[0].startswith("shape: example;")
    assert any(line.startswith("load before: ") for line in lines)
    assert any(line.startswith("load after: ") for line in lines)
    header = next(line for line in lines if line.split()[:2] == ["tasks", "runs"])
    assert "ratio" in header and "KB/run above" in header
    rows = _rows(lines, r"\s+(30|90)\s+[0-9]+\s")
    assert [r[0] for r in rows] == ["30", "90"]
    # five seeds a scored launcher, one smoke run: 10 launchers -> 51 runs, 30 -> 151
    assert [r[1] for r in rows] == ["51", "151"]
    assert all(_numbers(r[:11]) for r in rows)
    assert all(
        line.endswith(f"on {n}/{n}, with the runs' design on {n}/{n}")
        for line, n in zip(
            [line for line in lines if "verdicts agree" in line], (30, 90), strict=True
        )
    )
    assert any(
        re.match(r"  CPU ratio at 90 tasks: .* \(target <= 3: (met|MISSED)\)", line)
        for line in lines
    )
    assert any(line.startswith("fitted exponent, CPU time ~ tasks^k: ours ") for line in lines)


def test_the_audit_benchmark_prints_its_table_by_runs() -> None:
    lines = _quick("bench_audit_scale.py", "--by-runs", "1", "9", "90")
    rows = _rows(lines, r"\s+30\s+[0-9]+\s")
    assert [r[1] for r in rows] == ["11", "31"]  # 10 launchers with 1 and 3 seeds, one smoke run
    assert any(
        re.match(r"  peak memory above the script at 31 runs: .* KB a run \(target <= 10: ", line)
        for line in lines
    )
    assert any(line.startswith("fitted exponent, CPU time ~ runs^k: ") for line in lines)


def test_the_batch_benchmark_prints_its_table() -> None:
    lines = _quick("bench_batch.py")
    assert lines[0].startswith("a batch of 4 example-shaped artifacts, -j 2 against 4 processes")
    names = [line[:22].strip() for line in lines if line.startswith(("validate", "audit"))]
    assert names == ["validate -j 2", "audit --table -j 2"]
    for line in lines:
        if line.startswith(("validate", "audit")):
            assert _numbers(line[22:].split("wall ratio")[0].split())
            assert re.search(r"wall ratio \(target <= 0\.6: (met|MISSED)\)$", line)


def test_the_validate_benchmark_prints_its_table() -> None:
    if shutil.which("ajv") is None:
        if os.environ.get("REPROBRIDGE_REQUIRE_AJV") == "1":
            pytest.fail("ajv (npm ajv-cli) is required here and not on PATH")
        pytest.skip("ajv (npm ajv-cli) is not on PATH")
    lines = _quick("bench_validate_scale.py", "--shape", "csv-yaml")
    assert lines[0].startswith("shape: csv-yaml;")
    rows = [line for line in lines if re.match(r"(json|block)\S*( |, )", line)]
    cases = [re.split(r"\s{2,}", line)[0] for line in rows]
    expected = ["json", "block", "json, 1 finding", "json, T/10 findings", "block, 1 finding"]
    assert cases == expected * 2
    for line in rows:
        assert _numbers(line[20:].split())
    assert [line.split(":")[0] for line in lines if line.startswith("  CPU ratio of")] == [
        "  CPU ratio of json at 90 tasks",
        "  CPU ratio of block at 90 tasks",
    ]
    assert sum(line.startswith("fitted exponent, CPU time ~ tasks (") for line in lines) == 5
