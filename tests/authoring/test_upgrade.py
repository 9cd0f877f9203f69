"""``reprobridge upgrade``: a 1.0 manifest rewritten as 1.1, everything else byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk import api, validate
from reprobridge_sdk.authoring.upgrade import upgrade
from reprobridge_sdk.errors import ArtifactError, UsageError

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "validators" / "cases"


def _reprobridge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _copy(case: str, tmp_path: Path) -> Path:
    target = tmp_path / case
    shutil.copytree(CASES / case, target, symlinks=True)
    (target / "expected.json").unlink()
    return target


COMMENTED = """\
# yaml-language-server: $schema=https://reprobridge.org/schemas/rra-1.0.schema.json
# A hand-written manifest: every comment must survive.
rra_version: "1.0"   # the format
artifact:
  id: commented       # slug
  title: 'Quoted title'
  x-team: {name: vision, size: 3}
"""


def test_only_the_version_and_the_schema_comment_change(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text(COMMENTED, "utf-8")
    result = upgrade(tmp_path)
    assert (result.before, result.after, result.changed, result.written) == (
        "1.0",
        "1.1",
        True,
        True,
    )
    text = (tmp_path / "rra.yaml").read_text("utf-8")
    expected = COMMENTED.replace("rra-1.0.schema", "rra-1.1.schema").replace(
        'rra_version: "1.0"', 'rra_version: "1.1"'
    )
    assert text == expected
    again = upgrade(tmp_path)
    assert (again.changed, again.written) == (False, False)
    assert (tmp_path / "rra.yaml").read_text("utf-8") == expected


def test_an_upgraded_artifact_may_use_the_1_1_additions(tmp_path: Path) -> None:
    """The 1.0 document with an empty patch series: V005 before, not after the upgrade."""
    root = _copy("empty-patch-series-under-1-0", tmp_path)
    before = {(f.code, f.path) for f in validate(root).findings}
    assert ("V005", "/codebase/refined/patches") in before
    upgrade(root)
    after = {(f.code, f.path) for f in validate(root).findings}
    assert after == before - {("V005", "/codebase/refined/patches")}


def test_the_complete_example_upgrades_with_the_same_data(tmp_path: Path) -> None:
    root = _copy("full-featured", tmp_path)
    original = (root / "rra.yaml").read_text("utf-8")
    upgrade(root)
    upgraded = (root / "rra.yaml").read_text("utf-8")
    assert upgraded == original.replace("rra_version: '1.0'", "rra_version: '1.1'", 1)
    assert [f.code for f in validate(root).findings] == []


def test_check_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text(COMMENTED, "utf-8")
    result = upgrade(tmp_path, check=True)
    assert (result.changed, result.written) == (True, False)
    assert (tmp_path / "rra.yaml").read_text("utf-8") == COMMENTED


@pytest.mark.parametrize(
    ("version_line", "code"),
    [
        ("rra_version: '2.0'", "V002"),
        ("rra_version: 1.0", "V004"),  # the YAML float, not a version string
        ("rra_version: '01.0'", "V004"),
        ("", "V001"),
    ],
)
def test_a_version_that_cannot_be_upgraded_is_refused(
    tmp_path: Path, version_line: str, code: str
) -> None:
    text = f"{version_line}\nartifact: {{id: a}}\n"
    (tmp_path / "rra.yaml").write_text(text, "utf-8")
    with pytest.raises(ArtifactError) as info:
        upgrade(tmp_path)
    assert [(f.code, f.path) for f in info.value.findings] == [(code, "/rra_version")]
    assert (tmp_path / "rra.yaml").read_text("utf-8") == text


def test_never_a_downgrade_nor_an_unknown_target(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text("rra_version: '1.1'\n", "utf-8")
    with pytest.raises(ArtifactError) as info:
        upgrade(tmp_path, to="1.0")
    assert [(f.code, f.path, f.line) for f in info.value.findings] == [("V006", "/rra_version", 1)]
    with pytest.raises(UsageError) as usage:
        upgrade(tmp_path, to="1.7")
    assert [f.code for f in usage.value.findings] == ["V006"]


def test_hostile_manifests_are_refused_with_their_yaml_findings(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text("a: &a [*a]\nrra_version: '1.0'\n", "utf-8")
    with pytest.raises(ArtifactError) as info:
        upgrade(tmp_path)
    assert [f.code for f in info.value.findings] == ["Y004"]
    (tmp_path / "rra.yaml").write_text("- a list\n", "utf-8")
    with pytest.raises(ArtifactError) as info:
        upgrade(tmp_path)
    assert [f.code for f in info.value.findings] == ["Y002"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ArtifactError) as info:
        upgrade(empty)
    assert [f.code for f in info.value.findings] == ["Y010"]


def test_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text(COMMENTED, "utf-8")
    checked = _reprobridge("upgrade", "--check", ".", cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (1, "")
    assert (tmp_path / "rra.yaml").read_text("utf-8") == COMMENTED
    done = _reprobridge("upgrade", ".", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "")
    assert 'rra_version: "1.1"   # the format' in (tmp_path / "rra.yaml").read_text("utf-8")
    assert _reprobridge("upgrade", "--check", cwd=tmp_path).returncode == 0
    refused = _reprobridge("upgrade", "--to", "1.0", cwd=tmp_path)
    assert refused.returncode == 1
    assert " V006 " in refused.stdout
    unknown = _reprobridge("upgrade", "--to", "9.9", cwd=tmp_path)
    assert unknown.returncode == 2
    assert " V006 " in unknown.stdout


def test_a_producer_declares_the_version_of_the_fields_it_writes(tmp_path: Path) -> None:
    """Saving a 1.0 manifest that now uses a 1.1 addition declares 1.1, never lower."""
    root = _copy("minimal-valid", tmp_path)
    art = api.load(root)
    assert art.save() is False
    assert art.manifest.rra_version == "1.0"
    art.manifest.codebase.refined.kind = "patches"
    art.manifest.codebase.refined.path = None
    art.save()
    text = (root / "rra.yaml").read_text("utf-8")
    assert "rra_version: '1.1'" in text
    assert "V005" not in {f.code for f in validate(root).findings}
