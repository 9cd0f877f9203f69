"""Fixtures of the auditor's tests; the helpers live in ``audit_support`` (a unique name)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from audit_support import make_artifact, run_honestly
from evidence_support import honest_runs

from reprobridge_sdk.io.filelock import file_lock
from reprobridge_sdk.signing import SigningKey, generate_key, load_signing_key

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
#: The bundled example's launchers and seeds (its manifest's): one smoke run, then five scored.
EXAMPLE_RUNS = (("smoke", [0]), ("scored", [0, 1, 2, 3, 4]))


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


@pytest.fixture(scope="session")
def example_runs(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> tuple[Path, SigningKey]:
    """The bundled example (``examples/digits-logreg``) with real runs of its launchers
    (:data:`EXAMPLE_RUNS`, in that order, by the runner in this interpreter), signed by an
    author's key made for the session; the artifact and that key. Read only: copy it first.

    Its runs take about a minute of CPU and several files audit them as they are, so they
    are made once for the whole session, not once per file or per pytest-xdist worker: the
    first worker to ask makes them in the session's shared temporary directory, under a file
    lock, and the others wait for it and read them. The key's file is beside the artifact,
    never in it.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # one directory per session
    place = shared / "example-runs"
    artifact, pem_file = place / "digits-logreg", place / "author.pem"
    place.mkdir(exist_ok=True)
    with file_lock(place / ".lock"):
        if not (place / "done").is_file():
            shutil.rmtree(artifact, ignore_errors=True)
            shutil.copytree(EXAMPLE, artifact)
            pem, key = generate_key()
            for launcher, seeds in EXAMPLE_RUNS:
                honest_runs(artifact, launcher, seeds, key)
            pem_file.write_bytes(pem)
            (place / "done").write_text("")
    return artifact, load_signing_key(pem_file)
