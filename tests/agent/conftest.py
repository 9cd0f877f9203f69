"""Fixtures of the build agent's tests: raw repositories written as real git repositories."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_fixtures import write_repo


@pytest.fixture(scope="session")
def fixture_python(env_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of the environment every fixture shares, built once per session."""
    from reprobridge_sdk.agent.builder import build_environment
    from reprobridge_sdk.agent.claims import load_claims
    from reprobridge_sdk.agent.intake import checkout, inventory

    base = tmp_path_factory.mktemp("shared-env")
    repo, claims_file = write_repo(base / "raw", "no-deps")
    commit, date = checkout(str(repo), base / "checkout")
    intake = inventory(
        base / "checkout",
        load_claims(claims_file),
        source=str(repo),
        commit=commit,
        commit_date=date,
        inputs_digest="0" * 64,
    )
    record = build_environment(intake, base / "state", inputs_digest="0" * 64, cache_dir=env_cache)
    assert record.gate.passed and record.interpreter, record.gate.findings
    return Path(record.interpreter)


@pytest.fixture
def raw_repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A factory: ``raw_repo(name)`` writes that fixture and returns (repo, claims file)."""

    def make(name: str) -> tuple[Path, Path]:
        return write_repo(tmp_path / "raw", name)

    return make
