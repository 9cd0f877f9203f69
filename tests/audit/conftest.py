"""Fixtures of the auditor's tests; the helpers live in ``audit_support`` (a unique name)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from audit_support import make_artifact, run_honestly


@pytest.fixture(scope="session")
def honest_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy artifact with honest scored runs (seeds 0-2) and one smoke run, built once."""
    root = make_artifact(tmp_path_factory.mktemp("template") / "toy")
    run_honestly(root, "scored", [0, 1, 2])
    run_honestly(root, "smoke", [0])
    # These tests remove, copy and edit runs to exercise each evidence check on its own; the
    # run ledger would report every such change too (A051-A056), so the template has none
    # (an A050 warning on the attempt). The ledger has its own tests (test_ledger.py).
    for name in ("ledger.jsonl", ".ledger.lock"):
        (root / "runs" / name).unlink()
    return root


@pytest.fixture
def toy(honest_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the honest artifact and its runs, free to tamper with."""
    target = tmp_path / "toy"
    shutil.copytree(honest_template, target)
    return target
