"""Fixtures of the build agent's tests: raw repositories written as real git repositories."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_fixtures import write_repo


@pytest.fixture
def raw_repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A factory: ``raw_repo(name)`` writes that fixture and returns (repo, claims file)."""

    def make(name: str) -> tuple[Path, Path]:
        return write_repo(tmp_path / "raw", name)

    return make
