"""Shared test configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests: a quick profile by default; CI (HYPOTHESIS_PROFILE=ci) runs more examples
# from a derandomised seed, so a failure there is reproducible and never "at random". Tests
# that pin max_examples in their own @settings keep their number under both profiles.
settings.register_profile("dev", max_examples=100)
settings.register_profile(
    "ci",
    max_examples=400,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    """The repository root (for the committed schemas, the conformance suite and examples)."""
    return REPO
