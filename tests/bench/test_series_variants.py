"""The variants of a patch-series artifact: raw is the upstream commit itself, read from the
local upstream, from the bundle that pack carries (offline), or refused (C005) when neither is
there. Real git repositories made in the test; the cache is the test's own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "authoring"))

from authoring_support import DEFECT_LINE, series_artifact

from reprobridge_sdk.bench.variants import WORKSPACE_DIR, generate_variants
from reprobridge_sdk.checkout import CodebaseError


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
    return cache


def test_raw_is_the_upstream_commit_and_refined_the_series(tmp_path: Path) -> None:
    root = series_artifact(tmp_path)
    records = {r.variant: r for r in generate_variants(root, tmp_path / "out", ["raw", "refined"])}
    raw = tmp_path / "out" / "raw" / WORKSPACE_DIR
    assert records["raw"].source == "upstream"
    assert DEFECT_LINE in (raw / "train.py").read_text("utf-8")  # the upstream, unfixed
    refined = {f.path for f in records["refined"].files}
    assert any(path.endswith(".patch") for path in refined)
    assert not any(path.startswith("code/") for path in refined)  # the checkout is derived


def test_a_packed_series_gives_raw_from_its_bundle_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = series_artifact(tmp_path)
    archive = tmp_path / "tiny.tar.gz"
    packed = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "pack", str(root), "-o", str(archive)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert packed.returncode == 0, packed.stderr
    shutil.rmtree(tmp_path / "paper")  # the upstream is gone, and the cache is new
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "fresh-cache"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "bench",
            "variants",
            str(archive),
            "-o",
            str(tmp_path / "out"),
            "--variants",
            "raw",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)
    assert record["source"] == "upstream-bundle"
    train = tmp_path / "out" / "raw" / WORKSPACE_DIR / "train.py"
    assert DEFECT_LINE in train.read_text("utf-8")


def test_a_series_without_its_upstream_has_no_raw_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = series_artifact(tmp_path)
    shutil.rmtree(tmp_path / "paper")
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "fresh-cache"))
    with pytest.raises(CodebaseError) as caught:
        generate_variants(root, tmp_path / "out", ["raw"])
    assert [f.code for f in caught.value.findings] == ["C005"]
    assert not (tmp_path / "out" / "raw").exists()
    # the other variants need no upstream
    (record,) = generate_variants(root, tmp_path / "out", ["refined"])
    assert record.source == "artifact"
