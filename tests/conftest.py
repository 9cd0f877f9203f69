"""Shared test configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    """The repository root (for the committed schemas, the conformance suite and examples)."""
    return REPO
