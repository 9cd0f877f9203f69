"""The auditor reads a patch series as the validator does: never fetched, never written.

Real git repositories made in the test; the cache is the test's own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from authoring_support import series_artifact

from reprobridge_sdk import api, validate
from reprobridge_sdk.audit.verify import artifact_facts
from reprobridge_sdk.findings import Severity


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
    return cache


def _codes(found: object) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.path, f.severity.value) for f in found)  # type: ignore[attr-defined]


def test_the_auditor_reads_the_series_from_the_cache_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = series_artifact(tmp_path)
    declared = api.load(root).manifest.codebase.tree_digest
    facts = artifact_facts(api.load(root))  # the working checkout holds the series
    assert (facts.tree_digest, _codes(facts.findings)) == (declared, [])
    shutil.rmtree(root / "code")
    facts = artifact_facts(api.load(root))  # applied from the cache in a scratch directory
    assert (facts.tree_digest, _codes(facts.findings)) == (declared, [])
    assert facts.shipped
    assert not (root / "code").exists()
    # a code/ directory that is not the checkout: the runner would refuse to replace it
    (root / "code").mkdir()
    (root / "code" / "notes.txt").write_text("mine\n", "utf-8")
    assert ("C008", "/codebase/refined", "error") in _codes(validate(root).findings)
    facts = artifact_facts(api.load(root))
    assert (facts.tree_digest, _codes(facts.findings)) == (declared, [])
    assert (root / "code" / "notes.txt").read_text("utf-8") == "mine\n"
    # upstream gone and not cached: no fetch, a warning, the declared digest stands
    shutil.rmtree(tmp_path / "paper")
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "empty-cache"))
    shutil.rmtree(root / "code")
    facts = artifact_facts(api.load(root))
    assert facts.tree_digest == declared
    assert _codes(facts.findings) == [("C005", "/codebase/upstream", "warning")]
    assert not [f for f in facts.findings if f.severity is Severity.ERROR]
    assert ("C005", "/codebase/upstream", "warning") in _codes(validate(root).findings)
