"""Fixtures of the environment tests: small artifacts written as real files."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reprobridge_sdk.env._resolvers import index_url
from reprobridge_sdk.locks.lockfile import is_local_location

MANIFEST = """\
# A small artifact for the environment tests.
rra_version: "1.0"
environment:
  python: "{python}"  # the interpreter the study used
  # declared requirements, resolved by 'reprobridge lock'
  requirements: requirements.in
{extra}"""

#: The running interpreter's ``X.Y``: the artifacts declare it, so the tests run on any CPython.
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def write_artifact(root: Path, requirements: str, *, python: str = PYTHON, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "rra.yaml").write_text(MANIFEST.format(python=python, extra=extra), "utf-8")
    (root / "requirements.in").write_text(requirements, "utf-8")
    return root


@pytest.fixture
def make_artifact() -> Callable[..., Path]:
    """The :func:`write_artifact` helper, for tests that need their own requirements."""
    return write_artifact


@pytest.fixture
def tiny_artifact(tmp_path: Path) -> Path:
    """An artifact whose requirements are two small pure-Python distributions."""
    return write_artifact(tmp_path / "art", "six==1.16.0\niniconfig==2.0.0\n")


@pytest.fixture
def public_index() -> None:
    """Skip a test that needs the lock to name public wheel URLs when the index is local.

    A PEP 751 lock names the URL of each wheel. Resolved from a local index (a wheelhouse
    given by ``REPROBRIDGE_INDEX_URL``, as ``.ci/run --wheelhouse`` does) those URLs are local,
    and the SDK rightly refuses a lock that names local locations.
    """
    if is_local_location(index_url()):
        pytest.skip("a PEP 751 lock resolved from a local index names local wheel URLs")
