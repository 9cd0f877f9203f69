"""The working checkout of a patch series as the specification defines it (manifest.md,
"How a checkout records its series"): the record ``.git/rra-series.json`` and the checkout's
unrecorded changes, decided from the files alone whoever built the checkout.

Real git repositories made in the test; the cache is the test's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from authoring_support import run_git, series_artifact

from reprobridge_sdk import api, validate
from reprobridge_sdk.checkout import SeriesPatch, materialize_series
from reprobridge_sdk.checkout.materialize import checkout_blocker


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
    return cache


def _declared(root: Path) -> tuple[str, str, list[dict[str, str]]]:
    """The manifest's upstream repository, commit and patch series (path, sha256)."""
    codebase = api.load(root).manifest.codebase
    series = [{"path": p.path, "sha256": p.sha256} for p in codebase.refined.patches or []]
    return codebase.upstream.repository, codebase.upstream.commit, series


def _c008(root: Path) -> list[tuple[str, str, str]]:
    """The C008 findings of validation (an ignored file may still change the tree: C004)."""
    found = validate(root).findings
    return sorted((f.code, f.path, f.severity.value) for f in found if f.code == "C008")


def test_the_record_is_the_file_and_object_the_spec_names(tmp_path: Path) -> None:
    root = series_artifact(tmp_path)
    repository, commit, series = _declared(root)
    assert len(series) == 1
    record = json.loads((root / "code" / ".git" / "rra-series.json").read_text("utf-8"))
    assert record == {"repository": repository, "commit": commit, "patches": series}


def test_a_record_written_from_the_text_alone_is_honoured(tmp_path: Path) -> None:
    """Another program's record (its own key order and layout) makes the checkout hold the
    series, so it is reused; a record of another series makes it a clean checkout that is
    rebuilt, never C008."""
    root = series_artifact(tmp_path)
    repository, commit, series = _declared(root)
    record = root / "code" / ".git" / "rra-series.json"
    patches = [SeriesPatch(item["path"], item["sha256"]) for item in series]

    def materialize() -> bool:
        done = materialize_series(
            root, repository=repository, commit=commit, patches=patches, fetch=False
        )
        return done.reused

    record.write_text(
        json.dumps({"patches": series, "commit": commit, "repository": repository}), "utf-8"
    )
    assert materialize() is True
    other = [{"path": series[0]["path"], "sha256": "0" * 64}]
    record.write_text(
        json.dumps({"repository": repository, "commit": commit, "patches": other}), "utf-8"
    )
    assert checkout_blocker(root / "code") is None  # clean: not in the way
    assert materialize() is False  # rebuilt, and the record is the manifest's again
    assert json.loads(record.read_text("utf-8"))["patches"] == series
    record.write_text("{not json", "utf-8")  # an unreadable record holds no series
    assert materialize() is False


def test_byte_code_caches_are_never_unrecorded_changes(tmp_path: Path) -> None:
    """Whatever ignore rules the checkout has: a checkout built by another program need not
    exclude ``__pycache__`` or ``*.pyc`` for them not to count."""
    root = series_artifact(tmp_path)
    checkout = root / "code"
    (checkout / ".git" / "info" / "exclude").write_text("", "utf-8")  # no ignore rules at all
    (checkout / "__pycache__").mkdir()
    (checkout / "__pycache__" / "train.cpython-311.pyc").write_bytes(b"\x00cache")
    (checkout / "pkg" / "__pycache__").mkdir(parents=True)
    (checkout / "pkg" / "__pycache__" / "mod.cpython-312.opt-1.pyc").write_bytes(b"\x00")
    (checkout / "pkg" / "old.pyc").write_bytes(b"\x00")
    assert _c008(root) == []
    # what the checkout's own ignore rules exclude is not a change either
    (checkout / ".git" / "info" / "exclude").write_text("*.log\n", "utf-8")
    (checkout / "train.log").write_text("accuracy: 0.9\n", "utf-8")
    assert _c008(root) == []
    # a whole cache directory is left out; a file merely named like a cache is a change
    (checkout / "pkg" / "__pycache__" / "notes.txt").write_text("mine\n", "utf-8")
    assert _c008(root) == []
    (checkout / "train.pyc.txt").write_text("mine\n", "utf-8")
    assert _c008(root) == [("C008", "/codebase/refined", "error")]


def test_a_committed_byte_code_file_that_changes_is_a_change(tmp_path: Path) -> None:
    """Only untracked caches are left out: a tracked ``*.pyc`` that differs from the last
    commit is a difference between the working tree and that commit."""
    root = series_artifact(tmp_path)
    checkout = root / "code"
    (checkout / "tracked.pyc").write_bytes(b"\x00one")
    run_git("add", "-f", "tracked.pyc", cwd=checkout)
    run_git("commit", "-q", "-m", "a tracked cache", cwd=checkout)
    assert _c008(root) == []
    (checkout / "tracked.pyc").write_bytes(b"\x00two")
    assert _c008(root) == [("C008", "/codebase/refined", "error")]


@pytest.mark.parametrize(
    ("name", "is_change"),
    [
        ('odd "name".pyc', False),  # git quotes the path; still a byte-code file
        ("caf\u00e9.pyc", False),  # quoted with octal escapes
        ("line\nbreak.pyc", False),
        ('tail.pyc"', True),  # a quote after the suffix: not a .pyc name
        ("evil.pyc\nnotes", True),
        ("__pycache__", True),  # a file named like the directory is not under one
        ("sub/__pycache__x/mod.pyc.bak", True),
    ],
)
def test_hostile_file_names_are_judged_by_the_name_git_quotes(
    tmp_path: Path, name: str, is_change: bool
) -> None:
    root = series_artifact(tmp_path)
    target = root / "code" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\x00")
    expected = [("C008", "/codebase/refined", "error")] if is_change else []
    assert _c008(root) == expected
