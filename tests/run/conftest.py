"""Fixtures of the runner tests: a fresh copy of the toy artifact per test."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "toy"


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A private copy of the toy artifact (its runs/ directory starts empty)."""
    target = tmp_path / "toy"
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    # The artifact declares the running interpreter, so the runner's tests run on any CPython.
    manifest = target / "rra.yaml"
    declared = 'environment: {python: "3.11"}'
    running = f'environment: {{python: "{sys.version_info.major}.{sys.version_info.minor}"}}'
    text = manifest.read_text("utf-8")
    assert declared in text, "the toy manifest's environment line changed"
    manifest.write_text(text.replace(declared, running), "utf-8")
    return target
