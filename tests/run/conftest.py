"""Fixtures of the runner tests: a fresh copy of the toy artifact per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "toy"


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A private copy of the toy artifact (its runs/ directory starts empty)."""
    target = tmp_path / "toy"
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    return target
