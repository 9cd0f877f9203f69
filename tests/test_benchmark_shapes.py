"""The benchmarks' artifacts are valid artifacts, with the verdicts they are written to earn.

The scaling and batch benchmarks time ``validate`` and ``audit`` on artifacts that
``benchmarks/_synthetic.py`` writes: the bundled example grown to many tasks (its extractor mix,
or CSV and YAML extractors in place of the JSON ones), a committee's batch of example-shaped
artifacts, and the JSON-pointer-only best case. A benchmark of an artifact that does not
validate would time the error path, so each shape is generated small here and checked with the
real command line in a subprocess: ``validate --strict`` finds nothing, ``audit`` gives every
task the verdict its runs were written for and reports no finding beyond the shifted tasks'.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _synthetic import (  # noqa: E402
    grow,
    grow_example,
    write_batch,
)

SHIFTED = frozenset({"knn-accuracy-p3", "logreg-accuracy-p5", "logreg-macro-f1-p9"})


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _codes(value: Any) -> list[str]:
    """Every finding code anywhere in a JSON report."""
    if isinstance(value, dict):
        own = [value["code"]] if isinstance(value.get("code"), str) else []
        return own + [c for v in value.values() for c in _codes(v)]
    if isinstance(value, list):
        return [c for v in value for c in _codes(v)]
    return []


#: The badge reasons of an honest folder audited without the committee: no committee-made
#: run (A084), no archival identifier (A085), no clean-room check on record (A086).
_COMMITTEE_PENDING = {"A084", "A085", "A086"}


def _without_badges(value: Any) -> Any:
    """A JSON report without its badges anywhere (and, in a table, the badges' counts and a
    row's why, which repeat them)."""
    if isinstance(value, dict):
        pending = ("badges", "withheld", "why")
        return {k: _without_badges(v) for k, v in value.items() if k not in pending}
    if isinstance(value, list):
        return [_without_badges(v) for v in value]
    return value


def _validate_strict(path: Path, *more: str) -> dict[str, Any]:
    got = _cli("validate", str(path), "--strict", "--format", "json", *more)
    assert got.returncode == 0, got.stdout + got.stderr
    report: dict[str, Any] = json.loads(got.stdout)
    assert _codes(report) == []
    return report


def _audit(path: Path, out: Path) -> tuple[int, dict[str, Any]]:
    got = _cli("audit", str(path), "--format", "json", "-o", str(out))
    report: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return got.returncode, report


@pytest.mark.parametrize("extractors", ["example", "csv-yaml"])
def test_the_grown_example_validates_and_audits_to_its_verdicts(
    tmp_path: Path, extractors: str
) -> None:
    grown = grow_example(
        tmp_path / "a", 31, random.Random(7), extractors=extractors, shifted=SHIFTED
    )
    assert (grown.tasks, grown.launchers, grown.runs) == (31, 12, 11 * 5 + 1)
    manifest = json.loads((grown.root / "rra.yaml").read_text("utf-8"))
    kinds = [
        [m["extract"]["kind"] for m in launcher["measurements"]]
        for launcher in manifest["launchers"]
    ]
    mix = ["regex", "json", "json"] if extractors == "example" else ["regex", "csv", "yaml"]
    assert kinds[:-1] == [mix] * 11 and kinds[-1] == ["regex"]  # 31 = 3 * 10 + 1
    patterns = {
        launcher["measurements"][0]["extract"]["pattern"] for launcher in manifest["launchers"]
    }
    assert len(patterns) == 11  # smoke shares the first scored launcher's pattern
    assert all(len(launcher["samples"]) == 1 for launcher in manifest["launchers"])
    assert {launcher["seeds"] == [0, 1, 2, 3, 4] for launcher in manifest["launchers"][1:]} == {
        True
    }
    _validate_strict(grown.root)
    code, report = _audit(grown.root, tmp_path / "report.json")
    assert code == 1  # the shifted tasks are incompatible
    verdicts = {t["id"]: t["attempts"][0]["verdict"] for t in report["tasks"]}
    assert verdicts == grown.verdicts
    assert {t for t, v in verdicts.items() if v == "incompatible"} == SHIFTED
    # Beyond the shifted tasks' A029 (an error and its badge reason), nothing: no tampering,
    # no replay or digest finding, no run without evidence. The badges also wait for the
    # committee's runs (A084), an archival identifier (A085) and a clean-room check (A086).
    assert set(_codes(_without_badges(report))) == {"A029"}
    assert set(_codes(report["badges"])) == {"A029", *_COMMITTEE_PENDING}


def test_the_grown_example_without_shifted_tasks_passes_the_audit(tmp_path: Path) -> None:
    grown = grow_example(tmp_path / "a", 6, random.Random(3))
    code, report = _audit(grown.root, tmp_path / "report.json")
    assert code == 0
    assert _codes(_without_badges(report)) == []
    assert set(_codes(report["badges"])) == _COMMITTEE_PENDING
    # the authors' runs alone: consistent, never the badge (spec audit.md#badges)
    assert report["badges"]["results"] == "consistent"
    assert set(grown.verdicts.values()) == {"compatible"}


def test_the_best_case_is_labelled_and_valid(tmp_path: Path) -> None:
    grown = grow(tmp_path / "a", 30, random.Random(5), shape="json-only")
    assert (grown.tasks, grown.launchers, grown.runs) == (30, 3, 9)
    manifest = json.loads((grown.root / "rra.yaml").read_text("utf-8"))
    kinds = {
        m["extract"]["kind"] for launcher in manifest["launchers"] for m in launcher["measurements"]
    }
    assert kinds == {"json"}
    assert all("samples" not in launcher for launcher in manifest["launchers"])
    got = _cli("validate", str(grown.root), "--format", "json")
    assert got.returncode == 0, got.stdout + got.stderr


def test_an_unknown_extractor_mix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="xml"):
        grow_example(tmp_path / "a", 3, random.Random(1), extractors="xml")
    assert not (tmp_path / "a").exists()


def test_the_batch_is_of_valid_example_shaped_artifacts(tmp_path: Path) -> None:
    roots = write_batch(tmp_path / "batch", 4, random.Random(11))
    ids = [json.loads((r / "rra.yaml").read_text("utf-8"))["artifact"]["id"] for r in roots]
    assert ids == [r.name for r in roots] and len(set(ids)) == 4
    for root in roots:
        manifest = json.loads((root / "rra.yaml").read_text("utf-8"))
        assert [t["id"] for t in manifest["tasks"]] == [
            "logreg-accuracy-p0",
            "logreg-macro-f1-p0",
            "knn-accuracy-p0",
        ]
        assert [launcher["id"] for launcher in manifest["launchers"]] == ["smoke-p0", "scored-p0"]
        assert len(list((root / "runs").glob("*/record.json"))) == 6
    # The batch as the benchmark gives it: the parent directory, in two processes.
    report = _validate_strict(tmp_path / "batch", "-j", "2")
    assert report["summary"]["artifacts"] == 4
    out = tmp_path / "table.json"
    got = _cli("audit", "--table", "-j", "2", *map(str, roots), "--format", "json", "-o", str(out))
    assert got.returncode == 0, got.stdout + got.stderr
    table = json.loads(out.read_text("utf-8"))
    assert [(r["artifact"], r["status"], r["tasks"], r["runs"]) for r in table["rows"]] == [
        (i, "passed", 3, 6) for i in ids
    ]
    assert _codes(_without_badges(table)) == []
    # only the badges wait for the committee: the why of each row is one of their reasons
    assert set(_codes([r["badges"] for r in table["rows"]])) == _COMMITTEE_PENDING
    assert {r["why"]["code"] for r in table["rows"]} <= _COMMITTEE_PENDING
