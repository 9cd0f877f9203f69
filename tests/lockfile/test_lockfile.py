"""Lock parsing and checking: file vectors with expected findings, and the value API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk.findings import Severity
from reprobridge_sdk.locks.lockfile import (
    LockError,
    check_lock,
    detect_format,
    is_local_location,
    read_lock,
)

VECTORS = Path(__file__).parent / "vectors"
CASES = sorted(p.name for p in VECTORS.iterdir() if not p.name.endswith(".expected.json"))


@pytest.mark.parametrize("name", CASES)
def test_vector_findings(name: str) -> None:
    expected = json.loads((VECTORS / f"{name}.expected.json").read_text("utf-8"))
    got = [
        {"code": f.code, "line": f.line, "col": f.col, "path": f.path}
        for f in check_lock(VECTORS / name, display_name=name)
    ]
    assert got == expected
    for f in check_lock(VECTORS / name, display_name=name):
        assert f.file == name
        assert f.spec is not None
        assert f.spec.endswith("#locks")


def test_vectors_cover_the_brief() -> None:
    codes = {
        json.loads((VECTORS / f"{name}.expected.json").read_text("utf-8"))[0]["code"]
        for name in CASES
        if json.loads((VECTORS / f"{name}.expected.json").read_text("utf-8"))
    }
    assert {"L001", "L002", "L003", "L004", "L005", "L006", "L008", "L009"} <= codes


def test_read_requirements_lock() -> None:
    lock = read_lock(VECTORS / "valid.txt")
    assert lock.format == "requirements"
    assert [(e.name, e.version) for e in lock.entries] == [
        ("attrs", "26.1.0"),
        ("numpy", "1.26.4"),
        ("numpy", "2.1.0"),
        ("six", "1.17.0"),
    ]
    assert len(lock.entries[0].hashes) == 2
    assert lock.entries[1].markers == 'python_version < "3.12"'
    assert lock.entries[0].line == 4
    assert lock.entries[2].markers == 'python_version >= "3.12"'
    assert lock.entries[3].requirement == "six==1.17.0"


@pytest.mark.parametrize("name", ["pylock-tables.toml", "pylock-inline.toml"])
def test_read_pylock_both_layouts(name: str) -> None:
    lock = read_lock(VECTORS / name)
    assert lock.format == "pylock"
    assert [(e.name, e.version) for e in lock.entries] == [
        ("six", "1.17.0"),
        ("attrs", "26.1.0"),
    ]
    assert all(e.hashes and e.hashes[0].startswith("sha256:") for e in lock.entries)


def test_read_lock_raises_on_unparseable() -> None:
    with pytest.raises(LockError) as info:
        read_lock(VECTORS / "pylock-version-2.0.toml")
    assert [f.code for f in info.value.findings] == ["L005"]
    with pytest.raises(LockError) as info:
        read_lock(VECTORS / "pylock-bad-toml.toml")
    assert [(f.code, f.line) for f in info.value.findings] == [("L003", 3)]


def test_read_lock_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LockError) as info:
        read_lock(tmp_path / "nope.txt")
    assert info.value.findings[0].code == "L003"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "lock.txt"
    path.write_bytes(b"six==1.17.0\n\xff\xfe\n")
    assert [(f.code, f.line) for f in check_lock(path)] == [("L003", 2)]


def test_newer_minor_is_only_a_warning() -> None:
    findings = check_lock(VECTORS / "pylock-version-1.9.toml")
    assert [(f.code, f.severity) for f in findings] == [("L006", Severity.WARNING)]
    assert read_lock(VECTORS / "pylock-version-1.9.toml").entries


def test_detect_format() -> None:
    assert detect_format("pylock.toml") == "pylock"
    assert detect_format("pylock.gpu.toml") == "pylock"
    assert detect_format("requirements.txt") == "requirements"


@pytest.mark.parametrize(
    ("location", "local"),
    [
        ("https://pypi.org/simple", False),
        ("https://download.pytorch.org/whl/cu121", False),
        ("file:///srv/mirror/simple", True),
        ("/srv/wheelhouse", True),
        ("./wheels", True),
        ("http://localhost:8080/simple", True),
        ("http://127.0.0.2/simple", True),
        ("C:\\wheels", True),
    ],
)
def test_is_local_location(location: str, local: bool) -> None:
    assert is_local_location(location) is local


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_check_never_raises_on_any_text(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    base = tmp_path_factory.mktemp("lock")
    for name in ("requirements.txt", "pylock.toml"):
        path = base / name
        path.write_text(text, "utf-8")
        for f in check_lock(path):
            assert f.code.startswith("L")


def test_pylock_python_mismatch() -> None:
    path = VECTORS / "pylock-tables.toml"  # requires-python = ">=3.10"
    assert check_lock(path, python="3.11") == []
    found = check_lock(path, python="3.9", display_name="pylock.toml")
    assert [(f.code, f.path, f.severity) for f in found] == [
        ("L007", "/requires-python", Severity.WARNING)
    ]


_HEADER = 'lock-version = "1.0"\ncreated-by = "hand"\n'


@pytest.mark.parametrize(
    ("depth", "layout"),
    [
        (62, "array"),  # 65 levels (the document, tool, x, 62 arrays): one past the bound
        (900, "array"),  # tomllib reads it; a recursive consumer of it would not
        (5000, "array"),  # tomllib itself recurses past Python's limit
        (100_000, "array"),
        (5000, "inline-table"),
    ],
)
def test_a_deeply_nested_pylock_is_l003_not_a_recursion_error(
    tmp_path: Path, depth: int, layout: str
) -> None:
    if layout == "array":
        value = "[" * depth + "1" + "]" * depth
    else:
        value = "{a = " * depth + "1" + "}" * depth
    path = tmp_path / "pylock.toml"
    path.write_text(f"{_HEADER}packages = []\n[tool.x]\ndeep = {value}\n", "utf-8")
    findings = check_lock(path, display_name="pylock.toml")
    assert [(f.code, f.file) for f in findings] == [("L003", "pylock.toml")]
    assert findings[0].hint is not None
    with pytest.raises(LockError) as info:
        read_lock(path)
    assert [f.code for f in info.value.findings] == ["L003"]


def test_a_pylock_nested_to_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pylock.toml"
    # the document, tool and x are three levels and 'deep' holds 61 arrays: 64 in all
    value = "[" * 61 + "1" + "]" * 61
    path.write_text(f"{_HEADER}packages = []\n[tool.x]\ndeep = {value}\n", "utf-8")
    assert check_lock(path) == []
