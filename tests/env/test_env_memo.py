"""A cache hit for an ``environment`` part the model already validated is served without the
model, and never for a part, a lock or a validator that differ (slow: real uv and venvs).

The marker of a built environment lists the digests of the parts validated for it. A hit
whose part is listed needs neither pydantic nor the model; anything else (a part edited, a
lock edited, a path that leaves the artifact, a marker damaged) goes the model's way and
gets the model's findings, exactly as without the memo.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.env import ensure_environment, lock_artifact
from reprobridge_sdk.env.venv import COMPLETE_MARKER, EnvironmentBuildError
from reprobridge_sdk.errors import ArtifactError, UsageError

pytestmark = pytest.mark.slow

PY = ".".join(map(str, sys.version_info[:2]))


def _imported(artifact: Path, cache: Path) -> tuple[set[str], str]:
    """The modules ``env create`` imports, and the interpreter it prints."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reprobridge_sdk", "env", "create",
         str(artifact), "--cache-dir", str(cache)],
        capture_output=True, text=True, check=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "[us]" not in line
    }
    return names, done.stdout.strip().splitlines()[-1]


@pytest.fixture
def built(tiny_artifact: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    lock_artifact(tiny_artifact, python=PY)
    cache = tmp_path / "cache"
    python = ensure_environment(tiny_artifact, cache_dir=cache)
    return tiny_artifact, cache, python


def test_a_validated_part_is_served_without_the_model(built: tuple[Path, Path, Path]) -> None:
    artifact, cache, python = built
    marker = python.parent.parent / COMPLETE_MARKER
    assert len(json.loads(marker.read_text("utf-8"))["validated"]) == 1
    names, printed = _imported(artifact, cache)
    assert printed == str(python)
    assert not {"pydantic", "reprobridge_sdk.model.environment"} & names
    assert "reprobridge_sdk.env.venv" in names  # the positive control


def test_an_edited_part_is_validated_by_the_model_again(built: tuple[Path, Path, Path]) -> None:
    artifact, cache, _ = built
    manifest = artifact / "rra.yaml"
    manifest.write_text(
        manifest.read_text("utf-8").replace("environment:\n", "environment:\n  bogus: 1\n")
    )
    with pytest.raises(ArtifactError, match="bogus"):
        ensure_environment(artifact, cache_dir=cache)


def test_a_harmless_edit_is_remembered_beside_the_first(built: tuple[Path, Path, Path]) -> None:
    artifact, cache, python = built
    manifest = artifact / "rra.yaml"
    manifest.write_text(manifest.read_text("utf-8") + "  system_packages: []\n")
    assert ensure_environment(artifact, cache_dir=cache) == python
    marker = json.loads((python.parent.parent / COMPLETE_MARKER).read_text("utf-8"))
    assert len(marker["validated"]) == 2
    names, _ = _imported(artifact, cache)
    assert "pydantic" not in names


def test_an_edited_lock_is_never_a_stale_hit(built: tuple[Path, Path, Path]) -> None:
    artifact, cache, _ = built
    lock = artifact / "requirements.txt"
    lock.write_text(lock.read_text("utf-8") + "\n# edited\n")
    with pytest.raises(EnvironmentBuildError) as caught:
        ensure_environment(artifact, cache_dir=cache)
    assert [f.code for f in caught.value.findings] == ["E014"]


def test_a_lock_path_through_a_link_out_of_the_artifact_is_refused(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    artifact, cache, _ = built
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "requirements.txt").write_bytes((artifact / "requirements.txt").read_bytes())
    (artifact / "elsewhere").symlink_to(outside)
    manifest = artifact / "rra.yaml"
    text = manifest.read_text("utf-8").replace(
        "path: requirements.txt", "path: elsewhere/requirements.txt"
    )
    assert "elsewhere/" in text
    manifest.write_text(text)
    with pytest.raises(UsageError) as caught:
        ensure_environment(artifact, cache_dir=cache)
    assert [f.code for f in caught.value.findings] == ["F003"]


@pytest.mark.parametrize("damage", ["{not json", '{"validated": "all"}', "[]"])
def test_a_damaged_marker_goes_the_models_way(built: tuple[Path, Path, Path], damage: str) -> None:
    artifact, cache, python = built
    (python.parent.parent / COMPLETE_MARKER).write_text(damage)
    assert ensure_environment(artifact, cache_dir=cache) == python
    names, _ = _imported(artifact, cache)
    assert "reprobridge_sdk.model.environment" in names
