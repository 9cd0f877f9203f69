"""*Reusable* from checkable facts, the clean-room check included (spec audit.md#badges).

A real clean-room check (``check --record``, the toy builds offline) leaves ``runs/check.json``
in the artifact; an audit grants *reusable* when launchers are described, a licence is stated,
no placeholder is left and that record passed on the artifact's files as they are. Each
missing or hostile fact withholds it with A086, never a traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from audit_support import make_artifact
from evidence_support import honest_runs

from reprobridge_sdk.audit import audit
from reprobridge_sdk.authoring.check import check
from reprobridge_sdk.errors import UsageError


def _documented(root: Path) -> None:
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    for launcher in data["launchers"]:
        launcher["description"] = f"runs the toy's {launcher['id']} step"
    data["artifact"]["license"] = "MIT"
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A documented toy with honest runs and a passing check on record."""
    base = tmp_path_factory.mktemp("reusable")
    root = make_artifact(base / "toy")
    _documented(root)
    honest_runs(root, "scored", [0, 1, 2])
    honest_runs(root, "smoke", [0])
    report = check(root, sandbox=False, record=True, work_dir=base)
    assert report.ok, [(s.name, s.detail) for s in report.steps]
    assert report.record == str(root / "runs" / "check.json")
    return root


@pytest.fixture
def toy(checked: Path, tmp_path: Path) -> Path:
    target = tmp_path / "toy"
    shutil.copytree(checked, target, symlinks=True)
    return target


def _reasons(root: Path) -> list[str]:
    result = audit(root)
    assert result.badges.functional  # what follows is about reusable alone
    return [f"{r.code} {r.message}" for r in result.badges.reasons.get("reusable", [])]


def test_a_passing_check_on_record_grants_reusable(toy: Path) -> None:
    record = json.loads((toy / "runs" / "check.json").read_text())
    assert record["check_version"] == "1.0"
    assert record["passed"] is True
    assert [s["name"] for s in record["steps"]] == ["copy", "validate", "smoke", "audit"]
    result = audit(toy)
    assert result.badges.reusable, result.badges.reasons.get("reusable")
    assert result.badges.evidence["reusable"] == ["rra.yaml", "runs/check.json"]
    # the record is no run: no evidence alarm about it
    assert all(f.file != "runs/check.json" for a in result.attempts for f in a.findings)
    assert result.passed


def test_no_record_withholds_reusable(toy: Path) -> None:
    (toy / "runs" / "check.json").unlink()
    [reason] = _reasons(toy)
    assert reason.startswith("A086 no clean-room check on record")


def test_a_record_of_other_files_withholds_reusable(toy: Path) -> None:
    (toy / "NOTES.md").write_text("added after the check\n")
    [reason] = _reasons(toy)
    assert "checked other files" in reason


def test_a_failed_check_withholds_reusable(toy: Path) -> None:
    path = toy / "runs" / "check.json"
    record = json.loads(path.read_text())
    record["steps"][-1]["ok"] = False  # a forger who flips only "passed" is caught as well
    path.write_text(json.dumps(record))
    [reason] = _reasons(toy)
    assert "did not pass" in reason


@pytest.mark.parametrize(
    "hostile",
    ["not json {", "[1, 2]", '{"check_version": "9.9"}', "[" * 100 + "]" * 100, "link", "big"],
)
def test_a_hostile_record_withholds_reusable_without_a_traceback(
    toy: Path, tmp_path: Path, hostile: str
) -> None:
    path = toy / "runs" / "check.json"
    good = path.read_text()
    path.unlink()
    if hostile == "link":
        (tmp_path / "elsewhere.json").write_text(good)
        path.symlink_to(tmp_path / "elsewhere.json")
    elif hostile == "big":
        path.write_text(good + " " * 100_000)
    else:
        path.write_text(hostile)
    [reason] = _reasons(toy)
    assert reason.startswith("A086 the clean-room check record runs/check.json"), reason


def test_undocumented_launchers_withhold_reusable_despite_the_record(toy: Path) -> None:
    path = toy / "rra.yaml"
    data = yaml.safe_load(path.read_text())
    data["launchers"][0]["description"] = " "
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    reasons = _reasons(toy)
    assert any("has no description" in r for r in reasons)
    assert any("checked other files" in r for r in reasons)  # rra.yaml changed too


def test_a_record_is_written_into_a_directory_only(tmp_path: Path) -> None:
    archive = tmp_path / "toy.tar"
    archive.write_bytes(b"")
    with pytest.raises(UsageError):
        check(archive, sandbox=False, record=True, work_dir=tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "check", str(archive), "--record"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "check the directory" in done.stdout + done.stderr
